package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gofrs/flock"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) *Store
		check func(t *testing.T, s *Store, cp *Checkpoint, err error)
	}{
		{"no project directory", func(t *testing.T) *Store {
			return Open(filepath.Join(t.TempDir(), "missing"))
		}, wantErrIs(ErrNoState)},
		{"empty project", func(t *testing.T) *Store { return tstOpen(t) }, wantErrIs(ErrNoState)},
		{"state dir without files", func(t *testing.T) *Store {
			s := tstOpen(t)
			os.MkdirAll(s.Dir, 0o700)
			return s
		}, wantErrIs(ErrNoState)},
		{"empty log without snapshot", func(t *testing.T) *Store {
			s := tstOpen(t)
			os.MkdirAll(s.Dir, 0o700)
			os.WriteFile(s.LogPath(), nil, 0o600)
			return s
		}, wantErrIs(ErrNoState)},
		{"log without snapshot", func(t *testing.T) *Store {
			s := tstFromFixture(t, "log-ahead")
			os.Remove(s.CheckpointPath())
			return s
		}, wantCorrupt("missing, but events.jsonl holds a workflow")},
		{"truncated snapshot", func(t *testing.T) *Store {
			return tstFromFixture(t, "corrupt-snapshot")
		}, wantCorrupt("not a JSON object")},
		{"empty snapshot", func(t *testing.T) *Store {
			s := tstCreate(t, "plan")
			os.WriteFile(s.CheckpointPath(), nil, 0o600)
			return s
		}, wantTamper("checkpoint.json was changed and is no longer a valid checkpoint (not a JSON object")},
		{"invalid snapshot", func(t *testing.T) *Store {
			return tstWithCheckpoint(t, "v20-state-not-in-table.json")
		}, func(t *testing.T, s *Store, cp *Checkpoint, err error) {
			wantCorrupt("state_machine.current_state")(t, s, cp, err)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "state_machine.current_state" {
				t.Errorf("CorruptError does not wrap the ValidationError: %v", err)
			}
		}},
		{"unknown version", func(t *testing.T) *Store {
			return tstWithCheckpoint(t, "v20-unknown-version.json")
		}, wantCorrupt(`schema_version: unsupported version "3.0"`)},
		{"snapshot is a directory", func(t *testing.T) *Store {
			s := tstOpen(t)
			os.MkdirAll(s.CheckpointPath(), 0o700)
			return s
		}, wantCorrupt("")},
		{"valid but not sealed", func(t *testing.T) *Store {
			return tstWithCheckpoint(t, "v20-valid.json")
		}, wantTamper("checkpoint.json has no seal")},
		{"valid, accepted by the user", func(t *testing.T) *Store {
			return tstAdopt(t, tstWithCheckpoint(t, "v20-valid.json"))
		}, func(t *testing.T, s *Store, cp *Checkpoint, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if cp.Serial != 8 || cp.StateMachine.CurrentState != "implement" {
				t.Errorf("serial %d state %q", cp.Serial, cp.StateMachine.CurrentState)
			}
		}},
		{"v1.3 waits for the user to adopt it", func(t *testing.T) *Store {
			return tstWithCheckpoint(t, "v13.json")
		}, func(t *testing.T, s *Store, cp *Checkpoint, err error) {
			var u *UnadoptedError
			if !errors.As(err, &u) || u.Pinned {
				t.Fatalf("error %v, want an unpinned UnadoptedError", err)
			}
			if !strings.Contains(u.Hint(), "orch-hook migrate --write") || !strings.Contains(u.Hint(), "/orch-hook:resume") {
				t.Errorf("hint %q names neither way to adopt it", u.Hint())
			}
			if got := tstRead(t, s.CheckpointPath()); string(got) != string(tstRead(t, "testdata/v13.json")) {
				t.Error("Load rewrote the v1.3 file")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.setup(t)
			cp, err := s.Load()
			tt.check(t, s, cp, err)
			if err != nil && cp != nil {
				t.Errorf("Load returned a checkpoint with error %v", err)
			}
		})
	}
}

func wantErrIs(target error) func(*testing.T, *Store, *Checkpoint, error) {
	return func(t *testing.T, s *Store, cp *Checkpoint, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("error %v, want %v", err, target)
		}
	}
}

