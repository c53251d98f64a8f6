package orchestrate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// The result-line grammar: every spelling of the same meaning is read,
// and every line that could be read two ways is refused with a reason.
func TestResultGrammar(t *testing.T) {
	gate := OwedLines(JobGate)
	accepted := []struct {
		line, want string
	}{
		{"PHASE GATE STATUS: PASS", LineGatePass},
		{"- PHASE GATE STATUS: PASS", LineGatePass},
		{"* PHASE GATE STATUS: FAIL", LineGateFail},
		{"> PHASE GATE STATUS: PASS", LineGatePass},
		{"1. PHASE GATE STATUS: PASS", LineGatePass},
		{"12) PHASE GATE STATUS: PASS", LineGatePass},
		{"PHASE GATE STATUS = PASS", LineGatePass},
		{"PHASE_GATE_STATUS: PASS", LineGatePass},
		{"Phase-Gate-Status: pass", LineGatePass},
		{"PHASE GATE STATUS: PASS.", LineGatePass},
		{"PHASE GATE STATUS: PASS!", LineGatePass},
		{"PHASE GATE STATUS: PASS ✅", LineGatePass},
		{"PHASE GATE STATUS: ✅ PASS", LineGatePass},
		{"✅ PHASE GATE STATUS: PASS", LineGatePass},
		{"PHASE GATE STATUS: PASSED", LineGatePass},
		{"PHASE GATE STATUS: FAILED", LineGateFail},
		{"PHASE GATE STATUS: PASS (12/12 tests)", LineGatePass},
		{"PHASE GATE STATUS: FAIL ❌ (2 failing)", LineGateFail},
		{"PHASE GATE STATUS: PASS (12/12) ✅.", LineGatePass},
		{"PHASE GATE STATUS: PASS (12 passed, 0 failed)", LineGatePass},
		{"PHASE GATE STATUS: PASS — all acceptance criteria met", LineGatePass},
		{"PHASE GATE STATUS: FAIL - 2 tests fail in parser_test.go", LineGateFail},
		{"PHASE GATE STATUS: PASS (no failures)", LineGatePass},
		{"PHASE GATE STATUS: PASS (12/12 tests, zero errors)", LineGatePass},
		{"PHASE GATE STATUS: PASS (12 tests passed, 0 errors, 1 skipped)", LineGatePass},
		{"PHASE GATE STATUS: FAIL (10 passed, 2 failed)", LineGateFail},
		{"**PHASE GATE STATUS:** **PASS**", LineGatePass},
		{"**PHASE GATE STATUS**: `PASS`", LineGatePass},
		{"### PHASE GATE STATUS: FAIL ###", LineGateFail},
		{"`PHASE_GATE_STATUS=FAIL`", LineGateFail},
		{"\t- **Phase gate status:** passed ✔️", LineGatePass},
	}
	for _, tc := range accepted {
		if got := gates.ReadResult("report\n"+tc.line+"\n", gate); got.Form != tc.want {
			t.Errorf("%q: read %q (problem %q), want %q", tc.line, got.Form, got.Problem, tc.want)
		}
	}
	refused := []struct {
		line, problem string
	}{
		{"PHASE GATE STATUS: PASS/FAIL", "both verdicts"},
		{"PHASE GATE STATUS: PASS or FAIL", "both verdicts"},
		{"PHASE GATE STATUS: PASS | FAIL", "both verdicts"},
		{"PHASE GATE STATUS: PASS (FAIL on rerun)", "both verdicts"},
		{"PHASE GATE STATUS: PASS (fail on rerun)", "both verdicts"},
		{"PHASE GATE STATUS: PASS ❌", "both verdicts"},
		{"PHASE GATE STATUS: ✅ FAIL", "both verdicts"},
		{"PHASE GATE STATUS: PASS (except 2 flaky tests fail)", "both verdicts"},
		{"PHASE GATE STATUS: PASS (11 passed, 1 failed)", "both verdicts"},
		{"PHASE GATE STATUS: FAIL (passed locally)", "both verdicts"},
		{"PHASE GATE STATUS: PASS but the linter complains", "followed by other text"},
		{"PHASE GATE STATUS: PASS - mostly", "both verdicts"}, // a hedge after PASS
		{"PHASE GATE STATUS: PASS-ish", "followed by other text"},
		{"PHASE GATE STATUS: PASS (a) (b)", "more after the verdict"},
		{"PHASE GATE STATUS: PASS (unclosed", "more after the verdict"},
		{"| PHASE GATE STATUS | PASS |", "table cell"},
		{"| Phase gate status: PASS |", "table cell"},
		{"PHASE GATE STATUS: PASSING", "not a verdict"},
		{"PHASE GATE STATUS: pending", "not a verdict"},
		{"PHASE GATE STATUS:", "no verdict"},
		{"PHASE GATE STATUS: COMPLETE", "not one of this step's verdicts"},
		{"PHASE GATE STATUS PASS", "not followed by ':'"},
		{"PHASE GATE STATUS: true|false", "not a verdict"},
	}
	for _, tc := range refused {
		got := gates.ReadResult("PHASE GATE STATUS: PASS\n"+tc.line, gate)
		if got.Form != "" || !strings.Contains(got.Problem, tc.problem) || got.Near != strings.TrimSpace(tc.line) {
			t.Errorf("%q: read %q, near %q, problem %q; want refused with %q", tc.line, got.Form, got.Near, got.Problem, tc.problem)
		}
	}
	// A line that carries the key and a verdict anywhere else is the
	// agent's last word in a form orch-hook does not read: refused, quoted,
	// and an earlier line does not stand in for it (red-team: "**Final**
	// PHASE GATE STATUS: FAIL" after a PASS was skipped, and the PASS won).
	for _, line := range []string{"The PHASE GATE STATUS: FAIL is what I would say", "FINAL PHASE GATE STATUS: FAIL", "Phase gate status for phase 2: FAIL", "PHASE 1 GATE STATUS: FAIL"} {
		if got := gates.ReadResult("PHASE GATE STATUS: PASS\n"+line, gate); got.Form != "" || got.Near != line {
			t.Errorf("%q: read %+v, want refused and quoted", line, got)
		}
	}
	// Not result lines at all: prose that mentions the key without a
	// verdict, other keys.
	for _, line := range []string{"I set the PHASE GATE STATUS to PASS", "UX/DX STATUS: PASS", "Status: PASS", "PASS", "All tests pass: the phase gate status is fine"} {
		if got := gates.ReadResult(line, gate); got.Form != "" || got.Near != "" {
			t.Errorf("%q: read %+v, want nothing", line, got)
		}
	}
}

