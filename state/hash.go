package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxHashBytes bounds what HashProjectFile reads: an artifact is text an
// agent wrote, and hashing runs inside a hook's time budget.
const MaxHashBytes = 16 << 20

// HashProjectFile resolves path (absolute, or relative to root) inside
// root as Confine does, symlinks followed, and returns it relative to the
// resolved root (slash-separated) with the SHA-256 of the regular file
// there, in hex. A path outside the project, a missing file, one that is
// not a regular file (a FIFO would block the hook), and one larger than
// MaxHashBytes are errors; rel is still set when the path is inside.
func HashProjectFile(root, path string) (rel, sum string, err error) {
	abs, inside := Confine(root, path)
	if !inside {
		return "", "", fmt.Errorf("%s is outside the project", path)
	}
	if r, err := filepath.Rel(ResolvedRoot(root), abs); err == nil {
		rel = filepath.ToSlash(r)
	}
	// abs is resolved: a symlink found there now was put in since, and is
	// not followed.
	before, err := os.Lstat(abs)
	if err != nil {
		return rel, "", err
	}
	if !before.Mode().IsRegular() {
		return rel, "", fmt.Errorf("%s is not a regular file", rel)
	}
	if before.Size() > MaxHashBytes {
		return rel, "", fmt.Errorf("%s is larger than %d bytes", rel, MaxHashBytes)
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return rel, "", err
	}
	defer f.Close()
	if opened, err := f.Stat(); err != nil || !os.SameFile(before, opened) {
		return rel, "", errors.Join(fmt.Errorf("%s was replaced while it was read", rel), err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxHashBytes+1))
	if err != nil {
		return rel, "", err
	}
	if n > MaxHashBytes {
		return rel, "", fmt.Errorf("%s is larger than %d bytes", rel, MaxHashBytes)
	}
	return rel, hex.EncodeToString(h.Sum(nil)), nil
}