func wantTamper(msg string) func(*testing.T, *Store, *Checkpoint, error) {
	return func(t *testing.T, s *Store, cp *Checkpoint, err error) {
		t.Helper()
		var te *TamperError
		if !errors.As(err, &te) {
			t.Fatalf("error %v (%T), want a *TamperError", err, err)
		}
		if !strings.Contains(err.Error(), msg) || !strings.Contains(te.Hint(), "accept-state") || !strings.Contains(te.Hint(), "orch-hook repair") {
			t.Errorf("error %q (hint %q), want %q and both ways out", err, te.Hint(), msg)
		}
	}
}

func wantCorrupt(msg string) func(*testing.T, *Store, *Checkpoint, error) {
	return func(t *testing.T, s *Store, cp *Checkpoint, err error) {
		t.Helper()
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v (%T), want a *CorruptError", err, err)
		}
		if ce.Path != s.CheckpointPath() {
			t.Errorf("CorruptError.Path = %q, want %q", ce.Path, s.CheckpointPath())
		}
		if !strings.HasPrefix(err.Error(), s.CheckpointPath()+": ") || !strings.Contains(err.Error(), msg) {
			t.Errorf("error %q, want the path and %q", err, msg)
		}
		if ce.Hint() == "" {
			t.Error("CorruptError.Hint() is empty")
		}
	}
}

func TestCreateFresh(t *testing.T) {
	s := tstOpen(t)
	cp := tstCheckpoint("initialize")
	if err := s.Create(cp, Event{Type: EventStart, Session: "s1", Reason: "go"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(s.Dir), s.Dir} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
		if m := fi.Mode().Perm(); m != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, m)
		}
	}
	for _, f := range []string{s.CheckpointPath(), s.LogPath(), filepath.Join(s.Dir, ".gitignore"), s.lockPath()} {
		if m := tstMode(t, f); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, m)
		}
	}
	if got := string(tstRead(t, filepath.Join(s.Dir, ".gitignore"))); got != "*\n" {
		t.Errorf(".gitignore = %q, want \"*\\n\"", got)
	}
	got, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got.Serial != 1 || got.Lineage == "" || got.Lineage != cp.Lineage {
		t.Errorf("serial %d lineage %q (caller's %q)", got.Serial, got.Lineage, cp.Lineage)
	}
	if got.Metadata.CreatedAt.IsZero() || got.Metadata.UpdatedAt.IsZero() {
		t.Errorf("metadata times not set: %+v", got.Metadata)
	}
	events := tstLogEvents(t, s)
	if len(events) != 1 {
		t.Fatalf("%d events, want 1", len(events))
	}
	ev := events[0]
	if ev.Type != EventStart || ev.Serial != 1 || ev.Session != "s1" || ev.StateAfter != "initialize" || ev.Time.IsZero() {
		t.Errorf("start event %+v", ev)
	}
	snap := tstUnsealed(t, s)
	if string(ev.Checkpoint) != snap {
		t.Errorf("start record's checkpoint differs from the snapshot:\n%s\n%s", ev.Checkpoint, snap)
	}
	// Without events, Create logs a start event of its own.
	s2 := tstOpen(t)
	if err := s2.Create(tstCheckpoint("initialize")); err != nil {
		t.Fatal(err)
	}
	if evs := tstLogEvents(t, s2); len(evs) != 1 || evs[0].Type != EventStart || len(evs[0].Checkpoint) == 0 {
		t.Errorf("default events: %+v", evs)
	}
}

func TestCreateRefusesActive(t *testing.T) {
	for _, current := range []string{"initialize", "implement", "debug"} {
		t.Run(current, func(t *testing.T) {
			s := tstCreate(t, current)
			before := tstSnapshotDir(t, s.Dir)
			err := s.Create(tstCheckpoint("initialize"))
			var ae *ActiveError
			if !errors.As(err, &ae) {
				t.Fatalf("Create over an active workflow: %v (%T), want *ActiveError", err, err)
			}
			if ae.Command != "coordinate" || ae.State != current || ae.Since.IsZero() {
				t.Errorf("ActiveError %+v", ae)
			}
			if !strings.Contains(err.Error(), "coordinate") || !strings.Contains(err.Error(), "state "+current) {
				t.Errorf("message %q does not name the workflow and its state", err)
			}
			if ae.Hint() == "" {
				t.Error("ActiveError.Hint() is empty")
			}
			tstAssertUnchanged(t, s.Dir, before)
		})
	}
}

