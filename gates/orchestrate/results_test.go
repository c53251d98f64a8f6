package orchestrate

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestFindResult(t *testing.T) {
	gate := OwedLines(JobGate)
	cases := []struct {
		text  string
		forms []string
		want  string
	}{
		{"PHASE GATE STATUS: PASS", gate, LineGatePass},
		{"report\n\n  PHASE GATE STATUS: FAIL  \n", gate, LineGateFail},
		{"**PHASE GATE STATUS: PASS**", gate, LineGatePass},
		{"**PHASE GATE STATUS:** `PASS`", gate, LineGatePass},
		{"`PHASE GATE STATUS: PASS`", gate, LineGatePass},
		{"## PHASE GATE STATUS: PASS", gate, LineGatePass},
		{"### **PHASE GATE STATUS: FAIL** ###", gate, LineGateFail},
		{"\tphase gate status:   pass\r", gate, LineGatePass},
		{"PHASE GATE STATUS: PASS\nPHASE GATE STATUS: FAIL", gate, LineGateFail},
		{"PHASE GATE STATUS: FAIL\nPHASE GATE STATUS: PASS\nthanks", gate, LineGatePass},
		// One parenthetical may follow a verdict, and list markers are
		// decoration (issue 13: these were refused before).
		{"PHASE GATE STATUS: PASS (mostly)", gate, ""}, // a hedge: both verdicts
		{"- PHASE GATE STATUS: PASS", gate, LineGatePass},
		{"The PHASE GATE STATUS: PASS is what I would say", gate, ""},
		{"UX/DX STATUS: PASS", gate, ""},
		{"UX/DX STATUS: FAIL", OwedLines(JobUXDX), LineUXFail},
		{"REQUIREMENTS_CLEAR", OwedLines(JobClarify), LineClear},
		{"**QUESTIONS_NEEDED**\n1. Which DB?", OwedLines(JobClarify), LineQuestions},
		{"DISCOVERY_NEEDED", OwedLines(JobClarify), LineDiscovery},
		{"IMPLEMENTATION STATUS: BLOCKED", OwedLines(JobFix), gates.LineImplBlocked},
		{"`FAILURE_ANALYSIS: COMPLETE`", OwedLines(JobAnalysis), LineAnalysis},
		{"# SUCCESS_EXTRACTION: COMPLETE", OwedLines(JobExtraction), LineExtraction},
		{"", gate, ""},
	}
	for _, tc := range cases {
		if got := gates.FindResult(tc.text, tc.forms); got != tc.want {
			t.Errorf("FindResult(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestFailingTasks(t *testing.T) {
	cases := []struct {
		text string
		want []int
	}{
		{"FAILING TASKS: 02, 05", []int{2, 5}},
		{"**FAILING TASKS:** Task 02, Task 05", []int{2, 5}},
		{"`FAILING TASKS: 3`", []int{3}},
		{"FAILING TASKS: 01\nlater\nFAILING TASKS: 04", []int{4}},
		{"## failing tasks: 7", []int{7}},
		{"no such line", nil},
		{"The FAILING TASKS: 02 are", nil},
	}
	for _, tc := range cases {
		if got := FailingTasks(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FailingTasks(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestTaskOfPrompt(t *testing.T) {
	cases := []struct {
		prompt string
		want   int
	}{
		{"Task 03: implement the form", 3},
		{"Task 3 - implement", 3},
		{"task 003", 3},
		{"Task #12: x", 12},
		{"**Task 02**: x", 2},
		{"  \n# Task 05\nbody", 5},
		{"> Task 07 quoted", 7},
		{"Task 02: like Task 01; then Task 03", 2},
		{"Implement Task 02", 2}, // issue 13: the first line naming a task
		{"Tasks 01 and 02", 0},
		{"Task 01 and Task 02: both", 0}, // one implementer per task
		{"**Task 01** & 02", 0},
		{"Task 01, Task 02", 0},
		{"Task 01: the parser (see Task 02 for the writer)", 1},
		{"You are implementing Task 04.\n\nTask 02 is done already.", 4},
		{"Context: Task 02 formats what this parses.\nTask 01: Parser", 1}, // the header decides
		{"Context: Task 02 formats what this parses.\n\n## Task 01\nbody", 1},
		{"Task 01: Parser\n\nTask 02: Formatter", 0}, // two headers, two tasks
		{"Task 01: Parser\n\n## Task 01 details", 1},
		{"Context: see Task 02.\nTask 02: Formatter", 2},
		{"- Task 01: Parser\n- Task 02: Formatter", 0},             // a list of tasks, no header: read two ways
		{"Task 04: Streaming\n\n- Task 01: encoder — COMPLETE", 4}, // a status list beside the header
		{"- Task 03: CLI flag", 3},
		{"Implement Task 03.\nTask 03 - details below", 3},
		{"[context] Task 01", 1},
		{"Implement task-03-cli.md", 3},
		{"The plan is ready.\nImplement Task 02 and Task 03", 0},
		{"", 0},
	}
	for _, tc := range cases {
		if got := TaskOfPrompt(tc.prompt); got != tc.want {
			t.Errorf("TaskOfPrompt(%q) = %d, want %d", tc.prompt, got, tc.want)
		}
	}
}

func TestOwedLines(t *testing.T) {
	cases := map[string][]string{
		JobClarify:    {LineClear, LineQuestions, LineDiscovery},
		JobGate:       {LineGatePass, LineGateFail},
		JobFinal:      {LineGatePass, LineGateFail},
		JobUXDX:       {LineUXPass, LineUXFail},
		JobImplement:  {gates.LineImplComplete, gates.LineImplBlocked},
		JobFix:        {gates.LineImplComplete, gates.LineImplBlocked},
		JobAnalysis:   {LineAnalysis},
		JobExtraction: {LineExtraction},
		JobDiscovery:  nil,
		JobPlan:       nil,
		JobPhase:      nil,
		JobReadOnly:   nil,
	}
	for job, want := range cases {
		if got := OwedLines(job); !reflect.DeepEqual(got, want) {
			t.Errorf("OwedLines(%q) = %v, want %v", job, got, want)
		}
	}
}

func TestSummaryOfAndWithoutLines(t *testing.T) {
	text := "\n## **Build is red**\nFAILING TASKS: 02\nPHASE GATE STATUS: FAIL"
	if got := gates.SummaryOf(text, LineGateFail); got != "Build is red" {
		t.Errorf("summaryOf = %q", got)
	}
	if got := gates.SummaryOf("PHASE GATE STATUS: FAIL\nFAILING TASKS: 01", LineGateFail); got != "" {
		t.Errorf("summaryOf = %q", got)
	}
	if got := gates.WithoutLines("cause\n**FAILURE_ANALYSIS: COMPLETE**\nmore", LineAnalysis); got != "cause\nmore" {
		t.Errorf("withoutLines = %q", got)
	}
}

// reTaskHeader is what matchTaskHeader reads by hand.
var reTaskHeader = gates.LazyRegexp(`(?i)^task[ \t_#-]*(\d{1,4})[*_` + "`" + `]*\s*(?:$|[:.\x{2013}\x{2014}-])`)

// FuzzTaskHeader: the hand-written header reader agrees with the regexp
// it replaces, and the shortcuts before the other task regexps skip only
// lines they cannot match.
func FuzzTaskHeader(f *testing.F) {
	for _, s := range []string{"Task 01: x", "taſk 1", "TASK #3.", "task 12345", "Task 01 *:", "Task 1\u2014x", "Task 01**",
		"task_7", "Tas", "", "Task 0001:", "task\t9 \n", "Task 1 :", "task 1a", "tasK 5-", "\u212aask 2", "task 1\u2013", "task 1\u00a0:",
		"t*ask 01 and 02", "t(x)ask 3", "see Task 02 (and 03)", "Tasks 1, 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := matchTaskHeader(s)
		want := 0
		m := reTaskHeader.FindStringSubmatch(s)
		if m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		if ok != (m != nil) || got != want {
			t.Fatalf("matchTaskHeader(%q) = %d, %v; the regexp: %q", s, got, ok, m)
		}
		flat := strings.NewReplacer("*", "", "`", "").Replace(stripParens(s))
		if !hasTA(flat) && (reTaskRun.MatchString(flat) || reTaskRef.MatchString(flat)) {
			t.Fatalf("hasTA(%q) is false but a task regexp matches", flat)
		}
		if strings.IndexByte(s, '(') < 0 && reConjoined.MatchString(s) {
			t.Fatalf("%q has no parenthesis but reConjoined matches", s)
		}
	})
}
