package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Limits on what is read from the plan directory: the plan is small text;
// anything larger is not a plan and is hashed by size only.
const (
	maxPlanFiles    = 500
	maxPlanFileSize = 1 << 20
)

// ReadDirFiles reads the regular files directly inside rel (relative to the
// project root), by base name. A missing directory gives an empty map.
// Symlinks are not followed.
func ReadDirFiles(root, rel string) (map[string][]byte, error) {
	dir := filepath.Join(root, rel)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if len(out) >= maxPlanFiles {
			return nil, fmt.Errorf("%s holds more than %d files", rel, maxPlanFiles)
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDONLY|noFollow|nonBlock, 0)
		if err != nil {
			return nil, err
		}
		b, rerr := io.ReadAll(io.LimitReader(f, maxPlanFileSize+1))
		f.Close()
		if rerr != nil {
			return nil, rerr
		}
		if len(b) > maxPlanFileSize {
			fi, _ := e.Info()
			b = tooLargeText(fi.Size())
		}
		out[e.Name()] = b
	}
	return out, nil
}

// tooLargeText stands in for a plan file too large to read.
func tooLargeText(size int64) []byte {
	return []byte(fmt.Sprintf("(file too large to read: %d bytes)", size))
}

// isTooLargeText reports whether b is tooLargeText's stand-in.
func isTooLargeText(b []byte) bool {
	var n int64
	_, err := fmt.Sscanf(string(b), "(file too large to read: %d bytes)", &n)
	return err == nil && len(b) < 64 && bytes.Equal(b, tooLargeText(n))
}

// WritePlanFile atomically writes name, a plain file name, into the
// directory rel (relative to root, which it must resolve inside), with
// mode 0644: the user's `orch-hook repair --plan` putting a plan file
// back. A symlink in name's place is replaced, not followed.
func WritePlanFile(root, rel, name string, content []byte) error {
	if !plainName(name) {
		return fmt.Errorf("%q is not a plain file name", name)
	}
	dir, inside := Confine(root, filepath.Join(root, rel))
	if !inside {
		return fmt.Errorf("%s is outside the project %s", rel, root)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := replaceFile(dir, name, content, 0o644); err != nil {
		return err
	}
	return syncDir(dir)
}

// WriteProjectFile atomically writes rel (inside root) with content,
// creating its directory. It refuses paths that leave the project.
func WriteProjectFile(root, rel, content string) error {
	abs, inside := Confine(root, filepath.Join(root, rel))
	if !inside {
		return fmt.Errorf("%s is outside the project %s", rel, root)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	return replaceFile(filepath.Dir(abs), filepath.Base(abs), []byte(content), 0o644)
}

// replaceFile writes content to dir/name through a synced temporary file
// renamed over it (renameio's way): a reader sees the old file or the new
// one, never a part; a symlink at name is replaced, not followed.
func replaceFile(dir, name string, content []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// HealthDir holds one timestamp file per hook event seen.
const healthDir = "health"

// TouchHealth records, without the lock and without touching the
// checkpoint, that a hook event was just seen. Errors are ignored: health
// is a diagnostic, never a reason to fail a hook.
func (s *Store) TouchHealth(name string, now time.Time) {
	dir := filepath.Join(s.Dir, healthDir)
	path := filepath.Join(dir, name)
	if err := os.Chtimes(path, now, now); err == nil {
		return
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|noFollow, fileMode)
	if err == nil {
		f.Close()
		os.Chtimes(path, now, now)
	}
}

// Health returns when each hook event was last seen.
func (s *Store) Health() map[string]time.Time {
	out := map[string]time.Time{}
	entries, err := os.ReadDir(filepath.Join(s.Dir, healthDir))
	if err != nil {
		return out
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			out[e.Name()] = fi.ModTime()
		}
	}
	return out
}

// Artifact is what a reported artifact path holds: where it resolves,
// whether that is inside the project, and the regular file there.
type Artifact struct {
	Rel    string // relative to the resolved root, slash-separated; "" outside
	Inside bool
	Exists bool // a regular file
	Size   int64
}

// InspectArtifact confines path to root (symlinks followed) and stats the
// file it names.
func InspectArtifact(root, path string) Artifact {
	abs, inside := Confine(root, path)
	a := Artifact{Inside: inside}
	if !inside {
		return a
	}
	if rel, err := filepath.Rel(ResolvedRoot(root), abs); err == nil {
		a.Rel = filepath.ToSlash(rel)
	}
	if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
		a.Exists, a.Size = true, fi.Size()
	}
	return a
}

// ListNames names the entries of rel (relative to root), sorted; none when
// it cannot be read.
func ListNames(root, rel string) []string {
	entries, _ := os.ReadDir(filepath.Join(root, rel))
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// ReadProjectFile reads rel (relative to root, confined to it) up to max
// bytes; a larger or unreadable file is an error.
func ReadProjectFile(root, rel string, max int64) ([]byte, error) {
	abs, inside := Confine(root, rel)
	if !inside {
		return nil, fmt.Errorf("%s is outside the project", rel)
	}
	return readSmall(abs, max) // abs is resolved: no symlink left to follow
}

// ListDirs names the subdirectories of rel (relative to root), sorted.
func ListDirs(root, rel string) []string {
	entries, _ := os.ReadDir(filepath.Join(root, rel))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// IsDir reports whether rel (relative to root) is a directory.
func IsDir(root, rel string) bool {
	fi, err := os.Stat(filepath.Join(root, rel))
	return err == nil && fi.IsDir()
}

// MakeProjectDir creates rel (inside root) and its parents, 0755 like the
// project's own directories; it refuses a path that leaves the project.
func MakeProjectDir(root, rel string) error {
	abs, inside := Confine(root, filepath.Join(root, rel))
	if !inside {
		return fmt.Errorf("%s is outside the project %s", rel, root)
	}
	return os.MkdirAll(abs, 0o755)
}

// NewestNames names the regular files of rel (relative to root) whose
// name ends with suffix, newest modification first (ties by name); none
// when it cannot be read.
func NewestNames(root, rel, suffix string) []string {
	entries, _ := os.ReadDir(filepath.Join(root, rel))
	type named struct {
		name string
		mod  time.Time
	}
	var files []named
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			files = append(files, named{e.Name(), fi.ModTime()})
		}
	}
	sort.SliceStable(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.After(files[j].mod)
		}
		return files[i].name > files[j].name
	})
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.name
	}
	return out
}