func TestCreateArchivesFinished(t *testing.T) {
	for _, end := range []string{"complete", "aborted"} {
		t.Run(end, func(t *testing.T) {
			s := tstOpen(t)
			old := tstCheckpoint("document")
			if end == "aborted" {
				old.StateMachine.TransitionTable["aborted"] = ""
				old.StateMachine.TransitionTable["document"] = "complete,aborted"
			}
			if err := s.Create(old); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Update(tstTransition(end)); err != nil {
				t.Fatal(err)
			}
			oldSnap := tstRead(t, s.CheckpointPath())
			oldLog := tstRead(t, s.LogPath())

			next := tstCheckpoint("initialize")
			if err := s.Create(next); err != nil {
				t.Fatalf("Create after a %s workflow: %v", end, err)
			}
			dest := filepath.Join(s.ArchiveDir(), old.Lineage)
			if got := tstRead(t, filepath.Join(dest, "checkpoint.json")); string(got) != string(oldSnap) {
				t.Error("archived checkpoint differs from the finished one")
			}
			if got := tstRead(t, filepath.Join(dest, "events.jsonl")); string(got) != string(oldLog) {
				t.Error("archived log differs from the finished one")
			}
			for _, d := range []string{s.ArchiveDir(), dest} {
				if m := tstMode(t, d); m != 0o700 {
					t.Errorf("%s mode %v, want 0700", d, m)
				}
			}
			cp, err := s.Load()
			if err != nil {
				t.Fatal(err)
			}
			if cp.Serial != 1 || cp.Lineage == old.Lineage || cp.StateMachine.CurrentState != "initialize" {
				t.Errorf("new workflow: serial %d lineage %q (old %q) state %q", cp.Serial, cp.Lineage, old.Lineage, cp.StateMachine.CurrentState)
			}
			if evs := tstLogEvents(t, s); len(evs) != 1 || evs[0].Type != EventStart {
				t.Errorf("new log holds %d records, want only the start", len(evs))
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	t.Run("corrupt snapshot is not replaced", func(t *testing.T) {
		s := tstFromFixture(t, "corrupt-snapshot")
		before := tstSnapshotDir(t, s.Dir)
		err := s.Create(tstCheckpoint("initialize"))
		var ce *CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v, want *CorruptError", err)
		}
		// .gitignore is the only thing Create may add.
		os.Remove(filepath.Join(s.Dir, ".gitignore"))
		tstAssertUnchanged(t, s.Dir, before)
	})
	t.Run("invalid checkpoint is not written", func(t *testing.T) {
		s := tstOpen(t)
		cp := tstCheckpoint("nowhere")
		err := s.Create(cp)
		if err == nil || !strings.Contains(err.Error(), "state_machine.current_state") {
			t.Fatalf("error %v, want one naming state_machine.current_state", err)
		}
		for _, f := range []string{s.CheckpointPath(), s.LogPath()} {
			if _, err := os.Lstat(f); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s exists after a refused Create", f)
			}
		}
	})
}

func TestUpdateCommits(t *testing.T) {
	s := tstCreate(t, "initialize")
	steps := []struct {
		to     string
		events int
	}{{"research", 1}, {"plan", 3}, {"implement", 2}}
	prevLines := len(tstLines(t, s.LogPath()))
	for i, step := range steps {
		wantSerial := uint64(i + 2)
		got, err := s.Update(func(cp *Checkpoint) ([]Event, error) {
			from := cp.StateMachine.CurrentState
			cp.StateMachine.CompletedStates = append(cp.StateMachine.CompletedStates, from)
			cp.StateMachine.CurrentState = step.to
			evs := make([]Event, step.events)
			for j := range evs {
				evs[j] = Event{Type: EventUpdate, Reason: fmt.Sprintf("step %d record %d", i, j)}
			}
			evs[len(evs)-1].Type = EventTransition
			return evs, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Serial != wantSerial || got.StateMachine.CurrentState != step.to {
			t.Errorf("Update returned serial %d state %q, want %d %q", got.Serial, got.StateMachine.CurrentState, wantSerial, step.to)
		}
		loaded, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Serial != wantSerial || loaded.StateMachine.CurrentState != step.to {
			t.Errorf("snapshot serial %d state %q", loaded.Serial, loaded.StateMachine.CurrentState)
		}
		all := tstLogEvents(t, s)
		if len(all) != prevLines+step.events {
			t.Fatalf("log grew by %d records, want %d", len(all)-prevLines, step.events)
		}
		batch := all[prevLines:]
		prevLines = len(all)
		snap := tstUnsealed(t, s)
		for j, ev := range batch {
			last := j == len(batch)-1
			if ev.Serial != wantSerial {
				t.Errorf("record %d serial %d, want %d", j, ev.Serial, wantSerial)
			}
			if (len(ev.Checkpoint) > 0) != last {
				t.Errorf("record %d of %d carries a checkpoint: %v", j, len(batch), len(ev.Checkpoint) > 0)
			}
			if last && string(ev.Checkpoint) != snap {
				t.Errorf("last record's checkpoint differs from the snapshot")
			}
			if ev.StateAfter != step.to || ev.StateBefore == "" || ev.Time.IsZero() {
				t.Errorf("record %d: before %q after %q time %v", j, ev.StateBefore, ev.StateAfter, ev.Time)
			}
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	for _, f := range []string{s.CheckpointPath(), s.LogPath()} {
		if m := tstMode(t, f); m != 0o600 {
			t.Errorf("%s mode %v after updates", f, m)
		}
	}
}

func TestUpdateNoChange(t *testing.T) {
	t.Run("without events writes nothing", func(t *testing.T) {
		s := tstCreate(t, "plan")
		before := tstSnapshotDir(t, s.Dir)
		called := false
		cp, err := s.Update(func(cp *Checkpoint) ([]Event, error) {
			called = true
			cp.StateMachine.CurrentState = "implement" // discarded with ErrNoChange
			return nil, ErrNoChange
		})
		if err != nil || !called {
			t.Fatalf("Update: %v (called %v)", err, called)
		}
		if cp.Serial != 1 || cp.StateMachine.CurrentState != "plan" {
			t.Errorf("returned serial %d state %q, want the unchanged checkpoint", cp.Serial, cp.StateMachine.CurrentState)
		}
		tstAssertUnchanged(t, s.Dir, before)
	})
	t.Run("with events appends them only", func(t *testing.T) {
		s := tstCreate(t, "plan")
		if _, err := s.Update(tstTransition("implement")); err != nil {
			t.Fatal(err)
		}
		snapBefore := tstSnapshotDir(t, s.Dir)["checkpoint.json"]
		logBefore := tstRead(t, s.LogPath())
		cp, err := s.Update(func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.CurrentState = "test" // discarded with ErrNoChange
			return []Event{
				{Type: EventDeny, HookEvent: "PreToolUse", ToolUseID: "toolu_9", Reason: "not now"},
				{Type: EventError, Reason: "something"},
			}, ErrNoChange
		})
		if err != nil {
			t.Fatal(err)
		}
		if cp.Serial != 2 || cp.StateMachine.CurrentState != "implement" {
			t.Errorf("serial %d state %q, want 2 implement", cp.Serial, cp.StateMachine.CurrentState)
		}
		logAfter := tstRead(t, s.LogPath())
		if !strings.HasPrefix(string(logAfter), string(logBefore)) {
			t.Fatal("the log was rewritten, not appended to")
		}
		var added []Event
		for _, line := range strings.Split(strings.TrimSuffix(string(logAfter[len(logBefore):]), "\n"), "\n") {
			var ev Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			added = append(added, ev)
		}
		if len(added) != 2 || added[0].Type != EventDeny || added[1].Type != EventError {
			t.Fatalf("appended %+v", added)
		}
		for _, ev := range added {
			if ev.Serial != 2 || len(ev.Checkpoint) != 0 || ev.Time.IsZero() || ev.StateAfter != "" {
				t.Errorf("appended record %+v: want serial 2, no checkpoint, a time", ev)
			}
		}
		tstAssertFileUnchanged(t, s.CheckpointPath(), snapBefore)
	})
	t.Run("Append", func(t *testing.T) {
		s := tstCreate(t, "plan")
		snap := tstSnapshotDir(t, s.Dir)["checkpoint.json"]
		if err := s.Append(Event{Type: EventDeny, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
		tstAssertFileUnchanged(t, s.CheckpointPath(), snap)
		evs := tstLogEvents(t, s)
		if last := evs[len(evs)-1]; len(evs) != 2 || last.Type != EventDeny || last.Serial != 1 || len(last.Checkpoint) != 0 {
			t.Errorf("log %+v", evs)
		}
	})
}

func TestUpdateRefusals(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		fn   func(cp *Checkpoint) ([]Event, error)
		want string // substring of the error
		is   error
	}{
		{"current state not in the table", func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.CurrentState = "nowhere"
			return []Event{{Type: EventTransition}}, nil
		}, "state_machine.current_state", nil},
		{"completed state twice", func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.CompletedStates = []string{"initialize", "initialize"}
			return []Event{{Type: EventUpdate}}, nil
		}, "state_machine.completed_states[1]", nil},
		{"command cleared", func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.WorkflowConfig.Command = ""
			return []Event{{Type: EventUpdate}}, nil
		}, "state_machine.workflow_config.command", nil},
		{"broken workflow JSON", func(cp *Checkpoint) ([]Event, error) {
			cp.Workflow = json.RawMessage(`{"x":`)
			return []Event{{Type: EventUpdate}}, nil
		}, "workflow", nil},
		{"closure error", func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.CurrentState = "implement"
			return []Event{{Type: EventUpdate}}, boom
		}, "boom", boom},
		{"change without events", func(cp *Checkpoint) ([]Event, error) {
			cp.StateMachine.CurrentState = "implement"
			return nil, nil
		}, "without an event", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tstCreate(t, "plan")
			before := tstSnapshotDir(t, s.Dir)
			cp, err := s.Update(tt.fn)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not wrap %v", err, tt.is)
			}
			if cp != nil {
				t.Errorf("Update returned a checkpoint with its error")
			}
			tstAssertUnchanged(t, s.Dir, before)
		})
	}
}

