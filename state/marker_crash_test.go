package state

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// TestMarkerRenameUndoneByACrash: the marker's rename is not always
// followed by an fsync of its directory, so a crash (power loss, kernel
// panic) soon after may undo it and bring the marker it replaced back.
// That is only allowed where the audit accepts the state with the marker
// it replaced (a writer that died before its marker); every other marker
// write must be durable, or the next hook call fails closed on a state
// orch-hook wrote itself ("changed outside orch-hook") until the user
// accepts it. Each case runs a write, then, unless its marker write was
// synced, puts the marker back as it was before the write (or removes
// it, when there was none), and reads the state.
func TestMarkerRenameUndoneByACrash(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) *Store
		write func(s *Store) error
		// cheap: the write's marker is not synced (what every ordinary
		// state change and deny saves).
		cheap bool
	}{
		{"a state change", func(t *testing.T) *Store { return tstCreate(t, "research") },
			func(s *Store) error { _, err := s.Update(tstTransition("plan")); return err }, true},
		{"a deny", func(t *testing.T) *Store { return tstCreate(t, "research") },
			func(s *Store) error { return s.Append(Event{Type: EventDeny, Reason: "no"}) }, true},
		{"the first workflow of a project", func(t *testing.T) *Store { return tstOpen(t) },
			func(s *Store) error { return s.Create(tstCheckpoint("research")) }, false},
		{"a workflow after a finished one", func(t *testing.T) *Store {
			s := tstCreate(t, "research")
			if _, err := s.Update(tstTransition("complete")); err != nil {
				t.Fatal(err)
			}
			return s
		}, func(s *Store) error { return s.Create(tstCheckpoint("research")) }, false},
		{"a state the user accepts", func(t *testing.T) *Store {
			s := tstCreate(t, "research")
			first := tstRead(t, s.CheckpointPath())
			if _, err := s.Update(tstTransition("plan")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.CheckpointPath(), first, 0o600); err != nil {
				t.Fatal(err)
			}
			return s
		}, func(s *Store) error { _, err := s.AcceptState("the test"); return err }, false},
		{"a state the user restores", func(t *testing.T) *Store {
			s := tstCreate(t, "research")
			first := tstRead(t, s.CheckpointPath())
			if _, err := s.Update(tstTransition("plan")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.CheckpointPath(), first, 0o600); err != nil {
				t.Fatal(err)
			}
			return s
		}, func(s *Store) error { _, err := s.Repair(); return err }, true},
		{"the first seal of an imported v1.3 state", func(t *testing.T) *Store { return tstWithCheckpoint(t, "v13.json") },
			func(s *Store) error {
				_, err := s.Update(func(*Checkpoint) ([]Event, error) { return nil, ErrNoChange })
				return err
			}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup(t)
			before, err := os.ReadFile(s.MarkerPath())
			had := err == nil
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if err := tc.write(s); err != nil {
				t.Fatalf("the write: %v", err)
			}
			if tc.cheap && s.markerSynced {
				t.Error("the marker's directory was fsynced: an ordinary write does without")
			}
			if s.markerSynced {
				return // durable: no crash brings the marker before it back
			}
			if had {
				err = os.WriteFile(s.MarkerPath(), before, 0o600)
			} else {
				err = os.Remove(s.MarkerPath())
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Open(s.Root).Load(); err != nil {
				t.Errorf("after a crash that undid the marker's unsynced rename, the state orch-hook wrote reads as: %v", err)
			}
		})
	}
}
