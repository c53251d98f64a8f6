package coordinate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// Tests of the testing supervisor's stages (stages.go): the stage a
// worker's prompt names, each stage's result line, the stage order, and
// the stages' fields from the workers' own lines and writes.

func TestReadStage(t *testing.T) {
	cases := []struct {
		prompt, stage, problem string
	}{
		{"Stage: generation\nWrite unit tests for the limiter.", StageGeneration, ""},
		{"**Stage:** Test Execution", StageExecution, ""},
		{"### Stage 3 - Validation", StageValidation, ""},
		{"- stage = VALIDATE.", StageValidation, ""},
		{"Stage 2", StageExecution, ""},
		{"Stage: 1", StageGeneration, ""},
		{"Stage: `generation`", StageGeneration, ""},
		{"Stage: run the tests", StageExecution, ""},
		{"Stage: validation run — check the coverage", StageValidation, ""},
		{"Stage: execution (go test ./... and the generated tests)", StageExecution, ""},
		{"Stage: generation — unit tests\nThe execution stage follows.", StageGeneration, ""},
		{"Stage: execution, with go test ./...", StageExecution, ""},
		{"You run one stage of the tests.\nPrevious stage: generation\nStage: execution", StageExecution, ""},
		{"Test stage: generation\nStage: generation", StageGeneration, ""},
		{"```\nStage: generation\n```\nStage: execution", StageExecution, ""},
		// Refused, quoting the line.
		{"Run the tests", "", "the prompt has no `Stage: <stage>` line"},
		{"Stage: unit", "", `"Stage: unit" names no stage (the stages: generation -> execution -> validation)`},
		{"Stage: generation and execution", "", `"Stage: generation and execution" names 2 stages (generation and execution); one worker runs one stage`},
		{"Stage: generation, execution", "", "names 2 stages (generation and execution)"},
		{"Stage 2: generation", "", `"Stage 2: generation" names 2 stages (generation and execution)`},
		{"Stage 4: extra checks", "", "names stage 4; the stages are 1 to 3"},
		{"Stage: generation\nStage: execution", "", `"Stage: generation" and "Stage: execution" name two stages (generation and execution)`},
	}
	for _, tc := range cases {
		stage, problem := ReadStage(tc.prompt)
		if stage != tc.stage || !strings.Contains(problem, tc.problem) || (tc.problem == "") != (problem == "") {
			t.Errorf("ReadStage(%q) = %q, %q; want %q, %q", tc.prompt, stage, problem, tc.stage, tc.problem)
		}
	}
}

func TestParseTestsCreated(t *testing.T) {
	ab := []string{"tests/a_test.go", "tests/b_test.go"}
	cases := []struct {
		text    string
		n       int
		files   []string
		problem string
	}{
		{"Wrote them.\nTESTS_CREATED: 15 in tests/a_test.go, tests/b_test.go", 15, ab, ""},
		{"**Tests created:** 15 unit tests in 2 files: `tests/a_test.go` and `tests/b_test.go`.", 15, ab, ""},
		{"TESTS CREATED = 3 (tests/a_test.py)", 3, []string{"tests/a_test.py"}, ""},
		{"- tests_generated: 8 new tests across tests/int/a.py & tests/int/b.py", 8, []string{"tests/int/a.py", "tests/int/b.py"}, ""},
		{"TESTS_CREATED: 4 in a_test.go (1 file)", 4, []string{"a_test.go"}, ""},
		{"TESTS_CREATED: 2 in /home/user/project/tests/a_test.go, tests/a_test.go, tests/a_test.go", 2, []string{"/home/user/project/tests/a_test.go", "tests/a_test.go"}, ""},
		{"TESTS_CREATED: 15 in tests/a_test.go\nfixed one\nTESTS_CREATED: 16 in tests/a_test.go", 16, []string{"tests/a_test.go"}, ""},
		{"No tests could be written: no test framework.\nTESTS_CREATED: 0", 0, nil, ""},
		// Refused, quoting the line.
		{"Done.", 0, nil, "your report must end with `TESTS_CREATED: <number of tests> in <file>, <file>`"},
		{"TESTS_CREATED: several in tests/a.go", 0, nil, `"TESTS_CREATED: several in tests/a.go" does not start with the number of tests you wrote`},
		{"TESTS_CREATED: 15 in 3 files: a_test.go, b_test.go", 0, nil, "says 3 files but lists 2"},
		{"TESTS_CREATED: 15", 0, nil, "gives 15 tests but names no test file"},
		{"TESTS_CREATED: 15 in tests/a.go and the b package", 0, nil, `has "the" among its file paths`},
		{"TESTS_CREATED: 0 in tests/a.go", 0, nil, "gives 0 tests but names files"},
		{"TESTS_CREATED: 15 in https://example.com/x.go", 0, nil, "names no test file"},
		{"TESTS_CREATED: 2 in 2 files: a.go (3 files)", 0, nil, "gives two file counts (3 and 2)"},
	}
	for _, tc := range cases {
		n, files, problem := ParseTestsCreated(tc.text)
		if n != tc.n || !reflect.DeepEqual(files, tc.files) || !strings.Contains(problem, tc.problem) || (tc.problem == "") != (problem == "") {
			t.Errorf("ParseTestsCreated(%q) = %d, %q, %q; want %d, %q, %q", tc.text, n, files, problem, tc.n, tc.files, tc.problem)
		}
	}
}