func TestUpdateWithoutState(t *testing.T) {
	s := tstOpen(t)
	os.MkdirAll(s.Dir, 0o700)
	called := false
	_, err := s.Update(func(*Checkpoint) ([]Event, error) { called = true; return nil, ErrNoChange })
	if !errors.Is(err, ErrNoState) || called {
		t.Errorf("Update without a workflow: %v (called %v), want ErrNoState", err, called)
	}
}

// A v1.3 snapshot is never migrated by a write: a locked write refuses
// it, and nothing is written.
func TestUpdateRefusesV13(t *testing.T) {
	s := tstWithCheckpoint(t, "v13.json")
	called := false
	_, err := s.Update(func(cp *Checkpoint) ([]Event, error) { called = true; return tstTransition("test")(cp) })
	var u *UnadoptedError
	if !errors.As(err, &u) || called {
		t.Fatalf("Update: %v (fn called %v), want UnadoptedError and no call", err, called)
	}
	if got := tstRead(t, s.CheckpointPath()); string(got) != string(tstRead(t, "testdata/v13.json")) {
		t.Error("Update rewrote the v1.3 file")
	}
	if _, err := os.Stat(s.LogPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Update wrote a log: %v", err)
	}
}

// Unknown top-level fields survive a locked load+save, in the snapshot and
// in the log's checkpoint record, and each log record stays on one line.
func TestUpdateKeepsExtraFields(t *testing.T) {
	s := tstAdopt(t, tstWithCheckpoint(t, "v20-extra-fields.json"))
	if _, err := s.Update(tstTransition("test")); err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	json.Unmarshal(tstRead(t, "testdata/v20-extra-fields.json"), &want)
	evs := tstLogEvents(t, s) // fails if a record spans lines
	for name, raw := range map[string][]byte{
		"snapshot":   tstRead(t, s.CheckpointPath()),
		"log record": evs[len(evs)-1].Checkpoint,
	} {
		var got map[string]json.RawMessage
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []string{"x_dashboard", "retention_days", "owner"} {
			if !tstJSONEqual(t, got[k], want[k]) {
				t.Errorf("%s: %s = %s, want %s", name, k, got[k], want[k])
			}
		}
		if string(got["serial"]) != "9" { // 7, accepted (8), then the update
			t.Errorf("%s: serial %s, want 9", name, got["serial"])
		}
	}
}

