package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
// none.
func (s *Store) readMarker() (*Marker, error) {
	path := s.MarkerPath()
	if path == "" {
		return nil, nil
	}
	b, err := readSmall(path, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the workflow's marker %s: %w", path, err)
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil || m.Root == "" {
		return nil, &TamperError{What: fmt.Sprintf("the workflow's marker %s is not one orch-hook wrote", path)}
	}
	if m.Root != s.ResolvedRoot() {
		// A hash collision or a copied file: not this project's.
		return nil, nil
	}
	return &m, nil
}

// writeMarker records m. The marker is what tells a rollback from a crash,
// so a failure to write it fails the write that needed it, and it is as
// durable as the checkpoint (file and directory fsynced): a marker whose
// rename a crash undid would pin an older checkpoint, and one write behind
// is accepted (a writer that died before its marker), but not a new
// workflow's, an accepted state's, or several writes behind on a file
// system that does not commit renames in order.
func (s *Store) writeMarker(m *Marker) error {
	path := s.MarkerPath()
	if path == "" {
		_, err := ConfigDir()
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	m.Root = s.ResolvedRoot()
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
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