func TestParseExecution(t *testing.T) {
	cov := func(f float64) *float64 { return &f }
	cases := []struct {
		text           string
		pass           bool
		passed, failed int
		coverage       *float64
		problem        string
	}{
		{"go test ./...\nTESTS: PASS (42 passed, 0 failed)", true, 42, 0, nil, ""},
		{"**Tests:** passed (42/42)", true, 42, 0, nil, ""},
		{"tests = FAIL (38 passed, 2 failed, coverage 81.5%)", false, 38, 2, cov(81.5), ""},
		{"TESTS: FAIL (38/40 passed)", false, 38, 2, nil, ""},
		{"TESTS: FAIL (40 tests, 2 failed).", false, 38, 2, nil, ""},
		{"## TESTS: PASS (42 tests)", true, 42, 0, nil, ""},
		{"TESTS: PASS (40 passed; 85% coverage)", true, 40, 0, cov(85), ""},
		{"The build broke.\nTESTS: FAIL (0 passed, 0 failed)", false, 0, 0, nil, ""},
		{"TESTS: FAIL (38 PASSED, 1 failed, 1 error, 2 skipped)", false, 38, 2, nil, ""},
		{"TESTS: PASS (40 passed)\nre-ran after the fix\nTESTS: FAIL (39 passed, 1 failed)", false, 39, 1, nil, ""},
		// Refused, quoting the line.
		{"TESTS: PASS", false, 0, 0, nil, `your result line "TESTS: PASS" does not give both the passed and the failed counts; end with the counts in parentheses`},
		{"TESTS: FAIL (2 failed)", false, 0, 0, nil, "does not give both the passed and the failed counts"},
		{"TESTS: FAIL (40 passed, 0 failed)", false, 0, 0, nil, "says FAIL but counts no failure among 40 passed"},
		{"TESTS: FAIL (30 passed, 31 passed, 2 failed)", false, 0, 0, nil, "gives two passed counts"},
		{"TESTS: PASS (40 passed, coverage 120%)", false, 0, 0, nil, "gives a coverage of 120%, which is not a percentage"},
		{"TESTS: PASS (40 passed, 2 failed)", false, 0, 0, nil, `your result line "TESTS: PASS (40 passed, 2 failed)" was not read: it names both verdicts`},
		{"All green.", false, 0, 0, nil, "your report must end with the result line `TESTS: PASS` or `TESTS: FAIL`"},
	}
	for _, tc := range cases {
		pass, counts, _, problem := ParseExecution(tc.text)
		if problem != "" || tc.problem != "" {
			if !strings.Contains(problem, tc.problem) || tc.problem == "" {
				t.Errorf("ParseExecution(%q): problem %q, want %q", tc.text, problem, tc.problem)
			}
			continue
		}
		if pass != tc.pass || counts.Passed != tc.passed || counts.Failed != tc.failed || !reflect.DeepEqual(counts.Coverage, tc.coverage) {
			t.Errorf("ParseExecution(%q) = %v, %+v; want %v, %d passed, %d failed, coverage %v", tc.text, pass, counts, tc.pass, tc.passed, tc.failed, tc.coverage)
		}
	}
}

