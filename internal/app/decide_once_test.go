package app

import (
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/state"
)

// decisions counts the decisions a call makes: each reads the clock once.
func decisions(env *Env) *int {
	n := 0
	env.Now = func() time.Time { n++; return time.Now() }
	return &n
}

// A state-changing call whose lock reads the very file its lock-free
// snapshot was read from decides once: the snapshot's decision is what is
// persisted (decide_locked_test.go: anything else is decided again).
func TestDecideOnceWhenNothingCameBetween(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	store := state.Open(root)
	if _, err := StartWorkflow(store, "request A", "s1", time.Now()); err != nil {
		t.Fatal(err)
	}
	env := Env{ProjectDir: root}
	n := decisions(&env)
	snap := mustLoad(t, store)
	call := &gates.Call{Event: gates.PreToolUse, Session: "s1", Tool: "Task", ToolUseID: "toolu_1", SubagentType: orchestrate.Analyst, Prompt: "clarify"}
	if d, err := decide(env, store, snap, call); err != nil || d.Deny {
		t.Fatalf("launch: %v %+v", err, d)
	}
	if *n != 1 {
		t.Errorf("%d decisions, want 1", *n)
	}
	cp := mustLoad(t, store)
	w, err := LoadWorkflow(cp)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Serial != snap.Serial+1 || len(w.Launches) != 1 || w.Launches[0].ToolUseID != "toolu_1" {
		t.Errorf("serial %d (snapshot %d), launches %+v: want the launch recorded in one write", cp.Serial, snap.Serial, w.Launches)
	}

	// A write between the snapshot and the lock: decided again, on what
	// the lock read (the second launch is refused: the first is running).
	stale := mustLoad(t, store)
	if _, err := store.Update(func(cp *state.Checkpoint) ([]state.Event, error) {
		cp.PhaseData["between"] = []byte(`1`)
		return []state.Event{{Type: state.EventUpdate, Reason: "a write between"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	other := *call
	other.ToolUseID = "toolu_2"
	*n = 0
	d, err := decide(env, store, stale, &other)
	if err != nil {
		t.Fatal(err)
	}
	if *n != 2 || !d.Deny {
		t.Errorf("%d decisions, deny %v: want the call decided again, and refused", *n, d.Deny)
	}
}
