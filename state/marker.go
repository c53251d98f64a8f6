package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// A workflow leaves a marker outside the project, in orch-hook's config
// directory (active/<hash of the root>), rewritten after every write. It
// says which workflow the project holds and exactly what orch-hook last
// wrote: so a state that vanished (deleted by a command the hooks could
// not see) fails closed instead of reading as no workflow, and a state
// edited or rolled back is told apart from a writer that died mid-write.

// Stamp is a file's identity as its metadata shows it (see stampOf).
type Stamp struct {
	Ino  uint64 `json:"ino,omitempty"`
	Size int64  `json:"size"`
	Time int64  `json:"time"`
	// Weak: the platform has no change time; the stamp alone proves nothing.
	Weak bool `json:"weak,omitempty"`
}

// Marker is the record kept outside the project.
type Marker struct {
	Root     string `json:"root"`
	Lineage  string `json:"lineage"`
	Finished bool   `json:"finished,omitempty"`
	// Serial, Checkpoint and Commit pin the last checkpoint written: its
	// serial, the SHA-256 of the file, and the hash of the log record that
	// commits it.
	Serial     uint64 `json:"serial"`
	Checkpoint string `json:"checkpoint_sha256"`
	Commit     string `json:"commit"`
	// LogSize and LogTail pin the log: its length and the hash of its last
	// record. LogBase is where the chain is checked from (after a change
	// the user accepted; 0 otherwise).
	LogSize int64  `json:"log_size"`
	LogTail string `json:"log_tail"`
	LogBase int64  `json:"log_base,omitempty"`
	// The files' stamps right after the write: when both still match, the
	// files are what orch-hook wrote and nothing needs re-reading.
	CheckpointStamp Stamp `json:"checkpoint_stamp"`
	LogStamp        Stamp `json:"log_stamp"`

	// summed: read with a sum that matched, or written (with one).
	summed bool
}

// MarkerPath is the marker of the project ("" when the user has no config
// directory).
// The project is named by its resolved root: a hook given
// $CLAUDE_PROJECT_DIR and a terminal in a symlinked path to the same
// project must find the same marker.
func (s *Store) MarkerPath() string {
	dir, err := ConfigDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(s.ResolvedRoot()))
	return filepath.Join(dir, "active", hex.EncodeToString(sum[:12]))
}

// readMarker returns the project's marker; nil (and no error) when there is
// none. A marker that does not parse, or whose sum does not match its
// content (decodeMarker), is a TamperError. It is read again a few times
// first, a moment apart: read without the lock, it may be read while a
// writer rewrites it in place (writeMarker), and a read that overlaps
// that write can return a mix of the two. The write is one pwrite of a
// few hundred bytes, done in microseconds, so a marker that is whole on
// disk checks within these reads; one that still does not is damage or
// an edit. Under the lock nobody else writes it: there the reads only
// delay a real TamperError by a few milliseconds.
func (s *Store) readMarker() (*Marker, error) {
	path := s.MarkerPath()
	if path == "" {
		return nil, nil
	}
	var m *Marker
	for try := 0; ; try++ {
		b, err := readSmall(path, maxMarker)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the workflow's marker %s: %w", path, err)
		}
		var why string
		if m, why = decodeMarker(b); m != nil {
			break
		}
		if try == len(markerRereads) {
			return nil, &TamperError{What: fmt.Sprintf("the workflow's marker %s is not one orch-hook wrote (%s)", path, why)}
		}
		time.Sleep(markerRereads[try])
	}
	if m.Root != s.ResolvedRoot() {
		// A hash collision or a copied file: not this project's.
		return nil, nil
	}
	return m, nil
}

// maxMarker bounds a marker's file: a few hundred bytes padded to 512.
const maxMarker = 64 << 10

// markerRereads are readMarker's pauses before it reads a marker that
// did not check again (under 3 ms in all).
var markerRereads = [...]time.Duration{0, 100 * time.Microsecond, 500 * time.Microsecond, 2 * time.Millisecond}

// markerSumPrefix starts every marker this orch-hook writes: its first
// member is "sum", the hex SHA-256 of the marker's JSON without it (whose
// members follow, in the same object).
const markerSumPrefix = `{"sum":"`