func TestParseValidation(t *testing.T) {
	cases := []struct {
		text     string
		pass     bool
		coverage float64 // -1: none
		problem  string
	}{
		{"Every test type ran.\nVALIDATION: PASS", true, -1, ""},
		{"**Validation:** passed (coverage 85%)", true, 85, ""},
		{"VALIDATION: FAIL (coverage 61% is below the plan's 80%)", false, 61, ""},
		{"- validation = FAILED ❌", false, -1, ""},
		{"VALIDATION: maybe", false, -1, `your result line "VALIDATION: maybe" was not read`},
		{"VALIDATION: PASS (coverage 85%, line coverage 70%)", false, -1, "gives two coverage values"},
		{"Looks fine.", false, -1, "your report must end with the result line `VALIDATION: PASS` or `VALIDATION: FAIL`"},
	}
	for _, tc := range cases {
		pass, cov, _, problem := ParseValidation(tc.text)
		got := -1.0
		if cov != nil {
			got = *cov
		}
		if pass != tc.pass || got != tc.coverage || !strings.Contains(problem, tc.problem) || (tc.problem == "") != (problem == "") {
			t.Errorf("ParseValidation(%q) = %v, %v, %q; want %v, %v, %q", tc.text, pass, got, problem, tc.pass, tc.coverage, tc.problem)
		}
	}
}

// ---- the stages driven through Decide ----

const (
	ceTestSup   = "agent-ts"
	ceTestSupTU = "toolu_ts"
)

// toTest runs a full-implementation workflow to its test state: flat
// research, the plan, a flat implementation.
func (h *ceHarness) toTest() {
	h.t.Helper()
	h.toImplement()
	h.run(ImplementationExec, "", "Done.\nIMPLEMENTATION STATUS: COMPLETE")
	if h.c.Current != CTest {
		h.t.Fatalf("state %s, want test", h.c.Current)
	}
}

// toImplement runs a full-implementation workflow to its implement state.
func (h *ceHarness) toImplement() {
	h.t.Helper()
	r1, r2 := ceReports+"001_topic1.md", ceReports+"002_topic2.md"
	h.run(ResearchSpecialist, r1, "REPORT_CREATED: "+r1)
	h.run(ResearchSpecialist, r2, "REPORT_CREATED: "+r2)
	h.run(PlanArchitect, cePlan, "PLAN_CREATED: "+cePlan)
	if h.c.Current != CImplement {
		h.t.Fatalf("state %s, want implement", h.c.Current)
	}
}

// stageWorker launches a test-specialist for the testing supervisor; it
// returns the launch's verdict and reason.
func (h *ceHarness) stageWorker(tu, prompt string) gates.Outcome {
	return h.nested(TestSupervisor, ceTestSup, TestSpecialist, tu, prompt)
}

// stageReturn is a stage worker's SubagentStop, then its PostToolUse in
// the supervisor with the client's duration.
func (h *ceHarness) stageReturn(tu, aid, text string, durationMs int64) gates.Outcome {
	h.t.Helper()
	o := h.stop(TestSpecialist, aid, text)
	h.do(gates.Call{Event: gates.PostToolUse, Tool: "Agent", AgentID: ceTestSup, AgentType: gates.PluginPrefix + TestSupervisor, ToolUseID: tu, Status: "completed", LinkAgentID: aid, DurationMs: durationMs})
	return o
}

func mustAllow(t *testing.T, o gates.Outcome, what string) {
	t.Helper()
	if o.Verdict != gates.Allow || o.Reason != "" {
		t.Fatalf("%s: verdict %v, reason %q; want allowed", what, o.Verdict, o.Reason)
	}
}

func mustDeny(t *testing.T, o gates.Outcome, what string, parts ...string) {
	t.Helper()
	if o.Verdict != gates.Deny {
		t.Fatalf("%s: verdict %v; want denied", what, o.Verdict)
	}
	for _, p := range parts {
		if !strings.Contains(o.Reason, p) {
			t.Errorf("%s: reason %q lacks %q", what, o.Reason, p)
		}
	}
}

// testingSupText is a testing supervisor's SUPERVISOR_COMPLETE with the
// given totals, its context_tokens fitted to its size.
func testingSupText(total, passed, failed int, durationMs int64) string {
	res := SupervisorResult{SupervisorID: "testing_sub_supervisor_20250304_100000", Summary: "Unit and integration tests generated, run and validated.",
		KeyFindings: []string{"the limiter resets per window"}, TotalDurationMs: durationMs, TotalTests: total, TestsPassed: passed, TestsFailed: failed}
	for range 3 {
		b, _ := json.Marshal(res)
		res.Raw = string(b)
		res.ContextTokens = (res.AggregatedChars() + CharsPerToken - 1) / CharsPerToken
		res.Raw = ""
	}
	b, _ := json.Marshal(res)
	return "All three stages ran.\nSUPERVISOR_COMPLETE: " + string(b)
}

