package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/render"
	"github.com/orch-hook/orch-hook/state"
)

var mt0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// mtChange is the records of one state change: its serial, several
// records (the last one carrying the change), as commitLocked writes them;
// all in plan phase 1.
func mtChange(serial uint64, from, to string, at time.Duration, records int) []state.Event {
	var out []state.Event
	for i := 0; i < records; i++ {
		out = append(out, state.Event{Time: mt0.Add(at), Serial: serial, Type: state.EventAgentDone, StateBefore: from, StateAfter: to, Phase: 1})
	}
	out[len(out)-1].Type = state.EventTransition
	return out
}

// The orchestrate line: its launches by agent, the plan's phases, the fix
// iterations, final-validation failures and escalations read from the
// log's state changes (denials and records of one change counted once),
// as `orch-hook report` counts them.
func TestMetricsLineOrchestrate(t *testing.T) {
	w, err := orchestrate.NewWorkflow("Build a word counter", "s1")
	if err != nil {
		t.Fatal(err)
	}
	w.Current = orchestrate.Complete
	w.Plan = &orchestrate.PlanSnapshot{Phases: []orchestrate.PhaseSnap{{Number: 1, Title: "Core"}, {Number: 2, Title: "Docs"}}}
	w.KnownIssues = []string{"phase 2 skipped"}
	for i, a := range []string{orchestrate.Analyst, orchestrate.Planner, orchestrate.Implementer, orchestrate.Implementer, orchestrate.Quality, orchestrate.Planner, orchestrate.Implementer, orchestrate.Quality} {
		w.Launches = append(w.Launches, &orchestrate.Launch{ToolUseID: "t" + string(rune('a'+i)), Agent: a, Status: gates.Returned, Started: mt0.Add(time.Duration(i) * time.Minute), Ended: mt0.Add(time.Duration(i)*time.Minute + 30*time.Second),
			Tokens: &gates.Tokens{Input: 100, Output: 10, CacheRead: 1000, CacheWrite: 50, Responses: 1}})
	}
	// One transcript was missing, one launch has none recorded.
	w.Launches[1].Tokens = &gates.Tokens{Unknown: "transcript missing"}
	w.Launches[2].Tokens = nil
	cp := &state.Checkpoint{Lineage: "lin-o", StateMachine: state.StateMachine{WorkflowConfig: state.WorkflowConfig{Command: "orchestrate"}}, Metadata: state.Metadata{CreatedAt: mt0, UpdatedAt: mt0.Add(90 * time.Minute)}}
	if err := saveWorkflow(cp, w); err != nil {
		t.Fatal(err)
	}
	var events []state.Event
	add := func(evs ...state.Event) { events = append(events, evs...) }
	add(state.Event{Time: mt0, Serial: 1, Type: state.EventStart, StateAfter: "0a"})
	add(mtChange(2, "0a", "2", time.Minute, 1)...)
	add(mtChange(3, "2", "3", 2*time.Minute, 1)...)
	add(mtChange(4, "3", "4a", 3*time.Minute, 1)...)
	add(mtChange(5, "4a", "4b", 4*time.Minute, 2)...)
	add(state.Event{Time: mt0.Add(5 * time.Minute), Serial: 5, Type: state.EventDeny, StateBefore: "4b", StateAfter: "F1"}) // a deny changes nothing
	add(mtChange(6, "4b", "F1", 6*time.Minute, 3)...)                                                                       // fix iteration 1
	add(mtChange(7, "F1", "F2", 7*time.Minute, 1)...)
	add(mtChange(8, "F2", "4b", 8*time.Minute, 1)...)
	add(mtChange(9, "4b", "F1", 9*time.Minute, 1)...) // fix iteration 2
	add(mtChange(10, "F1", "F2", 10*time.Minute, 1)...)
	add(mtChange(11, "F2", "4b", 11*time.Minute, 1)...)
	add(mtChange(12, "4b", "escalated", 12*time.Minute, 1)...) // fix iteration 3, escalation 1
	add(mtChange(13, "escalated", "4c", 13*time.Minute, 1)...)
	add(mtChange(14, "4c", "5a", 14*time.Minute, 1)...)
	add(mtChange(15, "5a", "4a", 15*time.Minute, 1)...) // final failure 1
	add(mtChange(16, "4a", "4b", 16*time.Minute, 1)...)
	add(mtChange(17, "4b", "4c", 17*time.Minute, 1)...)
	add(mtChange(18, "4c", "5a", 18*time.Minute, 1)...)
	add(mtChange(19, "5a", "6", 19*time.Minute, 1)...)
	add(mtChange(20, "6", "complete", 90*time.Minute, 2)...)
	cp.StateMachine.CurrentState = orchestrate.Complete

	m, err := BuildMetricsLine(cp, events)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	want := `{"schema":"orch-hook.metrics/1","lineage":"lin-o","kind":"orchestrate","pattern":"flat","started":"2026-03-02T09:00:00Z","ended":"2026-03-02T10:30:00Z","duration_ms":5400000,"agents":8,"agents_by_name":{"code-implementer":3,"code-quality":2,"requirements-analyst":1,"task-planner":2},"phases":2,"fix_iterations":3,"final_validation_failures":1,"context_reduction":null,"time_savings":null,"tokens":6960,"token_counts":{"input":600,"output":60,"cache_read":6000,"cache_write":300,"responses":6},"tokens_unknown_agents":2,"escalations":1,"known_issues":1,"outcome":"completed"}`
	if string(b) != want {
		t.Errorf("line:\n%s\nwant:\n%s", b, want)
	}

	// The report, from the same checkpoint and log, counts the same.
	r := render.BuildReport(render.ReportInput{Command: "orchestrate", State: orchestrate.Complete, Created: mt0, Workflow: w, Events: events, Now: mt0.Add(2 * time.Hour)})
	fixes := 0
	for _, p := range r.Phases {
		fixes += p.FixIterations
	}
	if fixes != *m.FixIterations || r.FinalFailures != *m.FinalValidationFailures || len(r.Agents) != m.Agents || r.End.Sub(r.Start).Milliseconds() != m.DurationMs {
		t.Errorf("report: fixes %d, final failures %d, agents %d, %v; line: %d, %d, %d, %dms", fixes, r.FinalFailures, len(r.Agents), r.End.Sub(r.Start), *m.FixIterations, *m.FinalValidationFailures, m.Agents, m.DurationMs)
	}

	cp.StateMachine.CurrentState = orchestrate.Aborted
	if m, _ := BuildMetricsLine(cp, events); m.Outcome != OutcomeAborted {
		t.Errorf("aborted: outcome %q", m.Outcome)
	}
}

