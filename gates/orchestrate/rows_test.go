package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// decideRow drives one row of the table through Decide: ok shows it firing
// on realistic hook calls; refused (for rows with a guard) shows the same
// trigger not firing when the guard does not hold.
type decideRow struct {
	from    gates.State
	on      gates.Trigger
	to      gates.State
	guard   string // tells apart rows of the same from, trigger and to
	ok      func(t *testing.T)
	refused func(t *testing.T)
}

func findRow(t *testing.T, from gates.State, on gates.Trigger, to gates.State, guard ...string) gates.Transition {
	t.Helper()
	for _, tr := range Transitions {
		if tr.From == from && tr.On == on && tr.To == to && (len(guard) == 0 || guard[0] == "" || tr.Guard == guard[0]) {
			return tr
		}
	}
	t.Fatalf("no row %s -[%s]-> %s", from, on, to)
	return gates.Transition{}
}

var decideRows = []decideRow{
	{from: "", on: OnStart, to: S0a,
		ok: func(t *testing.T) {
			// A typed /orch-hook:orchestrate asks the caller to start one.
			o := Decide(&Workflow{Current: Complete}, promptCall("/orch-hook:orchestrate Add a login page", "p1"), &Env{})
			if o.Start != "Add a login page" || o.Verdict != gates.Allow {
				t.Fatalf("start outcome %+v", o)
			}
			if w, err := NewWorkflow("Add a login page", "s"); err != nil || w.Current != S0a || w.Owner != "s" || w.Kind != "orchestrate" {
				t.Fatalf("NewWorkflow = %+v", w)
			}
		},
		refused: func(t *testing.T) {
			o := Decide(&Workflow{Current: Aborted}, promptCall("/orch-hook:orchestrate   ", "p1"), &Env{})
			if o.Verdict != gates.Block || o.Start != "" || !strings.Contains(o.Reason, "say what to build") {
				t.Fatalf("empty request: %+v", o)
			}
			h := driveTo(t, S2)
			o = h.user("/orch-hook:orchestrate something else")
			wantBlock(t, o, 0, "a workflow is already active here (step 2")
			if o.Start != "" {
				t.Fatal("an active workflow was restarted")
			}
		}},
	{from: S0a, on: OnQuestions, to: S0a,
		ok: func(t *testing.T) {
			h := driveTo(t, S0a)
			o := h.analyst(LineQuestions)
			h.expect(S0a)
			if h.w.Rounds != 1 || h.w.WaitingOn != "answers" {
				t.Fatalf("rounds %d waiting %q", h.w.Rounds, h.w.WaitingOn)
			}
			wantContext(t, o, "[STEP 0a] QUESTIONS_NEEDED -> 0a | round 1/3: ask the user these questions and stop until they answer")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S0a)
			r := h.launch(Analyst, "Analyze")
			h.w.Rounds = MaxRounds // as the counter stands after three rounds
			o := r.finish(LineQuestions)
			h.expect(S0a)
			wantContext(t, o, "QUESTIONS_NEEDED refused", GuardRoundsLeft)
			if h.w.Rounds != MaxRounds || h.w.WaitingOn != "" {
				t.Fatalf("rounds %d waiting %q", h.w.Rounds, h.w.WaitingOn)
			}
		}},
	{from: S0a, on: OnClear, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, S0a)
			o := h.analyst("Requirements are complete.\n" + LineClear)
			h.expect(S2)
			wantContext(t, o, "[STEP 0a] REQUIREMENTS_CLEAR -> 2 | ", "launch task-planner")
		}},
	{from: S0a, on: OnAnswers, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, S0a)
			for round := 1; round <= MaxRounds; round++ {
				o := h.analyst(LineQuestions)
				if round == MaxRounds {
					wantContext(t, o, "round 3/3 (last round: after these answers the workflow goes on with defaults)")
					break
				}
				h.answer()
				h.expect(S0a)
			}
			o := h.answer()
			h.expect(S2)
			if h.w.Forced != "defaults" {
				t.Errorf("forced = %q", h.w.Forced)
			}
			wantContext(t, o, "[STEP 0a] answers to round 3/3 -> 2 (forced: defaults)")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, questionsPending)
			o := h.answer()
			h.expect(S0a)
			if h.w.WaitingOn != "" {
				t.Error("answers did not clear the wait")
			}
			wantContext(t, o, "the user answered clarification round 1/3; relaunch requirements-analyst")
		}},
	{from: S0a, on: OnDiscovery, to: S1,
		ok: func(t *testing.T) {
			h := driveTo(t, S0a)
			o := h.analyst(LineDiscovery)
			h.expect(S1)
			if h.w.Discovery != 1 {
				t.Errorf("discovery = %d: the entry from 0a counts", h.w.Discovery)
			}
			wantContext(t, o, "[STEP 0a] DISCOVERY_NEEDED -> 1 | discovery 1/2")
		}},
	{from: S1, on: OnDiscoveryDone, to: S0b,
		ok: func(t *testing.T) {
			h := driveTo(t, S1)
			o := h.discover()
			h.expect(S0b)
			wantContext(t, o, "[STEP 1] Discovery complete -> 0b")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S1)
			o := h.run(Researcher, "Research", "Findings.")
			h.expect(S1)
			wantContext(t, o, "[STEP 1] researcher returned -> 1 | waiting for the other discovery agent")
		}},
	{from: S0b, on: OnQuestions, to: S0b,
		ok: func(t *testing.T) {
			h := driveTo(t, S0b)
			o := h.analyst(LineQuestions)
			h.expect(S0b)
			wantContext(t, o, "[STEP 0b] QUESTIONS_NEEDED -> 0b | round 1/3")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S0b)
			r := h.launch(Analyst, "Analyze the findings")
			h.w.Rounds = MaxRounds
			o := r.finish(LineQuestions)
			h.expect(S0b)
			wantContext(t, o, "[STEP 0b] QUESTIONS_NEEDED refused")
		}},
	{from: S0b, on: OnClear, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, S0b)
			o := h.analyst(LineClear)
			h.expect(S2)
			wantContext(t, o, "[STEP 0b] REQUIREMENTS_CLEAR -> 2")
		}},
	{from: S0b, on: OnAnswers, to: S2,
		ok: func(t *testing.T) {
			// Rounds count 0a and 0b together: two in 0a, the third in 0b.
			h := driveTo(t, S0a)
			h.analyst(LineQuestions)
			h.answer()
			h.analyst(LineQuestions)
			h.answer()
			h.analyst(LineDiscovery)
			h.discover()
			h.expect(S0b)
			o := h.analyst(LineQuestions)
			wantContext(t, o, "round 3/3 (last round")
			o = h.answer()
			h.expect(S2)
			wantContext(t, o, "[STEP 0b] answers to round 3/3 -> 2 (forced: defaults)")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S0b)
			h.analyst(LineQuestions)
			h.answer()
			h.expect(S0b)
		}},
	{from: S0b, on: OnDiscovery, to: S1,
		ok: func(t *testing.T) {
			h := driveTo(t, S0b)
			o := h.analyst(LineDiscovery)
			h.expect(S1)
			if h.w.Discovery != 2 {
				t.Errorf("discovery = %d", h.w.Discovery)
			}
			wantContext(t, o, "[STEP 0b] DISCOVERY_NEEDED -> 1 | discovery 2/2")
		},
		refused: func(t *testing.T) {
			// discovery = 2: the forced row fires instead (next row).
			h := driveTo(t, S0b)
			h.analyst(LineDiscovery)
			h.discover()
			h.analyst(LineDiscovery)
			h.expect(S2)
		}},
	{from: S0b, on: OnDiscovery, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, S0b)
			h.analyst(LineDiscovery)
			h.discover()
			o := h.analyst(LineDiscovery)
			h.expect(S2)
			if h.w.Forced != "discovery" || h.w.Discovery != 2 {
				t.Errorf("forced %q discovery %d", h.w.Forced, h.w.Discovery)
			}
			wantContext(t, o, "[STEP 0b] DISCOVERY_NEEDED -> 2 (forced: discovery limit 2 reached)")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S0b) // discovery = 1: back to 1
			h.analyst(LineDiscovery)
			h.expect(S1)
		}},
	{from: S2, on: OnPlanReturned, to: S3,
		ok: func(t *testing.T) {
			h := driveTo(t, S2)
			o := h.writePlan()
			h.expect(S3)
			if h.w.WaitingOn != "approval" || h.w.Plan == nil || len(h.w.PlanHashes) != 6 {
				t.Errorf("waiting %q plan %v hashes %d", h.w.WaitingOn, h.w.Plan, len(h.w.PlanHashes))
			}
			wantContext(t, o, "[STEP 2] MASTER_PLAN.md created -> 3 | 2 phases, 5 tasks", "/orch-hook:approve")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S2)
			r := h.launch(Planner, "Plan it")
			r.write(MasterPlan, masterText(twoPhases(false)...))
			r.write(taskFileName(1), taskText(task{N: 1}))
			o := r.finish("Plan written.")
			h.expect(S2)
			wantContext(t, o, "[STEP 2] task-planner returned, but the plan does not validate", "lists Task 02 but .orchestrator/tasks/task-02*.md does not exist", "Relaunch task-planner")
		}},
	{from: S3, on: OnApprove, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, S3)
			o := h.approve()
			h.expect(S4a)
			if h.w.Phase != 1 || h.w.WaitingOn != "" {
				t.Errorf("phase %d waiting %q", h.w.Phase, h.w.WaitingOn)
			}
			wantContext(t, o, "orch-hook: [STEP 3] APPROVED -> 4a | phase 1 of 2: launch code-implementer for Task 01, Task 02 (in parallel, one message)")
		}},
	{from: S3, on: OnRequestChanges, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, S3)
			o := h.user("/orch-hook:request-changes merge the two phases")
			h.expect(S2)
			wantContext(t, o, "[STEP 3] CHANGES REQUESTED -> 2 | relaunch task-planner to revise the plan: merge the two phases")
		}},
	{from: S4a, on: OnPhaseAppended, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, awaitFix5a, onePhase(false)...)
			nums := h.appendPhase()
			r := h.launch(Implementer, implPrompt(nums[0]))
			h.expect(S4a)
			if h.w.Phase != 2 || h.w.Awaiting != "" || !hasRecord(r.launch, gates.RecTransition, "phase 2 appended") {
				t.Errorf("phase %d awaiting %q records %+v", h.w.Phase, h.w.Awaiting, r.launch.Records)
			}
		},
		refused: func(t *testing.T) {
			h := driveTo(t, awaitFix5a, onePhase(false)...)
			text := string(h.files[MasterPlan]) + "\n## Phase 2: Fixes\n- [ ] Task 03: fix\n"
			wantAllow(t, h.writeFile(writeCall(tasksPath(MasterPlan), text)))
			r := h.start(Implementer, implPrompt(3))
			wantDeny(t, r.launch, 0, "the plan does not validate", "task-03*.md does not exist")
			if h.w.Phase != 1 || h.w.Awaiting != "fix" {
				t.Errorf("phase %d awaiting %q", h.w.Phase, h.w.Awaiting)
			}
		}},
	{from: S4a, on: OnTaskReturned, to: S4b,
		ok: func(t *testing.T) {
			h := driveTo(t, S4a)
			h.implement(1)
			h.implement(2)
			o := h.implement(3)
			h.expect(S4b)
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4a OK -> 4b | 3 tasks implemented; launch code-quality", "PHASE METADATA EXTRACTION - Phase 1")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4a)
			h.implement(1)
			o := h.implement(2)
			h.expect(S4a)
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4a Task 02 COMPLETE -> 4a | still open: Task 03")
		}},
	{from: S4b, on: OnPass, to: S4c,
		ok: func(t *testing.T) {
			h := driveTo(t, S4b)
			o := h.gate(true)
			h.expect(S4c)
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4b OK -> 4c | All tests pass; mark phase 1's tasks [x] in MASTER_PLAN.md")
		}},
	{from: S4b, on: OnFail, to: SF1,
		ok: func(t *testing.T) {
			h := driveTo(t, S4b)
			o := h.gate(false, 2)
			h.expect(SF1)
			if h.w.FixIterations != 1 || fmt.Sprint(h.w.FailingTasks) != "[2]" {
				t.Errorf("fix iterations %d failing %v", h.w.FixIterations, h.w.FailingTasks)
			}
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4b FAIL -> F1 | Task 02 failed: test error (fix iteration 1/3); launch task-planner for FAILURE_ANALYSIS")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, escalatedFix) // the third FAIL: the next row
			if h.w.FixIterations != MaxFixIterations {
				t.Errorf("fix iterations %d", h.w.FixIterations)
			}
		}},
	{from: S4b, on: OnFail, to: Escalated,
		ok: func(t *testing.T) {
			h := driveTo(t, S4b)
			for i := 1; i < MaxFixIterations; i++ {
				h.gate(false)
				h.analysis()
				h.fixAll()
			}
			o := h.gate(false)
			h.expect(Escalated)
			if _, ok := o.Files[EscalationFile]; !ok || EscalationFile != ".orchestrator/ESCALATION.md" {
				t.Errorf("files %v: ESCALATION.md not requested", o.Files)
			}
			if h.w.WaitingOn != "resolution" || h.w.Escalation == nil || h.w.Escalation.Kind != EscalationFix || h.w.Escalation.Phase != 1 {
				t.Errorf("waiting %q escalation %+v", h.w.WaitingOn, h.w.Escalation)
			}
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4b FAIL -> escalated | fix iteration 3/3 used up", "/orch-hook:resolve retry|skip|abort")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4b)
			h.gate(false)
			h.analysis()
			h.fixAll()
			h.gate(false) // the second FAIL still goes to F1
			h.expect(SF1)
		}},
	{from: SF1, on: OnAnalysis, to: SF2,
		ok: func(t *testing.T) {
			h := driveTo(t, SF1)
			o := h.analysis()
			h.expect(SF2)
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] F1 OK -> F2 | fix only Task 02")
			if !strings.Contains(h.w.LastAnalysis, "Root cause: off-by-one") || strings.Contains(h.w.LastAnalysis, LineAnalysis) {
				t.Errorf("last analysis %q", h.w.LastAnalysis)
			}
		}},
	{from: SF2, on: OnTaskReturned, to: S4b,
		ok: func(t *testing.T) {
			h := driveTo(t, S4b)
			h.gate(false, 1, 2)
			h.analysis()
			h.implement(1)
			o := h.implement(2)
			h.expect(S4b)
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] F2 OK -> 4b | Task 01, Task 02 fixed, revalidating")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4b)
			h.gate(false, 1, 2)
			h.analysis()
			o := h.implement(1)
			h.expect(SF2)
			wantContext(t, o, "F2 Task 01 COMPLETE -> F2 | still open: Task 02")
		}},
	{from: S4c, on: OnPlanUpdated, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, SF2)
			h.fixAll()
			h.gate(true)
			if h.w.FixIterations != 1 {
				t.Fatalf("fix iterations %d", h.w.FixIterations)
			}
			o := h.tick()
			h.expect(S4a)
			if h.w.Phase != 2 || h.w.FixIterations != 0 || len(h.w.Tasks) != 0 || len(h.w.FailingTasks) != 0 {
				t.Errorf("phase %d fix iterations %d tasks %v failing %v", h.w.Phase, h.w.FixIterations, h.w.Tasks, h.w.FailingTasks)
			}
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4c OK -> Phase 2 | Plan updated; next: launch code-implementer for Task 04, Task 05")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4c)
			wantAllow(t, h.tick(1, 2))
			h.expect(S4c)
		}},
	{from: S4c, on: OnPlanUpdated, to: S5a,
		ok: func(t *testing.T) {
			h := driveTo(t, S4c, onePhase(false)...)
			o := h.tick()
			h.expect(S5a)
			wantContext(t, o, "[PHASE 1 | Tasks 01-02] 4c OK -> 5a | Plan updated, all phases complete; next: launch code-quality for final validation")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4c, onePhase(false)...)
			h.tick(1)
			h.expect(S4c)
		}},
	{from: S5a, on: OnPass, to: S5b,
		ok: func(t *testing.T) {
			h := driveTo(t, S5a, twoPhases(true)...)
			o := h.final(true)
			h.expect(S5b)
			wantContext(t, o, "[STEP 5a] PASS -> 5b | a task requires UX/DX review: launch ux-dx-quality")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S5a) // no task flagged: to 6
			h.final(true)
			h.expect(S6)
		}},
	{from: S5a, on: OnPass, to: S6,
		ok: func(t *testing.T) {
			h := driveTo(t, S5a)
			o := h.final(true)
			h.expect(S6)
			wantContext(t, o, "[STEP 5a] PASS -> 6 | launch task-planner for SUCCESS_EXTRACTION")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S5a, twoPhases(true)...)
			h.final(true)
			h.expect(S5b)
		}},
	{from: S5a, on: OnFail, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, S5a)
			o := h.final(false)
			h.expect(S4a)
			if h.w.Awaiting != "fix" || h.w.FinalFailures != 1 || h.w.FinalFrom != S5a {
				t.Errorf("awaiting %q final failures %d from %q", h.w.Awaiting, h.w.FinalFailures, h.w.FinalFrom)
			}
			wantContext(t, o, "[STEP 5a] FAIL -> 4a | Production build fails. (final-validation failure 1/3): append a fix phase to MASTER_PLAN.md")
		},
		refused: func(t *testing.T) {
			driveTo(t, escalatedFinal, onePhase(false)...)
		}},
	{from: S5a, on: OnFail, to: Escalated,
		ok: func(t *testing.T) {
			h := driveTo(t, awaitFix5a, onePhase(false)...)
			h.runFixPhase()
			h.final(false)
			h.runFixPhase()
			o := h.final(false)
			h.expect(Escalated)
			if _, ok := o.Files[EscalationFile]; !ok {
				t.Errorf("files %v: ESCALATION.md not requested", o.Files)
			}
			if h.w.Escalation == nil || h.w.Escalation.Kind != EscalationFinal || h.w.Escalation.From != S5a || h.w.FinalFailures != 3 {
				t.Errorf("escalation %+v final failures %d", h.w.Escalation, h.w.FinalFailures)
			}
			wantContext(t, o, "[STEP 5a] FAIL -> escalated | final validation failed 3/3 times")
		},
		refused: func(t *testing.T) {
			h := driveTo(t, awaitFix5a, onePhase(false)...)
			h.runFixPhase()
			h.final(false) // the second failure still goes to 4a
			h.expect(S4a)
		}},
	{from: S5b, on: OnPass, to: S6,
		ok: func(t *testing.T) {
			h := driveTo(t, S5b, twoPhases(true)...)
			o := h.uxReview(true)
			h.expect(S6)
			wantContext(t, o, "[STEP 5b] PASS -> 6 | launch task-planner for SUCCESS_EXTRACTION")
		}},
	{from: S5b, on: OnFail, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, S5b, twoPhases(true)...)
			o := h.uxReview(false)
			h.expect(S4a)
			if h.w.Awaiting != "fix" || h.w.FinalFrom != S5b || h.w.FinalFailures != 1 {
				t.Errorf("awaiting %q from %q failures %d", h.w.Awaiting, h.w.FinalFrom, h.w.FinalFailures)
			}
			wantContext(t, o, "[STEP 5b] FAIL -> 4a | Error messages are cryptic. (final-validation failure 1/3)")
		},
		refused: func(t *testing.T) {
			h := fiveBFailures(t, 2)
			h.expect(Escalated)
		}},
	{from: S5b, on: OnFail, to: Escalated,
		ok: func(t *testing.T) {
			h := fiveBFailures(t, 2)
			h.expect(Escalated)
			if h.w.Escalation.Kind != EscalationFinal || h.w.Escalation.From != S5b {
				t.Errorf("escalation %+v", h.w.Escalation)
			}
		},
		refused: func(t *testing.T) {
			h := fiveBFailures(t, 1)
			h.expect(S4a)
		}},
	{from: S6, on: OnExtraction, to: Complete,
		ok: func(t *testing.T) {
			for _, fg := range []bool{true, false} {
				h := driveTo(t, S6)
				h.fg = fg
				o := h.extract()
				h.expect(Complete)
				wantContext(t, o, "[STEP 6] SUCCESS_EXTRACTION -> complete | the workflow is complete")
			}
		}},
	{from: Complete, on: OnFollowUp, to: S7,
		ok: func(t *testing.T) {
			h := driveTo(t, Complete)
			if _, err := FollowUp(h.w, "lightweight", "Add a logout link", h.env()); err != nil {
				t.Fatal(err)
			}
			if !contains(h.w.Completed, Complete) || !contains(h.w.Completed, S7) {
				t.Errorf("completed %v lacks complete and 7", h.w.Completed)
			}
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S6)
			_, err := FollowUp(h.w, "partial", "more", h.env())
			if te, ok := err.(*gates.TransitionError); !ok || te.State != S6 || te.Trigger != OnFollowUp {
				t.Fatalf("err = %v", err)
			}
			h.expect(S6)
		}},
	{from: S7, on: OnLightweight, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, Complete)
			o, err := FollowUp(h.w, "LIGHTWEIGHT", "Add a logout link", h.env())
			if err != nil {
				t.Fatal(err)
			}
			h.expect(S4a)
			if h.w.Awaiting != "lightweight" || len(h.w.FollowUps) != 1 || !o.Changed {
				t.Errorf("awaiting %q follow-ups %v", h.w.Awaiting, h.w.FollowUps)
			}
			wantContext(t, o, "LIGHTWEIGHT follow-up -> 4a")
		}},
	{from: S7, on: OnPartial, to: S2,
		ok: func(t *testing.T) {
			h := driveTo(t, Complete)
			o, err := FollowUp(h.w, "partial", "Add password reset", h.env())
			if err != nil {
				t.Fatal(err)
			}
			h.expect(S2)
			wantContext(t, o, "PARTIAL follow-up -> 2")
		}},
	{from: S7, on: OnFull, to: S0a,
		ok: func(t *testing.T) {
			h := driveTo(t, Complete)
			o, err := FollowUp(h.w, "full", "Build a billing page", h.env())
			if err != nil || o.Start != "Build a billing page" {
				t.Fatalf("full follow-up: %+v, %v", o, err)
			}
			// The caller archives this workflow and starts a new one at 0a.
			h.expect(Complete)
			w := &Workflow{Current: S7}
			if _, err := w.fire(OnFull, &Env{}); err != nil || w.Current != S0a {
				t.Fatalf("7 -[FULL]-> %q, %v", w.Current, err)
			}
		}},
	{from: Escalated, on: OnRetry, to: SF1,
		ok: func(t *testing.T) {
			h := driveTo(t, escalatedFix)
			o := h.user("/orch-hook:resolve retry")
			h.expect(SF1)
			if h.w.FixIterations != 0 || h.w.Escalation != nil || h.w.WaitingOn != "" {
				t.Errorf("fix iterations %d escalation %+v waiting %q", h.w.FixIterations, h.w.Escalation, h.w.WaitingOn)
			}
			wantContext(t, o, "[RESOLVE] retry -> F1 | fix iterations reset to 0/3: launch task-planner for FAILURE_ANALYSIS of Task 02")
			h.analysis()
			h.fixAll()
			h.gate(false)
			h.expect(SF1) // a fresh budget of three
		},
		refused: func(t *testing.T) {
			h := driveTo(t, S4b)
			o := h.user("/orch-hook:resolve retry")
			wantBlock(t, o, 0, "there is no escalation to resolve (/orch-hook:resolve retry).")
			h.expect(S4b)
		}},
	{from: Escalated, on: OnSkip, to: S4c,
		ok: func(t *testing.T) {
			h := driveTo(t, escalatedFix)
			o := h.user("/orch-hook:resolve skip")
			text, ok := o.Files[TasksDir+"/"+MasterPlan]
			if !ok {
				t.Fatalf("files %v: MASTER_PLAN.md not returned", o.Files)
			}
			for n := 1; n <= 3; n++ {
				if want := fmt.Sprintf("- [x] Task %02d: step %d (skipped: known issue)", n, n); !strings.Contains(text, want) {
					t.Errorf("MASTER_PLAN.md lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "[x] Task 04") {
				t.Error("skip ticked another phase")
			}
			// 4c moves on at once: phase 1 is checked, phase 2 remains.
			h.expect(S4a)
			if !contains(h.w.Completed, S4c) || h.w.Phase != 2 || len(h.w.KnownIssues) != 1 {
				t.Errorf("completed %v phase %d known issues %v", h.w.Completed, h.w.Phase, h.w.KnownIssues)
			}
			if len(ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files))) != 0 {
				t.Error("the new plan hash was not recorded")
			}
			wantContext(t, o, "orch-hook: [RESOLVE] skip -> 4c", "4c OK -> Phase 2")
			h.implement(4) // launches are not blocked as tampering
		},
		refused: func(t *testing.T) {
			h := driveTo(t, escalatedFinal, onePhase(false)...)
			h.user("/orch-hook:resolve skip") // a final escalation skips to 6
			h.expect(S6)
		}},
	{from: Escalated, on: OnRetry, to: S4a,
		ok: func(t *testing.T) {
			h := driveTo(t, escalatedFinal, onePhase(false)...)
			o := h.user("/orch-hook:resolve retry")
			h.expect(S4a)
			if h.w.Awaiting != "fix" || h.w.FinalFailures != 0 || h.w.Escalation != nil {
				t.Errorf("awaiting %q failures %d escalation %+v", h.w.Awaiting, h.w.FinalFailures, h.w.Escalation)
			}
			wantContext(t, o, "[RESOLVE] retry -> 4a | final-validation failures reset to 0/3")
			h.runFixPhase()
		},
		refused: func(t *testing.T) {
			h := driveTo(t, escalatedFix)
			h.user("/orch-hook:resolve retry")
			h.expect(SF1)
		}},
	{from: Escalated, on: OnSkip, to: S6,
		ok: func(t *testing.T) {
			h := driveTo(t, escalatedFinal, onePhase(false)...)
			o := h.user("/orch-hook:resolve skip")
			h.expect(S6)
			if len(h.w.KnownIssues) != 1 || !strings.Contains(h.w.KnownIssues[0], "final validation failed 3 times") {
				t.Errorf("known issues %v", h.w.KnownIssues)
			}
			wantContext(t, o, "[RESOLVE] skip -> 6 | the final-validation failure is recorded as a known issue")
			h.extract()
			h.expect(Complete)
		},
		refused: func(t *testing.T) {
			h := driveTo(t, escalatedFix)
			h.user("/orch-hook:resolve skip")
			h.expect(S4a)
		}},
}