// encodeMarker returns the file that holds body, the marker's JSON
// (jsonenc.Marshal of a Marker: an object with members):
//
//	{"sum":"<hex SHA-256 of body>",<body after its opening brace>
//
// then spaces and a final newline up to at least size bytes, rounded up
// to a multiple of 512: a marker rewritten in place keeps its length,
// and the file its size, unless it grows past it. It is JSON, and an
// orch-hook from before the sum reads it (the member is unknown to it).
func encodeMarker(body []byte, size int64) []byte {
	sum := sha256.Sum256(body)
	n := int64(len(markerSumPrefix) + hex.EncodedLen(len(sum)) + len(`",`) + len(body) - 1 + 1)
	total := (max(n, size) + 511) / 512 * 512
	out := make([]byte, 0, total)
	out = append(out, markerSumPrefix...)
	out = hex.AppendEncode(out, sum[:])
	out = append(out, '"', ',')
	out = append(out, body[1:]...)
	for int64(len(out)) < total-1 {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

// markerOldPrefix starts every marker an orch-hook from before the sum
// wrote (json.Marshal of a Marker: Root is its first field).
const markerOldPrefix = `{"root":`

// decodeMarker reads a marker file: one that starts with the sum
// (encodeMarker) only when the sum matches the rest, byte for byte; one
// that starts as an orch-hook from before the sum wrote it, without (it
// is whole: see writeMarker). It returns nil and why when the file is not
// a marker.
func decodeMarker(b []byte) (*Marker, string) {
	b = bytes.TrimRight(b, " \t\r\n")
	summed := bytes.HasPrefix(b, []byte(markerSumPrefix))
	if !summed && !bytes.HasPrefix(b, []byte(markerOldPrefix)) {
		return nil, "it does not read as a marker"
	}
	if summed {
		at := len(markerSumPrefix) + 2*sha256.Size
		var want [sha256.Size]byte
		if len(b) < at+2 || b[at] != '"' || b[at+1] != ',' {
			return nil, "its checksum does not read"
		}
		if _, err := hex.Decode(want[:], b[len(markerSumPrefix):at]); err != nil {
			return nil, "its checksum does not read"
		}
		body := make([]byte, 0, len(b)-at-1)
		body = append(append(body, '{'), b[at+2:]...)
		if sha256.Sum256(body) != want {
			return nil, "its checksum does not match its content: it was edited, or torn by a crash while orch-hook rewrote it"
		}
		b = body
	}
	m := &Marker{}
	if err := jsonfast.Unmarshal(b, m); err != nil || m.Root == "" {
		return nil, "it does not read as a marker"
	}
	m.summed = summed
	return m, ""
}

// writeMarker records m. The marker is what tells a rollback from a crash,
// so a failure to write it fails the write that needed it, and it is as
// durable as the checkpoint, which is durable before it is written: a
// marker that a crash undid pins the checkpoint before, and one write
// behind is accepted (a writer that died before its marker, audit.verify),
// but not a new workflow's, an accepted state's, or several writes behind.
//
// inPlace (the caller read the marker under the lock, and its sum matched)
// lets it rewrite the file where it is (rewriteMarker): one pwrite at
// offset 0, then fdatasync, about a fifth of the atomic replace's cost on
// disk (temp file, fsync, rename, fsync of the directory). It writes the
// new content whole, in one write of a few 512-byte sectors over the
// file's own blocks, as long as the file was unless it grows. A crash
// during it leaves the old marker (one write behind, as above), the new
// one, or, where the disk wrote some sectors and not others, a mix whose
// sum does not match: that fails closed, as a marker that does not parse
// always has (a TamperError, whose hint's accept-state writes a new
// marker). A reader racing the write may read such a mix: readMarker
// reads again. So that every mix starts with a sum, only a marker that
// has one is rewritten in place. One written by an orch-hook from before
// the sum (by rename: whole) is read without one, and replaced, with a
// sum, at the next write under the lock: refusing it would protect
// nothing (the sum is no secret: it tells a torn write from a whole one,
// not orch-hook from the model, which only the sandbox does) and would
// stop every workflow running at the upgrade.
//
// Anything else (no marker yet, one without a sum, a file that is not
// plainly orch-hook's to overwrite, an in-place write that failed) is
// replaced atomically: a planted link or special file is replaced, never
// written through.
func (s *Store) writeMarker(m *Marker, inPlace bool) error {
	path := s.MarkerPath()
	if path == "" {
		_, err := ConfigDir()
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	m.Root = s.ResolvedRoot()
	body, err := jsonenc.Marshal(m)
	if err != nil {
		return err
	}
	if !inPlace || !rewriteMarker(path, body) {
		if err := writeFileAtomic(path, encodeMarker(body, 0)); err != nil {
			return err
		}
	}
	m.summed = true
	return nil
}

// rewriteMarker rewrites the marker at path in place with body, and
// reports whether it did: only through a file that is plainly orch-hook's
// (openInPlace), with body padded to the file's length rounded up to 512
// bytes, so that the one write covers all the file held.
func rewriteMarker(path string, body []byte) bool {
	f, size, ok := openInPlace(path)
	if !ok {
		return false
	}
	defer f.Close()
	if _, err := f.WriteAt(encodeMarker(body, size), 0); err != nil {
		return false
	}
	return datasync(f) == nil
}

// vanished reports whether the marker says a workflow was active here
// though its state is gone; it returns the lineage the marker names.
func (s *Store) vanished() (string, bool) {
	m, err := s.readMarker()
	if err != nil || m == nil || m.Finished {
		return "", false
	}
	return m.Lineage, true
}

// VanishedError: the project's state is gone while a workflow was active.
type VanishedError struct {
	Dir     string
	Lineage string
}

func (e *VanishedError) Error() string {
	return fmt.Sprintf("the workflow's state is gone (%s does not exist) but workflow %s was active here", e.Dir, e.Lineage)
}

// Hint says how to recover. Git cannot: the state directory ignores
// itself (ensureDirs), and what orch-hook keeps outside the project (the
// marker, the key) holds hashes, not the state.
func (e *VanishedError) Hint() string {
	return "put .orchestrator/state back from a copy of your own if you have one (a backup, a file-system snapshot: it is git-ignored, so git cannot restore it, and orch-hook keeps no copy of it outside the project), or run `orch-hook repair` to forget the workflow and start a new one"
}

// forgetVanished removes the marker (and key) of a vanished workflow
// (orch-hook repair); it reports whether there was one.
func (s *Store) forgetVanished() (string, bool) {
	lineage, ok := s.vanished()
	if !ok {
		return "", false
	}
	if err := os.Remove(s.MarkerPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	removeKey(lineage)
	return lineage, true
}
