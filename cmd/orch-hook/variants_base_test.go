package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/internal/status"
)

// The base workflows the variants start from: correct runs to complete,
// as a model that follows the commands to the letter would do them.

// standardPlanWant is what orch-hook must read of the standard plan
// (reach_test.go): phase 1 has Tasks 01-03 (03 depends on 01 and shares
// src/shared.go with 02), phase 2 Task 04, which asks for a UX/DX review.
func standardPlanWant() *planWant {
	return &planWant{
		phases: [][]int{{1, 2, 3}, {4}},
		deps:   map[int][]int{3: {1}},
		files: map[int][]string{
			1: {"src/parser.go"},
			2: {"src/format.go", "src/shared.go"},
			3: {"src/cli.go", "src/shared.go"},
			4: {"docs/usage.md"},
		},
		ux: []int{4},
	}
}

// The checkpoint lines the orchestrator is told along the base workflow;
// variants that keep a step expect its line.
const (
	toldStarted   = "orch-hook: workflow started (step 0a)"
	toldClear     = "[STEP 0a] REQUIREMENTS_CLEAR -> 2"
	toldPlanned   = "[STEP 2] MASTER_PLAN.md created -> 3 | 2 phases, 4 tasks"
	toldApproved  = "[STEP 3] APPROVED -> 4a"
	toldTask01    = "4a Task 01 COMPLETE -> 4a"
	toldTask02    = "4a Task 02 COMPLETE -> 4a"
	toldPhase1Imp = "[PHASE 1 | Tasks 01-03] 4a OK -> 4b"
	toldFail02    = "[PHASE 1 | Tasks 01-03] 4b FAIL -> F1 | Task 02 failed"
	toldAnalysed  = "F1 OK -> F2 | fix only Task 02"
	toldFixed     = "F2 OK -> 4b | Task 02 fixed"
	toldPass1     = "[PHASE 1 | Tasks 01-03] 4b OK -> 4c"
	toldTicked1   = "4c OK -> Phase 2"
	toldPhase2Imp = "[PHASE 2 | Task 04] 4a OK -> 4b"
	toldPass2     = "[PHASE 2 | Task 04] 4b OK -> 4c"
	toldTicked2   = "4c OK -> 5a"
	toldFinalPass = "[STEP 5a] PASS -> 5b"
	toldUXPass    = "[STEP 5b] PASS -> 6"
	toldExtracted = "[STEP 6] SUCCESS_EXTRACTION -> complete"
)

