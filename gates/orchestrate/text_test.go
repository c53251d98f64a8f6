package orchestrate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestWhere(t *testing.T) {
	cases := []struct {
		target string
		plan   []phase
		want   string
	}{
		{S0a, nil, "step 0a, clarification round 0/3"},
		{questionsPending, nil, "step 0a, clarification round 1/3, waiting for the user's answers"},
		{S1, nil, "step 1 (discovery 1/2)"},
		{S2, nil, "step 2 (planning)"},
		{S3, nil, "step 3, waiting for the user's approval"},
		{S4b, nil, "phase 1, step 4b, fix iteration 0/3"},
		{SF2, nil, "phase 1, step F2, fix iteration 1/3"},
		{S5b, twoPhases(true), "step 5b (final validation, failures 0/3)"},
		{S6, nil, "step 6 (completion)"},
		{awaitFix5a, nil, "step 4a, waiting for a fix phase to be appended"},
		{escalatedFix, nil, "escalated, waiting for the user's decision"},
		{Complete, nil, "step complete"},
	}
	for _, tc := range cases {
		h := driveTo(t, tc.target, tc.plan...)
		if got := h.w.Where(); got != tc.want {
			t.Errorf("%s: Where() = %q, want %q", tc.target, got, tc.want)
		}
	}
	h := driveTo(t, Complete)
	FollowUp(h.w, "lightweight", "x", h.env())
	if got := h.w.Where(); got != "step 4a, waiting for a follow-up phase to be appended" {
		t.Errorf("lightweight: %q", got)
	}
}

func TestNext(t *testing.T) {
	cases := []struct {
		target string
		want   string
	}{
		{S0a, "launch requirements-analyst"},
		{questionsPending, "wait for the user's answers to the questions"},
		{S1, "launch researcher and code-explorer (in parallel)"},
		{S0b, "launch requirements-analyst with the discovery findings"},
		{S2, "launch task-planner to write .orchestrator/tasks/MASTER_PLAN.md and the task files"},
		{S3, "wait for the user: /orch-hook:approve, or /orch-hook:request-changes <what>"},
		{S4a, "launch code-implementer for Task 01, Task 02 (in parallel, one message)"},
		{S4c, "mark phase 1's tasks [x] in MASTER_PLAN.md and update its Status: and Progress: lines"},
		{S5a, "launch code-quality for final validation (full test suite, production build, all acceptance criteria)"},
		{Complete, "nothing; the workflow is complete (a follow-up the user asks for reopens it: the orch-hook:follow-up skill)"},
		{Aborted, "nothing; the workflow was aborted"},
	}
	for _, tc := range cases {
		h := driveTo(t, tc.target)
		if got := h.w.Next(h.env()); got != tc.want {
			t.Errorf("%s: Next() = %q, want %q", tc.target, got, tc.want)
		}
	}
	h := driveTo(t, S4a)
	h.implement(1)
	h.implement(2)
	if got := h.w.Next(h.env()); got != "launch code-implementer for Task 03" {
		t.Errorf("Next = %q", got)
	}
	h.launch(Implementer, implPrompt(3))
	if got := h.w.Next(h.env()); got != "wait for code-implementer (Task 03)" {
		t.Errorf("Next = %q", got)
	}
	h = driveTo(t, S1)
	h.launch(Researcher, "r")
	if got := h.w.Next(h.env()); got != "launch code-explorer (in parallel)" {
		t.Errorf("Next = %q", got)
	}
	h.launch(Explorer, "e")
	if got := h.w.Next(h.env()); got != "wait for the discovery agents to return" {
		t.Errorf("Next = %q", got)
	}
	h = driveTo(t, S6)
	h.launch(Planner, "x")
	if got := h.w.Next(nil); got != "wait for task-planner to return" {
		t.Errorf("Next = %q", got)
	}
}

func TestPhaseTagAndMetadata(t *testing.T) {
	w := &Workflow{Plan: ParsePlan(planFiles(
		phase{N: 1, Tasks: []task{{N: 1}, {N: 2}, {N: 3}}},
		phase{N: 2, Tasks: []task{{N: 4}, {N: 6, UX: true}}},
		phase{N: 3, Tasks: []task{{N: 7}}},
	)).Snapshot()}
	for n, want := range map[int]string{1: "[PHASE 1 | Tasks 01-03]", 2: "[PHASE 2 | Tasks 04, 06]", 3: "[PHASE 3 | Task 07]", 4: "[PHASE 4]"} {
		if got := w.phaseTag(n); got != want {
			t.Errorf("phaseTag(%d) = %q, want %q", n, got, want)
		}
	}
	w.Phase = 2
	const want = `PHASE METADATA EXTRACTION - Phase 2
-------------------------------------
Tasks in Phase: [04, 06]
Total Tasks: 2

UX/DX Review Flags:
- Task 04: requires_ux_dx_review = false
- Task 06: requires_ux_dx_review = true

Phase 5 UX/DX Required: YES
-------------------------------------`
	if got := w.MetadataBlock(); got != want {
		t.Errorf("MetadataBlock:\n%s\nwant\n%s", got, want)
	}
	w.Phase = 9
	if w.MetadataBlock() != "" {
		t.Error("metadata of an unknown phase")
	}
	// Phase 5 UX/DX Required reads every phase, not just this one.
	w.Phase = 1
	if !strings.Contains(w.MetadataBlock(), "Phase 5 UX/DX Required: YES") {
		t.Error("UX/DX required from another phase's task")
	}
}