// The coordinate line: scope, the supervisors it ran (hierarchical), its
// workers, debug retries, the measured context reduction and time
// savings read back from the workflow's records, the escalations the log
// records, and the outcome.
func TestMetricsLineCoordinate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	store := state.Open(t.TempDir())
	c, err := StartCoordinate(store, "Implement rate limiting for the API", coordinate.ScopeFullImplementation, "s1", mt0)
	if err != nil {
		t.Fatal(err)
	}
	cp := mustLoad(t, store)
	launch := func(agent, id, parent string) {
		c.Launches = append(c.Launches, &coordinate.Launch{Agent: agent, AgentID: id, Parent: parent, Status: gates.Returned, Started: mt0})
	}
	launch(coordinate.ResearchSupervisor, "sup-r", "")
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		launch(coordinate.ResearchSpecialist, id, "sup-r")
	}
	launch(coordinate.PlanArchitect, "p", "")
	launch(coordinate.ImplSupervisor, "sup-i", "")
	launch(coordinate.ImplementationExec, "i1", "sup-i")
	launch(coordinate.ImplementationExec, "i2", "sup-i")
	launch(coordinate.TestSpecialist, "t1", "")
	launch(coordinate.DebugAnalyst, "d1", "")
	launch(coordinate.TestSpecialist, "t2", "")
	launch(coordinate.TestSpecialist, "t3", "")
	c.ContextReduction = "context reduction 95% (20000 report bytes -> 1000 characters of metadata)"
	c.TimeSavings = "sequential 70000ms vs parallel 30000ms (57% saved)"
	c.Retries = 1
	c.KnownIssues = []string{"document skipped after doc-writer failed 3 times"}
	c.LastError, c.FailedState = "2 tests fail", coordinate.CTest
	c.Current = coordinate.CComplete
	if err := saveCoord(cp, c); err != nil {
		t.Fatal(err)
	}
	cp.Metadata.UpdatedAt = mt0.Add(20 * time.Minute)
	events := []state.Event{
		{Time: mt0, Serial: 1, Type: state.EventStart},
		{Time: mt0, Serial: 5, Type: state.EventTransition, StateBefore: "document", StateAfter: "document", Reason: "document -> escalated: doc-writer failed 3 times (permanent)"},
		{Time: mt0, Serial: 6, Type: state.EventTransition, StateBefore: "document", StateAfter: "complete", Reason: "resolve skip"},
	}
	m, err := BuildMetricsLine(cp, events)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m)
	want := `{"schema":"orch-hook.metrics/1","lineage":"` + cp.Lineage + `","kind":"coordinate","scope":"full-implementation","pattern":"hierarchical","supervisors":["research","implementation"],"started":"2026-03-02T09:00:00Z","ended":"2026-03-02T09:20:00Z","duration_ms":1200000,"agents":13,"agents_by_name":{"debug-analyst":1,"implementation-executor":2,"implementation-sub-supervisor":1,"plan-architect":1,"research-specialist":4,"research-sub-supervisor":1,"test-specialist":3},"workers":6,"debug_retries":1,"context_reduction":{"percent":95,"report_bytes":20000,"metadata_chars":1000},"time_savings":{"sequential_ms":70000,"parallel_ms":30000,"percent":57},"tokens_unknown_agents":13,"escalations":1,"known_issues":1,"outcome":"tests_failing"}`
	if string(b) != want {
		t.Errorf("line:\n%s\nwant:\n%s", b, want)
	}

	// Flat, nothing measured, aborted.
	flat, err := coordinate.NewWorkflow("Research authentication patterns", coordinate.ScopeResearchOnly, "s1", "specs/002_x")
	if err != nil {
		t.Fatal(err)
	}
	flat.Current = coordinate.CResearch
	flat.Launches = []*coordinate.Launch{{Agent: coordinate.ResearchSpecialist, AgentID: "a1"}}
	coordinateAbort(t, flat)
	if err := saveCoord(cp, flat); err != nil {
		t.Fatal(err)
	}
	m, err = BuildMetricsLine(cp, events[:1])
	if err != nil {
		t.Fatal(err)
	}
	if m.Pattern != PatternFlat || m.Supervisors != nil || *m.Workers != 0 || m.ContextReduction != nil || m.TimeSavings != nil || m.Outcome != OutcomeAborted || m.Escalations != 0 || m.Agents != 1 {
		t.Errorf("flat aborted line: %+v", m)
	}
}

