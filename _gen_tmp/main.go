// Throwaway generator for state/testdata store fixtures; not committed.
package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/goccy/go-json"
	"github.com/orch-hook/orch-hook/state"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	out := os.Args[1]
	clock := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	root, _ := os.MkdirTemp("", "gen")
	s := state.Open(root)
	s.Now = tick
	table := map[string]string{}
	for k, v := range state.V13TransitionTable {
		table[k] = v
	}
	cp := &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		Lineage:       "5eed5eed5eed5eed5eed5eed5eed5eed",
		StateMachine: state.StateMachine{
			CurrentState:    "initialize",
			CompletedStates: []string{},
			TransitionTable: table,
			WorkflowConfig:  state.WorkflowConfig{Command: "coordinate", Description: "add a widget"},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata:        state.Metadata{CheckpointID: "coordinate_20250314_092654", ProjectName: "widgets"},
	}
	must(s.Create(cp, state.Event{Type: state.EventStart, Session: "sess-1", Reason: "started by /orch-hook:orchestrate"}))
	move := func(to string) func(*state.Checkpoint) ([]state.Event, error) {
		return func(c *state.Checkpoint) ([]state.Event, error) {
			from := c.StateMachine.CurrentState
			c.StateMachine.CompletedStates = append(c.StateMachine.CompletedStates, from)
			c.StateMachine.CurrentState = to
			return []state.Event{{Type: state.EventTransition, Session: "sess-1", Reason: from + " -> " + to}}, nil
		}
	}
	_, err := s.Update(move("research"))
	must(err)
	must(s.Append(state.Event{Type: state.EventDeny, Session: "sess-1", HookEvent: "PreToolUse", ToolUseID: "toolu_1", Reason: "plan first"}))
	snap2, _ := os.ReadFile(s.CheckpointPath())
	log2, _ := os.ReadFile(s.LogPath())
	_, err = s.Update(move("plan"))
	must(err)
	log3, _ := os.ReadFile(s.LogPath())

	write := func(dir, name string, b []byte) {
		must(os.MkdirAll(filepath.Join(out, dir), 0o755))
		must(os.WriteFile(filepath.Join(out, dir, name), b, 0o644))
	}
	// torn-log: a deny record cut in the middle, no newline.
	deny := []byte(`{"time":"2025-03-14T09:27:00Z","serial":2,"type":"deny","session":"sess-1","hook_event":"PreToolUse","tool_use_id":"toolu_2","reason":"plan fi`)
	write("torn-log", "checkpoint.json", snap2)
	write("torn-log", "events.jsonl", append(append([]byte{}, log2...), deny...))
	// log-ahead: the serial-3 record was appended, the rename never happened.
	write("log-ahead", "checkpoint.json", snap2)
	write("log-ahead", "events.jsonl", log3)
	// corrupt-snapshot: checkpoint.json truncated.
	write("corrupt-snapshot", "checkpoint.json", snap2[:150])
	write("corrupt-snapshot", "events.jsonl", log2)
	os.RemoveAll(root)
}
