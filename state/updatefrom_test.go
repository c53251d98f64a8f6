package state

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// updateFrom runs UpdateFrom with tstTransition(to) and returns what fn
// was told and given (a copy of it as it was given).
func updateFrom(t *testing.T, s *Store, snap *Checkpoint, to string) (same bool, given *Checkpoint) {
	t.Helper()
	move := tstTransition(to)
	if _, err := s.UpdateFrom(snap, func(cp *Checkpoint, sameFile bool) ([]Event, error) {
		if cp == snap {
			t.Error("fn was given the snapshot itself, not a copy")
		}
		same, given = sameFile, cp.Clone()
		return move(cp)
	}); err != nil {
		t.Fatalf("UpdateFrom: %v", err)
	}
	return same, given
}

func mustLoadState(t *testing.T, s *Store) *Checkpoint {
	t.Helper()
	cp, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// Nothing came between the lock-free read and the lock: the snapshot is
// what the lock reads, and fn gets a copy of it to change.
func TestUpdateFromTheSameFile(t *testing.T) {
	s := tstCreate(t, "research")
	snap := mustLoadState(t, s)
	if same, given := updateFrom(t, s, snap, "plan"); !same || given.Serial != snap.Serial || given.StateMachine.CurrentState != "research" {
		t.Errorf("same = %v, given serial %d state %q: want the snapshot's", same, given.Serial, given.StateMachine.CurrentState)
	}
	if snap.StateMachine.CurrentState != "research" || len(snap.StateMachine.CompletedStates) != 0 {
		t.Errorf("the snapshot changed: %+v", snap.StateMachine)
	}
	if cp := mustLoadState(t, s); cp.StateMachine.CurrentState != "plan" || cp.Serial != snap.Serial+1 {
		t.Errorf("after the update: state %q serial %d, want plan at %d", cp.StateMachine.CurrentState, cp.Serial, snap.Serial+1)
	}
}

// Whatever else the lock reads is not the same: another write came
// between; the same serial of the same workflow, accepted after a
// rollback; a checkpoint that was not read from the file (a copy, one
// made by hand); a v1.3 file, which the lock rewrites as v2.0.
func TestUpdateFromAnotherFile(t *testing.T) {
	t.Run("a write between", func(t *testing.T) {
		s := tstCreate(t, "research")
		snap := mustLoadState(t, s)
		if _, err := s.Update(tstTransition("plan")); err != nil {
			t.Fatal(err)
		}
		if same, given := updateFrom(t, s, snap, "implement"); same || given.StateMachine.CurrentState != "plan" {
			t.Errorf("same = %v, state given %q: want the state the lock read (plan)", same, given.StateMachine.CurrentState)
		}
	})
	t.Run("the same serial accepted after a rollback", func(t *testing.T) {
		s := tstCreate(t, "research")
		first := tstRead(t, s.CheckpointPath())
		if _, err := s.Update(tstTransition("plan")); err != nil {
			t.Fatal(err)
		}
		snap := mustLoadState(t, s)
		if err := os.WriteFile(s.CheckpointPath(), first, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AcceptState("the test"); err != nil {
			t.Fatal(err)
		}
		if now := mustLoadState(t, s); now.Serial != snap.Serial || now.Lineage != snap.Lineage {
			t.Fatalf("setup: serial %d (snapshot %d)", now.Serial, snap.Serial)
		}
		if same, given := updateFrom(t, s, snap, "implement"); same || given.StateMachine.CurrentState != "research" {
			t.Errorf("same = %v, state given %q: want the accepted state (research)", same, given.StateMachine.CurrentState)
		}
	})
	t.Run("a copy", func(t *testing.T) {
		s := tstCreate(t, "research")
		if same, _ := updateFrom(t, s, mustLoadState(t, s).Clone(), "plan"); same {
			t.Error("same = true for a copy of the snapshot")
		}
	})
	t.Run("made by hand", func(t *testing.T) {
		s := tstCreate(t, "research")
		if same, _ := updateFrom(t, s, tstCheckpoint("research"), "plan"); same {
			t.Error("same = true for a checkpoint made by hand")
		}
	})
	t.Run("v1.3 in its place", func(t *testing.T) {
		s := tstCreate(t, "research")
		snap := mustLoadState(t, s)
		tstCopyFile(t, filepath.Join("testdata", "v13.json"), s.CheckpointPath())
		_, err := s.UpdateFrom(snap, func(*Checkpoint, bool) ([]Event, error) {
			t.Error("fn called on a v1.3 file")
			return nil, ErrNoChange
		})
		var u *UnadoptedError
		if !errors.As(err, &u) || !u.Pinned {
			t.Errorf("UpdateFrom: %v, want a pinned UnadoptedError", err)
		}
	})
}

// The same file is still checked against its marker under the lock: a
// decision on the snapshot is not written over a state whose marker is
// gone since.
func TestUpdateFromTheSameFileStillChecked(t *testing.T) {
	s := tstCreate(t, "research")
	snap := mustLoadState(t, s)
	if err := os.Remove(s.MarkerPath()); err != nil {
		t.Fatal(err)
	}
	_, err := s.UpdateFrom(snap, func(cp *Checkpoint, same bool) ([]Event, error) {
		t.Error("fn ran on a state whose marker is missing")
		return tstTransition("plan")(cp)
	})
	var tamper *TamperError
	if !errors.As(err, &tamper) {
		t.Errorf("UpdateFrom = %v, want a TamperError (the marker is missing)", err)
	}
}