// fiveBFailures reaches 5b failures 5b FAILs (after one 5a FAIL... no:
// every failure here is a 5b FAIL), plus the fix phases between them.
func fiveBFailures(t *testing.T, extra int) *harness {
	t.Helper()
	h := driveTo(t, awaitFix5b, onePhase(true)...)
	for i := 0; i < extra; i++ {
		h.runFixPhase()
		h.final(true)
		h.expect(S5b)
		h.uxReview(false)
	}
	return h
}

func TestRowsThroughDecide(t *testing.T) {
	covered := map[gates.Transition]bool{}
	for _, r := range decideRows {
		tr := findRow(t, r.from, r.on, r.to, r.guard)
		covered[tr] = true
		name := fmt.Sprintf("%s -[%s]-> %s", gates.OrText(string(r.from), "(none)"), r.on, r.to)
		if r.guard != "" {
			name += " (" + r.guard + ")"
		}
		t.Run(name, r.ok)
		if r.refused != nil {
			t.Run(name+"/refused", r.refused)
		} else if tr.Guard != "" {
			t.Errorf("%s has guard %q but no refused case", name, tr.Guard)
		}
	}
	for _, tr := range Transitions {
		if tr.On != OnAbort && !covered[tr] {
			t.Errorf("row %+v is not driven through Decide", tr)
		}
	}
}

