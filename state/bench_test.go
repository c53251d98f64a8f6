package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// Benchmarks of the store's two paths: the lock-free read every hook call
// makes, and the locked read-modify-write of a state change. They run on
// tmpfs (/dev/shm) when it exists, so that they measure orch-hook's own
// work rather than the disk's fsync; internal/dev/procbench measures the disk.

// benchStateDir returns an empty directory, on tmpfs when there is one.
func benchStateDir(b *testing.B) string {
	b.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "orch-hook-bench-")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return b.TempDir()
}

// benchCheckpoint is a small valid checkpoint, the size of a real one
// created by test-bump --init.
func benchCheckpoint() *Checkpoint {
	table := make(map[string]string, len(V13TransitionTable))
	for k, v := range V13TransitionTable {
		table[k] = v
	}
	return &Checkpoint{
		SchemaVersion: SchemaVersion,
		StateMachine: StateMachine{
			CurrentState:    "research",
			CompletedStates: []string{"initialize"},
			TransitionTable: table,
			WorkflowConfig:  WorkflowConfig{Command: "test", Description: "bench"},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata:        Metadata{CheckpointID: "test_bench", ProjectName: "bench"},
	}
}

// benchStore creates a workflow in a fresh tmpfs project.
func benchStore(b *testing.B) *Store {
	b.Helper()
	s := Open(benchStateDir(b))
	if err := s.Create(benchCheckpoint()); err != nil {
		b.Fatal(err)
	}
	return s
}

// benchBump is the state change of test-bump: one counter, one event.
func benchBump(cp *Checkpoint) ([]Event, error) {
	n := 0
	if raw, ok := cp.PhaseData["bump"]; ok {
		json.Unmarshal(raw, &n)
	}
	cp.PhaseData["bump"] = json.RawMessage(strconv.Itoa(n + 1))
	return []Event{{Type: EventUpdate, Reason: "bench"}}, nil
}

// benchSeedLog replaces the store's history with n committed state changes
// (serials 1..n, each record carrying its checkpoint) and sets the
// snapshot's serial to n, as if n updates had been made. The records are
// written directly from one template: 100,000 of them (85 MB) take a few
// tens of milliseconds on tmpfs. It returns the log's size.
func benchSeedLog(b *testing.B, s *Store, n int) int64 {
	b.Helper()
	cp, err := s.Load()
	if err != nil {
		b.Fatal(err)
	}
	// A serial no real value contains marks where each record's goes.
	const mark = "98765432109876"
	sentinel, _ := strconv.ParseUint(mark, 10, 64)
	cp.Serial = sentinel
	data, err := json.Marshal(cp)
	if err != nil {
		b.Fatal(err)
	}
	ev := Event{
		Time: s.Now(), Serial: sentinel, Type: EventUpdate, Reason: "seeded",
		StateBefore: cp.StateMachine.CurrentState, StateAfter: cp.StateMachine.CurrentState,
		Checkpoint: data,
	}
	line, err := json.Marshal(&ev)
	if err != nil {
		b.Fatal(err)
	}
	parts := bytes.Split(line, []byte(mark))
	if len(parts) != 3 {
		b.Fatalf("template record holds the serial %d times, want 2", len(parts)-1)
	}
	f, err := os.OpenFile(s.LogPath(), os.O_WRONLY|os.O_TRUNC|os.O_CREATE, fileMode)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var num []byte
	for i := 1; i <= n; i++ {
		num = strconv.AppendInt(num[:0], int64(i), 10)
		w.Write(parts[0])
		w.Write(num)
		w.Write(parts[1])
		w.Write(num)
		w.Write(parts[2])
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	cp.Serial = uint64(n)
	if data, err = json.Marshal(cp); err != nil {
		b.Fatal(err)
	}
	if err := writeFileAtomic(s.CheckpointPath(), append(data, '\n')); err != nil {
		b.Fatal(err)
	}
	// Written by hand, so sealed by accepting it as it is.
	if _, err := s.AcceptState("the benchmark"); err != nil {
		b.Fatalf("sealing the seeded history: %v", err)
	}
	return fi.Size()
}

// BenchmarkLoad is the lock-free read of every hook call on an active
// workflow: read checkpoint.json, decode, validate.
func BenchmarkLoad(b *testing.B) {
	s := benchStore(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadNoWorkflow is the read of a project without a workflow: the
// hook's fast path.
func BenchmarkLoadNoWorkflow(b *testing.B) {
	s := Open(benchStateDir(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Load(); err != ErrNoState {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate is one state change: lock, recover the tail, read,
// clone, validate, append the event (fsync), replace the snapshot (fsync,
// rename, fsync of the directory), unlock.
func BenchmarkUpdate(b *testing.B) {
	benchUpdate(b, benchStore(b), nil)
}

// BenchmarkUpdateHistory shows that a state change costs the same whatever
// the length of the log: only its tail is read.
func BenchmarkUpdateHistory(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			s := benchStore(b)
			benchSeedLog(b, s, n)
			benchUpdate(b, s, benchPinned(b, s))
		})
	}
}

// benchPinned returns what puts the store back as it is now: the log cut
// back to its length, the snapshot and the marker restored, and the
// files' stamps pinned again (a repair of a healthy state only does that).
func benchPinned(b *testing.B, s *Store) func() {
	b.Helper()
	fi, err := os.Stat(s.LogPath())
	if err != nil {
		b.Fatal(err)
	}
	snapshot, err := os.ReadFile(s.CheckpointPath())
	if err != nil {
		b.Fatal(err)
	}
	marker, err := os.ReadFile(s.MarkerPath())
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		if err := os.Truncate(s.LogPath(), fi.Size()); err != nil {
			b.Fatal(err)
		}
		if err := writeFileAtomic(s.CheckpointPath(), snapshot); err != nil {
			b.Fatal(err)
		}
		if err := writeFileAtomic(s.MarkerPath(), marker); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Repair(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchUpdate times Update. With reset, the store is put back every 256
// calls (untimed), so that the log stays at the history it was given
// rather than growing by b.N records.
func benchUpdate(b *testing.B, s *Store, reset func()) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Update(benchBump); err != nil {
			b.Fatal(err)
		}
		if i++; reset != nil && i%256 == 0 {
			b.StopTimer()
			reset()
			b.StartTimer()
		}
	}
}

// BenchmarkTailOfPastDenials is what `orch-hook status` does on a log whose
// last transitions are 100,000 denials back: look back past every one of
// them, reading the whole log backwards, for the last 5 transitions (the
// start record is the only one there is).
func BenchmarkTailOfPastDenials(b *testing.B) {
	s := benchStore(b)
	f, err := os.OpenFile(s.LogPath(), os.O_WRONLY|os.O_APPEND, fileMode)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < 100_000; i++ {
		ev := Event{Time: s.Now(), Serial: 1, Type: EventDeny, Session: "s", HookEvent: "PreToolUse",
			ToolUseID: "toolu_" + strconv.Itoa(i), StateBefore: "research", Reason: "orch-hook: a denial seeded by the benchmark"}
		line, err := json.Marshal(&ev)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	// Written by hand, so sealed by accepting it as it is.
	if _, err := s.AcceptState("the benchmark"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		evs, err := s.TailOf(5, EventTransition, EventStart, EventUserDecision)
		if err != nil || len(evs) != 1 || evs[0].Type != EventStart {
			b.Fatalf("TailOf = %d records (%v), want the start record", len(evs), err)
		}
	}
}
