package state

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
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
	// Check, when set, is run on every checkpoint read: a checkpoint it
	// refuses is damaged (status and repair set it to decode the
	// workflow's own section).
	Check func(*Checkpoint) error
	// Committed, when set, runs under the lock after each state change
	// that Update committed, with the checkpoint before and after: what is
	// derived from a change (the workflow's record, its metrics line) is
	// written by the writer that made it. It never undoes the change: an
	// error it returns is logged.
	Committed func(prev, next *Checkpoint) error

	// pin is, under the lock, what the last audit found: where the log
	// ends and what the marker must record.
	pin *audit
	// mu keeps the locked sections of goroutines sharing this Store apart
	// (flock(2) does between processes): pin is theirs.
	mu sync.Mutex
	// crashAt makes a commit stop where a killed writer would ("append":
	// after the log, before the rename; "rename": before the marker), for
	// the recovery tests.
	crashAt string
	// resolved is Root resolved (ResolvedRoot), once it names a directory.
	resolved atomic.Pointer[string]
}

// errCrashed is what a commit stopped by crashAt returns.
var errCrashed = errors.New("state: stopped as if killed (test)")

// Open returns the store of the project at root. It does no I/O.
func Open(root string) *Store {
	return &Store{Root: root, Dir: filepath.Join(root, Dir), Now: func() time.Time { return time.Now().UTC() }}
}

// ResolvedRoot is ResolvedRoot(s.Root), worked out once per Store (each
// time a call needs it, the marker's name among them, it is a walk of the
// path) from when the root is a directory: that does not change while a
// process runs.
func (s *Store) ResolvedRoot() string {
	if r := s.resolved.Load(); r != nil {
		return *r
	}
	r := ResolvedRoot(s.Root)
	if fi, err := os.Stat(r); err == nil && fi.IsDir() {
		s.resolved.Store(&r)
	}
	return r
}

// CheckpointPath is the snapshot file.
func (s *Store) CheckpointPath() string { return filepath.Join(s.Dir, "checkpoint.json") }

// LogPath is the append-only event log.
func (s *Store) LogPath() string { return filepath.Join(s.Dir, "events.jsonl") }

func (s *Store) lockPath() string { return filepath.Join(s.Dir, "lock") }

// ArchiveDir is where finished workflows are moved, one folder per lineage.
func (s *Store) ArchiveDir() string { return filepath.Join(s.Dir, "archive") }

// Load reads the snapshot without taking the lock: the rename that commits a
// write makes every read see a whole checkpoint. A v1.3 file is an
// UnadoptedError until the user adopts it (Adopt).
func (s *Store) Load() (*Checkpoint, error) {
	cp, _, err := s.readAudited(false, nil)
	var tamper *TamperError
	if errors.As(err, &tamper) && s.mu.TryLock() {
		// Read without the lock, the files and the marker may be from
		// different writes: a change is only called one under the lock.
		// (Not when this Store already holds it: then the read was
		// consistent.)
		s.mu.Unlock()
		unlock, lerr := s.lock()
		if lerr != nil {
			return nil, lerr
		}
		defer unlock()
		cp, _, err = s.readAudited(true, nil)
	}
	return cp, err
}

// Peek is Load that never takes the lock, for readers that must never
// wait on a hook (the agent panel's labels): a read that looks changed
// outside orch-hook, which a write racing it can cause, is returned as
// the TamperError rather than read again under the lock. It writes
// nothing.
func (s *Store) Peek() (*Checkpoint, error) {
	cp, _, err := s.readAudited(false, nil)
	return cp, err
}

// readCheckpoint reads the snapshot and the stamp of the file it read.
func (s *Store) readCheckpoint() ([]byte, Stamp, error) {
	f, err := os.OpenFile(s.CheckpointPath(), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, err
	}
	b, err := readOpen(f, s.CheckpointPath(), fi, maxCheckpoint)
	return b, stampOf(fi), err
}