func TestUpdateConcurrent(t *testing.T) {
	s := tstCreate(t, "implement")
	s.Now = Open(s.Root).Now // the stepping test clock is not safe for concurrent use
	const workers, each = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := s.Update(func(cp *Checkpoint) ([]Event, error) {
					n := 0
					json.Unmarshal(cp.PhaseData["count"], &n)
					cp.PhaseData["count"] = json.RawMessage(fmt.Sprint(n + 1))
					return []Event{{Type: EventUpdate}}, nil
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cp, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if cp.Serial != 1+workers*each || string(cp.PhaseData["count"]) != fmt.Sprint(workers*each) {
		t.Errorf("serial %d count %s, want %d and %d", cp.Serial, cp.PhaseData["count"], 1+workers*each, workers*each)
	}
	evs := tstLogEvents(t, s)
	for i, ev := range evs {
		if ev.Serial != uint64(i+1) {
			t.Fatalf("record %d has serial %d", i, ev.Serial)
		}
	}
}

func TestRepairCorruptSnapshot(t *testing.T) {
	s := tstFromFixture(t, "corrupt-snapshot")
	damaged := tstRead(t, s.CheckpointPath())
	logBefore := tstRead(t, s.LogPath())
	msg, err := s.Repair()
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(s.Dir)
	var kept []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "checkpoint.json.corrupt-") {
			kept = append(kept, e.Name())
		}
	}
	if len(kept) != 1 {
		t.Fatalf("kept files %v, want one checkpoint.json.corrupt-*", kept)
	}
	keptPath := filepath.Join(s.Dir, kept[0])
	if got := tstRead(t, keptPath); string(got) != string(damaged) {
		t.Error("the kept file is not the damaged snapshot")
	}
	if !strings.Contains(msg, "rebuilt checkpoint.json") || !strings.Contains(msg, "state research") ||
		!strings.Contains(msg, "serial 3") || !strings.Contains(msg, keptPath) {
		t.Errorf("message %q", msg)
	}
	cp, err := s.Load()
	if err != nil {
		t.Fatalf("Load after Repair: %v", err)
	}
	if cp.Serial != 3 || cp.StateMachine.CurrentState != "research" || cp.Lineage != "5eed5eed5eed5eed5eed5eed5eed5eed" {
		t.Errorf("rebuilt serial %d state %q lineage %q", cp.Serial, cp.StateMachine.CurrentState, cp.Lineage)
	}
	if m := tstMode(t, s.CheckpointPath()); m != 0o600 {
		t.Errorf("rebuilt snapshot mode %v", m)
	}
	after := tstRead(t, s.LogPath())
	if !strings.HasPrefix(string(after), string(logBefore)) {
		t.Error("Repair changed the existing log records")
	}
	evs := tstLogEvents(t, s)
	last := evs[len(evs)-1]
	if last.Type != EventRepair || last.Serial != 3 || len(last.Checkpoint) == 0 || !strings.Contains(last.Reason, "serial 2") {
		t.Errorf("repair event %+v", last)
	}
	if got, _ := s.Repair(); !strings.Contains(got, "nothing to repair") {
		t.Errorf("second Repair: %q", got)
	}
}

