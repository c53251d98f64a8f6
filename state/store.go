package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// Dir is where a project's state lives, relative to its root.
const Dir = ".orchestrator/state"

var (
	// ErrNoState means no workflow has ever been started here.
	ErrNoState = errors.New("no workflow is active")
	// ErrNoChange is returned by an Update closure that changed nothing;
	// the snapshot is then not rewritten.
	ErrNoChange = errors.New("no change")
)

// CorruptError means the snapshot cannot be used as it is.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *CorruptError) Unwrap() error { return e.Err }

// Hint tells the user the way forward.
func (e *CorruptError) Hint() string {
	return "run 'orch-hook repair' to rebuild it from events.jsonl (the damaged file is kept)"
}

// ActiveError refuses to start a workflow over a running one.
type ActiveError struct {
	Command string
	State   string
	Since   time.Time
}

func (e *ActiveError) Error() string {
	return fmt.Sprintf("a workflow is already active here (%s, state %s, started %s)", e.Command, e.State, e.Since.Format(time.RFC3339))
}

// Hint tells the user the way forward.
func (e *ActiveError) Hint() string {
	return "see 'orch-hook status'; finish it, or end it with /orch-hook:abort, before starting another"
}

// Store is one project's state directory. It is the only code in orch-hook
// that touches state files. The zero-cost constructor does no I/O.
type Store struct {
	Root string // the project root
	Dir  string // <root>/.orchestrator/state
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Wait bounds how long a write waits for the lock (LockWait when 0):
	// a gating hook answers soon, a completion waits within its hook's
	// time budget.
	Wait time.Duration
}

// Open returns the store of the project at root. It does no I/O.
func Open(root string) *Store {
	return &Store{Root: root, Dir: filepath.Join(root, Dir), Now: func() time.Time { return time.Now().UTC() }}
}

// CheckpointPath is the snapshot file.
func (s *Store) CheckpointPath() string { return filepath.Join(s.Dir, "checkpoint.json") }

// LogPath is the append-only event log.
func (s *Store) LogPath() string { return filepath.Join(s.Dir, "events.jsonl") }

func (s *Store) lockPath() string { return filepath.Join(s.Dir, "lock") }

// ArchiveDir is where finished workflows are moved, one folder per lineage.
func (s *Store) ArchiveDir() string { return filepath.Join(s.Dir, "archive") }

// Load reads the snapshot without taking the lock: the rename that commits a
// write makes every read see a whole checkpoint. A v1.3 file is migrated in
// memory (and rewritten at the next locked write).
func (s *Store) Load() (*Checkpoint, error) {
	cp, _, err := s.read()
	return cp, err
}

func (s *Store) read() (*Checkpoint, bool, error) {
	path := s.CheckpointPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A log without its snapshot means the snapshot was lost, not
		// that there is no workflow: never reset silently.
		if fi, lerr := os.Stat(s.LogPath()); lerr == nil && fi.Size() > 0 {
			return nil, false, &CorruptError{Path: path, Err: errors.New("missing, but events.jsonl holds a workflow")}
		}
		if lineage, gone := s.vanished(); gone {
			return nil, false, &VanishedError{Dir: s.Dir, Lineage: lineage}
		}
		return nil, false, ErrNoState
	}
	if err != nil {
		return nil, false, &CorruptError{Path: path, Err: err}
	}
	cp, migrated, err := Decode(b)
	if err != nil {
		return nil, false, &CorruptError{Path: path, Err: err}
	}
	return cp, migrated, nil
}

// Update is the one read-modify-write: under the exclusive lock it recovers
// the log's tail, re-reads the snapshot, and calls fn on a copy. fn returns
// the events to log. If fn returns ErrNoChange the snapshot is left alone and
// only the events (denies, errors) are appended; with no events nothing is
// written. Otherwise the serial is incremented, the events are appended
// (the last one carrying the new checkpoint) and the snapshot is replaced.
// It returns the checkpoint as it now stands.
func (s *Store) Update(fn func(cp *Checkpoint) ([]Event, error)) (*Checkpoint, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	cp, err := s.prepareLocked()
	if err != nil {
		return nil, err
	}
	next := cp.Clone()
	events, err := fn(next)
	if errors.Is(err, ErrNoChange) {
		if len(events) == 0 {
			return cp, nil
		}
		for i := range events {
			if events[i].StateBefore == "" {
				events[i].StateBefore = cp.StateMachine.CurrentState
			}
		}
		s.stamp(events, cp.Serial, nil)
		return cp, appendEvents(s.LogPath(), events)
	}
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, errors.New("state: a change without an event to log")
	}
	if err := s.commitLocked(cp, next, events); err != nil {
		return nil, err
	}
	return next, nil
}

