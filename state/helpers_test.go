package state

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Helpers shared by the state tests. Names start with "tst" so that they do
// not collide with the benchmarks' helpers in the same package.

// tstEpoch is the fixed clock of every test store.
var tstEpoch = time.Date(2025, 4, 1, 12, 0, 0, 0, time.UTC)

// tstClock returns a clock that starts at tstEpoch and advances one second
// per call, so that every record has its own time.
func tstClock() func() time.Time {
	now := tstEpoch
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

// tstOpen returns a store rooted in a fresh temporary project.
func tstOpen(t *testing.T) *Store {
	t.Helper()
	s := Open(t.TempDir())
	s.Now = tstClock()
	return s
}

// tstTable is a copy of the coordinate workflow's table.
func tstTable() map[string]string {
	table := make(map[string]string, len(V13TransitionTable))
	for k, v := range V13TransitionTable {
		table[k] = v
	}
	return table
}

// tstCheckpoint is a valid checkpoint in the given state, not yet created.
func tstCheckpoint(current string) *Checkpoint {
	return &Checkpoint{
		SchemaVersion: SchemaVersion,
		StateMachine: StateMachine{
			CurrentState:    current,
			CompletedStates: []string{},
			TransitionTable: tstTable(),
			WorkflowConfig:  WorkflowConfig{Command: "coordinate", Description: "unit test"},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata:        Metadata{CheckpointID: "coordinate_test", ProjectName: "test"},
	}
}

// tstCreate creates a workflow in a fresh project.
func tstCreate(t *testing.T, current string) *Store {
	t.Helper()
	s := tstOpen(t)
	if err := s.Create(tstCheckpoint(current)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	return s
}

// tstFromFixture installs the files of testdata/store/<name> as the state
// of a fresh project (0700 directory, 0600 files, as Create makes them).
func tstFromFixture(t *testing.T, name string) *Store {
	t.Helper()
	s := tstOpen(t)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "store", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		tstCopyFile(t, filepath.Join(src, e.Name()), filepath.Join(s.Dir, e.Name()))
	}
	return s
}

// tstAdopt seals a state installed by hand, as the user accepting it does.
func tstAdopt(t *testing.T, s *Store) *Store {
	t.Helper()
	if _, err := s.AcceptState("the test"); err != nil {
		t.Fatalf("AcceptState: %v", err)
	}
	return s
}

// tstUnsealed is the snapshot without its seal: what the log records.
func tstUnsealed(t *testing.T, s *Store) string {
	t.Helper()
	body, seal, err := splitSeal(tstRead(t, s.CheckpointPath()))
	if err != nil || seal == nil {
		t.Fatalf("the snapshot is not sealed: %v", err)
	}
	return string(body)
}

// tstWithCheckpoint installs a checkpoint file (a testdata fixture) as the
// snapshot of a fresh project, without a log.
func tstWithCheckpoint(t *testing.T, fixture string) *Store {
	t.Helper()
	s := tstOpen(t)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tstCopyFile(t, filepath.Join("testdata", fixture), s.CheckpointPath())
	return s
}

func tstCopyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func tstRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tstLines returns the complete lines of a JSONL file, newline stripped.
func tstLines(t *testing.T, path string) []string {
	t.Helper()
	b := tstRead(t, path)
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a newline: ...%q", path, tstTail(b, 40))
	}
	return strings.Split(string(b[:len(b)-1]), "\n")
}

// tstLogEvents decodes every line of the store's log, failing on any line
// that does not parse.
func tstLogEvents(t *testing.T, s *Store) []Event {
	t.Helper()
	var out []Event
	for i, line := range tstLines(t, s.LogPath()) {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("events.jsonl line %d does not parse: %v\n%s", i+1, err, line)
		}
		out = append(out, ev)
	}
	return out
}

func tstTail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// tstFileState is what a test compares to prove that nothing was written:
// content, size, mode and modification time.
type tstFileState struct {
	Data  []byte
	Size  int64
	Mode  os.FileMode
	MTime time.Time
}

// tstSnapshotDir records every file of dir except the lock file (whose
// holder record is rewritten by every locked call by design). Modification
// times are first set into the past, so that a rewrite within the same
// clock tick would still show.
func tstSnapshotDir(t *testing.T, dir string) map[string]tstFileState {
	t.Helper()
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	out := map[string]tstFileState{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if fi.IsDir() || rel == "lock" {
			return nil
		}
		if err := os.Chtimes(path, past, past); err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = tstFileState{Data: b, Size: fi.Size(), Mode: fi.Mode(), MTime: past}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tstAssertUnchanged fails if any file of dir (but the lock) differs from
// before, or if a file appeared or disappeared.
func tstAssertUnchanged(t *testing.T, dir string, before map[string]tstFileState) {
	t.Helper()
	after := map[string]tstFileState{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if fi.IsDir() || rel == "lock" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		after[rel] = tstFileState{Data: b, Size: fi.Size(), Mode: fi.Mode(), MTime: fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range before {
		names = append(names, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b, inBefore := before[name]
		a, inAfter := after[name]
		switch {
		case !inAfter:
			t.Errorf("%s disappeared", name)
		case !inBefore:
			t.Errorf("%s appeared (%d bytes)", name, a.Size)
		case !bytes.Equal(a.Data, b.Data):
			t.Errorf("%s changed:\nbefore: %q\nafter:  %q", name, tstTail(b.Data, 200), tstTail(a.Data, 200))
		case a.Size != b.Size || a.Mode != b.Mode || !a.MTime.Equal(b.MTime):
			t.Errorf("%s metadata changed: size %d->%d mode %v->%v mtime %v->%v", name, b.Size, a.Size, b.Mode, a.Mode, b.MTime, a.MTime)
		}
	}
}

// tstAssertFileUnchanged fails if path differs from st (taken by
// tstSnapshotDir).
func tstAssertFileUnchanged(t *testing.T, path string, st tstFileState) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if b := tstRead(t, path); !bytes.Equal(b, st.Data) || fi.Size() != st.Size || fi.Mode() != st.Mode || !fi.ModTime().Equal(st.MTime) {
		t.Errorf("%s was rewritten (size %d->%d, mtime %v->%v)", path, st.Size, fi.Size(), st.MTime, fi.ModTime())
	}
}

// tstMode returns the permission bits of path (not following a symlink).
func tstMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// tstTransition is an Update closure that moves to state with one event.
func tstTransition(to string) func(*Checkpoint) ([]Event, error) {
	return func(cp *Checkpoint) ([]Event, error) {
		cp.StateMachine.CompletedStates = append(cp.StateMachine.CompletedStates, cp.StateMachine.CurrentState)
		cp.StateMachine.CurrentState = to
		return []Event{{Type: EventTransition, Reason: "to " + to}}, nil
	}
}