// orchestrateBase is the standard plan's workflow, the path of reach_test's
// milestones (a fix cycle in phase 1 included), with the launch modes a
// model uses: the phase's independent implementers in the background in
// one message, the others in either mode. Each action says the state it
// leaves and the checkpoint line it brings.
func orchestrateBase() *script {
	// Two implementers write a project file with their Write tool, one in
	// the background (its launch is linked to its agent id) and one in
	// the foreground (not linked yet): each hook call costs a state write,
	// so the others do not.
	impl := func(key string, n int, title, file string) *action {
		a := launch(key, "code-implementer", fmt.Sprintf("Task %02d: %s", n, title),
			fmt.Sprintf("Implemented %s; tests added.\nIMPLEMENTATION STATUS: COMPLETE", strings.ToLower(title))).
			describedAs("Implement " + strings.ToLower(title))
		if key == "i1" || key == "i4" {
			a.writing(file, "package wc\n")
		}
		return a
	}
	tp := launch("tp", "task-planner", "Plan the word counter from the requirements", "Plan written: 2 phases, 4 tasks.").fg().
		expecting(want{state: "3", context: []string{toldPlanned}})
	for _, name := range []string{"MASTER_PLAN.md", "task-01-parser.md", "task-02-formatter.md", "task-03-cli.md", "task-04-docs.md"} {
		tp.writing(".orchestrator/tasks/"+name, standardPlan[name])
	}
	i1 := impl("i1", 1, "Parser", "src/parser.go").expecting(want{context: []string{toldTask01}})
	i2 := impl("i2", 2, "Formatter", "src/format.go").expecting(want{context: []string{toldTask02}})
	return &script{
		actions: []*action{
			userPrompt("start", "/orch-hook:orchestrate Build a word counter").
				expecting(want{state: "0a", context: []string{toldStarted}}),
			launch("ra", "requirements-analyst", "Analyse the request: build a word counter", "The request is clear: count words, lines and bytes.\nREQUIREMENTS_CLEAR").
				expecting(want{state: "2", context: []string{toldClear}}),
			tp,
			// The orchestrator presents the plan and stops: the user is
			// waited on, so Stop is allowed.
			stopTurn("wait").expecting(want{state: "3"}),
			userPrompt("approve", "/orch-hook:approve").
				expecting(want{state: "4a", context: []string{toldApproved}}),
			together("p1", i1, i2).expecting(want{state: "4a"}),
			impl("i3", 3, "CLI flag", "src/cli.go").
				expecting(want{state: "4b", context: []string{toldPhase1Imp}}),
			launch("q1", "code-quality", "Quality gate, phase 1", "Formatter test fails: trailing space.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02").fg().
				expecting(want{state: "F1", failing: tasks(2), fixIterations: count(1), context: []string{toldFail02}}),
			launch("fa", "task-planner", "FAILURE_ANALYSIS for Task 02", "Root cause: the formatter pads with a space.\nFAILURE_ANALYSIS: COMPLETE").
				expecting(want{state: "F2", failing: tasks(2), context: []string{toldAnalysed}}),
			impl("fx", 2, "Fix the padding", "src/format.go").
				expecting(want{state: "4b", context: []string{toldFixed}}),
			launch("q2", "code-quality", "Quality gate, phase 1 again", "All green.\nPHASE GATE STATUS: PASS").fg().
				expecting(want{state: "4c", fixIterations: count(1), context: []string{toldPass1}}),
			tickPhase("tick1", 1).expecting(want{state: "4a", failing: tasks(), fixIterations: count(0), context: []string{toldTicked1}}),
			impl("i4", 4, "Document it", "docs/usage.md").fg().
				expecting(want{state: "4b", context: []string{toldPhase2Imp}}),
			launch("q3", "code-quality", "Quality gate, phase 2", "Docs build.\nPHASE GATE STATUS: PASS").
				expecting(want{state: "4c", context: []string{toldPass2}}),
			tickPhase("tick2", 2).expecting(want{state: "5a", context: []string{toldTicked2}}),
			launch("final", "code-quality", "Final validation", "Full suite and build pass.\nPHASE GATE STATUS: PASS").fg().
				expecting(want{state: "5b", context: []string{toldFinalPass}}),
			launch("ux", "ux-dx-quality", "UX/DX review", "Looks good.\nUX/DX STATUS: PASS").
				expecting(want{state: "6", context: []string{toldUXPass}}),
			launch("se", "task-planner", "SUCCESS_EXTRACTION", "Learnings recorded.\nSUCCESS_EXTRACTION: COMPLETE").fg().
				expecting(want{state: "complete", context: []string{toldExtracted}}),
			stopTurn("end"),
		},
		end: want{state: "complete", plan: standardPlanWant(), check: allOf(
			completedStates("0a", "2", "3", "4a", "4b", "F1", "F2", "4c", "5a", "5b", "6"),
			allTicked,
		)},
	}
}

// coordTopic is the topic directory of coordinateBase's description.
const coordTopic = "specs/001_implement_rate_limiting_api"