// TestStagesInOrder: a testing supervisor's stages run generation ->
// execution -> validation, each denied while the one before has not
// completed (the reason names what runs now and what is next); the stages
// are recorded from the workers' own lines and writes; the supervisor's
// totals are checked against them and the testing result is PASS.
func TestStagesInOrder(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.toTest()
	mustAllow(t, h.launch(TestSupervisor, ceTestSupTU, "Run the test stages"), "supervisor launch")

	// Execution before generation, validation before execution.
	mustDeny(t, h.stageWorker("toolu_x1", "Stage: execution\nRun go test ./..."), "execution first",
		"stage execution runs after stage generation, which has not run", "Now: no stage has started; next: stage generation (a worker prompt starting `Stage: generation`).")
	mustDeny(t, h.stageWorker("toolu_x2", "Stage: validation"), "validation first", "stage validation runs after stage execution, which has not run")
	mustDeny(t, h.stageWorker("toolu_x3", "Stage: generation and execution"), "two stages",
		"`Stage: generation`, `Stage: execution` or `Stage: validation`", `"Stage: generation and execution" names 2 stages`)
	if st := h.c.Supervisors[SupervisorKeyTesting]; st != nil && len(st.Stages) > 0 {
		t.Errorf("denied launches recorded stages: %+v", st.Stages)
	}

	// Generation: two workers in parallel.
	mustAllow(t, h.stageWorker("toolu_g1", "Stage: generation — unit tests"), "generation 1")
	mustAllow(t, h.stageWorker("toolu_g2", "**Stage:** generation (integration tests)"), "generation 2")
	st := h.c.Supervisors[SupervisorKeyTesting]
	if st == nil || len(st.Stages) != 1 || st.Stages[0].Status != WorkerInProgress || len(st.Stages[0].Workers) != 2 || st.Stages[0].Workers[0].Status != WorkerInProgress {
		t.Fatalf("after the generation launches: %+v", st)
	}
	mustDeny(t, h.stageWorker("toolu_x4", "Stage: execution"), "execution while generation runs",
		"stage execution waits for stage generation, which has not completed (2 workers of 2 still running).", "Now: stage generation is running (2 workers of 2 still running); next: wait for every generation worker to return, then stage execution (`Stage: execution`).")

	// Worker 1 writes two test files; another agent writes one too (a
	// research worker's write is not a test file of this worker).
	h.write(TestSpecialist, "agent-g1", "tests/unit/limiter_test.go")
	h.write(TestSpecialist, "agent-g1", "tests/unit/window_test.go")
	h.files["tests/other_test.go"] = 100
	h.write(ResearchSpecialist, "agent-other", "tests/other_test.go")
	mustAllow(t, h.stageReturn("toolu_g1", "agent-g1", "Unit tests written.\n**TESTS_CREATED:** 12 in `tests/unit/limiter_test.go`, `tests/unit/window_test.go`.", 8000), "generation 1 returns")
	mustDeny(t, h.stageWorker("toolu_x5", "Stage: execution"), "execution while one generation worker runs", "(1 worker of 2 still running)")
	h.write(TestSpecialist, "agent-g2", "tests/integration/limiter_int_test.go")
	mustAllow(t, h.stageReturn("toolu_g2", "agent-g2", "TESTS_CREATED: 3 in tests/integration/limiter_int_test.go", 12000), "generation 2 returns")

	// Execution, then generation is over.
	mustAllow(t, h.stageWorker("toolu_e1", "Stage 2: execution\nRun: go test ./..."), "execution")
	mustDeny(t, h.stageWorker("toolu_x6", "Stage: generation"), "generation again",
		"stage generation is over: stage execution has started, and the stages run once each, in order (generation -> execution -> validation).")
	mustAllow(t, h.stageReturn("toolu_e1", "agent-e1", "Ran 15 tests.\nTESTS: PASS (15 passed, 0 failed, coverage 84%)", 5000), "execution returns")

	mustAllow(t, h.stageWorker("toolu_v1", "Stage: validation"), "validation")
	mustAllow(t, h.stageReturn("toolu_v1", "agent-v1", "Coverage meets the plan.\nVALIDATION: PASS (coverage 84%)", 4000), "validation returns")

	st = h.c.Supervisors[SupervisorKeyTesting]
	if len(st.Stages) != 3 || st.WorkerCount != 4 {
		t.Fatalf("stages %+v, worker_count %d", st.Stages, st.WorkerCount)
	}
	gen, exe, val := st.Stages[0], st.Stages[1], st.Stages[2]
	for i, s := range []SupervisorStage{gen, exe, val} {
		if s.StageID != TestStages[i].ID || s.StageName != TestStages[i].Name || s.Status != WorkerCompleted {
			t.Errorf("stage %d: %s %q %s", i, s.StageID, s.StageName, s.Status)
		}
	}
	g1, g2 := gen.Workers[0], gen.Workers[1]
	if g1.WorkerID != "test_specialist_1" || g1.AgentID != "agent-g1" || *g1.TestsCreated != 12 || g1.DurationMs != 8000 ||
		!reflect.DeepEqual(g1.TestFiles, []string{"tests/unit/limiter_test.go", "tests/unit/window_test.go"}) {
		t.Errorf("generation worker 1: %+v", g1)
	}
	if *g2.TestsCreated != 3 || !reflect.DeepEqual(g2.TestFiles, []string{"tests/integration/limiter_int_test.go"}) || g2.DurationMs != 12000 {
		t.Errorf("generation worker 2: %+v", g2)
	}
	// The stage's duration: its wall-clock time on the hooks' clock, or
	// its longest worker when that is longer.
	if gen.DurationMs < 12000 {
		t.Errorf("generation took %d ms; its workers took 8000 and 12000 in parallel", gen.DurationMs)
	}
	e := exe.Workers[0]
	if *e.TestsPassed != 15 || *e.TestsFailed != 0 || *e.CoveragePercent != 84 || e.TestsCreated != nil || exe.DurationMs != 5000 {
		t.Errorf("execution worker %+v, stage %d ms", e, exe.DurationMs)
	}
	if val.Workers[0].Status != WorkerCompleted || val.DurationMs != 4000 {
		t.Errorf("validation %+v", val)
	}
	total := gen.DurationMs + exe.DurationMs + val.DurationMs

	// The supervisor's totals must agree with the stages' lines.
	o := h.stop(TestSupervisor, ceTestSup, testingSupText(16, 16, 0, total))
	if o.Verdict != gates.Block || !strings.Contains(o.Reason, "total_tests is 16, but your execution stage's TESTS lines count 15 (15 passed, 0 failed).") {
		t.Fatalf("wrong totals: %v %q", o.Verdict, o.Reason)
	}
	o = h.stop(TestSupervisor, ceTestSup, testingSupText(15, 15, 0, total))
	mustAllow(t, o, "supervisor")
	ctx := h.post(ceTestSupTU, ceTestSup).Context
	if !strings.HasPrefix(ctx, "[coordinate test] TESTS: PASS -> document") || h.c.Current != CDocument {
		t.Fatalf("testing result %q, state %s", ctx, h.c.Current)
	}
	agg := st.Entry().AggregatedMetadata
	if agg.TotalTests != 15 || agg.TestsPassed != 15 || agg.TestsFailed != 0 || agg.CoveragePercent != 84 || agg.TotalDurationMs != total {
		t.Errorf("aggregated %+v; want the observed totals (15, 15, 0, 84%%, %d ms)", agg, total)
	}
}

