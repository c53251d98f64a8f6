package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// agentAt is, for each step an agent can fail in, the agent launched
// there, its prompt and the plan the harness needs to reach the step.
var agentAt = map[gates.State]struct {
	agent, prompt string
	plan          []phase
}{
	S0a: {Analyst, "Analyze the request", nil},
	S1:  {Researcher, "Research login best practices", nil},
	S0b: {Analyst, "Clarify what discovery found", nil},
	S2:  {Planner, "Create MASTER_PLAN.md and the task files", nil},
	S4a: {Implementer, implPrompt(1), nil},
	S4b: {Quality, "Quality gate for phase 1", nil},
	SF1: {Planner, "FAILURE_ANALYSIS of the failing tasks", nil},
	SF2: {Implementer, implPrompt(2), nil},
	S5a: {Quality, "Final validation", nil},
	S5b: {UXDX, "UX/DX review", twoPhases(true)},
	S6:  {Planner, "SUCCESS_EXTRACTION", nil},
}

// failAt drives a workflow to step s and fails its agent n times: the
// Agent call fails (transient) or, every other time where the agent owes
// something it can leave out, it returns without it (permanent): its
// result line after its nudge, or at step 2 a plan.
func failAt(t *testing.T, s gates.State, n int) (*harness, gates.Outcome) {
	t.Helper()
	a := agentAt[s]
	h := driveTo(t, string(s), a.plan...)
	var o gates.Outcome
	for i := 0; i < n; i++ {
		r := h.launch(a.agent, a.prompt)
		switch {
		case i%2 == 0 || s == S1:
			o = h.do(postFailure(r.toolUse, "API Error: 529 overloaded"))
		case s == S2:
			h.files = PlanFiles{}
			o = r.finish("Plan written.")
		default:
			if s := r.stop("I looked into it."); s.Verdict != gates.Block {
				t.Fatalf("the first report without a result line was not nudged: %+v", s)
			}
			o = merge(r.stop("Done, I think."), r.notify("Done, I think."))
		}
	}
	return h, o
}

// secondClass is the class of failAt's second failure at s: at step 1
// the discovery agents owe no line to leave out.
func secondClass(s gates.State) string {
	if s == S1 {
		return gates.Transient
	}
	return gates.Permanent
}

