package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// TestOneAgentAtATime: a second launch of a step's agent while the first
// runs is refused, with the step's gate.
func TestOneAgentAtATime(t *testing.T) {
	cases := []struct {
		target string
		plan   []phase
		agent  string
		gate   int
	}{
		{S4b, nil, Quality, 1},
		{SF1, nil, Planner, 3},
		{S5a, nil, Quality, 0},
		{S5b, twoPhases(true), UXDX, 5},
		{S6, nil, Planner, 4},
	}
	for _, tc := range cases {
		t.Run(tc.target, func(t *testing.T) {
			h := driveTo(t, tc.target, tc.plan...)
			r := h.launch(tc.agent, "first")
			wantDeny(t, h.start(tc.agent, "second").launch, tc.gate, tc.agent+" is already running ("+r.toolUse+"); wait for it to return.", "Next: wait for "+tc.agent+" to return.")
		})
	}
}

func TestFixLaunchRules(t *testing.T) {
	h := driveTo(t, S4b)
	h.gate(false, 1, 2)
	h.analysis()
	wantDeny(t, h.start(Implementer, "Fix the failing tests").launch, 0, "the prompt names no task; start it with \"Task NN\" naming the one task to implement. The failing tasks to fix: Task 01, Task 02.")
	h.launch(Implementer, implPrompt(1))
	wantDeny(t, h.start(Implementer, implPrompt(1)).launch, 3, "Task 01 is already in flight; one code-implementer per task.")
	if n := h.w.Next(h.env()); n != "launch code-implementer for the failing tasks only: Task 02" {
		t.Errorf("next = %q", n)
	}
	h.launch(Implementer, implPrompt(2))
	if n := h.w.Next(h.env()); n != "wait for the fixes (Task 01, Task 02)" {
		t.Errorf("next = %q", n)
	}
	wantDeny(t, h.start(Analyst, "x").launch, 3, "requirements-analyst is not part of the fix cycle.")
}

func TestLightweightWaitWording(t *testing.T) {
	h := driveTo(t, Complete)
	FollowUp(h.w, "lightweight", "Add a logout link", h.env())
	wantDeny(t, h.start(Implementer, implPrompt(6)).launch, 0, "append the follow-up phase to MASTER_PLAN.md (## Phase 3: ..., with new task numbers and their task files) before launching code-implementer.")
	// No gate 6 or 7 here: no final validation failed.
	wantDeny(t, h.start(Quality, "validate").launch, 0, "code-quality is not allowed before the fix phase ran")
}

func TestFirstPromptClaimsAndDecides(t *testing.T) {
	h := driveTo(t, S4a)
	h.w.Owner = "" // started from the command line, no prompt yet
	o := h.user("/orch-hook:abort")
	h.expect(Aborted)
	if h.w.Owner != ownerSession || !o.Changed || !hasRecord(o, gates.RecUpdate, "workflow owned by session") || !hasRecord(o, gates.RecDecision, "abort") {
		t.Errorf("owner %q outcome %+v", h.w.Owner, o)
	}
}

func TestResolveAbortOfAFinalEscalation(t *testing.T) {
	h := driveTo(t, escalatedFinal, onePhase(false)...)
	o := h.user("/orch-hook:resolve abort")
	h.expect(Aborted)
	if h.w.Escalation != nil || h.w.WaitingOn != "" || !hasRecord(o, gates.RecDecision, "resolve abort (final escalation)") {
		t.Errorf("escalation %+v waiting %q records %+v", h.w.Escalation, h.w.WaitingOn, o.Records)
	}
	wantContext(t, o, "orch-hook: [RESOLVE] abort -> aborted | the workflow is aborted; nothing is gated any more.")
}

func TestUnknownLaunchEvents(t *testing.T) {
	h := driveTo(t, S4a)
	for _, c := range []*gates.Call{
		postDone("toolu_unknown", "a-unknown", implComplete),
		postFailure("toolu_unknown", "boom"),
		notification("a-unknown", "toolu_unknown", "completed", implComplete),
		{Event: gates.PostToolUse, Tool: "Write", Path: testRoot + "/src/x.go"},
	} {
		if o := h.do(c); o.Changed || o.Verdict != gates.Allow || o.Context != "" {
			t.Errorf("%s %s: %+v", c.Event, c.Tool, o)
		}
	}
	wantDeny(t, h.do(editCall(tasksPath(MasterPlan), "", "x")), 0)
}
