package state

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

const (
	fileMode = 0o600
	dirMode  = 0o700
	// tempPrefix names the temp files of the atomic replace; leftovers of a
	// killed process are removed under the lock.
	tempPrefix = "checkpoint.json.tmp-"
)

// writeFileAtomic replaces path with data: a temp file in the same
// directory, fsync, close, rename, fsync of the directory. The rename is the
// commit point (as in Go's renameio). O_EXCL never follows a symlink.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicVia(filepath.Dir(path), path, data)
}

// writeFileAtomicVia is writeFileAtomic with the temp file in tmpDir (on
// the same file system), where removeStaleTemps finds a killed writer's.
func writeFileAtomicVia(tmpDir, path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(tmpDir, tempPrefix+randomHex(6))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, fileMode)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	committed = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// removeStaleTemps deletes temp files left by killed writers. Called under
// the lock, so no live writer owns one.
func removeStaleTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// ensureDir creates dir (0700) and refuses a symlink in its place, so state
// never lands outside the project.
func ensureDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink; orch-hook keeps its state in a real directory (remove the link)", dir)
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dir)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// NewLineage returns a fresh random lineage id.
func NewLineage() string {
	return randomHex(16)
}

// randomHex returns 2n random hex digits. Lineages and temp names need to
// be unique, not secret: math/rand/v2's generator is seeded from the
// runtime's entropy, and avoids linking crypto/rand's FIPS module (and its
// package init) into a binary that starts on every tool call.
func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return hex.EncodeToString(b)
}
