package app

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/state"
)

// benchPreBash is a PreToolUse(Bash) payload as Claude Code 2.1.328 sends
// it (cmd/orch-hook/testdata/payloads/pre-bash.json): the most frequent
// hook call there is.
const benchPreBash = `{
  "session_id": "f9c93cc8-09f9-4e57-b7b8-d70b6d53e2b7",
  "transcript_path": "/home/user/.claude/projects/-home-user-project/f9c93cc8-09f9-4e57-b7b8-d70b6d53e2b7.jsonl",
  "cwd": "/home/user/project",
  "prompt_id": "dbff619a-af86-4dae-a7fd-b54a7739d5a9",
  "permission_mode": "bypassPermissions",
  "effort": {
    "level": "medium"
  },
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {
    "command": "cat hello.txt && echo to-stderr >&2",
    "description": "Show the file"
  },
  "tool_use_id": "toolu_main_f79afd1b_t1_b0"
}
`

// benchProject returns an empty project directory, on tmpfs when there is
// one.
func benchProject(b *testing.B) string {
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

// BenchmarkDecode is reading and checking one hook payload.
func BenchmarkDecode(b *testing.B) {
	payload := []byte(benchPreBash)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hooks.Decode(bytes.NewReader(payload), gates.PreToolUse); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandle is deciding a PreToolUse(Bash) call once it is decoded.
// no-workflow is the fast path (the project has no state: one failed open
// and one failed stat, then the static rules); other-workflow has a
// workflow that is not orchestrate (the snapshot is read and decoded, and
// the call is let through).
func BenchmarkHandle(b *testing.B) {
	in, err := hooks.DecodeBytes([]byte(benchPreBash), gates.PreToolUse)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("no-workflow", func(b *testing.B) {
		env := Env{ProjectDir: benchProject(b)}
		b.ReportAllocs()
		for b.Loop() {
			if d := Handle(env, in); d.Deny || d.Block {
				b.Fatalf("denied: %s", d.Reason)
			}
		}
	})
	b.Run("other-workflow", func(b *testing.B) {
		root := benchProject(b)
		if err := state.Open(root).Create(benchOtherCheckpoint()); err != nil {
			b.Fatal(err)
		}
		env := Env{ProjectDir: root}
		b.ReportAllocs()
		for b.Loop() {
			if d := Handle(env, in); d.Deny || d.Block {
				b.Fatalf("denied: %s", d.Reason)
			}
		}
	})
}

// BenchmarkRun is the whole no-workflow hook call after process start:
// decode stdin, decide, render (nothing, for an allow).
func BenchmarkRun(b *testing.B) {
	env := Env{ProjectDir: benchProject(b)}
	payload := []byte(benchPreBash)
	b.ReportAllocs()
	for b.Loop() {
		if err := Run(env, bytes.NewReader(payload), io.Discard, gates.PreToolUse); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOtherCheckpoint is a valid workflow of a command other than
// orchestrate, like the one test-bump --init creates.
func benchOtherCheckpoint() *state.Checkpoint {
	table := make(map[string]string, len(state.V13TransitionTable))
	for k, v := range state.V13TransitionTable {
		table[k] = v
	}
	return &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		StateMachine: state.StateMachine{
			CurrentState:    "research",
			CompletedStates: []string{"initialize"},
			TransitionTable: table,
			WorkflowConfig:  state.WorkflowConfig{Command: "test", Description: "bench"},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata:        state.Metadata{CheckpointID: "test_bench", ProjectName: "bench"},
	}
}