func TestRepairMissingSnapshot(t *testing.T) {
	s := tstFromFixture(t, "corrupt-snapshot")
	os.Remove(s.CheckpointPath())
	if _, err := s.Load(); err == nil {
		t.Fatal("Load without a snapshot succeeded")
	}
	msg, err := s.Repair()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(msg, "kept") {
		t.Errorf("message %q mentions a kept file that did not exist", msg)
	}
	if cp, err := s.Load(); err != nil || cp.StateMachine.CurrentState != "research" {
		t.Errorf("Load after Repair: %v", err)
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), "corrupt") {
			t.Errorf("unexpected %s", e.Name())
		}
	}
}

func TestRepairHealthy(t *testing.T) {
	s := tstCreate(t, "plan")
	before := tstSnapshotDir(t, s.Dir)
	msg, err := s.Repair()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "healthy") || !strings.Contains(msg, "nothing to repair") {
		t.Errorf("message %q", msg)
	}
	tstAssertUnchanged(t, s.Dir, before)

	// On a healthy snapshot with a torn log Repair still recovers the tail.
	s = tstCreate(t, "plan")
	tstTear(t, s, `{"time":"2025-01-01T00:00:00Z","serial":1,"ty`)
	if _, err := s.Repair(); err != nil {
		t.Fatal(err)
	}
	evs := tstLogEvents(t, s)
	if evs[len(evs)-1].Type != EventRecover {
		t.Errorf("last record %+v, want recover", evs[len(evs)-1])
	}
}

