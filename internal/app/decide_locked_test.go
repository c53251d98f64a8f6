package app

import (
	"os"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/state"
)

// A state-changing call decides on what the lock read, not on its
// lock-free snapshot: another checkpoint of the same serial (here: the
// workflow was aborted and a new one started, which is serial 1 again)
// must not get the snapshot's decision, which is about a workflow that is
// no longer there. (Reusing the snapshot's decision whenever the serial
// matched was tried and reverted: these two tests are what it broke.)
func TestDecideAgainOnAnotherCheckpointOfTheSameSerial(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	env := Env{ProjectDir: root}
	store := state.Open(root)
	if _, err := StartWorkflow(store, "request A", "s1", time.Now()); err != nil {
		t.Fatal(err)
	}
	snap, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	// While this call waits for the lock: the user aborts A and starts B.
	if d := Handle(env, &hooks.Input{HookEventName: gates.UserPromptSubmit, SessionID: "s1", PromptID: "p1", Prompt: "/orch-hook:abort"}); d.Block {
		t.Fatalf("abort blocked: %s", d.Reason)
	}
	if _, err := StartWorkflow(store, "request B", "s1", time.Now()); err != nil {
		t.Fatal(err)
	}
	now, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if now.Serial != snap.Serial || now.Lineage == snap.Lineage {
		t.Fatalf("setup: serial %d lineage %s, snapshot serial %d lineage %s", now.Serial, now.Lineage, snap.Serial, snap.Lineage)
	}
	call := &gates.Call{Event: gates.PreToolUse, Session: "s1", Tool: "Task", ToolUseID: "toolu_1", SubagentType: orchestrate.Analyst, Prompt: "clarify", Background: false}
	if _, err := decide(env, store, snap, call); err != nil {
		t.Fatal(err)
	}
	cp, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorkflow(cp)
	if err != nil {
		t.Fatal(err)
	}
	if w.Request != "request B" {
		t.Errorf("the workflow is now %q: the decision on the snapshot of workflow A was written over workflow B", w.Request)
	}
	if len(w.Launches) != 1 {
		t.Errorf("launches: %d, want 1", len(w.Launches))
	}
}

// The same serial of the same workflow can be another checkpoint too: the
// user rolled checkpoint.json back one write and accepted it
// (`orch-hook repair --accept`), which seals it at the serial it had.
func TestDecideAgainOnAnAcceptedStateOfTheSameSerial(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	env := Env{ProjectDir: root}
	store := state.Open(root)
	if _, err := StartWorkflow(store, "request A", "s1", time.Now()); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(store.CheckpointPath())
	if err != nil {
		t.Fatal(err)
	}
	launch := func(id string) *gates.Call {
		return &gates.Call{Event: gates.PreToolUse, Session: "s1", Tool: "Task", ToolUseID: id, SubagentType: orchestrate.Analyst, Prompt: "clarify"}
	}
	if d, err := decide(env, store, mustLoad(t, store), launch("toolu_1")); err != nil || d.Deny {
		t.Fatalf("first launch: %v %+v", err, d)
	}
	snap := mustLoad(t, store)
	// While the next call waits for the lock: the user rolls the state back
	// to before that launch and accepts it.
	if err := os.WriteFile(store.CheckpointPath(), first, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AcceptState("the user"); err != nil {
		t.Fatal(err)
	}
	now := mustLoad(t, store)
	if now.Serial != snap.Serial || now.Lineage != snap.Lineage {
		t.Fatalf("setup: serial %d lineage %s, snapshot serial %d lineage %s", now.Serial, now.Lineage, snap.Serial, snap.Lineage)
	}
	// On the snapshot requirements-analyst is running; on the state the
	// lock reads it is not.
	d, err := decide(env, store, snap, launch("toolu_2"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Deny {
		t.Errorf("denied on the snapshot's state, not the accepted one: %s", d.Reason)
	}
	w, err := LoadWorkflow(mustLoad(t, store))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Launches) != 1 || w.Launches[0].ToolUseID != "toolu_2" {
		t.Errorf("launches after the accepted state: %+v, want toolu_2 alone", w.Launches)
	}
}

func mustLoad(t *testing.T, store *state.Store) *state.Checkpoint {
	t.Helper()
	cp, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}
