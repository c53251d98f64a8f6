package state

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// MaxPathLen is the longest path Confine looks at (Linux's PATH_MAX): a
// longer one is refused without touching the filesystem.
const MaxPathLen = 4096

// maxLinks bounds the symlinks followed while resolving one path, as
// Linux's ELOOP does.
const maxLinks = 40

// Confine resolves path (absolute, "~" or "~/..." for the home directory,
// or relative to root) the way the kernel would when writing it: every
// symlink is followed, the last component's included even when its target
// does not exist yet, and ".." applies to the resolved directory before it.
// The part that does not exist yet is appended lexically. It returns the
// real path and whether that lies inside root (itself resolved, see
// ResolvedRoot). A path longer than MaxPathLen, a "~user" path, and one
// with more than 40 symlinks (a loop) are not confined: they come back as
// given, with false.
func Confine(root, path string) (string, bool) {
	if len(path) > MaxPathLen {
		return path, false
	}
	given := path
	path, ok := ExpandHome(path)
	if !ok {
		return given, false
	}
	if !filepath.IsAbs(path) {
		// Not filepath.Join: a lexical Clean would apply ".." before the
		// symlinks in front of it are resolved.
		path = root + string(filepath.Separator) + path
		if len(path) > MaxPathLen {
			return given, false
		}
	}
	realRoot, ok := resolvePath(root)
	if !ok {
		return given, false
	}
	real, ok := resolvePath(path)
	if !ok {
		return given, false
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return real, false
	}
	return real, true
}

// ResolvedRoot is root with its symlinks resolved as Confine resolves a
// path; root cleaned when it cannot be (a symlink loop).
func ResolvedRoot(root string) string {
	if real, ok := resolvePath(root); ok {
		return real
	}
	return filepath.Clean(root)
}

// ExpandHome expands a leading "~" or "~/" to the user's home directory.
// Other paths come back unchanged. A "~user" form, or a home directory
// that cannot be found, gives false.
func ExpandHome(path string) (string, bool) {
	if path == "" || path[0] != '~' {
		return path, true
	}
	if len(path) > 1 && !os.IsPathSeparator(path[1]) {
		return path, false
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return path, false
	}
	// Not filepath.Join: ".." in the rest applies after home's symlinks.
	return home + path[1:], true
}

// resolvePath resolves path component by component, as the kernel does:
// each existing component is looked at once, in its directory; a symlink
// is replaced by its target (relative to the link's directory), which is
// walked in turn; ".." drops the last component of what is resolved so
// far, which is real, so that ".." is physical. From the first component
// that does not exist, or is not a directory with more after it, the rest
// is appended lexically, until ".." climbs back above it. It fails after
// maxLinks symlinks, or on a symlink that cannot be read. The result is
// absolute and clean.
//
// The walk holds the directory it is in open (os.Root) and looks at the
// next component relative to it, so that the work, the kernel's included,
// is linear in the path's length. Where a directory cannot be opened
// (search permission without read), it looks at full paths instead.
func resolvePath(path string) (string, bool) {
	if !filepath.IsAbs(path) {
		if runtime.GOOS == "windows" {
			abs, err := filepath.Abs(path)
			if err != nil {
				return path, false
			}
			path = abs
		} else {
			wd, err := os.Getwd()
			if err != nil {
				return path, false
			}
			path = wd + string(filepath.Separator) + path
		}
	}
	w := walker{vol: filepath.VolumeName(path), noFD: !openDirs}
	defer w.close()
	rest := path[len(w.vol):] // what is left to walk
	w.dest = make([]byte, 0, len(path)+1)
	w.dest = append(w.dest, w.vol...)
	missing := 0 // trailing components of dest that do not exist (or cannot be entered)
	links := 0
	for i := 0; i < len(rest); {
		for i < len(rest) && os.IsPathSeparator(rest[i]) {
			i++
		}
		j := i
		for j < len(rest) && !os.IsPathSeparator(rest[j]) {
			j++
		}
		name := rest[i:j]
		i = j
		switch name {
		case "", ".":
			continue
		case "..":
			w.dest = dropLast(w.dest, len(w.vol))
			if missing > 0 {
				missing-- // w.dir still is the last existing directory
			} else {
				w.close() // reopened when next needed
			}
			continue
		}
		if missing > 0 {
			w.push(name)
			missing++
			continue
		}
		fi, err := w.lstat(name)
		w.push(name)
		switch {
		case err != nil:
			missing = 1
		case fi.Mode()&fs.ModeSymlink != 0:
			links++
			if links > maxLinks {
				return path, false
			}
			w.dest = dropLast(w.dest, len(w.vol))
			target, err := w.readlink(name)
			if err != nil || target == "" {
				return path, false
			}
			if tv := filepath.VolumeName(target); tv != "" || os.IsPathSeparator(target[0]) {
				if tv != "" {
					w.vol = tv
				}
				w.dest = append(w.dest[:0], w.vol...)
				w.close()
				target = target[len(tv):]
			}
			rest = target + rest[i:]
			i = 0
		case fi.IsDir():
			w.enter(name)
		default:
			missing = 1 // a file: nothing lies under it
		}
	}
	if len(w.dest) == len(w.vol) {
		w.dest = append(w.dest, filepath.Separator)
	}
	return string(w.dest), true
}

// openDirs lets resolvePath walk with open directories; tests turn it off
// to exercise the full-path walk.
var openDirs = true

// walker is resolvePath's position: the resolved path so far and, when
// open, the directory it names.
type walker struct {
	vol  string
	dest []byte   // resolved so far, with no trailing separator
	dir  *os.Root // dest's directory (its last existing one); nil: not open
	noFD bool     // a directory could not be opened: use full paths
}

func (w *walker) push(name string) {
	w.dest = append(w.dest, filepath.Separator)
	w.dest = append(w.dest, name...)
}

func (w *walker) close() {
	if w.dir != nil {
		w.dir.Close()
		w.dir = nil
	}
}

// open makes sure dest's directory is open, unless that cannot be.
func (w *walker) open() {
	if w.dir != nil || w.noFD {
		return
	}
	d := string(w.dest)
	if len(w.dest) == len(w.vol) {
		d += string(filepath.Separator)
	}
	dir, err := os.OpenRoot(d)
	if err != nil {
		w.noFD = true
		return
	}
	w.dir = dir
}

// full is the path of name in dest's directory.
func (w *walker) full(name string) string {
	return string(w.dest) + string(filepath.Separator) + name
}

// lstat looks at name in dest's directory, without following it.
func (w *walker) lstat(name string) (fs.FileInfo, error) {
	if w.open(); w.dir != nil {
		return w.dir.Lstat(name)
	}
	return os.Lstat(w.full(name))
}

// readlink reads the symlink name in dest's directory.
func (w *walker) readlink(name string) (string, error) {
	if w.open(); w.dir != nil {
		return w.dir.Readlink(name)
	}
	return os.Readlink(w.full(name))
}

// enter moves the open directory down into name (already pushed on dest).
func (w *walker) enter(name string) {
	if w.dir == nil {
		return
	}
	sub, err := w.dir.OpenRoot(name)
	w.close()
	if err != nil {
		w.noFD = true
		return
	}
	w.dir = sub
}

// dropLast removes dest's last component, never going above its first
// min bytes (the volume name).
func dropLast(dest []byte, min int) []byte {
	k := len(dest) - 1
	for k >= min && !os.IsPathSeparator(dest[k]) {
		k--
	}
	if k < min {
		return dest[:min]
	}
	return dest[:k]
}
