package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// blobsName holds the contents a decision read (plan files, a plan a
// coordinate decision checked), by their SHA-256, so that a workflow's
// record can replay the decision (README, "Records").
const blobsName = "blobs"

// MaxBlobSize bounds one kept content; a decision that read a larger one
// keeps its hash only, and cannot be replayed.
const MaxBlobSize = 1 << 20

// BlobID is the name a content is kept under.
func BlobID(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SaveBlobs keeps contents (id -> content) not kept yet. It runs under the
// lock, inside an Update, before the change that refers to them commits.
func (s *Store) SaveBlobs(blobs map[string][]byte) error {
	if len(blobs) == 0 {
		return nil
	}
	dir := filepath.Join(s.Dir, blobsName)
	if err := ensureDir(dir); err != nil {
		return err
	}
	ids := make([]string, 0, len(blobs))
	for id := range blobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b := blobs[id]
		if BlobID(b) != id || len(b) > MaxBlobSize {
			return fmt.Errorf("blob %.12s: not the content's hash, or over %d bytes", id, MaxBlobSize)
		}
		path := filepath.Join(dir, id)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := writeFileAtomicVia(s.Dir, path, b); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlob reads a kept content, checked against its id.
func (s *Store) ReadBlob(id string) ([]byte, error) {
	if len(id) != 64 || !plainName(id) {
		return nil, fmt.Errorf("blob %q: not a content id", id)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, blobsName, id), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBlobSize+1))
	if err != nil {
		return nil, err
	}
	if BlobID(b) != id {
		return nil, fmt.Errorf("blob %.12s: its content does not hash to its name", id)
	}
	return b, nil
}

// RecordsDir is where finished workflows' records and the metrics line go:
// a directory a team may commit (README, "Records").
const RecordsDir = ".orchestrator/records"

// WriteRecord writes a workflow's record, records/<lineage>.json,
// atomically (it replaces an earlier one of the same workflow: one written
// at an escalation). It runs under the lock.
func (s *Store) WriteRecord(lineage string, b []byte) error {
	if len(lineage) != 32 || !plainName(lineage) {
		return fmt.Errorf("record: bad lineage %q", lineage)
	}
	dir := filepath.Join(s.Root, RecordsDir)
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: records are not written through one", RecordsDir)
	} else if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return writeFileAtomicVia(dir, filepath.Join(dir, lineage+".json"), b)
}

// LogLinesLocked returns the log's records as written, byte for byte
// (without their newlines), oldest first: what a record keeps, so that its
// hash chain can be checked. It runs under the lock (in Committed), where
// the log is exactly what is committed.
func (s *Store) LogLinesLocked() ([][]byte, error) {
	if s.pin == nil {
		return nil, errors.New("state: LogLinesLocked outside the lock")
	}
	f, err := os.OpenFile(s.LogPath(), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, s.pin.size))
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, b[:i])
		b = b[i+1:]
	}
	return lines, nil
}

// LineHash is the hash a record's successor carries as its prev.
func LineHash(line []byte) string { return lineHash(line) }
