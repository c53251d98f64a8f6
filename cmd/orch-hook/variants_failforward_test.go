package main

import "strings"

// The FAIL way forward (README, "4b/F1/F2"): a quality-gate FAIL always
// counts and moves to F1; the tasks to fix are the ones FAILING TASKS
// names from phases up to the current one, else the ones FAILURE_ANALYSIS
// names with FIX TASKS, else every task of the phase. Each variant moves
// the base's fix cycle and declares which tasks status marks failing, and
// the run must still reach complete.

// gateFails is the change that makes the phase 1 gate's report end with
// the FAILING TASKS value given.
func gateFails(value string) func(s *script) {
	return func(s *script) {
		q1 := s.at("q1")
		q1.report = strings.Replace(q1.report, "FAILING TASKS: 02", "FAILING TASKS: "+value, 1)
	}
}

// fixWholePhase1 replaces the fix of Task 02 with fixes of Tasks 01-03:
// 01 and 02 in one message, then 03 (it depends on 01 and shares a file
// with 02).
func fixWholePhase1(s *script) {
	fixTask := func(key, prompt string) *action {
		return launch(key, "code-implementer", prompt, "Fixed.\nIMPLEMENTATION STATUS: COMPLETE")
	}
	s.replace("fx",
		together("fx12", fixTask("fx1", "Task 01: Parser, fix"), fixTask("fx2", "Task 02: Formatter, fix")).expecting(want{state: "F2"}),
		fixTask("fx3", "Task 03: CLI flag, fix").expecting(want{state: "4b", context: []string{"F2 OK -> 4b | Task 01, Task 02, Task 03 fixed"}}),
	)
}