// coordinateAbort aborts c as the user's /orch-hook:abort does.
func coordinateAbort(t *testing.T, c *coordinate.Workflow) {
	t.Helper()
	o := coordinate.Decide(c, &gates.Call{Event: gates.UserPromptSubmit, Session: "s1", PromptID: "p-abort", Prompt: "/orch-hook:abort"}, &coordinate.Env{Now: mt0})
	if !o.Changed || !c.Aborted() {
		t.Fatalf("abort: %+v, outcome %q", o, c.Outcome)
	}
}

func mtLines(t *testing.T, root string) []map[string]any {
	t.Helper()
	log, err := state.ReadMetrics(root)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range log.Lines {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %s: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Through the hook path: a change that does not finish the workflow
// writes no metrics; the one that finishes it (here the user's abort)
// appends its line, once; the next workflow gets its own.
func TestMetricsWrittenWhenAWorkflowFinishes(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	store := state.Open(root)
	if _, err := StartWorkflow(store, "request A", "s1", mt0); err != nil {
		t.Fatal(err)
	}
	at := mt0
	env := Env{ProjectDir: root, Now: func() time.Time { return at }}
	at = mt0.Add(time.Minute)
	if d := Handle(env, &hooks.Input{HookEventName: gates.PreToolUse, SessionID: "s1", ToolName: "Task", ToolUseID: "t1", ToolInput: json.RawMessage(`{"subagent_type":"orch-hook:requirements-analyst","prompt":"clarify","run_in_background":false}`)}); d.Deny {
		t.Fatalf("launch denied: %s", d.Reason)
	}
	if _, err := os.Lstat(filepath.Join(root, ".orchestrator", "records")); !os.IsNotExist(err) {
		t.Fatalf("a change that finishes nothing made the records directory: %v", err)
	}
	first := mustLoad(t, store)
	if w, _ := LoadWorkflow(first); len(w.Launches) != 1 {
		t.Fatalf("launch not recorded: %+v", w.Launches)
	}
	at = mt0.Add(5 * time.Minute)
	abort := &hooks.Input{HookEventName: gates.UserPromptSubmit, SessionID: "s1", PromptID: "p1", Prompt: "/orch-hook:abort"}
	if d := Handle(env, abort); d.Block {
		t.Fatalf("abort blocked: %s", d.Reason)
	}
	lines := mtLines(t, root)
	if len(lines) != 1 || lines[0]["lineage"] != first.Lineage || lines[0]["outcome"] != "aborted" || lines[0]["duration_ms"] != 300000.0 || lines[0]["agents"] != 1.0 {
		t.Fatalf("after the abort: %v", lines)
	}
	// Changes of a finished workflow add nothing; nor does the finishing
	// change seen again (the hook run twice).
	at = mt0.Add(6 * time.Minute)
	Handle(env, &hooks.Input{HookEventName: gates.UserPromptSubmit, SessionID: "s1", PromptID: "p2", Prompt: "/orch-hook:abort"})
	done := mustLoad(t, store)
	if err := recordMetrics(store, first, done); err != nil {
		t.Fatal(err)
	}
	if lines := mtLines(t, root); len(lines) != 1 {
		t.Fatalf("%d lines after the workflow's end was seen again", len(lines))
	}
	if _, err := StartWorkflow(store, "request B", "s1", mt0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second := mustLoad(t, store)
	at = mt0.Add(12 * time.Minute)
	Handle(env, &hooks.Input{HookEventName: gates.UserPromptSubmit, SessionID: "s1", PromptID: "p3", Prompt: "/orch-hook:abort"})
	lines = mtLines(t, root)
	if len(lines) != 2 || lines[1]["lineage"] != second.Lineage || lines[1]["duration_ms"] != 120000.0 {
		t.Fatalf("after the second workflow: %v", lines)
	}
}

// A records directory that is a symlink is refused: the workflow still
// finishes (the change stands), the refusal is logged, and nothing is
// written through the link.
func TestMetricsRefusedThroughASymlink(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	store := state.Open(root)
	if _, err := StartWorkflow(store, "request A", "s1", mt0); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, ".orchestrator", "records")); err != nil {
		t.Fatal(err)
	}
	env := Env{ProjectDir: root, Now: func() time.Time { return mt0.Add(time.Minute) }}
	if d := Handle(env, &hooks.Input{HookEventName: gates.UserPromptSubmit, SessionID: "s1", PromptID: "p1", Prompt: "/orch-hook:abort"}); d.Block {
		t.Fatalf("abort blocked: %s", d.Reason)
	}
	if cp := mustLoad(t, store); cp.StateMachine.CurrentState != orchestrate.Aborted {
		t.Fatalf("state %s: the finishing change must stand", cp.StateMachine.CurrentState)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through the symlink: %v", entries)
	}
	events, _, err := store.Events()
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Type != state.EventError || !strings.Contains(last.Reason, "after the change: ") || !strings.Contains(last.Reason, "metrics:") || !strings.Contains(last.Reason, "symlink") {
		t.Errorf("last record: %+v", last)
	}
}