// TestStagesNotRun: a supervisor may not aggregate before every stage ran.
func TestStagesNotRun(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.toTest()
	mustAllow(t, h.launch(TestSupervisor, ceTestSupTU, "Run the test stages"), "supervisor launch")
	mustAllow(t, h.stageWorker("toolu_g1", "Stage: generation"), "generation")
	h.write(TestSpecialist, "agent-g1", "tests/limiter_test.go")
	mustAllow(t, h.stageReturn("toolu_g1", "agent-g1", "TESTS_CREATED: 4 in tests/limiter_test.go", 8000), "generation returns")
	o := h.stop(TestSupervisor, ceTestSup, testingSupText(0, 0, 0, 8000))
	want := "stage(s) execution, validation were not run: the stages run in order (generation -> execution -> validation), each after the one before completed; launch the next one (a worker prompt starting `Stage: execution`) before you aggregate."
	if o.Verdict != gates.Block || !strings.Contains(o.Reason, want) {
		t.Fatalf("aggregation after generation only: %v %q", o.Verdict, o.Reason)
	}
	if h.c.Current != CTest {
		t.Errorf("state %s", h.c.Current)
	}
}

// TestStageFailed: a failed stage ends the run: the next stage is denied
// naming it, and the orchestrator gets TESTS: FAIL with the stage's
// reason, whichever line the supervisor ends with; the totals stored are
// the observed ones.
func TestStageFailed(t *testing.T) {
	for _, end := range []string{"failed", "complete"} {
		t.Run(end, func(t *testing.T) {
			h := newCE(t, ceFlatDesc, ScopeFullImplementation)
			h.toTest()
			mustAllow(t, h.launch(TestSupervisor, ceTestSupTU, "Run the test stages"), "supervisor launch")
			mustAllow(t, h.stageWorker("toolu_g1", "Stage: generation"), "generation")
			h.write(TestSpecialist, "agent-g1", "tests/limiter_test.go")
			mustAllow(t, h.stageReturn("toolu_g1", "agent-g1", "TESTS_CREATED: 40 in tests/limiter_test.go", 8000), "generation returns")
			mustAllow(t, h.stageWorker("toolu_e1", "Stage: execution"), "execution")
			mustAllow(t, h.stageReturn("toolu_e1", "agent-e1", "Two fail.\nTESTS: FAIL (38 passed, 2 failed)", 5000), "execution returns")
			mustDeny(t, h.stageWorker("toolu_v1", "Stage: validation"), "validation after a failed stage",
				"stage execution failed: a failed stage ends the testing run", "Now: stage execution failed (test_specialist_2: 2 of 40 tests failed); next: end with SUPERVISOR_FAILED")
			text := `SUPERVISOR_FAILED: {"errors": ["execution: 2 tests fail"]}`
			if end == "complete" {
				text = testingSupText(40, 38, 2, 13000)
			}
			mustAllow(t, h.stop(TestSupervisor, ceTestSup, text), "supervisor")
			ctx := h.post(ceTestSupTU, ceTestSup).Context
			want := "[coordinate test] TESTS: FAIL -> debug | stage execution failed: test_specialist_2: 2 of 40 tests failed; next:"
			if !strings.HasPrefix(ctx, want) || h.c.Current != CDebug {
				t.Fatalf("testing result %q (state %s); want %q", ctx, h.c.Current, want)
			}
			st := h.c.Supervisors[SupervisorKeyTesting]
			if len(st.Stages) != 2 || st.Stages[1].Status != WorkerFailed || st.Stages[1].Workers[0].Error != "2 of 40 tests failed" {
				t.Errorf("stages %+v", st.Stages)
			}
			if a := st.AggregatedMetadata; a == nil || a.TotalTests != 40 || a.TestsPassed != 38 || a.TestsFailed != 2 || a.TotalDurationMs != st.Stages[0].DurationMs+5000 {
				t.Errorf("aggregated %+v", a)
			}
		})
	}
}