// coordinateBase is a coordinate workflow of scope full-implementation,
// typed by the user: two research-specialists (one in the background),
// plan-architect, implementation-executor, test-specialist, doc-writer,
// each worker writing its artifact with its Write tool before reporting it.
func coordinateBase() *script {
	report := func(dir, name string) string { return coordTopic + "/" + dir + "/" + name }
	return &script{
		actions: []*action{
			userPrompt("start", "/orch-hook:coordinate Implement rate limiting for the API").
				expecting(want{state: "research", context: []string{"coordinate workflow started. Scope: full-implementation", "Topic: implement_rate_limiting_api"}}),
			launch("r1", "research-specialist", "Research topic 1: token buckets", "Token buckets researched.\nREPORT_CREATED: "+report("reports", "001_token_buckets.md")).
				writing(report("reports", "001_token_buckets.md"), "# Token buckets\nRefill at a fixed rate.\n").
				expecting(want{state: "research", check: reportsVerified(1)}),
			launch("r2", "research-specialist", "Research topic 2: sliding windows", "Sliding windows researched.\nREPORT_CREATED: "+report("reports", "002_sliding_windows.md")).fg().
				writing(report("reports", "002_sliding_windows.md"), "# Sliding windows\nCount per window.\n").
				expecting(want{state: "plan", check: reportsVerified(2), context: []string{"2/2 reports verified -> plan"}}),
			launch("pa", "plan-architect", "Plan rate limiting from the reports", "Plan written.\nPLAN_CREATED: "+report("plans", "001_implement_rate_limiting_api_plan.md")).fg().
				writing(report("plans", "001_implement_rate_limiting_api_plan.md"), "# Plan: rate limiting\n\n## Phase 1: Token bucket\n").
				expecting(want{state: "implement", context: []string{"verified -> implement"}}),
			launch("ie", "implementation-executor", "Implement the plan", "Token bucket in place.\nIMPLEMENTATION STATUS: COMPLETE").
				expecting(want{state: "test", context: []string{"IMPLEMENTATION STATUS: COMPLETE -> test"}}),
			launch("ts", "test-specialist", "Run the tests", "12 tests run.\nTESTS: PASS").fg().
				expecting(want{state: "document", context: []string{"TESTS: PASS -> document"}}),
			launch("dw", "doc-writer", "Document rate limiting", "Summary written.\nREPORT_CREATED: "+report("summaries", "001_summary.md")).fg().
				writing(report("summaries", "001_summary.md"), "# Summary: rate limiting\n").
				expecting(want{state: "complete", context: []string{"verified -> complete"}}),
			stopTurn("end"),
		},
		end: want{state: "complete", check: completedStates("initialize", "research", "plan", "implement", "test", "document")},
	}
}

// allOf combines checks.
func allOf(checks ...func(*status.Report) string) func(*status.Report) string {
	return func(r *status.Report) string {
		for _, c := range checks {
			if why := c(r); why != "" {
				return why
			}
		}
		return ""
	}
}

func completedStates(states ...string) func(*status.Report) string {
	return func(r *status.Report) string {
		if !slices.Equal(r.Workflow.CompletedStates, states) {
			return fmt.Sprintf("completed_states %v; read %v", states, r.Workflow.CompletedStates)
		}
		return ""
	}
}

// allTicked: every task of the plan is checked in MASTER_PLAN.md.
func allTicked(r *status.Report) string {
	for _, ph := range r.Plan.Phases {
		for _, t := range ph.Tasks {
			if !t.Checked {
				return fmt.Sprintf("every task ticked; read Task %02d unticked", t.Number)
			}
		}
	}
	return ""
}

func reportsVerified(n int) func(*status.Report) string {
	return func(r *status.Report) string {
		if r.Coordinate == nil || len(r.Coordinate.ReportsVerified) != n {
			got := []string{}
			if r.Coordinate != nil {
				got = r.Coordinate.ReportsVerified
			}
			return fmt.Sprintf("%d reports verified; read %v", n, got)
		}
		return ""
	}
}

var (
	rePlanPhase    = regexp.MustCompile(`^\s*(#{1,6})\s*\**\s*Phase\s+(\d+)`)
	rePlanHeading  = regexp.MustCompile(`^\s*(#{1,6})\s`)
	rePlanTask     = regexp.MustCompile(`^(?:[-*+]|\d+[.)])?\s*\[([ xX])\]`)
	rePlanStatus   = regexp.MustCompile(`(?i)^(\s*(?:[-*+]\s*)?\**\s*status\s*\**\s*:\s*\**\s*)(.*?)(\s*)$`)
	rePlanProgress = regexp.MustCompile(`(?i)^(\s*(?:[-*+]\s*)?\**\s*progress\s*\**\s*:\s*\**\s*)(\d+)(\s*/\s*)(\d+)`)
)

