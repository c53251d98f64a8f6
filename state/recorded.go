package state

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RecordedDir holds orch-hook's copy of each plan file as it last recorded
// it, under the file's own name (relative to the project root). A copy is
// written when the recorded hash of its file changes (orchestrate.RecordedCopies)
// and read only to show what changed and to put it back: it proves
// nothing, the hash in the sealed checkpoint decides.
const RecordedDir = Dir + "/" + recordedName

const recordedName = "recorded"

// MaxRecordedSize is the largest plan file that gets a copy; a larger one
// gets none (and loses any older one).
const MaxRecordedSize = 256 << 10

func (s *Store) recordedDir() string { return filepath.Join(s.Dir, recordedName) }

// SaveRecorded writes the copies of keep (name -> content as recorded),
// each atomically (a temp file in the state directory, fsync, rename), and
// removes the copies of drop. It runs under the lock, inside an Update, so
// copies are written in the order their hashes are recorded. A content
// over MaxRecordedSize, or the stand-in for a plan file too large to read,
// gets no copy; a name that is not a plain file name is skipped.
func (s *Store) SaveRecorded(keep map[string][]byte, drop []string) error {
	dir := s.recordedDir()
	if err := ensureDir(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(keep))
	for name := range keep {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		b := keep[name]
		if !plainName(name) {
			continue
		}
		if len(b) > MaxRecordedSize || isTooLargeText(b) {
			drop = append(drop, name)
			continue
		}
		if err := writeFileAtomicVia(s.Dir, filepath.Join(dir, name), b); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range drop {
		if !plainName(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReadRecorded reads the copy of a plan file, if one is kept: a regular
// file (not a link) of at most MaxRecordedSize bytes. The caller checks it
// against the recorded hash before using it.
func (s *Store) ReadRecorded(name string) ([]byte, bool) {
	if !plainName(name) {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(s.recordedDir(), name), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRecordedSize+1))
	if err != nil || len(b) > MaxRecordedSize {
		return nil, false
	}
	return b, true
}

// plainName: a file name without a directory, usable in any directory.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}