func TestResultGrammarTokensAndOtherJobs(t *testing.T) {
	cases := []struct {
		text  string
		forms []string
		want  string
	}{
		{"REQUIREMENTS_CLEAR.", OwedLines(JobClarify), LineClear},
		{"**Requirements clear** ✅", OwedLines(JobClarify), LineClear},
		{"- questions-needed", OwedLines(JobClarify), LineQuestions},
		{"DISCOVERY_NEEDED (the API is undocumented)", OwedLines(JobClarify), LineDiscovery},
		{"REQUIREMENTS_CLEAR: yes", OwedLines(JobClarify), ""},
		{"REQUIREMENTS_CLEAR, but see above", OwedLines(JobClarify), ""},
		{"REQUIREMENTS_CLEAR except for the output format", OwedLines(JobClarify), ""},
		{"REQUIREMENTS_CLEAR\nRequirements clear except for the format", OwedLines(JobClarify), ""},
		{"UX-DX STATUS: FAILED", OwedLines(JobUXDX), LineUXFail},
		{"UX_DX_STATUS = PASS", OwedLines(JobUXDX), LineUXPass},
		{"IMPLEMENTATION STATUS: COMPLETED ✅", OwedLines(JobImplement), gates.LineImplComplete},
		{"IMPLEMENTATION_STATUS: BLOCKED (the DB is down)", OwedLines(JobImplement), gates.LineImplBlocked},
		{"IMPLEMENTATION STATUS: COMPLETE (not BLOCKED)", OwedLines(JobImplement), ""},
		{"FAILURE ANALYSIS: COMPLETE", OwedLines(JobAnalysis), LineAnalysis},
		{"success-extraction = complete.", OwedLines(JobExtraction), LineExtraction},
		{"TESTS: PASS (42/42)", []string{testsPass, testsFail}, testsPass},
	}
	for _, tc := range cases {
		if got := gates.FindResult(tc.text, tc.forms); got != tc.want {
			t.Errorf("FindResult(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	// Both workflows' nudges quote the refused line, or name the lines.
	if got := gates.MissingLineProblem("Done.\nREQUIREMENTS_CLEAR except for the output format", OwedLines(JobClarify)); got != "your result line \"REQUIREMENTS_CLEAR except for the output format\" was not read: the line is followed by other text. End your report with exactly `REQUIREMENTS_CLEAR` or `QUESTIONS_NEEDED` or `DISCOVERY_NEEDED`, alone on its line." {
		t.Errorf("token then prose: %q", got)
	}
	if got := gates.MissingLineProblem("12 tests run.\nTESTS: PASS/FAIL", []string{testsPass, testsFail}); got != "your result line \"TESTS: PASS/FAIL\" was not read: it names both verdicts. End your report with exactly `TESTS: PASS` or `TESTS: FAIL`, alone on its line." {
		t.Errorf("coordinate: %q", got)
	}
	if got := gates.MissingLineProblem("All done.", []string{testsPass, testsFail}); got != "your report must end with the result line `TESTS: PASS` or `TESTS: FAIL`, alone on its line." {
		t.Errorf("no line: %q", got)
	}
}

func TestTaskRefs(t *testing.T) {
	cases := []struct {
		value string
		nums  []int
		none  bool
		ok    bool
	}{
		{"02, 05", []int{2, 5}, false, true},
		{"Task 02 and Task 05", []int{2, 5}, false, true},
		{"#2; #5", []int{2, 5}, false, true},
		{"01-03", []int{1, 2, 3}, false, true},
		{"02 (regression from phase 1), 05", []int{2, 5}, false, true},
		{"none", nil, true, true},
		{"None (the tests cannot run)", nil, true, true},
		{"**03**", []int{3}, false, true},
		{"the parser ones", nil, false, false},
		{"02, maybe 05", nil, false, false},
		{"none, 02", nil, false, false},
		{"", nil, false, false},
		{"03-01", nil, false, false},
	}
	for _, tc := range cases {
		nums, none, ok, _ := taskRefs(tc.value)
		if !reflect.DeepEqual(nums, tc.nums) || none != tc.none || ok != tc.ok {
			t.Errorf("taskRefs(%q) = %v, %v, %v; want %v, %v, %v", tc.value, nums, none, ok, tc.nums, tc.none, tc.ok)
		}
	}
}

func TestTaskOfLaunch(t *testing.T) {
	cases := []struct {
		prompt, description string
		want                int
		problem             string
	}{
		{"Task 01: parser", "", 1, ""},
		{"Implement Task 01: parser", "", 1, ""},
		{"You are implementing Task 01.", "", 1, ""},
		{"[context] Task 01", "", 1, ""},
		{"Context: a word counter.\n\nTask 03: the CLI flag\nIt builds on Task 01.", "", 3, ""},
		{"Implement .orchestrator/tasks/task-02-formatter.md", "", 2, ""},
		{"Implement the parser.", "Task 01: parser", 1, ""},
		{"Implement the parser.", "Implement task 01", 1, ""},
		{"Task 01: parser", "Task 01", 1, ""},
		{"Task 03: CLI (after Task 01)", "", 3, ""},
		{"Task 01: parser", "Task 02", 0, "names Task 01"},
		{"Implement Task 01 and Task 02", "", 0, "more than one task"},
		{"Implement Tasks 01 and 02", "", 0, "more than one task"},
		{"Implement the parser.", "Tasks 01-02", 0, "more than one task"},
		{"Implement the parser.", "", 0, "names no task"},
		{"Implement subtask 1", "", 0, "names no task"},
	}
	for _, tc := range cases {
		n, problem := TaskOfLaunch(tc.prompt, tc.description)
		if n != tc.want || !strings.Contains(problem, tc.problem) || (tc.problem == "") != (problem == "") {
			t.Errorf("TaskOfLaunch(%q, %q) = %d, %q; want %d, %q", tc.prompt, tc.description, n, problem, tc.want, tc.problem)
		}
	}
}

// FuzzResultLine: the grammar never panics, and what it reads as a gate
// verdict is one of the forms.
func FuzzResultLine(f *testing.F) {
	for _, s := range []string{"PHASE GATE STATUS: PASS", "- **PHASE_GATE_STATUS =** `FAIL` ✅ (x)", "| a | b |", "1. REQUIREMENTS_CLEAR.", "FAILING TASKS: 01-03, #5 (x)", "Task 01: x\nTask 02", "✅✅(", "PASS (((", "\xff\xfe:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := gates.ReadResult(s, OwedLines(JobGate))
		if got.Form != "" && got.Form != LineGatePass && got.Form != LineGateFail {
			t.Fatalf("read %q", got.Form)
		}
		taskRefs(s)
		TaskOfLaunch(s, s)
		FailingTasks(s)
		gates.SummaryOf(s, OwedLines(JobGate)...)
	})
}

// The last line decides, with two cases that look further back: a fenced
// example and a recap. Review fixes: the fence right after the verdict
// line was missed (the line before the fence was cut off), and a recap
// with a failure note counted as agreeing.
func TestResultFencesAndRecaps(t *testing.T) {
	gate := OwedLines(JobGate)
	for _, tc := range []struct {
		text, want string
		refused    bool
	}{
		{"Broken.\nPHASE GATE STATUS: FAIL\n```\nPHASE GATE STATUS: PASS\n```", "", true},
		{"```\nPHASE GATE STATUS: PASS\n```", LineGatePass, false},
		{"All green.\nPHASE GATE STATUS: PASS\n```\nPHASE GATE STATUS: PASS\n```", LineGatePass, false},
		{"PHASE GATE STATUS: PASS\n*Recap: PHASE GATE STATUS: PASS*", LineGatePass, false},
		{"PHASE GATE STATUS: PASS\nRecap: PHASE GATE STATUS: PASS\nIn short: PHASE GATE STATUS: PASS.", LineGatePass, false},
		{"PHASE GATE STATUS: PASS\nRecap: PHASE GATE STATUS: PASS (except the parser fails)", "", true},
		{"PHASE GATE STATUS: PASS\nRecap: PHASE GATE STATUS: FAIL", "", true},
		{"Recap: PHASE GATE STATUS: PASS", "", true},
	} {
		got := gates.ReadResult(tc.text, gate)
		if got.Form != tc.want || tc.refused != (got.Near != "") {
			t.Errorf("%q: read %+v, want %q (refused %v)", tc.text, got, tc.want, tc.refused)
		}
	}
	// Many recaps or fences stay linear (it recursed once per line).
	long := "PHASE GATE STATUS: PASS\n" + strings.Repeat("Recap: PHASE GATE STATUS: PASS\n```\nPHASE GATE STATUS: PASS\n```\n", 3000)
	if got := gates.ReadResult(long, gate); got.Form != LineGatePass {
		t.Errorf("long: %+v", got)
	}
}