// maxCheckpoint bounds a checkpoint file read (ReadCheckpointFile's too).
const maxCheckpoint = 64 << 20

// readAudited reads the snapshot and checks it, and the log, against the
// marker (full: the whole chain when the log changed; under the lock).
// When the file holds the very bytes known was read from, known is the
// checkpoint, not decoded again (it is checked against its seal and the
// marker all the same).
func (s *Store) readAudited(full bool, known *Checkpoint) (*Checkpoint, *audit, error) {
	path := s.CheckpointPath()
	raw, stamp, err := s.readCheckpoint()
	if errors.Is(err, fs.ErrNotExist) {
		// A log without its snapshot means the snapshot was lost, not
		// that there is no workflow: never reset silently.
		if fi, lerr := os.Stat(s.LogPath()); lerr == nil && fi.Size() > 0 {
			return nil, nil, &CorruptError{Path: path, Err: errors.New("missing, but events.jsonl holds a workflow")}
		}
		if lineage, gone := s.vanished(); gone {
			return nil, nil, &VanishedError{Dir: s.Dir, Lineage: lineage}
		}
		return nil, nil, ErrNoState
	}
	if err != nil {
		return nil, nil, &CorruptError{Path: path, Err: err}
	}
	body, seal, err := splitSeal(raw)
	if err != nil {
		return nil, nil, tampered("checkpoint.json was rewritten by something other than orch-hook (%v)", err)
	}
	var cp *Checkpoint
	var migrated bool
	if known != nil && known.src != nil && bytes.Equal(raw, known.src) {
		cp = known
	} else {
		cp, migrated, err = Decode(body)
	}
	if err == nil && migrated {
		// A v1.3 file carries no seal: only the user adopts it (Adopt),
		// never a read.
		return nil, nil, &UnadoptedError{Path: path, Pinned: s.replacesRunning()}
	}
	if err == nil && s.Check != nil {
		err = s.Check(cp)
	}
	if err != nil {
		// Unreadable and not what orch-hook last wrote: changed outside.
		if m, merr := s.readMarker(); merr == nil && m != nil && fileDigest(raw) != m.Checkpoint {
			return nil, nil, tampered("checkpoint.json was changed and is no longer a valid checkpoint (%v)", err)
		}
		return nil, nil, &CorruptError{Path: path, Err: err}
	}
	a, err := s.verify(raw, stamp, body, seal, cp, full)
	if err != nil {
		return nil, nil, err
	}
	a.digest, a.serial, a.lineage, a.finished = fileDigest(raw), cp.Serial, cp.Lineage, cp.Finished()
	if seal != nil {
		a.commit = seal.Log
	}
	cp.src = raw
	return cp, a, nil
}

// Update is the one read-modify-write: under the exclusive lock it recovers
// the log's tail, re-reads the snapshot, and calls fn on a copy. fn returns
// the events to log. If fn returns ErrNoChange the snapshot is left alone and
// only the events (denies, errors) are appended; with no events nothing is
// written. Otherwise the serial is incremented, the events are appended
// (the last one carrying the new checkpoint) and the snapshot is replaced.
// It returns the checkpoint as it now stands.
func (s *Store) Update(fn func(cp *Checkpoint) ([]Event, error)) (*Checkpoint, error) {
	return s.update(nil, func(cp *Checkpoint, _ bool) ([]Event, error) { return fn(cp) })
}

// UpdateFrom is Update for a caller that has decided on snap, a checkpoint
// Load returned (and that it has not changed): fn is also told whether
// what the lock read is the very checkpoint file snap was read from, byte
// for byte (its seal, serial, lineage and content; checked against the
// marker as every locked read is). Then a decision made on snap holds
// for it, and the checkpoint is not decoded again. Anything else (another
// write came between, the workflow was restarted or a state was accepted
// at the same serial, a recovery rewrote it) is not the same.
func (s *Store) UpdateFrom(snap *Checkpoint, fn func(cp *Checkpoint, same bool) ([]Event, error)) (*Checkpoint, error) {
	return s.update(snap, fn)
}

