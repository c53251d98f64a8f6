package main

import (
	"strings"
)

// Nudges: an agent that ends without the result line it owes is blocked
// once (README, "Result lines"); it answers with only the missing line,
// and orch-hook reads that answer together with the report it kept, so the
// verdict completes and the checkpoint line carries the earlier report (a
// background agent's notification holds only its last message). Each agent
// of the base workflow, in the background and in the foreground.

// nudged is an agent of the base workflow whose report loses its line.
type nudged struct {
	at   string // the base action
	line string // the line it owes, answered alone
}

var nudgedAgents = []nudged{
	{"ra", "REQUIREMENTS_CLEAR"},
	{"i2", "IMPLEMENTATION STATUS: COMPLETE"},
	{"fa", "FAILURE_ANALYSIS: COMPLETE"},
	{"q2", "PHASE GATE STATUS: PASS"},
	{"final", "PHASE GATE STATUS: PASS"},
	{"ux", "UX/DX STATUS: PASS"},
	{"se", "SUCCESS_EXTRACTION: COMPLETE"},
}

// withoutLine drops line from the report of the action named at, and sets
// its launch mode.
func withoutLine(at, line string, foreground bool) func(s *script) {
	return func(s *script) {
		a := s.at(at)
		a.report = strings.TrimSpace(strings.Replace(a.report, line, "", 1))
		a.foreground = foreground
	}
}

// firstLine is the line the checkpoint line must quote from the report
// the agent gave before the nudge.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func init() {
	base := orchestrateBase()
	var vs []variant
	for _, n := range nudgedAgents {
		for _, fg := range []bool{false, true} {
			mode := map[bool]string{false: "background", true: "foreground"}[fg]
			before := strings.TrimSpace(strings.Replace(base.at(n.at).report, n.line, "", 1))
			vs = append(vs, variant{
				name:   n.at + " without its line, " + mode,
				change: withoutLine(n.at, n.line, fg),
				fixes:  []fix{{match: "your report must end with the result line `" + strings.SplitN(n.line, ":", 2)[0], reply: n.line}},
				expect: []point{{after: n.at, want: want{context: []string{toldPrior + firstLine(before)}}}},
			})
		}
	}
	failing := "FAILING TASKS: 02"
	for _, fg := range []bool{false, true} {
		mode := map[bool]string{false: "background", true: "foreground"}[fg]
		vs = append(vs, variant{
			name:   "q1 FAIL without FAILING TASKS, " + mode,
			change: withoutLine("q1", failing, fg),
			fixes:  []fix{{match: "after `PHASE GATE STATUS: FAIL` your report must end with the line `FAILING TASKS: NN, NN`", reply: failing}},
			expect: []point{{after: "q1", want: want{failing: tasks(2), context: []string{toldPrior + "Formatter test fails: trailing space."}}}},
		})
	}
	vs = append(vs,
		// The answer may repeat the whole report, as the nudge asks.
		variant{name: "q2 answers with its whole report again",
			change: withoutLine("q2", "PHASE GATE STATUS: PASS", true),
			fixes:  []fix{{match: "your report must end with the result line `PHASE GATE STATUS", reply: "All green.\nPHASE GATE STATUS: PASS"}}},
		// Still without its line after the nudge: the launch closes as
		// unrecognized and the orchestrator relaunches the agent.
		variant{name: "i2 still without its line: relaunched",
			change: func(s *script) {
				again := copyAction(s.at("i2"), "i2-again")
				withoutLine("i2", "IMPLEMENTATION STATUS: COMPLETE", false)(s)
				s.at("i2").want.context = []string{"4a code-implementer (Task 02) returned without its result line (IMPLEMENTATION STATUS: COMPLETE | IMPLEMENTATION STATUS: BLOCKED): nothing advanced; relaunch it (retry 1/2, a permanent failure)."}
				s.insertAfter("p1", again)
			},
			fixes: []fix{{match: "your report must end with the result line", reply: "Done, really."}}},
		variant{name: "q2 still without its line: relaunched",
			change: func(s *script) {
				again := copyAction(s.at("q2"), "q2-again")
				withoutLine("q2", "PHASE GATE STATUS: PASS", true)(s)
				s.at("q2").want = want{state: "4b", context: []string{"code-quality returned without its result line"}}
				s.insertAfter("q2", again)
			},
			fixes: []fix{{match: "your report must end with the result line", reply: "All tests pass, as I said."}}},
	)
	// The orchestrator, too, is stopped with the next step when it owes one.
	vs = append(vs,
		variant{name: "orchestrator stops before ticking the phase",
			change: func(s *script) { s.insertBefore("tick1", stopTurn("early-stop")) },
			fixes:  []fix{{match: "[Gate 2] the workflow is not finished and the next step is yours (stop blocked 1/3)"}}},
		variant{name: "orchestrator stops before the quality gate",
			change: func(s *script) { s.insertBefore("q3", stopTurn("early-stop")) },
			fixes:  []fix{{match: "the workflow is not finished and the next step is yours"}}},
	)
	registerVariants("nudges", vs...)
}