func TestRepairImpossible(t *testing.T) {
	t.Run("log without checkpoint records", func(t *testing.T) {
		s := tstFromFixture(t, "corrupt-snapshot")
		lines := tstLines(t, s.LogPath())
		os.WriteFile(s.LogPath(), []byte(lines[2]+"\n"), 0o600) // the deny only
		before := tstSnapshotDir(t, s.Dir)
		_, err := s.Repair()
		if err == nil {
			t.Fatal("Repair succeeded without a checkpoint record")
		}
		for _, w := range []string{"no valid checkpoint record", "fix the file by hand", "move .orchestrator/state away"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
		tstAssertUnchanged(t, s.Dir, before)
	})
	t.Run("no state directory", func(t *testing.T) {
		s := tstOpen(t)
		if _, err := s.Repair(); !errors.Is(err, ErrNoState) {
			t.Errorf("error %v, want ErrNoState", err)
		}
		if _, err := os.Lstat(s.Dir); !errors.Is(err, fs.ErrNotExist) {
			t.Error("Repair created the state directory")
		}
	})
}

func TestEventsReport(t *testing.T) {
	s := tstCreate(t, "plan")
	if err := s.Append(Event{Type: EventDeny, Reason: "after"}); err != nil {
		t.Fatal(err)
	}
	// A bad line in the middle of the log is reported and skipped. (At the
	// tail it would be taken for a torn write and cut; see TestRecover*.)
	lines := tstLines(t, s.LogPath())
	os.WriteFile(s.LogPath(), []byte(lines[0]+"\nnot json\n"+lines[1]+"\n"), 0o600)
	evs, rep, err := s.Events()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[1].Reason != "after" || !reflect.DeepEqual(rep.BadLines, []int{2}) {
		t.Errorf("events %d, bad lines %v", len(evs), rep.BadLines)
	}
	// Without a workflow there are no events and no error.
	if evs, _, err := tstOpen(t).Events(); err != nil || len(evs) != 0 {
		t.Errorf("empty store: %v %v", evs, err)
	}
}

func TestSymlinkedDirsRefused(t *testing.T) {
	tests := []struct {
		name string
		link func(t *testing.T, s *Store, outside string)
	}{
		{".orchestrator", func(t *testing.T, s *Store, outside string) {
			if err := os.Symlink(outside, filepath.Dir(s.Dir)); err != nil {
				t.Fatal(err)
			}
		}},
		{".orchestrator/state", func(t *testing.T, s *Store, outside string) {
			os.Mkdir(filepath.Dir(s.Dir), 0o700)
			if err := os.Symlink(outside, s.Dir); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tstOpen(t)
			outside := t.TempDir()
			tt.link(t, s, outside)
			err := s.Create(tstCheckpoint("initialize"))
			if err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Fatalf("Create through a symlinked %s: %v", tt.name, err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("Create wrote %d entries outside the project", len(entries))
			}
		})
	}
}

func TestStateDirNotADirectory(t *testing.T) {
	s := tstOpen(t)
	os.WriteFile(filepath.Dir(s.Dir), []byte("x"), 0o600)
	if err := s.Create(tstCheckpoint("initialize")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("Create with .orchestrator a file: %v", err)
	}
}

func TestSymlinkedFilesNotFollowed(t *testing.T) {
	victimContent := `{"time":"2025-01-01T00:00:00Z","serial":1,"type":"deny","reason":"outside"}` + "\n"
	tests := []struct {
		name   string
		target func(s *Store) string
		op     func(s *Store) error
	}{
		{"lock on Update", (*Store).lockPath, func(s *Store) error {
			_, err := s.Update(tstTransition("implement"))
			return err
		}},
		{"lock on Create", (*Store).lockPath, func(s *Store) error {
			return s.Create(tstCheckpoint("initialize"))
		}},
		{"events.jsonl on Update", (*Store).LogPath, func(s *Store) error {
			_, err := s.Update(tstTransition("implement"))
			return err
		}},
		{"events.jsonl on Append", (*Store).LogPath, func(s *Store) error {
			return s.Append(Event{Type: EventDeny})
		}},
		{"events.jsonl on Events", (*Store).LogPath, func(s *Store) error {
			evs, _, err := s.Events()
			if err == nil {
				for _, ev := range evs {
					if ev.Reason == "outside" {
						return fmt.Errorf("Events read the symlink's target")
					}
				}
				return errors.New("no error")
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tstCreate(t, "plan")
			victim := filepath.Join(t.TempDir(), "victim")
			os.WriteFile(victim, []byte(victimContent), 0o644)
			link := tt.target(s)
			os.Remove(link)
			if err := os.Symlink(victim, link); err != nil {
				t.Fatal(err)
			}
			snap := tstRead(t, s.CheckpointPath())
			err := tt.op(s)
			if err == nil || strings.Contains(err.Error(), "read the symlink") {
				t.Errorf("operation through a symlinked %s: %v", filepath.Base(link), err)
			}
			if got := tstRead(t, victim); string(got) != victimContent {
				t.Errorf("the symlink's target was written: %q", got)
			}
			if m := tstMode(t, victim); m != 0o644 {
				t.Errorf("the symlink's target mode changed to %v", m)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the symlink was replaced")
			}
			if got := tstRead(t, s.CheckpointPath()); string(got) != string(snap) {
				t.Error("the snapshot changed")
			}
		})
	}
}

// Recovery reads the log backwards in chunks: records and torn tails of
// every size around the chunk size are cut exactly.
func TestRecoverAcrossChunks(t *testing.T) {
	tests := []struct{ record, torn int }{
		{10, 1}, {10, 8191}, {8190, 8192}, {8192, 8193}, {20000, 20000}, {100, 3 * 8192},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("record %d torn %d", tt.record, tt.torn), func(t *testing.T) {
			s := tstCreate(t, "plan")
			if err := s.Append(Event{Type: EventDeny, Reason: strings.Repeat("r", tt.record)}); err != nil {
				t.Fatal(err)
			}
			clean := tstRead(t, s.LogPath())
			f, _ := os.OpenFile(s.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"time":"2025-01-01T00:00:00Z","serial":1,"type":"deny","reason":"` + strings.Repeat("t", tt.torn))
			f.Close()
			tornLen := len(tstRead(t, s.LogPath())) - len(clean)
			if _, err := s.Update(func(*Checkpoint) ([]Event, error) { return nil, ErrNoChange }); err != nil {
				t.Fatal(err)
			}
			after := tstRead(t, s.LogPath())
			if !strings.HasPrefix(string(after), string(clean)) {
				t.Fatal("complete records were cut")
			}
			evs := tstLogEvents(t, s)
			if len(evs) != 3 || evs[1].Reason != strings.Repeat("r", tt.record) {
				t.Fatalf("%d records after recovery", len(evs))
			}
			if r := evs[2]; r.Type != EventRecover || !strings.Contains(r.Reason, fmt.Sprintf("(%d bytes)", tornLen)) {
				t.Errorf("recover event %+v, want %d torn bytes", r, tornLen)
			}
		})
	}
	t.Run("a log replaced by one torn line is not a crash", func(t *testing.T) {
		s := tstCreate(t, "plan")
		os.WriteFile(s.LogPath(), []byte(`{"time":"2025-01-01T00:00:00Z","ser`), 0o600)
		err := s.Append(Event{Type: EventDeny})
		wantTamper("events.jsonl is")(t, s, nil, err)
	})
}

// Committed runs under the lock after a committed change, with the
// checkpoints before and after; not after a change that is not made; its
// error is logged, and the change stands.
func TestCommitted(t *testing.T) {
	s := tstCreate(t, "research")
	var calls [][2]string
	s.Committed = func(prev, next *Checkpoint) error {
		if ok, err := flock.New(s.lockPath()).TryLock(); ok || err != nil {
			t.Errorf("Committed ran without the lock (another lock was taken: %v, %v)", ok, err)
		}
		calls = append(calls, [2]string{prev.StateMachine.CurrentState, next.StateMachine.CurrentState})
		return errors.New("records dir is read-only")
	}
	cp, err := s.Update(tstTransition("plan"))
	if err != nil || cp.StateMachine.CurrentState != "plan" {
		t.Fatalf("Update: %v", err)
	}
	if _, err := s.Update(func(*Checkpoint) ([]Event, error) { return []Event{{Type: EventDeny, Reason: "x"}}, ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != [2]string{"research", "plan"} {
		t.Errorf("calls %v", calls)
	}
	evs := tstLogEvents(t, s)
	last := evs[len(evs)-2]
	if last.Type != EventError || !strings.Contains(last.Reason, "after the change: records dir is read-only") {
		t.Errorf("the error is not logged: %+v", evs)
	}
	if _, err := s.Load(); err != nil {
		t.Errorf("the state after a logged error: %v", err)
	}
}