// TestAbortFromEveryState: /orch-hook:abort typed by the user ends the
// workflow from every state that has an abort row; afterwards nothing is
// gated.
func TestAbortFromEveryState(t *testing.T) {
	targets := map[gates.State]string{S0a: S0a, S1: S1, S0b: S0b, S2: S2, S3: S3, S4a: S4a, S4b: S4b, SF1: SF1, SF2: SF2,
		S4c: S4c, S5a: S5a, S5b: S5b, S6: S6, Escalated: escalatedFix}
	for _, tr := range Transitions {
		if tr.On != OnAbort {
			continue
		}
		t.Run(string(tr.From), func(t *testing.T) {
			if tr.From == S7 { // 7 is left at once by /orch-hook:follow-up
				w := &Workflow{Current: S7}
				if _, err := w.fire(OnAbort, &Env{}); err != nil || w.Current != Aborted {
					t.Fatalf("7 abort: %q %v", w.Current, err)
				}
				return
			}
			h := driveTo(t, targets[tr.From], twoPhases(true)...)
			o := h.user("/orch-hook:abort")
			h.expect(Aborted)
			if h.w.WaitingOn != "" || !hasRecord(o, gates.RecDecision, "abort") {
				t.Errorf("waiting %q records %+v", h.w.WaitingOn, o.Records)
			}
			wantContext(t, o, "the user aborted the workflow")
			wantAllow(t, h.do(stopCall()))
			wantAllow(t, h.start(Implementer, "Task 01").launch)
			wantAllow(t, h.do(writeCall(testRoot+"/main.go", "package main")))
		})
	}
	h := driveTo(t, escalatedFix)
	h.user("/orch-hook:resolve abort")
	h.expect(Aborted)
}