// tickedPlan is MASTER_PLAN.md as a model writes it in 4c: the phase's
// tasks ticked, its Status: complete, Progress: counted. It works from
// the file as it stands, so a variant with another plan format (or an
// earlier edit) is ticked the same way. Tasks are read as orch-hook
// reads them: unindented checkboxes under a phase heading (an indented
// one is a sub-item; a heading at the phase headings' level or above, such
// as "## Success criteria", ends the phases; a deeper one does not).
func tickedPlan(text string, phase int) string {
	lines := strings.Split(text, "\n")
	in, inPhases, level, done, total := false, false, 0, 0, 0
	for i, l := range lines {
		if m := rePlanPhase.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[2])
			in, inPhases, level = n == phase, true, len(m[1])
			continue
		}
		if m := rePlanHeading.FindStringSubmatch(l); m != nil && inPhases && len(m[1]) <= level {
			in, inPhases = false, false
			continue
		}
		if m := rePlanTask.FindStringSubmatch(l); m != nil && inPhases {
			total++
			if in && m[1] == " " {
				l = strings.Replace(l, "[ ]", "[x]", 1)
				lines[i] = l
			}
			if rePlanTask.FindStringSubmatch(l)[1] != " " {
				done++
			}
			continue
		}
		if in {
			lines[i] = rePlanStatus.ReplaceAllString(l, "${1}complete${3}")
		}
	}
	for i, l := range lines {
		if rePlanProgress.MatchString(l) {
			lines[i] = rePlanProgress.ReplaceAllString(l, fmt.Sprintf("${1}%d${3}%d", done, total))
			break
		}
	}
	return strings.Join(lines, "\n")
}

// checkBases: the base workflows are what the rest of the tests call the
// standard workflow (reach_test's plans), and are read as they should be.
func checkBases(t *testing.T) {
	if got := tickedPlan(standardPlan["MASTER_PLAN.md"], 1); got != planPhase1Done {
		t.Fatalf("tickedPlan(standard plan, 1) differs from reach_test's planPhase1Done:\n%s", got)
	}
	if got := tickedPlan(planPhase1Done, 2); got != planAllDone {
		t.Fatalf("tickedPlan(phase 1 done, 2) differs from reach_test's planAllDone:\n%s", got)
	}
}

// testInProcessMatchesBinary runs the base workflow twice, in-process and
// through the orch-hook binary as hooks.json runs it (execHook), and
// requires the same answer, byte for byte, to every hook call: what
// Claude Code sees. Every variant then runs in-process.
func testInProcessMatchesBinary(t *testing.T) {
	root := t.TempDir()
	traces := map[string][]string{}
	for _, mode := range []string{"in-process", "binary"} {
		r := &run{t: t}
		if mode == "binary" {
			r.exec = func(getenv func(string) string, input []byte) (int, string, string) {
				stdout, stderr, err := execHook(r.work, input, map[string]string{"CLAUDE_PROJECT_DIR": getenv("CLAUDE_PROJECT_DIR"), "HOME": getenv("HOME")})
				code := 0
				if err != nil {
					code = -1
					if ee, ok := err.(interface{ ExitCode() int }); ok {
						code = ee.ExitCode()
					}
				}
				return code, stdout, stderr
			}
		}
		o := runScript(t, r, root, mode, variant{name: "base"})
		if o.class != classAccepted {
			t.Fatalf("%s: the base workflow is %s: %s", mode, o.class, o.detail)
		}
		for _, line := range r.trace {
			traces[mode] = append(traces[mode], strings.ReplaceAll(line, r.work, "$WORK"))
		}
	}
	a, b := traces["in-process"], traces["binary"]
	for i := range max(len(a), len(b)) {
		x, y := "(none)", "(none)"
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			t.Fatalf("hook call %d answered differently:\nin-process: %s\nbinary:     %s", i+1, x, y)
		}
	}
	if len(a) < 50 {
		t.Fatalf("only %d hook calls compared", len(a))
	}
	t.Logf("%d hook calls answered the same in-process and by the binary", len(a))
}
