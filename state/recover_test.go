package state

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Crash recovery stays automatic and exact: a writer killed between its
// append and its rename leaves at most one batch past the snapshot, the
// marker proves it, and that batch (with a torn line, if any) is cut and
// logged at the next locked write. Nothing else is ever cut.

// tstTear appends a torn record, as a writer killed mid-append leaves.
func tstTear(t *testing.T, s *Store, partial string) {
	t.Helper()
	f, err := os.OpenFile(s.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(partial)
	f.Close()
}

// tstCrash runs one update that stops where a killed writer would.
func tstCrash(t *testing.T, s *Store, at string, fn func(*Checkpoint) ([]Event, error)) {
	t.Helper()
	s.crashAt = at
	defer func() { s.crashAt = "" }()
	if _, err := s.Update(fn); !errors.Is(err, errCrashed) {
		t.Fatalf("the update did not stop at %s: %v", at, err)
	}
}

func TestRecoverTornLog(t *testing.T) {
	s := tstCreate(t, "research")
	if err := s.Append(Event{Type: EventDeny}, Event{Type: EventDeny}); err != nil {
		t.Fatal(err)
	}
	orig := tstRead(t, s.LogPath())
	snap := tstRead(t, s.CheckpointPath())
	partial := `{"time":"2025-03-14T09:27:02Z","serial":1,"type":"de`
	tstTear(t, s, partial)
	// Readers skip the torn line without calling it bad.
	if evs, rep, err := s.Events(); err != nil || len(evs) != 3 || len(rep.BadLines) != 0 {
		t.Fatalf("Events before recovery: %d events, bad lines %v, %v", len(evs), rep.BadLines, err)
	}
	if _, err := s.Load(); err != nil {
		t.Fatalf("a lock-free read of a torn log: %v", err)
	}
	if _, err := s.Update(func(*Checkpoint) ([]Event, error) { return nil, ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	after := tstRead(t, s.LogPath())
	if !strings.HasPrefix(string(after), string(orig)) {
		t.Fatal("records before the torn line changed")
	}
	evs := tstLogEvents(t, s)
	if len(evs) != 4 {
		t.Fatalf("%d records after recovery, want 3 and a recover event", len(evs))
	}
	rec := evs[3]
	if rec.Type != EventRecover || rec.Serial != 1 || len(rec.Checkpoint) != 0 ||
		!strings.Contains(rec.Reason, fmt.Sprintf("a torn record (%d bytes)", len(partial))) || rec.StateBefore != "research" {
		t.Errorf("recover event %+v", rec)
	}
	if got := tstRead(t, s.CheckpointPath()); string(got) != string(snap) {
		t.Error("recovery rewrote the snapshot")
	}
	// Once clean, the next write does not log another recover event.
	if err := s.Append(Event{Type: EventDeny}); err != nil {
		t.Fatal(err)
	}
	if n := len(tstLogEvents(t, s)); n != 5 {
		t.Errorf("%d records, want 5", n)
	}
}

// A writer killed between append and rename: its batch is never shown, is
// cut at the next locked write, and its serial goes to the next change.
func TestRecoverUncommittedBatch(t *testing.T) {
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprintf("torn %v", torn), func(t *testing.T) {
			s := tstCreate(t, "plan")
			if err := s.Append(Event{Type: EventDeny}); err != nil {
				t.Fatal(err)
			}
			before := tstRead(t, s.LogPath())
			tstCrash(t, s, "append", func(cp *Checkpoint) ([]Event, error) {
				cp.StateMachine.CurrentState = "implement"
				return []Event{{Type: EventAgentLaunch}, {Type: EventUpdate}, {Type: EventTransition}}, nil
			})
			if torn {
				tstTear(t, s, `{"time":"2025-03-14T09:27:02Z","serial":2,"type":"de`)
			}
			if evs, _, _ := s.Events(); len(evs) != 2 {
				t.Errorf("Events shows %d records, want the 2 committed ones", len(evs))
			}
			if cp, err := s.Load(); err != nil || cp.StateMachine.CurrentState != "plan" {
				t.Fatalf("a lock-free read during the crash's leftovers: %v", err)
			}
			cp, err := s.Update(tstTransition("implement"))
			if err != nil {
				t.Fatal(err)
			}
			if cp.Serial != 2 {
				t.Errorf("serial %d, want 2 (the dead writer's)", cp.Serial)
			}
			after := tstRead(t, s.LogPath())
			if !strings.HasPrefix(string(after), string(before)) {
				t.Fatal("committed records changed")
			}
			evs := tstLogEvents(t, s)
			if len(evs) != 4 || evs[2].Type != EventRecover || !strings.Contains(evs[2].Reason, "uncommitted records past the snapshot") || evs[3].Serial != 2 || evs[3].StateAfter != "implement" {
				t.Errorf("log after recovery %+v", evs)
			}
			if torn != strings.Contains(evs[2].Reason, "torn record") {
				t.Errorf("recover reason %q (torn %v)", evs[2].Reason, torn)
			}
		})
	}
}

// A writer killed after its rename, before its marker: the checkpoint is
// one serial ahead of the marker, sealed, and committed by the log's last
// record. It is the state; nothing is cut.
func TestRecoverMarkerBehind(t *testing.T) {
	s := tstCreate(t, "plan")
	tstCrash(t, s, "rename", tstTransition("implement"))
	cp, err := s.Load()
	if err != nil || cp.StateMachine.CurrentState != "implement" || cp.Serial != 2 {
		t.Fatalf("Load: %v %+v", err, cp)
	}
	before := tstRead(t, s.LogPath())
	if _, err := s.Update(tstTransition("test")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(tstRead(t, s.LogPath())), string(before)) {
		t.Error("records were cut")
	}
	for _, ev := range tstLogEvents(t, s) {
		if ev.Type == EventRecover {
			t.Errorf("a recover event for a committed write: %+v", ev)
		}
	}
	if msg, err := s.Repair(); err != nil || !strings.Contains(msg, "healthy") {
		t.Errorf("Repair: %q %v", msg, err)
	}
}

// A checkpoint orch-hook itself sealed whose workflow section the hooks
// cannot read (a field of the wrong type): with Check set (status, doctor,
// repair), it is damage, never healthy, and repair rebuilds the last state
// that reads, as a new serial, cutting nothing.
func TestCheckUnreadableWorkflow(t *testing.T) {
	s := tstCreate(t, "plan")
	if _, err := s.Update(func(cp *Checkpoint) ([]Event, error) {
		cp.Workflow = []byte(`{"launches":"x"}`)
		return []Event{{Type: EventUpdate}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Check = func(cp *Checkpoint) error {
		if strings.Contains(string(cp.Workflow), `"launches":"x"`) {
			return &ValidationError{Field: "workflow", Problem: "launches: not a list"}
		}
		return nil
	}
	logBefore := tstRead(t, s.LogPath())
	_, err := s.Load()
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "launches: not a list") {
		t.Fatalf("Load: %v, want the damage named", err)
	}
	msg, err := s.Repair()
	if err != nil || !strings.Contains(msg, "rebuilt checkpoint.json") {
		t.Fatalf("Repair: %q %v", msg, err)
	}
	cp, err := s.Load()
	if err != nil || strings.Contains(string(cp.Workflow), `"x"`) || cp.Serial != 3 {
		t.Fatalf("after Repair: %v serial %v", err, cp)
	}
	if !strings.HasPrefix(string(tstRead(t, s.LogPath())), string(logBefore)) {
		t.Error("Repair cut the log")
	}
	if msg, err := s.Repair(); err != nil || !strings.Contains(msg, "healthy") {
		t.Errorf("second Repair: %q %v", msg, err)
	}
}
