package orchestrate

import (
	"fmt"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// A quality-gate FAIL always has a way forward (issue 13): the tasks to
// fix are read from FAILING TASKS (phases up to the current one), else
// from FAILURE_ANALYSIS's FIX TASKS, else they are the whole phase; Gate 3
// and the fix limit hold throughout.

// toPhase2Gate drives the default plan to phase 2's 4b.
func toPhase2Gate(t *testing.T) *harness {
	h := driveTo(t, S4c)
	h.tick()
	h.expect(S4a)
	h.implementPhase()
	h.expect(S4b)
	if h.w.Phase != 2 {
		t.Fatalf("phase %d", h.w.Phase)
	}
	return h
}

func TestFailRegressionInEarlierPhase(t *testing.T) {
	h := toPhase2Gate(t)
	o := h.run(Quality, "Gate 2", "The parser regressed.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 01")
	h.expect(SF1)
	wantContext(t, o, "[PHASE 2 | Tasks 04-05] 4b FAIL -> F1 | Task 01 failed: The parser regressed. (fix iteration 1/3)")
	h.analysis()
	h.expect(SF2)
	// Gate 3 still holds: only the named task is fixed.
	wantDeny(t, h.start(Implementer, implPrompt(4)).launch, 3, "fixing Task 04 is not allowed: only the failing tasks (Task 01) are fixed.")
	wantDeny(t, h.start(Quality, "Gate 2 again").launch, 3, "code-quality may revalidate only after the fixes returned (still open: Task 01).")
	h.implement(1)
	h.expect(S4b)
	h.gate(true)
	h.expect(S4c)
}

func TestFailNamingNoTask(t *testing.T) {
	for _, tc := range []struct {
		name, gateTail, analysis string
		want                     []int
		context                  string
	}{
		{"none, then FIX TASKS", "FAILING TASKS: none", "The fixture is broken in task 05.\nFIX TASKS: 05\nFAILURE_ANALYSIS: COMPLETE", []int{5}, "fix only Task 05 (named by FAILURE_ANALYSIS)"},
		{"none, FIX TASKS of an earlier phase", "FAILING TASKS: none", "FIX TASKS: Task 02\nFAILURE_ANALYSIS: COMPLETE", []int{2}, "fix only Task 02 (named by FAILURE_ANALYSIS)"},
		{"a later task, no FIX TASKS", "FAILING TASKS: 09", "Unclear.\nFAILURE_ANALYSIS: COMPLETE", []int{4, 5}, "fix only Task 04, Task 05 (no task named by the gate or by FAILURE_ANALYSIS's `FIX TASKS:` line: every task of phase 2)"},
		{"unreadable, FIX TASKS of a later phase", "FAILING TASKS: the parser ones", "FIX TASKS: 09\nFAILURE_ANALYSIS: COMPLETE", []int{4, 5}, "FIX TASKS named 09, not a task of phases up to 2: dropped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := toPhase2Gate(t)
			o := h.run(Quality, "Gate 2", "Cannot run the tests.\nPHASE GATE STATUS: FAIL\n"+tc.gateTail)
			h.expect(SF1)
			wantContext(t, o, "4b FAIL -> F1 | no failing task named: Cannot run the tests. (fix iteration 1/3); launch task-planner for FAILURE_ANALYSIS, asking it to end with `FIX TASKS: NN, NN`")
			if n := h.w.Next(h.env()); n != "launch task-planner for FAILURE_ANALYSIS; the gate named no failing task, so ask it to end with `FIX TASKS: NN, NN` naming the tasks to fix" {
				t.Errorf("next %q", n)
			}
			o = h.run(Planner, "FAILURE_ANALYSIS", tc.analysis)
			h.expect(SF2)
			if fmt.Sprint(h.w.FailingTasks) != fmt.Sprint(tc.want) {
				t.Errorf("failing %v, want %v", h.w.FailingTasks, tc.want)
			}
			wantContext(t, o, tc.context)
			h.fixAll()
			h.expect(S4b)
		})
	}
	t.Run("FIX TASKS is not read when the gate named tasks", func(t *testing.T) {
		h := toPhase2Gate(t)
		h.gate(false, 4)
		h.run(Planner, "FAILURE_ANALYSIS", "FIX TASKS: 05\nFAILURE_ANALYSIS: COMPLETE")
		if fmt.Sprint(h.w.FailingTasks) != "[4]" {
			t.Errorf("failing %v", h.w.FailingTasks)
		}
	})
}

// The fix limit holds when no task is named: the third FAIL escalates.
func TestFailNamingNoTaskEscalates(t *testing.T) {
	h := driveTo(t, S4b)
	for i := 1; i <= MaxFixIterations; i++ {
		h.run(Quality, "Gate", "Cannot run.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: none")
		if i == MaxFixIterations {
			break
		}
		h.expect(SF1)
		h.analysis()
		h.expect(SF2)
		h.fixAll()
		h.expect(S4b)
	}
	h.expect(Escalated)
}