// Append logs events that change nothing (a deny, an error).
func (s *Store) Append(events ...Event) error {
	_, err := s.Update(func(*Checkpoint) ([]Event, error) { return events, ErrNoChange })
	return err
}

// prepareLocked runs under the lock: it removes a crashed writer's
// leftovers and returns the current snapshot, committing a v1.3 migration.
func (s *Store) prepareLocked() (*Checkpoint, error) {
	removeStaleTemps(s.Dir)
	cp, migrated, err := s.read()
	if err != nil {
		return nil, err
	}
	if cut, err := recoverLog(s.LogPath(), cp.Serial); err != nil {
		return nil, fmt.Errorf("recovering %s: %w", s.LogPath(), err)
	} else if cut != "" {
		ev := []Event{{Type: EventRecover, Reason: cut, StateBefore: cp.StateMachine.CurrentState}}
		s.stamp(ev, cp.Serial, nil)
		if err := appendEvents(s.LogPath(), ev); err != nil {
			return nil, err
		}
	}
	if migrated {
		next := cp.Clone()
		ev := []Event{{Type: EventMigrate, Reason: "checkpoint v1.3 migrated to v2.0 on load"}}
		if err := s.commitLocked(cp, next, ev); err != nil {
			return nil, err
		}
		cp = next
	}
	return cp, nil
}

// commitLocked writes a state change: log first, snapshot second. The
// snapshot's rename is the commit point (see Event).
func (s *Store) commitLocked(prev, next *Checkpoint, events []Event) error {
	next.SchemaVersion = SchemaVersion
	next.Serial = prev.Serial + 1
	next.Metadata.UpdatedAt = s.Now()
	if err := next.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid checkpoint: %w", err)
	}
	data, err := jsonenc.Marshal(next)
	if err != nil {
		return err
	}
	for i := range events {
		if events[i].StateBefore == "" {
			events[i].StateBefore = prev.StateMachine.CurrentState
		}
		if events[i].StateAfter == "" {
			events[i].StateAfter = next.StateMachine.CurrentState
		}
	}
	s.stamp(events, next.Serial, data)
	if err := appendEvents(s.LogPath(), events); err != nil {
		return err
	}
	if err := writeFileAtomic(s.CheckpointPath(), append(data, '\n')); err != nil {
		return err
	}
	s.setMarker(next)
	return nil
}

// stamp fills time and serial, and puts the checkpoint on the last record.
func (s *Store) stamp(events []Event, serial uint64, checkpoint []byte) {
	now := s.Now()
	for i := range events {
		if events[i].Time.IsZero() {
			events[i].Time = now
		}
		events[i].Serial = serial
	}
	if checkpoint != nil {
		events[len(events)-1].Checkpoint = checkpoint
	}
}

// Create starts a new workflow with cp (serial 1) and its first events.
// A workflow that is still active is never replaced; a finished one is
// archived under archive/<lineage>/ first.
func (s *Store) Create(cp *Checkpoint, events ...Event) error {
	if err := s.ensureDirs(); err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	removeStaleTemps(s.Dir)
	old, _, err := s.read()
	switch {
	case err == nil && !old.Finished():
		return &ActiveError{Command: old.StateMachine.WorkflowConfig.Command, State: old.StateMachine.CurrentState, Since: old.Metadata.CreatedAt}
	case err == nil:
		if err := s.archiveLocked(old); err != nil {
			return err
		}
	case errors.Is(err, ErrNoState):
	default:
		return err
	}
	if cp.Lineage == "" {
		cp.Lineage = NewLineage()
	}
	if cp.Metadata.CreatedAt.IsZero() {
		cp.Metadata.CreatedAt = s.Now()
	}
	if len(events) == 0 {
		events = []Event{{Type: EventStart}}
	}
	return s.commitLocked(&Checkpoint{}, cp, events)
}