// TestStageWorkerOwnFiles: a generation worker's test files are the ones
// it wrote itself with its write tools: one another agent wrote, one the
// orchestrator wrote, or one no tool wrote blocks it once with the
// writer rule's reason, then fails its stage.
func TestStageWorkerOwnFiles(t *testing.T) {
	cases := []struct {
		name, want string
		setup      func(h *ceHarness)
	}{
		{"another agent's", "was written by test-specialist (agent agent-g2), not by this agent", func(h *ceHarness) {
			h.write(TestSpecialist, "agent-g2", "tests/a_test.go")
		}},
		{"the orchestrator's", "was not written with the Write tool by this agent", func(h *ceHarness) {
			h.files["tests/a_test.go"] = 300
			h.do(gates.Call{Event: gates.PostToolUse, Session: "sess-1", Tool: "Write", ToolUseID: "toolu_w", Path: ceRoot + "/tests/a_test.go"})
		}},
		{"a shell's", "was not written with the Write tool by this agent", func(h *ceHarness) { h.files["tests/a_test.go"] = 300 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newCE(t, ceFlatDesc, ScopeFullImplementation)
			h.toTest()
			mustAllow(t, h.launch(TestSupervisor, ceTestSupTU, "Run the test stages"), "supervisor launch")
			mustAllow(t, h.stageWorker("toolu_g1", "Stage: generation"), "generation 1")
			mustAllow(t, h.stageWorker("toolu_g2", "Stage: generation"), "generation 2")
			tc.setup(h)
			line := "TESTS_CREATED: 5 in tests/a_test.go"
			if o := h.stop(TestSpecialist, "agent-g1", line); o.Verdict != gates.Block || !strings.Contains(o.Reason, tc.want) {
				t.Fatalf("verdict %v, reason %q; want blocked: %q", o.Verdict, o.Reason, tc.want)
			}
			mustAllow(t, h.stop(TestSpecialist, "agent-g1", line), "the second try")
			st := h.c.Supervisors[SupervisorKeyTesting]
			if w := st.Stages[0].Workers[0]; w.Status != WorkerFailed || !strings.Contains(w.Error, tc.want) || w.TestsCreated != nil {
				t.Errorf("worker %+v", w)
			}
			mustDeny(t, h.stageWorker("toolu_e1", "Stage: execution"), "execution", "stage generation failed")
		})
	}
}