func (s *Store) update(snap *Checkpoint, fn func(cp *Checkpoint, same bool) ([]Event, error)) (*Checkpoint, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	cp, err := s.prepareLocked(snap)
	if err != nil {
		return nil, err
	}
	next := cp.Clone()
	events, err := fn(next, snap != nil && cp == snap)
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
		if err := s.appendLocked(events); err != nil {
			return nil, err
		}
		return cp, s.markLocked()
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
	s.afterCommitLocked(cp, next)
	return next, nil
}

// afterCommitLocked runs Committed; its failure is logged, not returned:
// the change is made.
func (s *Store) afterCommitLocked(prev, next *Checkpoint) {
	if s.Committed == nil {
		return
	}
	if err := s.Committed(prev, next); err != nil {
		ev := []Event{{Type: EventError, StateBefore: next.StateMachine.CurrentState, Reason: "after the change: " + oneLineErr(err)}}
		s.stamp(ev, next.Serial, nil)
		if s.appendLocked(ev) == nil {
			_ = s.markLocked()
		}
	}
}

// Append logs events that change nothing (a deny, an error).
func (s *Store) Append(events ...Event) error {
	_, err := s.Update(func(*Checkpoint) ([]Event, error) { return events, ErrNoChange })
	return err
}

// prepareLocked runs under the lock: it removes a crashed writer's
// leftovers, checks the state against its marker (a change made outside
// orch-hook is an error), cuts what a writer that died between append and
// rename left, and returns the current snapshot, committing a v1.3
// migration (or the first seal of an imported state). The snapshot is
// known itself when the file is still the one known was read from (see
// readAudited).
func (s *Store) prepareLocked(known *Checkpoint) (*Checkpoint, error) {
	removeStaleTemps(s.Dir)
	cp, a, err := s.readAudited(true, known)
	if err != nil {
		return nil, err
	}
	s.pin = a
	if a.cutAt >= 0 {
		if err := truncateLog(s.LogPath(), a.cutAt); err != nil {
			return nil, fmt.Errorf("recovering %s: %w", s.LogPath(), err)
		}
		ev := []Event{{Type: EventRecover, Reason: a.cutWhat, StateBefore: cp.StateMachine.CurrentState}}
		s.stamp(ev, cp.Serial, nil)
		if err := s.appendLocked(ev); err != nil {
			return nil, err
		}
		a.refresh = true
	}
	if a.refresh {
		if err := s.markLocked(); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// truncateLog cuts the log back to size.
func truncateLog(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|noFollow|nonBlock, fileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// commitLocked writes a state change: log first, snapshot second. The
// snapshot's rename is the commit point (see Event); the marker outside
// the project then records exactly what was written.
func (s *Store) commitLocked(prev, next *Checkpoint, events []Event) error {
	next.SchemaVersion = SchemaVersion
	next.Serial = prev.Serial + 1
	next.Metadata.UpdatedAt = s.Now()
	if err := next.Validate(); err != nil {
		return fmt.Errorf("refusing to write an invalid checkpoint: %w", err)
	}
	key, err := keyFor(next.Lineage)
	if err != nil {
		return err
	}
	body, err := jsonenc.Marshal(next)
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
	s.stamp(events, next.Serial, body)
	if err := s.appendLocked(events); err != nil {
		return err
	}
	if s.crashAt == "append" {
		return errCrashed
	}
	seal := Seal{Log: s.pin.tail, MAC: macOf(key, body, s.pin.tail)}
	file := append(sealBytes(body, seal), '\n')
	if err := writeFileAtomic(s.CheckpointPath(), file); err != nil {
		return err
	}
	if s.crashAt == "rename" {
		return errCrashed
	}
	p := s.pin
	p.digest, p.commit, p.serial, p.lineage, p.finished = fileDigest(file), seal.Log, next.Serial, next.Lineage, next.Finished()
	return s.markLocked()
}

// appendLocked chains events onto the log's last record and appends them.
func (s *Store) appendLocked(events []Event) error {
	if s.pin == nil {
		s.pin = &audit{cutAt: -1, base: -1}
	}
	tail, size, err := appendEvents(s.LogPath(), events, s.pin.tail, s.pin.size)
	if err != nil {
		return err
	}
	s.pin.tail, s.pin.size = tail, size
	return nil
}

// markLocked records in the marker what the state now is.
func (s *Store) markLocked() error {
	p := s.pin
	m := &Marker{Lineage: p.lineage, Finished: p.finished, Serial: p.serial, Checkpoint: p.digest, Commit: p.commit, LogSize: p.size, LogTail: p.tail}
	if p.marker != nil {
		m.LogBase = p.marker.LogBase
	}
	if p.base >= 0 {
		m.LogBase = p.base
	}
	fi, err := os.Stat(s.CheckpointPath())
	if err != nil {
		return err
	}
	m.CheckpointStamp = stampOf(fi)
	if fi, err := os.Stat(s.LogPath()); err == nil {
		m.LogStamp = stampOf(fi)
	}
	// In place only over a marker this lock read, with its sum
	// (writeMarker).
	if err := s.writeMarker(m, p.marker != nil && p.marker.summed); err != nil {
		return fmt.Errorf("recording the workflow's marker: %w", err)
	}
	p.marker = m
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
	old, _, err := s.readAudited(true, nil)
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
	if _, err := newKey(cp.Lineage); err != nil {
		return err
	}
	s.pin = &audit{cutAt: -1, base: 0}
	return s.commitLocked(&Checkpoint{}, cp, events)
}

// archiveLocked moves a finished workflow's snapshot, log and recorded
// plan copies aside.
func (s *Store) archiveLocked(old *Checkpoint) error {
	return s.archiveFilesLocked(old.Lineage, "checkpoint.json", "events.jsonl", recordedName)
}

// archiveFilesLocked moves a workflow's files (those of names present) to
// archive/<lineage>/ and forgets its key.
func (s *Store) archiveFilesLocked(lineage string, names ...string) error {
	dest := filepath.Join(s.ArchiveDir(), lineage)
	if err := ensureDir(s.ArchiveDir()); err != nil {
		return err
	}
	if err := ensureDir(dest); err != nil {
		return err
	}
	for _, name := range names {
		err := os.Rename(filepath.Join(s.Dir, name), filepath.Join(dest, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("archiving %s: %w", name, err)
		}
	}
	removeKey(lineage)
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
	if cp, err := ReadCheckpointFile(s.CheckpointPath()); err == nil { // the serial only: no check, no lock
		max = cp.Serial
	}
	return readEvents(s.LogPath(), max)
}

// Repair brings the state back to the last state orch-hook wrote. A
// checkpoint changed outside orch-hook (edited, rolled back, replaced,
// deleted) is restored from the log record the marker pins; a damaged one
// without a marker is rebuilt from the last complete checkpoint record of
// the log. The file replaced is kept beside it. A log changed outside
// orch-hook cannot be restored: Repair says so, and AcceptState accepts it
// as it is. On a healthy store it only recovers the log's tail. It returns
// what it did.
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
	cp, err := s.prepareLocked(nil)
	var corrupt *CorruptError
	var tamper *TamperError
	var unadopted *UnadoptedError
	switch {
	case errors.As(err, &unadopted) && unadopted.Pinned:
		return s.restoreLocked(&TamperError{What: "checkpoint.json was replaced by a v1.3 checkpoint"})
	case err == nil:
		return fmt.Sprintf("the state is healthy (serial %d, state %s; sealed, and as orch-hook wrote it); nothing to repair", cp.Serial, cp.StateMachine.CurrentState), nil
	case errors.As(err, &tamper):
		return s.restoreLocked(tamper)
	case errors.As(err, &corrupt):
		return s.rebuildLocked(corrupt)
	}
	return "", err
}

// restoreLocked puts back the checkpoint the marker pins, from the log
// record that commits it.
func (s *Store) restoreLocked(tamper *TamperError) (string, error) {
	m, err := s.readMarker()
	var unread *TamperError
	if errors.As(err, &unread) {
		// The marker itself does not read (edited, or torn by a crash
		// while it was rewritten in place): nothing pins a state to
		// restore.
		return "", fmt.Errorf("%v; it pins no state to restore: accept the state as it is with `orch-hook repair --accept`", unread)
	}
	if err != nil {
		return "", err
	}
	if m == nil {
		return "", fmt.Errorf("%v; there is no marker to restore from: accept the state as it is with `orch-hook repair --accept`", tamper)
	}
	if raw, _, err := s.readCheckpoint(); err == nil && fileDigest(raw) == m.Checkpoint {
		return "", fmt.Errorf("%v; checkpoint.json is intact, but the log cannot be restored: accept it as it is with `orch-hook repair --accept`", tamper)
	}
	body, err := findCommit(s.LogPath(), m.Commit)
	if err != nil {
		return "", fmt.Errorf("%v; the record of serial %d that orch-hook last committed cannot be read from events.jsonl (%v): accept the state as it is with `orch-hook repair --accept`", tamper, m.Serial, err)
	}
	key, err := readKey(m.Lineage)
	if err != nil {
		return "", err
	}
	file := append(sealBytes(body, Seal{Log: m.Commit, MAC: macOf(key, body, m.Commit)}), '\n')
	if fileDigest(file) != m.Checkpoint {
		return "", fmt.Errorf("%v; the record in events.jsonl does not rebuild the checkpoint the marker pins: accept the state as it is with `orch-hook repair --accept`", tamper)
	}
	kept := ""
	if _, err := os.Lstat(s.CheckpointPath()); err == nil {
		kept = s.CheckpointPath() + ".changed-" + s.Now().Format("20060102T150405.000000000Z")
		if err := os.Rename(s.CheckpointPath(), kept); err != nil {
			return "", err
		}
	}
	if err := writeFileAtomic(s.CheckpointPath(), file); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("restored checkpoint.json to serial %d, the last state orch-hook wrote (%s)", m.Serial, tamper.What)
	if kept != "" {
		msg += "; the changed file is kept as " + kept
	}
	cp, err := s.prepareLocked(nil)
	if err != nil {
		var still *TamperError
		if errors.As(err, &still) {
			return "", fmt.Errorf("%s; but %v: the log cannot be restored; accept it as it is with `orch-hook repair --accept`", msg, still.What)
		}
		return "", err
	}
	ev := []Event{{Type: EventRepair, Reason: "the user restored the last state orch-hook wrote after a change made outside it: " + tamper.What}}
	if err := s.commitLocked(cp, cp.Clone(), ev); err != nil {
		return "", err
	}
	return msg, nil
}

// findCommit returns the checkpoint carried by the log record whose hash is
// commit.
func findCommit(path, commit string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found []byte
	err = reverseLines(f, func(line []byte) bool {
		if lineHash(line) != commit {
			return true
		}
		var p chainProbe
		if jsonfast.Unmarshal(line, &p) == nil && len(p.Checkpoint) > 0 {
			found = p.Checkpoint
		}
		return false
	})
	if err == nil && found == nil {
		err = errors.New("no such record")
	}
	return found, err
}

// rebuildLocked rebuilds a damaged snapshot that orch-hook itself wrote (or
// that no marker pins) from the last checkpoint record of the log that
// reads, as a new serial: nothing in the log is cut.
func (s *Store) rebuildLocked(corrupt *CorruptError) (string, error) {
	events, _, err := readEvents(s.LogPath(), ^uint64(0))
	if err != nil {
		return "", err
	}
	var rebuilt *Checkpoint
	var from Event
	top := uint64(0)
	for i := len(events) - 1; i >= 0; i-- {
		top = max(top, events[i].Serial)
		if len(events[i].Checkpoint) == 0 || rebuilt != nil {
			continue
		}
		if c, _, err := Decode(events[i].Checkpoint); err == nil && (s.Check == nil || s.Check(c) == nil) {
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
	if err := s.startSegmentLocked(); err != nil {
		return "", err
	}
	prev := rebuilt.Clone()
	if m, _ := s.readMarker(); m != nil {
		top = max(top, m.Serial)
	}
	prev.Serial = top // the rebuilt state is committed past every serial the log holds
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

// startSegmentLocked makes the log's current end the start of what is
// checked from now on (after the user accepted the state, or a rebuild):
// a torn last line is cut first so that the next record chains on a
// whole one.
func (s *Store) startSegmentLocked() error {
	f, err := os.OpenFile(s.LogPath(), os.O_RDWR|noFollow|nonBlock, fileMode)
	if errors.Is(err, fs.ErrNotExist) {
		s.pin = &audit{cutAt: -1, base: 0}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	tail := ""
	if size > 0 {
		start, last, err := lastLine(f, size)
		if err != nil {
			return err
		}
		if !bytes.HasSuffix(last, []byte("\n")) {
			if err := f.Truncate(start); err != nil {
				return err
			}
			size = start
			if size > 0 {
				if _, last, err = lastLine(f, size); err != nil {
					return err
				}
			}
		}
		if size > 0 {
			tail = lineHash(last)
		}
	}
	s.pin = &audit{cutAt: -1, tail: tail, size: size, base: size}
	return nil
}

// AcceptState re-seals the state as it now is, after the user has seen
// what changed outside orch-hook (/orch-hook:resolve accept-state, or
// `orch-hook repair --accept`): the change is logged, and the log is
// checked from here on. A checkpoint that does not validate is not
// accepted. With nothing to accept it says so.
func (s *Store) AcceptState(who string) (string, error) {
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoState
	}
	unlock, err := s.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	removeStaleTemps(s.Dir)
	_, a, err := s.readAudited(true, nil)
	var tamper *TamperError
	var badKey *KeyError
	switch {
	case err == nil && a.cutAt < 0:
		return "nothing to accept: the state is as orch-hook wrote it", nil
	case err == nil:
		if _, err := s.prepareLocked(nil); err != nil {
			return "", err
		}
		return "nothing to accept: the state is as orch-hook wrote it (an interrupted write was recovered)", nil
	case errors.As(err, &tamper), errors.As(err, &badKey):
	default:
		return "", fmt.Errorf("cannot accept the state: %w", err)
	}
	raw, _, err := s.readCheckpoint()
	if err != nil {
		return "", fmt.Errorf("cannot accept the state: %w; run `orch-hook repair`", err)
	}
	body, _, err := splitSeal(raw)
	if err != nil {
		body = raw
	}
	cp, _, err := Decode(body)
	if err == nil && s.Check != nil {
		err = s.Check(cp)
	}
	if err != nil {
		return "", fmt.Errorf("cannot accept checkpoint.json: it is not a valid checkpoint (%v); fix it by hand, or run `orch-hook repair` to restore the last state orch-hook wrote", oneLineErr(err))
	}
	if m, _ := s.readMarker(); m != nil && m.Lineage != cp.Lineage {
		removeKey(m.Lineage)
	}
	if err := s.startSegmentLocked(); err != nil {
		return "", err
	}
	what := ""
	if tamper != nil {
		what = tamper.What
	} else {
		what = badKey.Error()
	}
	ev := []Event{{Type: EventAccept, Reason: who + " accepted a state changed outside orch-hook: " + what}}
	next := cp.Clone()
	if err := s.commitLocked(cp, next, ev); err != nil {
		return "", err
	}
	return fmt.Sprintf("accepted the state as it is (%s): sealed again at serial %d, state %s", what, next.Serial, next.StateMachine.CurrentState), nil
}

func oneLineErr(err error) string { return trimJSONError(err).Error() }