func init() {
	for _, s := range AgentStates {
		decideRows = append(decideRows, decideRow{from: s, on: OnAgentFailures, to: Escalated, guard: GuardRetriesUsed,
			ok: func(t *testing.T) {
				h, o := failAt(t, s, gates.MaxRetries+1)
				h.expect(Escalated)
				e := h.w.Escalation
				if e == nil || e.Kind != EscalationAgent || e.From != s || len(e.Attempts) != 3 || e.Agent != agentAt[s].agent {
					t.Fatalf("escalation %+v", e)
				}
				if e.Attempts[0].Class != gates.Transient || e.Attempts[1].Class != secondClass(s) {
					t.Errorf("classes %s, %s", e.Attempts[0].Class, e.Attempts[1].Class)
				}
				wantContext(t, o, fmt.Sprintf("%s -> escalated |", s), "failed 3 times in step "+string(s), "do not relaunch it")
				if _, ok := o.Files[EscalationFile]; !ok {
					t.Errorf("ESCALATION.md not asked for: %v", o.Files)
				}
				// Nothing runs while the user decides.
				if r := h.start(agentAt[s].agent, agentAt[s].prompt); r.launch.Verdict != gates.Deny {
					t.Errorf("a launch while escalated: %+v", r.launch)
				}
				last, failed, retries, class, ok := h.w.ErrorState()
				if !ok || failed != s || retries != 3 || class != gates.Transient || !strings.Contains(last, "529 overloaded") {
					t.Errorf("error_state %q %s %d %s %v", last, failed, retries, class, ok)
				}
			},
			refused: func(t *testing.T) {
				h, o := failAt(t, s, gates.MaxRetries)
				h.expect(string(s))
				wantContext(t, o, "; relaunch it (retry 2/2, a "+secondClass(s)+" failure).")
				_, failed, retries, class, ok := h.w.ErrorState()
				if !ok || failed != s || retries != 2 || class != secondClass(s) {
					t.Errorf("error_state %s %d %s %v", failed, retries, class, ok)
				}
			}})
		decideRows = append(decideRows, decideRow{from: Escalated, on: OnRetry, to: s, guard: GuardAgentEscalationFrom(s),
			ok: func(t *testing.T) {
				h, _ := failAt(t, s, gates.MaxRetries+1)
				o := h.user("/orch-hook:resolve retry")
				h.expect(string(s))
				wantContext(t, o, fmt.Sprintf("[RESOLVE] retry -> %s | the failure count of %s", s, agentAt[s].agent))
				if h.w.Escalation != nil || h.w.Failures != nil {
					t.Errorf("escalation %+v failures %+v left after the retry", h.w.Escalation, h.w.Failures)
				}
				if _, _, _, _, ok := h.w.ErrorState(); ok {
					t.Error("error_state not cleared by the retry")
				}
				// A fresh budget: two more failures do not escalate.
				a := agentAt[s]
				for i := 0; i < gates.MaxRetries; i++ {
					h.do(postFailure(h.launch(a.agent, a.prompt).toolUse, "interrupted"))
				}
				h.expect(string(s))
			},
			refused: func(t *testing.T) {
				// A fix escalation's retry goes to F1, not back to s.
				h := driveTo(t, escalatedFix)
				h.user("/orch-hook:resolve retry")
				h.expect(SF1)
			}})
	}
	decideRows = append(decideRows, decideRow{from: Escalated, on: OnSkip, to: S4c, guard: GuardAgentPhaseEscalation,
		ok: func(t *testing.T) {
			h, _ := failAt(t, S4a, gates.MaxRetries+1)
			o := h.user("/orch-hook:resolve skip")
			wantContext(t, o, "[RESOLVE] skip -> 4c")
			h.expect(S4a) // 4c moves on at once to phase 2
			if h.w.Phase != 2 || len(h.w.KnownIssues) != 1 || !strings.Contains(h.w.KnownIssues[0], "code-implementer (Task 01) failed 3 times at step 4a") {
				t.Errorf("phase %d known issues %v", h.w.Phase, h.w.KnownIssues)
			}
		},
		refused: func(t *testing.T) {
			// Past the plan, nothing can do without: no skip at step 2.
			h, _ := failAt(t, S2, gates.MaxRetries+1)
			o := h.user("/orch-hook:resolve skip")
			wantBlock(t, o, 0, "skip is not possible for a failure at step 2")
			h.expect(Escalated)
		}})
}

// ESCALATION.md of an agent escalation has the five parts, the attempts
// with their classes, and only the options that exist.
func TestAgentEscalationMarkdown(t *testing.T) {
	h, _ := failAt(t, S2, gates.MaxRetries+1)
	md := h.w.EscalationMarkdown(nil)
	for _, want := range []string{
		"**What failed**: task-planner, 3 times at step 2 (the limit is 2 retries of one work in one step)",
		"**Expected**: task-planner writes a plan that validates: .orchestrator/tasks/MASTER_PLAN.md and a task file per task",
		"**Found**: launch failed (API Error: 529 overloaded) (transient)",
		"| 1 | transient | launch failed (API Error: 529 overloaded) |",
		"| 2 | permanent | returned a plan that does not validate (.orchestrator/tasks/MASTER_PLAN.md does not exist) |",
		"1. `/orch-hook:resolve retry`: back to step 2",
		"2. `/orch-hook:resolve abort`",
		"### More\n- `orch-hook status`",
		"`orch-hook log --type agent_complete --type error`",
		"`orch-hook explain`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ESCALATION.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "resolve skip") {
		t.Errorf("a skip is offered where none exists:\n%s", md)
	}
	if h.w.Next(nil) != "wait for the user: /orch-hook:resolve retry|abort (see .orchestrator/ESCALATION.md)" {
		t.Errorf("next %q", h.w.Next(nil))
	}
}

// A failure of a launch made in a step the workflow has left is not
// counted against the step it is in now.
func TestFailureOfAnEarlierStep(t *testing.T) {
	h := driveTo(t, S0b)
	// A discovery launch still open from step 1 (its failure arrives late).
	h.w.Launches = append(h.w.Launches, &Launch{ToolUseID: "toolu_late", Agent: Researcher, Job: JobDiscovery, State: S1, Status: gates.Running})
	o := h.do(postFailure("toolu_late", "interrupted"))
	wantContext(t, o, "after the workflow left step 1; nothing changes")
	if h.w.Failures != nil {
		t.Errorf("failures %+v", h.w.Failures)
	}
}