// The nudge keeps what the agent said: an answer holding only the missing
// line completes the verdict, for background and foreground agents, and
// the orchestrator gets the report's details.
func TestNudgeAnsweredWithOnlyTheMissingLine(t *testing.T) {
	for _, fg := range []bool{false, true} {
		t.Run(map[bool]string{false: "background", true: "foreground"}[fg], func(t *testing.T) {
			h := driveTo(t, S4b)
			h.fg = fg
			r := h.launch(Quality, "Gate")
			wantVerdict(t, r.stop("Task 02's test fails: expected 3, got 2.\nPHASE GATE STATUS: FAIL"), gates.Block)
			o := r.finish("FAILING TASKS: 02")
			h.expect(SF1)
			if fmt.Sprint(h.w.FailingTasks) != "[2]" || len(h.w.Kept) != 0 {
				t.Errorf("failing %v kept %v", h.w.FailingTasks, h.w.Kept)
			}
			wantContext(t, o, "4b FAIL -> F1 | Task 02 failed: Task 02's test fails: expected 3, got 2.", "The agent's report before orch-hook asked for its result line:\nTask 02's test fails: expected 3, got 2.\nPHASE GATE STATUS: FAIL")
		})
	}
	t.Run("a verdict line read two ways is quoted", func(t *testing.T) {
		h := driveTo(t, S4b)
		r := h.launch(Quality, "Gate")
		o := r.stop("All good.\nPHASE GATE STATUS: PASS/FAIL")
		wantBlock(t, o, 0, `your result line "PHASE GATE STATUS: PASS/FAIL" was not read: it names both verdicts. End your report with exactly `+"`PHASE GATE STATUS: PASS` or `PHASE GATE STATUS: FAIL`")
		r.finish("PHASE GATE STATUS: PASS")
		h.expect(S4c)
	})
	t.Run("the answer's verdict wins", func(t *testing.T) {
		h := driveTo(t, S4b)
		r := h.launch(Quality, "Gate")
		wantVerdict(t, r.stop("Broken.\nPHASE GATE STATUS: FAIL"), gates.Block)
		r.finish("Re-ran: it was a flaky fixture.\nPHASE GATE STATUS: PASS")
		h.expect(S4c)
	})
	t.Run("an implementer's answer", func(t *testing.T) {
		h := driveTo(t, S4a)
		r := h.launch(Implementer, implPrompt(1))
		wantVerdict(t, r.stop("Changed a.go; build ok."), gates.Block)
		o := r.finish("IMPLEMENTATION STATUS: COMPLETE ✅")
		if h.w.Tasks[1].Status != TaskComplete {
			t.Errorf("task %+v", h.w.Tasks[1])
		}
		wantContext(t, o, "Changed a.go; build ok.")
	})
}

// In F2 a fix waits for the fixes it depends on, across phases.
func TestFixDependenciesAcrossPhases(t *testing.T) {
	h := toPhase2Gate(t)
	// Task 03 depends on Task 01 (phase 1); both regressed.
	h.run(Quality, "Gate 2", "Regressions.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 01, 03")
	h.analysis()
	h.expect(SF2)
	wantDeny(t, h.start(Implementer, implPrompt(3)).launch, 3, "Task 03 depends on Task 01, which has not returned")
	h.implement(1)
	h.implement(3)
	h.expect(S4b)
}

// F2 schedules the fixes by the task files as FAILURE_ANALYSIS left them
// (issue 13): a file it adds to a task's Files: is a shared file in F2, and
// a task file it leaves unreadable stops F1 (quoted) instead of being read
// as the approval had it.
func TestFailureAnalysisFilesCount(t *testing.T) {
	h := driveTo(t, S4b)
	h.gate(false, 1, 2)
	h.expect(SF1)
	r := h.launch(Planner, "FAILURE_ANALYSIS")
	wantAllow(t, r.write(taskFileName(2), taskText(task{N: 2, Files: []string{"b.go", "a.go"}})))
	r.finish("Both touch a.go.\n" + LineAnalysis)
	h.expect(SF2)
	first := h.launch(Implementer, implPrompt(1))
	wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 3, "Task 02 and Task 01 (in flight) both change a.go")
	first.finish(gates.LineImplComplete)
	h.implement(2)
	h.expect(S4b)

	t.Run("an unreadable task file stops F1", func(t *testing.T) {
		h := driveTo(t, S4b)
		h.gate(false, 2)
		r := h.launch(Planner, "FAILURE_ANALYSIS")
		wantAllow(t, r.write(taskFileName(2), "# Task 02\nFiles: b.go\nrequires_ux_dx_review: false\nDepends On: the parser\n"))
		o := r.finish("Done.\n" + LineAnalysis)
		h.expect(SF1)
		wantContext(t, o, `F1: FAILURE_ANALYSIS returned, but the plan does not validate: task-02-step.md line 4: "Depends On: the parser": "the" is not a task number`, "Relaunch task-planner for FAILURE_ANALYSIS")
		r = h.launch(Planner, "FAILURE_ANALYSIS again")
		wantAllow(t, r.write(taskFileName(2), taskText(task{N: 2, Files: []string{"b.go"}})))
		r.finish("Fixed.\n" + LineAnalysis)
		h.expect(SF2)
	})
}
