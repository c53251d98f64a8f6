package orchestrate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// gateCase is one entry of a gate's Allowed or Forbidden list (Gates;
// README, "The seven gates"): a concrete call at the step the gate
// governs, allowed or refused with the gate's number.
type gateCase struct {
	column string // the entry's wording in Gates
	target string
	plan   []phase
	act    func(h *harness) gates.Outcome
	// want: Allow, or Deny/Block with gate and reason fragments.
	want  gates.Verdict
	gate  int
	parts []string
	after string // the state afterwards ("" = unchecked)
}

func launchOf(agent, prompt string) func(h *harness) gates.Outcome {
	return func(h *harness) gates.Outcome { return h.start(agent, prompt).launch }
}

func tickAll(h *harness) gates.Outcome { return h.tick(h.phaseTasks()...) }

func mainWrite(h *harness) gates.Outcome {
	return h.do(writeCall(testRoot+"/src/login.go", "package src"))
}

func stopNow(h *harness) gates.Outcome { return h.do(stopCall()) }

var gateCases = map[int][]gateCase{
	// Gate 1: after 4a (every code-implementer returned): only 4b.
	1: {
		{column: "Allowed: invoke code-quality for 4b", target: S4b, act: launchOf(Quality, "Quality gate for phase 1"), want: gates.Allow},
		{column: "Forbidden: another phase", target: S4b, act: launchOf(Implementer, implPrompt(4)), want: gates.Deny, gate: 1,
			parts: []string{"code-implementer after 4a is not allowed: no failure yet to fix, and the next phase waits for the quality gate.", "Now: phase 1, step 4b, fix iteration 0/3. Next: launch code-quality for the phase 1 quality gate."}},
		{column: "Forbidden: fix (no failure yet)", target: S4b, act: launchOf(Implementer, implPrompt(2)), want: gates.Deny, gate: 1},
		{column: "Forbidden: fix (no failure yet): FAILURE_ANALYSIS", target: S4b, act: launchOf(Planner, "FAILURE_ANALYSIS"), want: gates.Deny, gate: 1,
			parts: []string{"task-planner after 4a is not allowed: there is no failure to analyse"}},
		{column: "Forbidden: fix (no failure yet): the orchestrator edits code", target: S4b, act: mainWrite, want: gates.Deny, gate: 1,
			parts: []string{"the orchestrator may not edit src/login.go now", "Delegate the change to code-implementer."}},
		{column: "Forbidden: update plan", target: S4b, act: tickAll, want: gates.Deny, gate: 1, parts: []string{"MASTER_PLAN.md may not change at step 4b: line 8 may not change"}},
		{column: "Forbidden: skip to 4c (stop)", target: S4b, act: stopNow, want: gates.Block, gate: 1, parts: []string{"Next: launch code-quality"}},
		{column: "Forbidden: skip to 4c (another agent)", target: S4b, act: launchOf(UXDX, "review"), want: gates.Deny, gate: 1,
			parts: []string{"ux-dx-quality after 4a is not allowed: the quality gate (code-quality) comes next."}},
	},
	// Gate 2: after 4b PASS: the plan update, then the next phase or 5.
	2: {
		{column: "Allowed: update MASTER_PLAN.md", target: S4c, act: tickAll, want: gates.Allow, after: S4a},
		{column: "Allowed: proceed to Phase 5", target: S4c, plan: onePhase(false), act: tickAll, want: gates.Allow, after: S5a},
		{column: "Allowed: update Status: and Progress:", target: S4c, act: func(h *harness) gates.Outcome {
			text := tickText(string(h.files[MasterPlan]), 1, 2, 3)
			text = strings.Replace(text, "Progress: 0/5", "Progress: 3/5", 1)
			text = strings.Replace(text, "Status: pending", "Status: complete", 1)
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, want: gates.Allow, after: S4a},
		{column: "Forbidden: SUCCESS_EXTRACTION (moved to Phase 6)", target: S4c, act: launchOf(Planner, "SUCCESS_EXTRACTION"), want: gates.Deny, gate: 2,
			parts: []string{"SUCCESS_EXTRACTION is not allowed after a 4b PASS (it moved to phase 6).", "Next: mark phase 1's tasks [x] in MASTER_PLAN.md"}},
		{column: "Forbidden: skip plan update (next phase)", target: S4c, act: launchOf(Implementer, implPrompt(4)), want: gates.Deny, gate: 2,
			parts: []string{"code-implementer before the plan update skips it: mark phase 1's tasks [x] in MASTER_PLAN.md first."}},
		{column: "Forbidden: skip plan update (Phase 5)", target: S4c, act: launchOf(Quality, "Final validation"), want: gates.Deny, gate: 2},
		{column: "Forbidden: skip plan update (stop)", target: S4c, act: stopNow, want: gates.Block, gate: 2},
		{column: "Forbidden: update beyond ticks of the current phase", target: S4c, act: func(h *harness) gates.Outcome {
			return h.tick(1, 2, 3, 4)
		}, want: gates.Deny, gate: 2, parts: []string{"Task 04 belongs to another phase; only phase 1's tasks may be ticked now."}},
		{column: "Forbidden: a subagent updates the plan", target: S4c, act: func(h *harness) gates.Outcome {
			return h.do(by(writeCall(tasksPath(MasterPlan), tickText(string(h.files[MasterPlan]), 1, 2, 3)), "a999", Planner))
		}, want: gates.Deny, gate: 2, parts: []string{"the plan update (4c) is the orchestrator's own job"}},
	},
	// Gate 3: after 4b FAIL: FAILURE_ANALYSIS, then fixes of the failing
	// tasks only, then 4b again.
	3: {
		{column: "Allowed: task-planner FAILURE_ANALYSIS", target: SF1, act: launchOf(Planner, "FAILURE_ANALYSIS"), want: gates.Allow},
		{column: "Allowed: code-implementer fix (ONLY failing tasks)", target: SF2, act: launchOf(Implementer, implPrompt(2)+"; Task 01 passes, leave it"), want: gates.Allow},
		{column: "Allowed: loop back to 4b", target: SF2, act: func(h *harness) gates.Outcome {
			h.fixAll()
			return h.start(Quality, "Revalidate phase 1").launch
		}, want: gates.Allow, after: S4b},
		{column: "Forbidden: fix without FAILURE_ANALYSIS", target: SF1, act: launchOf(Implementer, implPrompt(2)), want: gates.Deny, gate: 3},
		{column: "Forbidden: fix without FAILURE_ANALYSIS (the orchestrator edits code)", target: SF1, act: mainWrite, want: gates.Deny, gate: 3},
		{column: "Forbidden: proceed to 4c", target: SF1, act: tickAll, want: gates.Deny, gate: 3, parts: []string{"MASTER_PLAN.md may change in F1 only by task-planner's FAILURE_ANALYSIS."}},
		{column: "Forbidden: proceed to 4c (in F2)", target: SF2, act: tickAll, want: gates.Deny, gate: 3, parts: []string{"MASTER_PLAN.md may not change at step F2: line 8 may not change"}},
		{column: "Forbidden: proceed without revalidation", target: SF1, act: launchOf(Quality, "Revalidate"), want: gates.Deny, gate: 3,
			parts: []string{"code-quality is not allowed after a 4b FAIL before FAILURE_ANALYSIS."}},
		{column: "Forbidden: revalidate before the fixes returned", target: SF2, act: launchOf(Quality, "Revalidate"), want: gates.Deny, gate: 3,
			parts: []string{"code-quality may revalidate only after the fixes returned (still open: Task 02)."}},
		{column: "Forbidden: fix all tasks", target: SF2, act: launchOf(Implementer, implPrompt(1)), want: gates.Deny, gate: 3,
			parts: []string{"fixing Task 01 is not allowed: only the failing tasks (Task 02) are fixed."}},
		{column: "Forbidden: a second FAILURE_ANALYSIS", target: SF2, act: launchOf(Planner, "FAILURE_ANALYSIS"), want: gates.Deny, gate: 3},
		{column: "Forbidden: stop", target: SF1, act: stopNow, want: gates.Block, gate: 3},
	},
	// Gate 4: after Phase 5 PASS: Phase 6 (SUCCESS_EXTRACTION) comes next.
	4: {
		{column: "Allowed: proceed to Phase 6", target: S6, act: launchOf(Planner, "SUCCESS_EXTRACTION"), want: gates.Allow},
		{column: "Forbidden: skip Phase 6 (stop)", target: S6, act: stopNow, want: gates.Block, gate: 4,
			parts: []string{"Now: step 6 (completion). Next: launch task-planner for SUCCESS_EXTRACTION."}},
		{column: "Forbidden: skip SUCCESS_EXTRACTION (other work)", target: S6, act: launchOf(Implementer, implPrompt(1)), want: gates.Deny, gate: 4,
			parts: []string{"code-implementer is not allowed after final validation passed: phase 6 (SUCCESS_EXTRACTION) comes next."}},
		{column: "Forbidden: skip SUCCESS_EXTRACTION (validate again)", target: S6, act: launchOf(Quality, "Final validation"), want: gates.Deny, gate: 4},
	},
	// Gate 5: after 5a PASS: 5b when any task requires UX/DX review.
	5: {
		{column: "Allowed: requires_ux_dx_review -> 5b", target: S5b, plan: twoPhases(true), act: launchOf(UXDX, "UX/DX review"), want: gates.Allow},
		{column: "Allowed: else -> Phase 6", target: S5a, act: func(h *harness) gates.Outcome { return h.final(true) }, want: gates.Allow, after: S6},
		{column: "Forbidden: skip 5b if required (SUCCESS_EXTRACTION)", target: S5b, plan: twoPhases(true), act: launchOf(Planner, "SUCCESS_EXTRACTION"), want: gates.Deny, gate: 5,
			parts: []string{"skipping 5b is not allowed: a task requires UX/DX review.", "Next: launch ux-dx-quality for the UX/DX review."}},
		{column: "Forbidden: skip 5b if required (stop)", target: S5b, plan: twoPhases(true), act: stopNow, want: gates.Block, gate: 5},
		{column: "Forbidden: skip 5b if required (other agent)", target: S5b, plan: twoPhases(true), act: launchOf(Quality, "validate"), want: gates.Deny, gate: 5},
		{column: "Forbidden: 5b before 5a passed", target: S5a, plan: twoPhases(true), act: launchOf(UXDX, "UX/DX review"), want: gates.Deny,
			parts: []string{"ux-dx-quality (5b) runs only after final validation (5a) passed."}},
	},
	// Gate 6: after 5a FAIL: a fix phase and Phase 4, not 5b or 6.
	6: {
		{column: "Allowed: create fix tasks (orchestrator)", target: awaitFix5a, act: func(h *harness) gates.Outcome {
			return h.writeFile(writeCall(tasksPath(taskFileName(6)), taskText(task{N: 6, Files: []string{"fix.go"}})))
		}, want: gates.Allow},
		{column: "Allowed: create fix tasks (task-planner)", target: awaitFix5a, act: launchOf(Planner, "Create a fix phase"), want: gates.Allow},
		{column: "Allowed: return to Phase 4", target: awaitFix5a, act: func(h *harness) gates.Outcome {
			nums := h.appendPhase()
			return h.start(Implementer, implPrompt(nums[0])).launch
		}, want: gates.Allow, after: S4a},
		{column: "Forbidden: proceed to 5b", target: awaitFix5a, plan: twoPhases(true), act: launchOf(UXDX, "UX/DX review"), want: gates.Deny, gate: 6,
			parts: []string{"ux-dx-quality is not allowed before the fix phase ran: append it to MASTER_PLAN.md and implement it first.", "Now: step 4a, waiting for a fix phase to be appended."}},
		{column: "Forbidden: proceed to 5b (validate again)", target: awaitFix5a, act: launchOf(Quality, "Final validation"), want: gates.Deny, gate: 6},
		{column: "Forbidden: proceed to Phase 6 (stop)", target: awaitFix5a, act: stopNow, want: gates.Block, gate: 6},
		{column: "Forbidden: proceed to Phase 6 (SUCCESS_EXTRACTION)", target: awaitFix5a, act: func(h *harness) gates.Outcome {
			// A task-planner here creates the fix phase; its
			// SUCCESS_EXTRACTION line does not move the workflow to 6.
			h.run(Planner, "SUCCESS_EXTRACTION", "Learnings.\nSUCCESS_EXTRACTION: COMPLETE")
			return h.do(stopCall())
		}, want: gates.Block, gate: 6, after: S4a},
		{column: "Forbidden: implement without a fix phase", target: awaitFix5a, act: launchOf(Implementer, implPrompt(6)), want: gates.Deny,
			parts: []string{"append a fix phase to MASTER_PLAN.md (## Phase 3: ..., with new task numbers and their task files) before launching code-implementer."}},
	},
	// Gate 7: after 5b: 6 on PASS, fixes on FAIL.
	7: {
		{column: "Allowed: if PASS -> Phase 6", target: S5b, plan: twoPhases(true), act: func(h *harness) gates.Outcome { return h.uxReview(true) }, want: gates.Allow, after: S6},
		{column: "Allowed: if FAIL -> fix tasks, return to Phase 4", target: S5b, plan: twoPhases(true), act: func(h *harness) gates.Outcome {
			h.uxReview(false)
			nums := h.appendPhase()
			return h.start(Implementer, implPrompt(nums[0])).launch
		}, want: gates.Allow, after: S4a},
		{column: "Forbidden: skip fixes if 5b fails (validate again)", target: awaitFix5b, plan: onePhase(true), act: launchOf(UXDX, "UX/DX review"), want: gates.Deny, gate: 7,
			parts: []string{"ux-dx-quality is not allowed before the fix phase ran"}},
		{column: "Forbidden: skip fixes if 5b fails (final validation)", target: awaitFix5b, plan: onePhase(true), act: launchOf(Quality, "validate"), want: gates.Deny, gate: 7},
		{column: "Forbidden: skip fixes if 5b fails (stop)", target: awaitFix5b, plan: onePhase(true), act: stopNow, want: gates.Block, gate: 7},
	},
}

func TestSevenGates(t *testing.T) {
	for gate := 1; gate <= 7; gate++ {
		cases := gateCases[gate]
		if len(cases) == 0 {
			t.Errorf("gate %d has no cases", gate)
		}
		var allowed, forbidden bool
		for _, tc := range cases {
			allowed = allowed || tc.want == gates.Allow
			forbidden = forbidden || tc.want != gates.Allow
			t.Run(tc.column, func(t *testing.T) {
				h := driveTo(t, tc.target, tc.plan...)
				before := string(h.w.Current)
				o := tc.act(h)
				switch tc.want {
				case gates.Allow:
					wantAllow(t, o)
				case gates.Deny:
					wantDeny(t, o, tc.gate, tc.parts...)
				case gates.Block:
					wantBlock(t, o, tc.gate, tc.parts...)
				}
				if tc.want != gates.Allow && o.Gate != tc.gate {
					t.Errorf("gate %d, want %d", o.Gate, tc.gate)
				}
				after := tc.after
				if after == "" && tc.want != gates.Allow {
					after = before // a refused call moves nothing
				}
				if after != "" {
					h.expect(after)
				}
				if tc.want == gates.Deny && !hasRecord(o, gates.RecDeny, "") {
					t.Error("the deny is not recorded")
				}
			})
		}
		if !allowed || !forbidden {
			t.Errorf("gate %d lacks an allowed or a forbidden case", gate)
		}
	}
}

// TestGate3ReasonExact is the reason issue 3 fixes word for word.
func TestGate3ReasonExact(t *testing.T) {
	h := driveTo(t, SF1)
	o := h.start(Implementer, "Task 02: fix the off-by-one").launch
	const want = "orch-hook: [Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed. Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS."
	if o.Verdict != gates.Deny || o.Gate != 3 || o.Reason != want {
		t.Fatalf("got %v gate %d\n%q\nwant\n%q", o.Verdict, o.Gate, o.Reason, want)
	}
	r := o.Records[len(o.Records)-1]
	if r.Type != gates.RecDeny || r.Gate != 3 || r.AgentType != Implementer || r.Task != 2 || r.Reason != want {
		t.Errorf("record %+v", r)
	}
}