func init() {
	analysis := func(s *script) *action { return s.at("fa") }
	vs := []variant{
		{name: "FAILING TASKS: none, then FIX TASKS: 02",
			change: func(s *script) {
				gateFails("none")(s)
				s.at("q1").want = want{state: "F1", failing: tasks(), fixIterations: count(1), context: []string{"4b FAIL -> F1 | no failing task named"}}
				analysis(s).report = "Root cause: the formatter pads with a space.\nFIX TASKS: 02\nFAILURE_ANALYSIS: COMPLETE"
				analysis(s).want.context = []string{"F1 OK -> F2 | fix only Task 02 (named by FAILURE_ANALYSIS)"}
			}},
		{name: "FAILING TASKS: none and no FIX TASKS: the whole phase",
			change: func(s *script) {
				gateFails("none")(s)
				s.at("q1").want = want{state: "F1", failing: tasks(), context: []string{"no failing task named"}}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2, 3), context: []string{"every task of phase 1"}}
				fixWholePhase1(s)
			}},
		{name: "FAILING TASKS of a later phase dropped: the whole phase",
			change: func(s *script) {
				gateFails("04")(s)
				s.at("q1").want = want{state: "F1", failing: tasks(), context: []string{"FAILING TASKS named 04, not a task of phases up to 1: dropped"}}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2, 3), context: []string{"every task of phase 1"}}
				fixWholePhase1(s)
			}},
		{name: "FAILING TASKS of no task dropped: the whole phase",
			change: func(s *script) {
				gateFails("09")(s)
				s.at("q1").want = want{state: "F1", failing: tasks(), context: []string{"FAILING TASKS named 09, not a task of phases up to 1: dropped"}}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2, 3)}
				fixWholePhase1(s)
			}},
		{name: "FAILING TASKS: 02, 04 keeps 02",
			change: func(s *script) {
				gateFails("02, 04")(s)
				s.at("q1").want.context = []string{toldFail02, "FAILING TASKS named 04, not a task of phases up to 1: dropped"}
			}},
		{name: "FAILING TASKS: 01-02",
			change: func(s *script) {
				gateFails("01-02")(s)
				s.at("q1").want = want{state: "F1", failing: tasks(1, 2), context: []string{"Task 01, Task 02 failed"}}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2), context: []string{"fix only Task 01, Task 02"}}
				s.replace("fx", together("fx12",
					launch("fx1", "code-implementer", "Task 01: Parser, fix", "IMPLEMENTATION STATUS: COMPLETE"),
					launch("fx2", "code-implementer", "Task 02: Formatter, fix", "IMPLEMENTATION STATUS: COMPLETE"),
				).expecting(want{state: "4b", context: []string{"F2 OK -> 4b | Task 01, Task 02 fixed"}}))
			}},
		{name: "FIX TASKS ignored when the gate named the task",
			change: func(s *script) {
				analysis(s).report = "Root cause: padding. Task 01's tests are weak too.\nFIX TASKS: 01\nFAILURE_ANALYSIS: COMPLETE"
			}},
		{name: "a regression in phase 1 from phase 2's gate",
			change: func(s *script) {
				q3 := s.at("q3")
				q3.report = "The parser regressed on empty input.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 01"
				q3.want = want{state: "F1", failing: tasks(1), fixIterations: count(1), context: []string{"[PHASE 2 | Task 04] 4b FAIL -> F1 | Task 01 failed"}}
				s.insertAfter("q3",
					launch("fa2", "task-planner", "FAILURE_ANALYSIS for Task 01", "Empty input is not handled.\nFAILURE_ANALYSIS: COMPLETE").
						expecting(want{state: "F2", failing: tasks(1), context: []string{"F1 OK -> F2 | fix only Task 01"}}),
					launch("fx4", "code-implementer", "Task 01: Parser, handle empty input", "IMPLEMENTATION STATUS: COMPLETE").
						expecting(want{state: "4b", context: []string{"F2 OK -> 4b | Task 01 fixed"}}),
					launch("q3b", "code-quality", "Quality gate, phase 2 again", "PHASE GATE STATUS: PASS").fg().
						expecting(want{state: "4c", context: []string{toldPass2}}),
				)
			}},
		{name: "two fix cycles in one phase",
			change: func(s *script) {
				q2 := s.at("q2")
				s.insertAfter("q2",
					launch("fa2", "task-planner", "FAILURE_ANALYSIS again", "Still padding in one path.\nFAILURE_ANALYSIS: COMPLETE").expecting(want{state: "F2"}),
					launch("fx2b", "code-implementer", "Task 02: Formatter, second fix", "IMPLEMENTATION STATUS: COMPLETE").expecting(want{state: "4b"}),
					launch("q2b", "code-quality", "Quality gate, phase 1, third run", "PHASE GATE STATUS: PASS").fg().
						expecting(want{state: "4c", fixIterations: count(2), context: []string{toldPass1}}),
				)
				q2.report = "One padding case left.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02"
				q2.want = want{state: "F1", failing: tasks(2), fixIterations: count(2), context: []string{"(fix iteration 2/3)"}}
			}},
		{name: "gate FAIL still without FAILING TASKS after the nudge: the whole phase",
			change: func(s *script) {
				withoutLine("q1", "FAILING TASKS: 02", true)(s)
				s.at("q1").want = want{state: "F1", failing: tasks(), fixIterations: count(1), context: []string{"no failing task named"}}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2, 3)}
				fixWholePhase1(s)
			},
			fixes: []fix{{match: "your report must end with the line `FAILING TASKS: NN, NN`", reply: "PHASE GATE STATUS: FAIL"}}},
		// A fix waits for the fixes it depends on: Task 03's fix after
		// Task 01's.
		{name: "refused: the whole phase's fixes in one message",
			change: func(s *script) {
				gateFails("none")(s)
				s.at("q1").want = want{state: "F1", failing: tasks()}
				analysis(s).want = want{state: "F2", failing: tasks(1, 2, 3)}
				fixWholePhase1(s)
				fx3 := s.at("fx3")
				s.replace("fx3")
				g := s.at("fx12")
				g.members = append(g.members, fx3)
				g.want = fx3.want
			},
			fixes: []fix{{match: "Task 03 depends on Task 01", redo: relaunch("fx3", "Task 03: CLI flag, fix", "Fix the CLI flag")}}},
		{name: "refused: a fix before FAILURE_ANALYSIS",
			change: func(s *script) {
				s.insertBefore("fa", launch("early", "code-implementer", "Task 02: Formatter, quick fix", "IMPLEMENTATION STATUS: COMPLETE"))
			},
			fixes: []fix{{match: "[Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed"}}},
		{name: "refused: code-quality before the fixes returned",
			change: func(s *script) {
				s.insertBefore("fx", launch("early", "code-quality", "Quality gate again", "PHASE GATE STATUS: PASS").fg())
			},
			fixes: []fix{{match: "code-quality may revalidate only after the fixes returned (still open: Task 02)"}}},
	}
	for _, form := range []struct{ name, value string }{
		{"Task 02", "Task 02"},
		{"#2", "#2"},
		{"with a comment", "02 (trailing space in the formatter)"},
		{"bold", "**02**"},
		{"unpadded", "2"},
		{"backticks", "`02`"},
		{"full stop", "02."},
	} {
		vs = append(vs, variant{name: "FAILING TASKS written " + form.name, change: gateFails(form.value)})
	}
	registerVariants("fail way forward", vs...)
}
