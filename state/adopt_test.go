package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tstInstall is an installer that changes nothing and says where the
// workflow resumes.
func tstInstall(cp *Checkpoint) (string, error) {
	return "resumes at " + cp.StateMachine.CurrentState, nil
}

// The user adopts the project's v1.3 file: it is migrated and installed,
// sealed at serial 1 in a log of one migrate record, and the original is
// kept beside it; from then on hooks read it.
func TestAdoptInPlace(t *testing.T) {
	s := tstWithCheckpoint(t, "v13.json")
	cp, where, err := s.Adopt(nil, tstInstall, "the test")
	if err != nil {
		t.Fatal(err)
	}
	if where != "resumes at implement" || cp.Serial != 1 || cp.StateMachine.CurrentState != "implement" {
		t.Errorf("where %q serial %d state %q", where, cp.Serial, cp.StateMachine.CurrentState)
	}
	loaded, err := s.Load()
	if err != nil {
		t.Fatalf("Load after Adopt: %v", err)
	}
	if loaded.Lineage != cp.Lineage || loaded.Serial != 1 {
		t.Errorf("loaded lineage %s serial %d", loaded.Lineage, loaded.Serial)
	}
	evs := tstLogEvents(t, s)
	if len(evs) != 1 || evs[0].Type != EventMigrate || evs[0].StateAfter != "implement" || len(evs[0].Checkpoint) == 0 ||
		!strings.Contains(evs[0].Reason, "the test adopted a v1.3 checkpoint (coordinate): it resumes at implement") {
		t.Fatalf("log: %+v", evs)
	}
	kept := s.CheckpointPath() + ".v1.3"
	if got := tstRead(t, kept); string(got) != string(tstRead(t, "testdata/v13.json")) {
		t.Error("checkpoint.json.v1.3 is not the original")
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("checkpoint.json.v1.3: %v, mode %v", err, fi.Mode())
	}
	if _, _, err := s.Adopt(nil, tstInstall, "the test"); !errors.Is(err, ErrNotV13) {
		t.Errorf("adopting again: %v, want ErrNotV13", err)
	}
}

// An installer that refuses leaves everything as it was.
func TestAdoptInstallRefuses(t *testing.T) {
	s := tstWithCheckpoint(t, "v13.json")
	_, _, err := s.Adopt(nil, func(*Checkpoint) (string, error) { return "", errors.New("no scope") }, "the test")
	if err == nil || err.Error() != "no scope" {
		t.Fatalf("Adopt: %v", err)
	}
	if got := tstRead(t, s.CheckpointPath()); string(got) != string(tstRead(t, "testdata/v13.json")) {
		t.Error("the v1.3 file was rewritten")
	}
	for _, p := range []string{s.LogPath(), s.CheckpointPath() + ".v1.3", s.MarkerPath()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

func TestAdoptNothing(t *testing.T) {
	if _, _, err := tstOpen(t).Adopt(nil, tstInstall, "the test"); !errors.Is(err, ErrNoState) {
		t.Errorf("no state: %v, want ErrNoState", err)
	}
	if _, _, err := tstCreate(t, "research").Adopt(nil, tstInstall, "the test"); !errors.Is(err, ErrNotV13) {
		t.Errorf("a v2.0 state: %v, want ErrNotV13", err)
	}
	v20 := tstRead(t, "testdata/v20-valid.json")
	if _, _, err := tstOpen(t).Adopt(v20, tstInstall, "the test"); !errors.Is(err, ErrNotV13) {
		t.Errorf("importing a v2.0 file: %v, want ErrNotV13", err)
	}
}

// An imported v1.3 document never replaces an active workflow; a finished
// one is archived first, as a new start does.
func TestAdoptImported(t *testing.T) {
	v13 := tstRead(t, "testdata/v13.json")
	active := tstCreate(t, "research")
	var busy *ActiveError
	if _, _, err := active.Adopt(v13, tstInstall, "the test"); !errors.As(err, &busy) {
		t.Fatalf("over an active workflow: %v, want ActiveError", err)
	}
	if _, err := active.Load(); err != nil {
		t.Errorf("the active workflow was disturbed: %v", err)
	}

	done := tstCreate(t, "complete")
	old := mustLoadState(t, done)
	cp, _, err := done.Adopt(v13, tstInstall, "the test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(done.ArchiveDir(), old.Lineage, "checkpoint.json")); err != nil {
		t.Errorf("the finished workflow was not archived: %v", err)
	}
	if loaded, err := done.Load(); err != nil || loaded.Lineage != cp.Lineage {
		t.Errorf("Load: %v", err)
	}

	fresh := tstOpen(t)
	if _, _, err := fresh.Adopt(v13, tstInstall, "the test"); err != nil {
		t.Fatalf("into a project with no state: %v", err)
	}
	if _, err := fresh.Load(); err != nil {
		t.Error(err)
	}
}

// A v1.3 file put in place of a running workflow's checkpoint is not a
// way around the seal: every read refuses it, and only the user adopts
// it; the replaced workflow's log then goes to the archive, not lost.
func TestAdoptReplacedWorkflow(t *testing.T) {
	s := tstCreate(t, "research")
	old := mustLoadState(t, s)
	tstCopyFile(t, filepath.Join("testdata", "v13.json"), s.CheckpointPath())
	_, err := s.Load()
	var u *UnadoptedError
	if !errors.As(err, &u) || !u.Pinned || !strings.Contains(u.Hint(), "orch-hook repair") {
		t.Fatalf("Load: %v, want a pinned UnadoptedError whose hint names repair", err)
	}
	if _, err := s.Update(tstTransition("plan")); !errors.As(err, &u) {
		t.Fatalf("Update: %v", err)
	}
	cp, _, err := s.Adopt(nil, tstInstall, "the test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.ArchiveDir(), old.Lineage, "events.jsonl")); err != nil {
		t.Errorf("the replaced workflow's log was not archived: %v", err)
	}
	if evs := tstLogEvents(t, s); len(evs) != 1 || evs[0].Type != EventMigrate {
		t.Errorf("the new log: %+v", evs)
	}
	if loaded, err := s.Load(); err != nil || loaded.Lineage != cp.Lineage {
		t.Errorf("Load after Adopt: %v", err)
	}
}

// Or the user undoes the replacement: repair restores the workflow.
func TestRepairUndoesV13Replacement(t *testing.T) {
	s := tstCreate(t, "research")
	old := mustLoadState(t, s)
	tstCopyFile(t, filepath.Join("testdata", "v13.json"), s.CheckpointPath())
	msg, err := s.Repair()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Load()
	if err != nil || cp.Lineage != old.Lineage || cp.StateMachine.CurrentState != "research" {
		t.Fatalf("after repair (%s): %v", msg, err)
	}
	// With nothing pinned there is nothing to restore: repair says how to
	// adopt it instead.
	fresh := tstWithCheckpoint(t, "v13.json")
	_, err = fresh.Repair()
	var u *UnadoptedError
	if !errors.As(err, &u) {
		t.Errorf("repair of an unpinned v1.3 file: %v", err)
	}
}