// TestTrackFilesAndMetadata: a track's files_modified are the project
// files its own worker wrote (another agent's write, or the
// orchestrator's, does not count; the workflow's artifacts are not the
// track's), its metadata the plan's phase, the worker's result and its
// times; the aggregate files_modified is held to the distinct files; a
// blocked track fails, and its dependents are not launched.
func TestTrackFilesAndMetadata(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.toImplement()
	if !reflect.DeepEqual(h.c.PhaseTitles, map[int]string{1: "Core", 2: "Polish"}) {
		t.Fatalf("phase titles %v", h.c.PhaseTitles)
	}
	mustAllow(t, h.launch(ImplSupervisor, "toolu_is", "Implement the plan in tracks"), "supervisor")
	sup := "agent-is"
	mustAllow(t, h.nested(ImplSupervisor, sup, ImplementationExec, "toolu_t1", "Track 1: Core"), "track 1")
	start := h.env.Now
	h.write(ImplementationExec, "agent-t1", "src/core.go")
	h.write(ImplementationExec, "agent-t1", "src/core_util.go")
	h.write(ImplementationExec, "agent-t1", "src/core.go") // the same file again
	h.write(ImplementationExec, "agent-t1", cePlan)        // the plan's checkboxes: an artifact
	h.files["src/other.go"] = 10
	h.write(DocWriter, "agent-dw", "src/other.go")
	h.files["src/main.go"] = 10
	h.do(gates.Call{Event: gates.PostToolUse, Session: "sess-1", Tool: "Edit", ToolUseID: "toolu_o", Path: ceRoot + "/src/main.go"})
	mustAllow(t, h.stop(ImplementationExec, "agent-t1", "Changed src/core.go.\nIMPLEMENTATION STATUS: COMPLETE"), "track 1 returns")
	h.do(gates.Call{Event: gates.PostToolUse, Tool: "Agent", AgentID: sup, ToolUseID: "toolu_t1", Status: "completed", LinkAgentID: "agent-t1", DurationMs: 30000})
	st := h.c.Supervisors[SupervisorKeyImplementation]
	tr := st.Tracks[0]
	if !reflect.DeepEqual(tr.FilesModified, []string{"src/core.go", "src/core_util.go"}) || tr.TrackID != "track_1" || tr.DurationMs != 30000 {
		t.Errorf("track 1: %+v", tr)
	}
	var md TrackMetadata
	if err := json.Unmarshal(tr.Metadata, &md); err != nil {
		t.Fatal(err)
	}
	want := TrackMetadata{Phase: 1, Title: "Core", Dependencies: []int{}, Result: "COMPLETE", StartedAt: start, EndedAt: md.EndedAt}
	if !reflect.DeepEqual(md, want) || !md.EndedAt.After(md.StartedAt) {
		t.Errorf("track 1 metadata %+v\nwant %+v", md, want)
	}

	// A blocked track: its dependents are not launched.
	h2 := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h2.toImplement()
	mustAllow(t, h2.launch(ImplSupervisor, "toolu_is", "Implement the plan in tracks"), "supervisor")
	mustAllow(t, h2.nested(ImplSupervisor, sup, ImplementationExec, "toolu_t1", "Track 1: Core"), "track 1")
	mustAllow(t, h2.stop(ImplementationExec, "agent-t1", "The schema is missing.\nIMPLEMENTATION STATUS: BLOCKED"), "track 1 blocked")
	mustDeny(t, h2.nested(ImplSupervisor, sup, ImplementationExec, "toolu_t2", "Track 2: Polish"), "track 2 after a blocked track 1", "track 2 depends on track(s) 1")
	b := h2.c.Supervisors[SupervisorKeyImplementation].Tracks[0]
	md = TrackMetadata{}
	_ = json.Unmarshal(b.Metadata, &md)
	if b.Status != WorkerFailed || md.Result != "BLOCKED" || md.Blocker != "The schema is missing." || b.FilesModified == nil {
		t.Errorf("blocked track %+v, metadata %+v", b, md)
	}

	// Track 2 runs; the aggregate files_modified is the distinct count.
	mustAllow(t, h.nested(ImplSupervisor, sup, ImplementationExec, "toolu_t2", "Track 2: Polish"), "track 2")
	h.write(ImplementationExec, "agent-t2", "src/polish.go")
	h.write(ImplementationExec, "agent-t2", "src/core.go")
	mustAllow(t, h.stop(ImplementationExec, "agent-t2", "IMPLEMENTATION STATUS: COMPLETE"), "track 2 returns")
	h.do(gates.Call{Event: gates.PostToolUse, Tool: "Agent", AgentID: sup, ToolUseID: "toolu_t2", Status: "completed", LinkAgentID: "agent-t2", DurationMs: 20000})
	implText := func(files int) string {
		res := SupervisorResult{SupervisorID: "implementation_sub_supervisor_20250304_100000", TracksCompleted: 2, FilesModified: files,
			Summary: "Core then polish.", TotalDurationMs: 50000, SequentialDurationMs: 50000}
		for range 3 {
			b, _ := json.Marshal(res)
			res.Raw = string(b)
			res.ContextTokens = (res.AggregatedChars() + CharsPerToken - 1) / CharsPerToken
			res.Raw = ""
		}
		b, _ := json.Marshal(res)
		return "SUPERVISOR_COMPLETE: " + string(b)
	}
	o := h.stop(ImplSupervisor, sup, implText(5))
	if o.Verdict != gates.Block || !strings.Contains(o.Reason, "files_modified is 5, but your tracks' workers wrote 3 distinct files with their write tools (src/core.go, src/core_util.go, src/polish.go).") {
		t.Fatalf("files_modified 5: %v %q", o.Verdict, o.Reason)
	}
	mustAllow(t, h.stop(ImplSupervisor, sup, implText(3)), "supervisor")
	if agg := st.Entry().AggregatedMetadata; agg.FilesModified != 3 || h.c.Current != CTest {
		t.Errorf("aggregate files_modified %d, state %s", agg.FilesModified, h.c.Current)
	}
}