// archiveLocked moves a finished workflow's snapshot and log aside.
func (s *Store) archiveLocked(old *Checkpoint) error {
	dest := filepath.Join(s.ArchiveDir(), old.Lineage)
	if err := ensureDir(s.ArchiveDir()); err != nil {
		return err
	}
	if err := ensureDir(dest); err != nil {
		return err
	}
	for _, name := range []string{"checkpoint.json", "events.jsonl"} {
		err := os.Rename(filepath.Join(s.Dir, name), filepath.Join(dest, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
	}
	return syncDir(s.Dir)
}

// ensureDirs creates .orchestrator/state (0700, git-ignored).
func (s *Store) ensureDirs() error {
	if err := ensureDir(filepath.Dir(s.Dir)); err != nil {
		return err
	}
	if err := ensureDir(s.Dir); err != nil {
		return err
	}
	ignore := filepath.Join(s.Dir, ".gitignore")
	if _, err := os.Lstat(ignore); errors.Is(err, fs.ErrNotExist) {
		return writeFileAtomic(ignore, []byte("*\n"))
	}
	return nil
}

// Events returns the committed records of the log, oldest first.
func (s *Store) Events() ([]Event, LogReport, error) {
	max := ^uint64(0)
	if cp, err := s.Load(); err == nil {
		max = cp.Serial
	}
	return readEvents(s.LogPath(), max)
}

// Repair rebuilds a damaged or missing snapshot from the last complete
// checkpoint record in the log, keeping the damaged file beside it. On a
// healthy store it only recovers the log's tail. It returns what it did.
func (s *Store) Repair() (string, error) {
	if _, err := os.Stat(s.CheckpointPath()); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(s.LogPath()); errors.Is(err, fs.ErrNotExist) {
			if lineage, ok := s.forgetVanished(); ok {
				return fmt.Sprintf("the state of workflow %s is gone; orch-hook forgot it (nothing is gated here any more)", lineage), nil
			}
		}
	}
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoState
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	removeStaleTemps(s.Dir)
	cp, _, err := s.read()
	var corrupt *CorruptError
	switch {
	case err == nil:
		if _, err := s.prepareLocked(); err != nil {
			return "", err
		}
		return fmt.Sprintf("checkpoint.json is healthy (serial %d, state %s); nothing to rebuild", cp.Serial, cp.StateMachine.CurrentState), nil
	case errors.As(err, &corrupt):
	default:
		return "", err
	}
	events, _, err := readEvents(s.LogPath(), ^uint64(0))
	if err != nil {
		return "", err
	}
	var rebuilt *Checkpoint
	var from Event
	for i := len(events) - 1; i >= 0 && rebuilt == nil; i-- {
		if len(events[i].Checkpoint) == 0 {
			continue
		}
		if c, _, err := Decode(events[i].Checkpoint); err == nil {
			rebuilt, from = c, events[i]
		}
	}
	if rebuilt == nil {
		return "", fmt.Errorf("cannot rebuild %s: events.jsonl holds no valid checkpoint record (%v); fix the file by hand, or move .orchestrator/state away to start over", s.CheckpointPath(), corrupt.Err)
	}
	kept := ""
	if _, err := os.Lstat(s.CheckpointPath()); err == nil {
		kept = s.CheckpointPath() + ".corrupt-" + s.Now().Format("20060102T150405.000000000Z")
		if err := os.Rename(s.CheckpointPath(), kept); err != nil {
			return "", err
		}
	}
	// Drop any tail past the record we rebuild from, then commit the
	// rebuilt state as a new serial so the log says what happened.
	if _, err := recoverLog(s.LogPath(), rebuilt.Serial); err != nil {
		return "", err
	}
	prev := rebuilt.Clone()
	ev := []Event{{Type: EventRepair, Reason: fmt.Sprintf("snapshot rebuilt from the event of %s (serial %d): %v", from.Time.Format(time.RFC3339), from.Serial, corrupt.Err)}}
	if err := s.commitLocked(prev, rebuilt, ev); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("rebuilt checkpoint.json from events.jsonl: state %s, serial %d", rebuilt.StateMachine.CurrentState, rebuilt.Serial)
	if kept != "" {
		msg += "; the damaged file is kept as " + kept
	}
	return msg, nil
}