// TestCheckpointLines: every line the orchestrator is given after an agent
// completes uses one format, [PHASE N | Tasks NN-MM] in phase 4 and
// [STEP x] outside it.
func TestCheckpointLines(t *testing.T) {
	for _, fg := range []bool{false, true} {
		h := newHarness(t, twoPhases(true)...)
		h.fg = fg
		var lines []string
		record := func(o gates.Outcome) {
			if o.Context != "" {
				lines = append(lines, o.Context)
			}
		}
		record(h.analyst(LineDiscovery))
		record(h.discover())
		record(h.analyst(LineClear))
		record(h.writePlan())
		h.approve()
		for _, n := range []int{1, 2} {
			record(h.implement(n))
		}
		record(h.implement(3))
		record(h.gate(false, 2))
		record(h.analysis())
		record(h.fixAll())
		record(h.gate(true))
		record(h.tick())
		for _, n := range []int{4, 5} {
			record(h.implement(n))
		}
		record(h.gate(true))
		record(h.tick())
		record(h.final(true))
		record(h.uxReview(true))
		record(h.extract())
		h.expect(Complete)
		// 17 recorded completions (discover records the explorer's) and
		// two plan updates.
		if len(lines) != 19 {
			t.Errorf("foreground=%t: %d lines, want one per recorded step", fg, len(lines))
		}
		for _, l := range lines {
			if !reCheckpoint.MatchString(l) {
				t.Errorf("foreground=%t: %q is not a checkpoint line", fg, l)
			}
		}
	}
}

func TestWorkflowEncoding(t *testing.T) {
	h := driveTo(t, SF2)
	b, err := h.w.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "request", "owner_session", "clarification_rounds", "discovery", "fix_iterations", "final_failures", "phase", "plan", "plan_hashes", "tasks", "failing_tasks", "launches", "last_analysis", "decisions"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("encoded workflow lacks %q", k)
		}
	}
	w, err := DecodeWorkflow(b)
	if err != nil {
		t.Fatal(err)
	}
	if w.Current != "" || w.Completed != nil {
		t.Error("the state is stored in state_machine, not in the workflow section")
	}
	w.Current, w.Completed = h.w.Current, h.w.Completed
	b2, _ := w.Encode()
	if string(b) != string(b2) {
		t.Errorf("round trip differs:\n%s\n%s", b, b2)
	}
	if w, err := DecodeWorkflow(nil); err != nil || w == nil {
		t.Errorf("empty: %v", err)
	}
	if _, err := DecodeWorkflow([]byte("{")); err == nil {
		t.Error("bad JSON decoded")
	}
}

func TestRelevant(t *testing.T) {
	cases := []struct {
		c        gates.Call
		relevant bool
		plan     bool
	}{
		{gates.Call{Event: gates.PreToolUse, Tool: "Agent"}, true, true},
		{gates.Call{Event: gates.PreToolUse, Tool: "Read"}, false, true},
		{gates.Call{Event: gates.PreToolUse, Tool: "Bash"}, true, false},
		{gates.Call{Event: gates.PreToolUse, Tool: "Skill"}, true, false},
		{gates.Call{Event: gates.PreToolUse, Tool: "SendMessage"}, true, false},
		{gates.Call{Event: gates.PreToolUse, Tool: "Workflow"}, true, false},
		{gates.Call{Event: gates.PostToolUse, Tool: "Edit"}, true, true},
		{gates.Call{Event: gates.PostToolUse, Tool: "Bash"}, false, false},
		{gates.Call{Event: gates.PostToolUseFailure, Tool: "Task"}, true, true},
		{gates.Call{Event: gates.SubagentStop}, true, true},
		{gates.Call{Event: gates.Stop}, true, true},
		{gates.Call{Event: gates.UserPromptSubmit}, true, true},
		{gates.Call{Event: gates.SessionStart}, true, true},
		{gates.Call{Event: gates.SessionEnd}, true, false},
		{gates.Call{Event: gates.SubagentStart}, false, true},
		{gates.Call{Event: "PreCompact"}, false, true},
	}
	for _, tc := range cases {
		if got := gates.Relevant(&tc.c); got != tc.relevant {
			t.Errorf("Relevant(%s %s) = %v", tc.c.Event, tc.c.Tool, got)
		}
	}
}