// TestProjectWritesRecorded: project writes are recorded only for a
// running supervisor's track or generation worker, bounded in path
// length; a flat agent's project write costs nothing.
func TestProjectWritesRecorded(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.toImplement()
	if o := h.write(ImplementationExec, "agent-flat", "src/x.go"); o.Changed {
		t.Errorf("a write with no supervised worker running was recorded")
	}
	mustAllow(t, h.launch(ImplSupervisor, "toolu_is", "tracks"), "supervisor")
	mustAllow(t, h.nested(ImplSupervisor, "agent-is", ImplementationExec, "toolu_t1", "Track 1: Core"), "track 1")
	if o := h.write(ImplementationExec, "agent-t1", "src/x.go"); !o.Changed || !hasRecord(o, gates.RecUpdate, "write recorded: src/x.go") {
		t.Errorf("the track worker's write was not recorded: %+v", o)
	}
	long := "src/" + strings.Repeat("d/", MaxRecordedPath/2) + "x.go"
	if o := h.write(ImplementationExec, "agent-t1", long); o.Changed || !hasRecord(o, gates.RecError, fmt.Sprintf("is longer than %d bytes", MaxRecordedPath)) {
		t.Errorf("a path over the bound: %+v", o)
	}
	if got := h.c.projectFiles("agent-t1"); !reflect.DeepEqual(got, []string{"src/x.go"}) {
		t.Errorf("project files %v", got)
	}
}
