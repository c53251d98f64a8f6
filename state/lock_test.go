package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// tstHoldLock takes the store's lock the way another orch-hook process
// would (its own open file description), optionally writes a holder record
// into it, and returns the release function.
func tstHoldLock(t *testing.T, s *Store, holder *LockHolder) func() {
	t.Helper()
	fl := flock.New(s.lockPath())
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	content := []byte{}
	if holder != nil {
		content, _ = json.Marshal(holder)
	}
	if err := os.WriteFile(s.lockPath(), content, 0o600); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			fl.Unlock()
		}
	}
	t.Cleanup(release)
	return release
}

// tstLockWait sets LockWait for one test. Tests that use it do not run in
// parallel.
func tstLockWait(t *testing.T, d time.Duration) {
	old := LockWait
	LockWait = d
	t.Cleanup(func() { LockWait = old })
}

func TestLockTimeout(t *testing.T) {
	since := time.Date(2025, 4, 1, 8, 30, 0, 0, time.UTC)
	tests := []struct {
		name   string
		holder *LockHolder
		want   []string
	}{
		{"holder recorded", &LockHolder{PID: os.Getpid(), Command: "orch-hook hook PreToolUse", Since: since},
			[]string{fmt.Sprintf("pid %d", os.Getpid()), "(orch-hook hook PreToolUse)", "since 2025-04-01T08:30:00Z"}},
		// The recorded holder exited: someone else (flock(1), say) holds it.
		{"recorded holder gone", &LockHolder{PID: 2147483646, Command: "orch-hook hook PreToolUse", Since: since},
			[]string{"a process that is not orch-hook (the last recorded holder, pid 2147483646 (orch-hook hook PreToolUse), has exited"}},
		{"no holder record", nil, []string{"an unknown process"}},
	}
	ops := []struct {
		name string
		run  func(s *Store) error
	}{
		{"Update", func(s *Store) error {
			_, err := s.Update(tstTransition("implement"))
			return err
		}},
		{"Append", func(s *Store) error { return s.Append(Event{Type: EventDeny}) }},
		{"Create", func(s *Store) error { return s.Create(tstCheckpoint("initialize")) }},
		{"Repair", func(s *Store) error { _, err := s.Repair(); return err }},
	}
	tstLockWait(t, 60*time.Millisecond)
	for _, tt := range tests {
		for _, op := range ops {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				s := tstCreate(t, "plan")
				tstHoldLock(t, s, tt.holder)
				before := tstSnapshotDir(t, s.Dir)
				start := time.Now()
				err := op.run(s)
				var le *LockError
				if !errors.As(err, &le) {
					t.Fatalf("error %v (%T), want *LockError", err, err)
				}
				if waited := time.Since(start); waited < LockWait || le.Waited < LockWait-5*time.Millisecond {
					t.Errorf("gave up after %v (reported %v), LockWait is %v", waited, le.Waited, LockWait)
				}
				if le.Path != s.lockPath() {
					t.Errorf("Path %q", le.Path)
				}
				msg := err.Error()
				if !strings.Contains(msg, s.lockPath()) {
					t.Errorf("message %q does not name the lock file", msg)
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("message %q does not contain %q", msg, w)
					}
				}
				if le.Hint() == "" {
					t.Error("LockError.Hint() is empty")
				}
				tstAssertUnchanged(t, s.Dir, before)
			})
		}
	}
}

// Once the holder lets go, a waiter gets the lock and records itself as
// the holder.
func TestLockAcquiredAfterRelease(t *testing.T) {
	s := tstCreate(t, "plan")
	tstLockWait(t, 5*time.Second)
	release := tstHoldLock(t, s, &LockHolder{PID: 1, Command: "other"})
	done := make(chan error, 1)
	go func() {
		_, err := s.Update(tstTransition("implement"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Update finished while the lock was held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Update did not get the lock after its release")
	}
	h := readHolder(s.lockPath())
	if h == nil || h.PID != os.Getpid() || h.Command == "" || h.Since.IsZero() {
		t.Errorf("holder record after Update: %+v", h)
	}
	if m := tstMode(t, s.lockPath()); m != 0o600 {
		t.Errorf("lock mode %v", m)
	}
}

func TestErrorHints(t *testing.T) {
	errs := []interface {
		error
		Hint() string
	}{
		&LockError{Path: "/p/lock", Waited: time.Second},
		&LockError{Path: "/p/lock", Waited: time.Second, Holder: &LockHolder{PID: 7, Command: "x"}},
		&CorruptError{Path: "/p/checkpoint.json", Err: errors.New("truncated")},
		&ActiveError{Command: "coordinate", State: "plan", Since: tstEpoch},
	}
	for _, e := range errs {
		if e.Hint() == "" {
			t.Errorf("%T.Hint() is empty", e)
		}
		if msg := e.Error(); msg == "" || strings.Contains(msg, "\n") {
			t.Errorf("%T.Error() = %q", e, msg)
		}
	}
	ce := &CorruptError{Path: "/p/checkpoint.json", Err: ErrNoState}
	if !errors.Is(ce, ErrNoState) {
		t.Error("CorruptError does not unwrap")
	}
}

// TestPeekNeverLocks: Peek reads what Load reads, and when the read looks
// changed outside orch-hook it answers at once, with the TamperError, while
// another process holds the lock (Load would wait for it to read again).
func TestPeekNeverLocks(t *testing.T) {
	s := tstCreate(t, "plan")
	cp, err := s.Peek()
	if err != nil || cp.StateMachine.CurrentState != "plan" {
		t.Fatalf("Peek: %v, %v", cp, err)
	}
	tstHoldLock(t, s, nil)
	if err := os.WriteFile(s.CheckpointPath(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Open(s.Root).Peek()
	var te *TamperError
	if !errors.As(err, &te) {
		t.Errorf("Peek of a changed checkpoint: %v, want a *TamperError", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Peek took %v with the lock held elsewhere: it waited for the lock", d)
	}
}
