package orchestrate

// Red-team pass over the changes since 6bd56b4 (result-line grammar, the
// nudge, the FAIL way forward, implementer prompts, strict plan reading,
// 4c bookkeeping, plan repair, Bash reads).
//
// Each TestRedteam* test states what orch-hook should do. A test whose
// comment says FINDING failed when it was written (the finding, fixed
// since: it now guards the fix); a test marked HELD shows an attack that
// held already.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// ---- helpers ----

func rtTask(n int, files, ux, extra string) string {
	return fmt.Sprintf("# Task %02d\n\n%sFiles: %s\nrequires_ux_dx_review: %s\n\n## Acceptance\n- it works\n", n, extra, files, ux)
}

// rtValidates parses files as orch-hook does and returns the plan when it
// validates (nil and the error otherwise).
func rtValidates(files PlanFiles) (*Plan, error) {
	p := ParsePlan(files)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

const rtMaster3 = "# Plan\n\nProgress: 0/3\n\n## Phase 1: Core\nStatus: pending\n\n- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n- [ ] Task 03: CLI\n"

func rtFiles3(master, t1, t2, t3 string) PlanFiles {
	return PlanFiles{MasterPlan: []byte(master), "task-01-parser.md": []byte(t1), "task-02-format.md": []byte(t2), "task-03-cli.md": []byte(t3)}
}

// ======================================================================
// 1. Result lines
// ======================================================================

// FINDING (misread -> bypass of the quality gate): the grammar reads a
// result line only when the owed key starts the line. A later line that
// carries the key with a qualifier or a prefix ("**Final** PHASE GATE
// STATUS: FAIL", "Correction: PHASE GATE STATUS: FAIL", "RESULT: PHASE
// GATE STATUS: FAIL", "(a) PHASE GATE STATUS: FAIL") is skipped without a
// word, and an earlier "PHASE GATE STATUS: PASS" decides. README: "The
// last line carrying an owed key decides; if that line is refused, an
// earlier one does not stand in for it."
func TestRedteamResultLaterQualifiedVerdictSkipped(t *testing.T) {
	gate := OwedLines(JobGate)
	for _, last := range []string{
		"**Final** PHASE GATE STATUS: FAIL",
		"FINAL PHASE GATE STATUS: FAIL",
		"UPDATED PHASE GATE STATUS: FAIL",
		"REVISED PHASE GATE STATUS: FAIL",
		"**Correction:** PHASE GATE STATUS: FAIL",
		"EDIT: PHASE GATE STATUS: FAIL",
		"RESULT: PHASE GATE STATUS: FAIL",
		"→ PHASE GATE STATUS: FAIL",
		"(a) PHASE GATE STATUS: FAIL",
		"- [x] PHASE GATE STATUS: FAIL",
		"PHASE 1 GATE STATUS: FAIL",
		"PHASE GATE STATUS 2: FAIL",
	} {
		text := "Ran the suite: all green.\nPHASE GATE STATUS: PASS\n\nRe-ran it; the formatter test fails now.\n" + last + "\nFAILING TASKS: 02"
		if got := gates.ReadResult(text, gate); got.Form == LineGatePass {
			t.Errorf("report ending %q was read as %q: the agent's last verdict (FAIL) was skipped for an earlier PASS, silently", last, got.Form)
		}
	}
	// The same through the workflow: the phase moved to 4c (Gate 1 passed).
	// Now the line is quoted back once (the nudge), and the answer decides.
	h := driveTo(t, S4b)
	r := h.launch(Quality, "Quality gate for phase 1")
	o := r.stop("Ran the suite: all green.\nPHASE GATE STATUS: PASS\n\nRe-ran it; the formatter test fails now.\n**Final** PHASE GATE STATUS: FAIL\nFAILING TASKS: 02")
	wantBlock(t, o, 0, `your result line "**Final** PHASE GATE STATUS: FAIL" was not read`)
	r.finish("PHASE GATE STATUS: FAIL\nFAILING TASKS: 02")
	h.expect(SF1)
	if h.w.Current == S4c {
		t.Errorf("4b PASS applied (now %s) although the quality gate's final verdict was FAIL", h.w.Current)
	}
}

// The reverse is the same misread: a final PASS after an earlier FAIL is
// read as FAIL (a fix iteration spent on a phase that passed).
func TestRedteamResultLaterQualifiedPassSkipped(t *testing.T) {
	text := "First run: the formatter test fails.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02\n\nFixed the flaky fixture and re-ran everything.\nFINAL PHASE GATE STATUS: PASS"
	if got := gates.ReadResult(text, OwedLines(JobGate)); got.Form == LineGateFail {
		t.Errorf("read as %q; the agent's last verdict was PASS (should be read as PASS or refused, quoted)", got.Form)
	}
}

// FINDING (misread): a PASS whose parenthetical says tests fail. README:
// "a line naming both verdicts (`PASS (fail on rerun)`, `PASS (11
// passed, 1 failed)`) ... refused". These forms say the same and pass.
func TestRedteamResultPassWithFailuresInParens(t *testing.T) {
	for _, line := range []string{
		"PHASE GATE STATUS: PASS (failing)",
		"PHASE GATE STATUS: PASS (fails on CI)",
		"PHASE GATE STATUS: PASS (failures: 2)",
		"PHASE GATE STATUS: PASS (2 tests did not pass)",
		"PHASE GATE STATUS: PASS (did not pass)",
		"PHASE GATE STATUS: PASS (NOT PASS)",
		"PHASE GATE STATUS: PASS (11/12 tests)",
		"PHASE GATE STATUS: PASS (3 tests broken)",
	} {
		if got := gates.ReadResult("Summary.\n"+line, OwedLines(JobGate)); got.Form == LineGatePass {
			t.Errorf("%q read as PASS; it says tests fail (should be refused as naming both verdicts)", line)
		}
	}
}

// FINDING (misread, low): marks that say the opposite but are not in the
// lists: 👎 and ✕ (U+2715) after PASS, 👍 after FAIL.
func TestRedteamResultOppositeMarksNotListed(t *testing.T) {
	for _, tc := range []struct{ line, not string }{
		{"PHASE GATE STATUS: PASS 👎", LineGatePass},
		{"PHASE GATE STATUS: PASS ✕", LineGatePass},
		{"PHASE GATE STATUS: PASS ⛌", LineGatePass},
		{"PHASE GATE STATUS: FAIL 👍", LineGateFail},
	} {
		if got := gates.ReadResult(tc.line, OwedLines(JobGate)); got.Form == tc.not {
			t.Errorf("%q read as %q; its mark says the opposite", tc.line, got.Form)
		}
	}
}

// FINDING (misread): a cross mark is read as the opposite verdict only
// after PASS; after COMPLETE, or after a token line, it is decoration.
func TestRedteamResultCrossMarkOnOtherVerdicts(t *testing.T) {
	for _, tc := range []struct {
		job, text, not string
	}{
		{JobImplement, "Parser half done, tests red.\nIMPLEMENTATION STATUS: COMPLETE ❌", gates.LineImplComplete},
		{JobClarify, "The export format is unknown.\nREQUIREMENTS_CLEAR ❌", LineClear},
		{JobAnalysis, "Could not find the cause.\nFAILURE_ANALYSIS: COMPLETE ❌", LineAnalysis},
	} {
		if got := gates.ReadResult(tc.text, OwedLines(tc.job)); got.Form == tc.not {
			t.Errorf("%q read as %q; its mark says the opposite", tc.text, got.Form)
		}
	}
}

// FINDING (misread): a fenced example after the verdict decides (here the
// template the agent pasted as a reminder).
func TestRedteamResultFencedExampleDecides(t *testing.T) {
	text := "The formatter test fails.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02\n\nFor the record, the format I was asked to end with:\n```\nPHASE GATE STATUS: PASS\n```"
	if got := gates.ReadResult(text, OwedLines(JobGate)); got.Form == LineGatePass {
		t.Errorf("read as PASS: the line inside the fenced example decided over the report's FAIL")
	}
}

// FINDING (misread, coordinate): "TESTS: PASS" then "INTEGRATION TESTS:
// FAIL" reads as PASS: the later line is a different key, skipped.
func TestRedteamCoordTestsQualifiedKey(t *testing.T) {
	text := "Unit suite done.\nTESTS: PASS\n\nThen the integration suite:\nINTEGRATION TESTS: FAIL"
	if got := gates.FindResult(text, []string{testsPass, testsFail}); got == testsPass {
		t.Errorf("read as %q although the integration tests, reported last, fail", got)
	}
}

// HELD: the refused forms the README lists stay refused, and a decorated
// last line still wins.
func TestRedteamResultHeld(t *testing.T) {
	gate := OwedLines(JobGate)
	for _, text := range []string{
		"PHASE GATE STATUS: PASS\n| PHASE GATE STATUS | FAIL |",
		"PHASE GATE STATUS: PASS\nPHASE GATE STATUS (re-run): FAIL",
		"PHASE GATE STATUS: PASS\nPHASE GATE STATUS - FAIL",
		"PHASE GATE STATUS: PASS → FAIL",
		"PHASE GATE STATUS: PASS; FAIL",
		"PHASE GATE STATUS: PASS\u00a0FAIL",
		"PHASE GATE STATUS: PASS\rPHASE GATE STATUS: FAIL",
		"PHASE GATE STATUS: PASS (2 errored)",
		"PHASE GATE STATUS: PASS (lint failed)",
		"PHASE GATE STATUS: ❌ PASS",
		"PHASE GATE STATUS: ~~FAIL~~ PASS",
	} {
		if got := gates.ReadResult(text, gate); got.Form == LineGatePass {
			t.Errorf("%q read as PASS", text)
		}
	}
	if got := gates.ReadResult("PHASE GATE STATUS: PASS\n**PHASE GATE STATUS:** `FAIL` ❌", gate); got.Form != LineGateFail {
		t.Errorf("decorated last FAIL read as %q", got.Form)
	}
}

// ======================================================================
// 2. The nudge
// ======================================================================

// HELD: a background gate that FAILs without FAILING TASKS is nudged once;
// its answer holding only the missing line completes the verdict with the
// earlier report; a second miss is applied as it stands (no loop).
func TestRedteamNudgeHeld(t *testing.T) {
	h := driveTo(t, S4b)
	r := h.launch(Quality, "Quality gate for phase 1")
	o := r.stop("Formatter test fails.\nPHASE GATE STATUS: FAIL")
	wantBlock(t, o, 0, "FAILING TASKS: NN, NN")
	o = r.stop("FAILING TASKS: 02")
	wantAllow(t, o)
	n := r.notify("FAILING TASKS: 02")
	h.expect(SF1)
	if !contains(h.w.FailingTasks, 2) || !strings.Contains(n.Context, "Formatter test fails") {
		t.Errorf("failing %v, context %q", h.w.FailingTasks, n.Context)
	}
	// A nudged implementer that answers with prose again closes as
	// unrecognized and may be relaunched: no wedge.
	h2 := driveTo(t, S4a)
	r2 := h2.launch(Implementer, implPrompt(1))
	wantBlock(t, r2.stop("I wrote the parser."), 0)
	wantAllow(t, r2.stop("Done."))
	r2.notify("Done.")
	wantAllow(t, h2.start(Implementer, implPrompt(1)).launch)
}

// ======================================================================
// 3. The FAIL way forward
// ======================================================================

// FINDING (misread, low): a parenthetical in FAILING TASKS is dropped even
// when it names a task ("01 (and 02)"): only Task 01 is fixed, silently.
func TestRedteamFailingTasksParenNamesTask(t *testing.T) {
	for _, v := range []string{"01 (and 02)", "01 (also breaks Task 02)"} {
		v2, _, _ := gates.KeyLine("FAILING TASKS: "+v, gates.KeyFailingTasks)
		nums, _, ok, _ := taskRefs(v2)
		if ok && !contains(nums, 2) {
			t.Errorf("FAILING TASKS: %s read as %v; Task 02 is named too (read it, or refuse the line)", v, nums)
		}
	}
}

// HELD: the fix limit holds whatever the gate names (a later-phase task,
// no task, garbage): the third FAIL escalates.
func TestRedteamFixLimitHeld(t *testing.T) {
	h := driveTo(t, S4b)
	texts := []string{
		"PHASE GATE STATUS: FAIL\nFAILING TASKS: 05",
		"PHASE GATE STATUS: FAIL\nFAILING TASKS: none",
		"PHASE GATE STATUS: FAIL\nFAILING TASKS: all of them",
	}
	for i, text := range texts {
		h.run(Quality, "Quality gate", text)
		if i < len(texts)-1 {
			h.expect(SF1)
			h.analysis()
			h.expect(SF2)
			h.fixAll()
			h.expect(S4b)
		}
	}
	h.expect(Escalated)
}

// ======================================================================
// 4. Implementer prompts
// ======================================================================

// FINDING (misread -> dependency bypass): a prompt line naming several
// tasks with one "task" word is read as the first task only. README:
// "Refused ... a line naming two tasks (`Task 01 and Task 02: ...`)".
func TestRedteamPromptNamesSeveralTasks(t *testing.T) {
	for _, p := range []string{
		"Implement task 01, 03 and 02",
		"Implement Task 01 (Parser) and 03 (CLI flag)",
		"Task 01 plus Task 03: parser and CLI flag",
		"Task 01 then Task 03",
		"Task 01; Task 03",
		"Task 01 as well as Task 03",
	} {
		if n, _ := TaskOfLaunch(p, ""); n != 0 {
			t.Errorf("prompt %q read as Task %02d alone; it names several tasks (should be refused)", p, n)
		}
	}
	// Through the workflow: Task 03 depends on Task 01 (twoPhases), yet a
	// launch for "task 01, 03 and 02" is allowed while nothing returned.
	h := driveTo(t, S4a)
	if o := h.start(Implementer, "Implement task 01, 03 and 02").launch; o.Verdict == gates.Allow {
		t.Errorf("a launch for Tasks 01, 03 and 02 was allowed as Task 01 (Task 03 depends on 01; Task 02 runs next to it)")
	}
}

// FINDING (cosmetic / wrong instruction): "Task_01: Parser" and
// "task01: parser" are refused as naming "more than one task".
func TestRedteamPromptUnderscoreHeaderMessage(t *testing.T) {
	for _, p := range []string{"Task_01: Parser", "TASK_01: Parser", "task01: parser"} {
		n, problem := TaskOfLaunch(p, "")
		if n == 0 && strings.Contains(problem, "more than one task") {
			t.Errorf("prompt %q refused with %q: it names one task (read it as Task 01, or say what to write)", p, problem)
		}
	}
}

// HELD: context before the header, a description naming another task, two
// headers.
func TestRedteamPromptHeld(t *testing.T) {
	if n, _ := TaskOfLaunch("Context: Task 02 formats this\nTask 01: Parser", ""); n != 1 {
		t.Errorf("got %d", n)
	}
	if n, _ := TaskOfLaunch("Task 01: Parser", "Task 02"); n != 0 {
		t.Errorf("prompt 01 / description 02 read as %d", n)
	}
	if n, _ := TaskOfLaunch("## Task 01\nstuff\n## Task 02\nmore", ""); n != 0 {
		t.Errorf("two headers read as %d", n)
	}
	if n, _ := TaskOfLaunch("Implement tasks 01 and 02", ""); n != 0 {
		t.Errorf("plural read as %d", n)
	}
}

// ======================================================================
// 5. Plans read strictly
// ======================================================================

// FINDING (misread -> 5b skipped, tasks dropped): indented checkboxes
// directly under a phase heading (no task line above them) are dropped
// without a word: the phase has no task, its task files (one requiring
// UX/DX review) are ignored, the workflow goes 5a PASS -> 6 and Task 03
// is never implemented nor reviewed. The README refuses a checkbox outside
// every phase "unless it reads as one: then it fails validation, since it
// would be dropped"; the same holds here.
func TestRedteamPlanIndentedTasksDropped(t *testing.T) {
	master := "# Plan\n\nProgress: 0/3\n\n## Phase 1: Core\nStatus: pending\n\n- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n\n## Phase 2: Login form\nStatus: pending\n\n  - [ ] Task 03: Login form\n"
	files := PlanFiles{
		MasterPlan:          []byte(master),
		"task-01-parser.md": []byte(rtTask(1, "src/parser.go", "false", "")),
		"task-02-format.md": []byte(rtTask(2, "src/format.go", "false", "")),
		"task-03-login.md":  []byte(rtTask(3, "web/login.tsx", "true", "")),
	}
	h := newHarness(t)
	h.analyst(LineClear)
	h.files = PlanFiles{}
	h.rtPlan(files)
	if h.w.Current != S3 {
		return // refused: the attack held
	}
	t.Errorf("plan validated with Task 03 (indented under ## Phase 2) dropped:\n%s", h.w.Plan.Describe())
	h.approve()
	h.implementPhase()
	h.gate(true)
	h.tick()
	if h.w.Current == S5a {
		h.final(true)
		if h.w.Current == S6 {
			t.Errorf("5a PASS -> 6: 5b skipped although task-03-login.md says requires_ux_dx_review: true, and Task 03 was never implemented")
		}
	}
}

// FINDING (misread): other task lines a reader takes for tasks are dropped
// without a refusal: a list item without a checkbox, a task heading, a
// nested checkbox that reads as a task, a table of tasks, and a task file
// MASTER_PLAN.md does not list.
func TestRedteamPlanTaskLinesDropped(t *testing.T) {
	t1, t2, t3 := rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", ""), rtTask(3, "c.go", "true", "")
	for name, master := range map[string]string{
		"list item without a checkbox": "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n- [ ] Task 02: b\n- Task 03: c\n",
		"task heading":                 "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n- [ ] Task 02: b\n### Task 03: c\n",
		"nested checkbox task":         "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n- [ ] Task 02: b\n  - [ ] Task 03: c\n",
		"table of tasks":               "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n- [ ] Task 02: b\n\n## Phase 2: UI\n| Task | Title |\n|---|---|\n| 03 | c |\n",
		"task file not listed":         "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n- [ ] Task 02: b\n",
	} {
		p, err := rtValidates(rtFiles3(master, t1, t2, t3))
		if err == nil && p.PhaseOf(3) == nil {
			// An unlisted task file is ignored but shown to the user before
			// the approval (a planner cannot delete the files of tasks it
			// dropped); every other form is refused.
			if d := p.Snapshot().Describe(); name != "task file not listed" || !strings.Contains(d, "Ignored (task files MASTER_PLAN.md does not list): task-03-cli.md") {
				t.Errorf("%s: the plan validates without Task 03 (task-03-cli.md, requires_ux_dx_review: true, is ignored):\n%s", name, d)
			}
		}
	}
}

// FINDING (misread -> dependency bypass): dependency forms that are
// neither read nor refused. README: "a MASTER_PLAN.md line that states a
// dependency in another form (`The docs depend on Task 01`)" fails
// validation; these pass with Task 03 depending on nothing.
func TestRedteamPlanDependencyFormsIgnored(t *testing.T) {
	t1, t2 := rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", "")
	plain3 := rtTask(3, "c.go", "false", "")
	cases := map[string]PlanFiles{}
	for name, title := range map[string]string{
		"title (depends: 01)": "CLI (depends: 01)",
		"title (deps: 01)":    "CLI (deps: 01)",
		"title — after 01":    "CLI — after 01",
		"title [after 01]":    "CLI [after 01]",
		"title , requires 01": "CLI, requires 01",
	} {
		cases[name] = rtFiles3(strings.Replace(rtMaster3, "Task 03: CLI", "Task 03: "+title, 1), t1, t2, plain3)
	}
	for name, tail := range map[string]string{
		"line 03 depends on 01":       "\n03 depends on 01\n",
		"arrow Task 01 → Task 03":     "\n### Order\nTask 01 → Task 03\n",
		"arrow Task 01 -> Task 03":    "\n### Order\nTask 01 -> Task 03\n",
		"## Dependencies list 03: 01": "\n## Dependencies\n- 03: 01\n",
		"## Dependencies table":       "\n## Dependencies\n| Task | Depends on |\n|---|---|\n| 03 | 01 |\n",
		"mermaid graph T01 --> T03":   "\n```mermaid\ngraph TD\n  T01 --> T03\n```\n",
	} {
		cases[name] = rtFiles3(rtMaster3+tail, t1, t2, plain3)
	}
	for name, extra := range map[string]string{
		"file Prerequisites: Task 01":  "Prerequisites: Task 01\n",
		"file Requires: Task 01":       "Requires: Task 01\n",
		"file After: Task 01":          "After: Task 01\n",
		"file Depends on Task 01":      "Depends on Task 01\n",
		"file **Depends on** Task 01":  "**Depends on** Task 01\n",
		"file prose must run after 01": "This task must run after Task 01 (it uses its parser).\n",
		"file Depends On: none (but…)": "Depends On: none (but needs Task 01's parser)\n",
	} {
		cases[name] = rtFiles3(rtMaster3, t1, t2, rtTask(3, "c.go", "false", extra))
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		p, err := rtValidates(cases[name])
		if err == nil && !contains(p.Tasks[3].DependsOn, 1) {
			t.Errorf("%s: validates with Task 03 depending on %v (a reader sees Task 01)", name, p.Tasks[3].DependsOn)
		}
	}
}

// The consequence, through the workflow: "(depends: 01)" on Task 03's line
// is ignored, and Task 03 runs while Task 01 is still in flight.
func TestRedteamPlanDependsColonParallelLaunch(t *testing.T) {
	master := strings.Replace(rtMaster3, "Task 03: CLI", "Task 03: CLI (depends: 01)", 1)
	files := rtFiles3(master, rtTask(1, "src/parser.go", "false", ""), rtTask(2, "src/format.go", "false", ""), rtTask(3, "src/cli.go", "false", ""))
	h := newHarness(t)
	h.analyst(LineClear)
	h.rtPlan(files)
	if h.w.Current != S3 {
		return // refused: held
	}
	h.approve()
	h.launch(Implementer, "Task 01: Parser")
	if o := h.start(Implementer, "Task 03: CLI").launch; o.Verdict == gates.Allow {
		t.Errorf("Task 03 (\"CLI (depends: 01)\") launched while Task 01 is in flight")
	}
}

// FINDING (misread -> two tasks change one file in parallel): the Files
// reader keeps spellings a reader takes for other files or for several
// files, and the overlap check compares strings.
func TestRedteamPlanFilesMisread(t *testing.T) {
	cases := []struct {
		name, t3 string
		want     string // a file Task 03 changes, as a reader sees it
	}{
		{"Create:/Modify: items", "# T\n## Files\n- Create: src/new.go\n- Modify: b.go\n\nrequires_ux_dx_review: false\n", "b.go"},
		{"two paths in one item", "# T\nFiles:\n- c.go, b.go\n\nrequires_ux_dx_review: false\n", "b.go"},
		{"semicolons", "# T\nFiles: c.go;b.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"semicolon and space", "# T\nFiles: b.go; c.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"second file in parens", "# T\nFiles: c.go (and b.go)\nrequires_ux_dx_review: false\n", "b.go"},
		{"Test files:", "# T\nFiles: c.go\nTest files: b.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"Files to delete:", "# T\nFiles: c.go\nFiles to delete: b.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"Files to update:", "# T\nFiles: c.go\nFiles to update: b.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"list item with prose", "# T\nFiles:\n- c.go\n- also touches b.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"bare line after list", "# T\nFiles:\n- c.go\nb.go\nrequires_ux_dx_review: false\n", "b.go"},
		{"./b.go", "# T\nFiles: ./b.go\nrequires_ux_dx_review: false\n", "b.go"},
	}
	for _, tc := range cases {
		p, err := rtValidates(rtFiles3(rtMaster3, rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", ""), tc.t3))
		if err != nil {
			continue // refused: held
		}
		if !containsString(p.Tasks[3].Files, tc.want) {
			t.Errorf("%s: Task 03's files read as %q; a reader sees %s among them (read it, or refuse the line)", tc.name, p.Tasks[3].Files, tc.want)
		}
	}
}

// The consequence, through the workflow: Task 02 changes b.go, Task 03
// "./b.go"; both run at once.
func TestRedteamPlanFilesDotSlashParallel(t *testing.T) {
	files := rtFiles3(rtMaster3, rtTask(1, "src/a.go", "false", ""), rtTask(2, "src/b.go", "false", ""), rtTask(3, "./src/b.go", "false", ""))
	h := newHarness(t)
	h.analyst(LineClear)
	h.rtPlan(files)
	h.expect(S3)
	h.approve()
	h.launch(Implementer, "Task 02: Formatter")
	if o := h.start(Implementer, "Task 03: CLI").launch; o.Verdict == gates.Allow {
		t.Errorf("Task 03 (Files: ./src/b.go) launched while Task 02 (Files: src/b.go) is in flight")
	}
}

// FINDING (bypass of the LIGHTWEIGHT limit): a task file's "Files:
// a.go;b.go;c.go" (or one list item "a.go, b.go, c.go") counts as one
// file, so a follow-up touching three files passes "fewer than 3".
func TestRedteamLightweightFileLimit(t *testing.T) {
	for _, files := range []string{"Files: src/a.go;src/b.go;src/c.go\n", "Files:\n- src/a.go, src/b.go, src/c.go\n"} {
		h := driveTo(t, Complete)
		if _, err := FollowUp(h.w, "lightweight", "Rework the navigation", h.env()); err != nil {
			t.Fatal(err)
		}
		body := "# Task 06: nav\n\n" + files + "\nrequires_ux_dx_review: false\n"
		if o := h.writeFile(writeCall(tasksPath(taskFileName(6)), body)); o.Verdict != gates.Allow {
			t.Fatalf("task file: %s", o.Reason)
		}
		master := strings.TrimRight(string(h.files[MasterPlan]), "\n") + "\n\n## Phase 3: Nav\nStatus: pending\n\n- [ ] Task 06: nav\n"
		if o := h.writeFile(writeCall(tasksPath(MasterPlan), master)); o.Verdict != gates.Allow {
			t.Fatalf("append: %s", o.Reason)
		}
		if o := h.start(Implementer, implPrompt(6)).launch; o.Verdict == gates.Allow {
			t.Errorf("LIGHTWEIGHT follow-up with %q (three files) was allowed", strings.TrimSpace(files))
		}
	}
}

// FINDING (misread, low): requires_ux_dx_review false, and a second
// spelling of the flag saying yes; or the flag true in prose after a
// fenced example saying false. Read false without a refusal.
func TestRedteamPlanUXFlagContradictions(t *testing.T) {
	for name, t3 := range map[string]string{
		"two spellings": "# T\nFiles: c.go\nrequires_ux_dx_review: false\nUX review required: yes\n",
		"front matter":  "---\nrequires_ux_dx_review: false\n---\n# T\nFiles: c.go\n\nUX/DX review: required (the login form changes)\n",
	} {
		p, err := rtValidates(rtFiles3(rtMaster3, rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", ""), t3))
		if err == nil && !p.Tasks[3].UXDX {
			t.Errorf("%s: Task 03 read as requires_ux_dx_review: false without a refusal", name)
		}
	}
}

// HELD: refusals the README promises.
func TestRedteamPlanHeld(t *testing.T) {
	t1, t2 := rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", "")
	for name, f := range map[string]PlanFiles{
		"prose dependency line":   rtFiles3(rtMaster3+"\nThe CLI depends on Task 01.\n", t1, t2, rtTask(3, "c.go", "false", "")),
		"task outside a phase":    rtFiles3(rtMaster3+"\n## Success criteria\n- [ ] Task 04: extra\n", t1, t2, rtTask(3, "c.go", "false", "")),
		"[-] checkbox":            rtFiles3(strings.Replace(rtMaster3, "- [ ] Task 03", "- [-] Task 03", 1), t1, t2, rtTask(3, "c.go", "false", "")),
		"two tasks on a line":     rtFiles3(strings.Replace(rtMaster3, "Task 03: CLI", "Task 03 and Task 04: CLI", 1), t1, t2, rtTask(3, "c.go", "false", "")),
		"ux true|false":           rtFiles3(rtMaster3, t1, t2, rtTask(3, "c.go", "true|false", "")),
		"Files: x and y":          rtFiles3(rtMaster3, t1, t2, "# T\nFiles: c.go and b.go\nrequires_ux_dx_review: false\n"),
		"dep on later phase":      rtFiles3(rtMaster3+"\n## Phase 2: more\n- [ ] Task 04: d\n", t1, t2, rtTask(3, "c.go", "false", "Depends On: 04\n")),
		"cycle":                   rtFiles3(rtMaster3, rtTask(1, "a.go", "false", "Depends On: 03\n"), t2, rtTask(3, "c.go", "false", "Depends On: 01\n")),
		"Depends On: 01 or 02":    rtFiles3(rtMaster3, t1, t2, rtTask(3, "c.go", "false", "Depends On: 01 or 02\n")),
		"deps heading with prose": rtFiles3(rtMaster3, t1, t2, rtTask(3, "c.go", "false", "## Dependencies\nNeeds Task 01 first.\n\n")),
	} {
		if _, err := rtValidates(withTask4(f)); err == nil {
			t.Errorf("%s: validates", name)
		}
	}
}

func withTask4(f PlanFiles) PlanFiles {
	if strings.Contains(string(f[MasterPlan]), "Task 04") {
		f["task-04-d.md"] = []byte(rtTask(4, "d.go", "false", ""))
	}
	return f
}

// ======================================================================
// 6. 4c bookkeeping
// ======================================================================

// HELD: Status:/Progress: edits cannot carry a task, a dependency, a tick
// of another phase or a changed flag; the plan closes at 5b.
func TestRedteamBookkeepingHeld(t *testing.T) {
	h := driveTo(t, S4a)
	plan := string(h.files[MasterPlan])
	for name, next := range map[string]string{
		"tick in 4a":                    tickText(plan, 1),
		"Status: line turned to a task": strings.Replace(plan, "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\n- [ ] Task 09: sneaky", 1),
		"status of a later phase":       strings.Replace(plan, "## Phase 2: Polish\nStatus: pending", "## Phase 2: Polish\nStatus: done", 1),
		"added line":                    plan + "Task 05 depends on Task 04\n",
		"Progress: replaced by a dep":   strings.Replace(plan, "Progress: 0/5", "Task 03 depends on Task 02", 1),
	} {
		if o := h.writeFile(writeCall(tasksPath(MasterPlan), next)); o.Verdict == gates.Allow {
			t.Errorf("%s: allowed in 4a", name)
		}
	}
	// Allowed: the current phase's Status: and Progress:.
	ok := strings.Replace(strings.Replace(plan, "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\nStatus: in progress", 1), "Progress: 0/5", "Progress: 0/5 (phase 1 running)", 1)
	wantAllow(t, h.writeFile(writeCall(tasksPath(MasterPlan), ok)))
	// A Status: line may not be turned into a line that reads as a
	// dependency of another task either.
	h2 := driveTo(t, S5b, twoPhases(true)...)
	if o := h2.writeFile(writeCall(tasksPath(MasterPlan), strings.Replace(string(h2.files[MasterPlan]), "Status: pending", "Status: done", 1))); o.Verdict == gates.Allow {
		t.Errorf("plan edit allowed in 5b")
	}
}

// ======================================================================
// 7. Plan repair
// ======================================================================

// FINDING (bypass of the plan binding, 5b skipped): taking an appended
// phase when the task-planner that created it returns re-hashes every
// plan file as it now is (takeAppendedPhase: PlanHashes =
// HashPlanFiles(files)) without checking that they are as orch-hook
// recorded them, and re-reads the whole plan (UX/DX flags included). A
// change made outside orch-hook while the planner ran (a Bash command the
// rule does not see, e.g. `sd 'review: true' 'review: false'
// .orchestrator/tasks/task-01-step.md`, see TestRedteamBashWritersNotListed)
// is adopted as recorded: no refusal, no diff, and a flipped
// requires_ux_dx_review skips 5b. The implementer path takes the phase
// only after tampered() and holds.
func TestRedteamAppendedPhaseLaundersOutsideChange(t *testing.T) {
	h := driveTo(t, awaitFix5a, onePhase(true)...) // Task 01 requires UX/DX review
	r := h.launch(Planner, "Append a fix phase for the final-validation failure")
	wantAllow(t, r.write(taskFileName(3), taskText(task{N: 3, Files: []string{"fix.go"}})))
	master := strings.TrimRight(string(h.files[MasterPlan]), "\n") + "\n\n## Phase 2: Fixes\nStatus: pending\n\n- [ ] Task 03: fix 3\n"
	wantAllow(t, r.write(MasterPlan, master))
	// Outside orch-hook, while the planner runs:
	name := taskFileName(1)
	h.files[name] = []byte(strings.Replace(string(h.files[name]), "requires_ux_dx_review: true", "requires_ux_dx_review: false", 1))
	r.finish("Fix phase appended.")
	if changed := ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files)); !containsString(changed, name) {
		t.Errorf("%s changed outside orch-hook, and orch-hook now records it as it stands (no refusal, no diff); the plan snapshot says Task 01 UX/DX = %v", name, h.w.Plan.Task(1).UXDX)
	}
	if h.w.Current != S4a || h.w.Phase != 2 {
		return
	}
	h.implement(3)
	h.gate(true)
	h.tick()
	h.expect(S5a)
	h.final(true)
	if h.w.Current == S6 {
		t.Errorf("5a PASS -> 6: 5b skipped, though the approved plan has Task 01 requires_ux_dx_review: true")
	}
}

// HELD: restoring writes.
func TestRedteamRepairHeld(t *testing.T) {
	h := driveTo(t, S4a)
	name := taskFileName(4)
	recorded := string(h.files[name])
	h.files[name] = []byte(strings.Replace(recorded, "requires_ux_dx_review: false", "requires_ux_dx_review: true", 1))
	// Progress is blocked, with a diff.
	o := h.start(Implementer, implPrompt(1)).launch
	wantDeny(t, o, 0, "the plan changed outside orch-hook", "-requires_ux_dx_review: false")
	// A write of a third content is refused; so is one to another file.
	wantDeny(t, h.writeFile(writeCall(tasksPath(name), recorded+"x")), 0)
	wantDeny(t, h.writeFile(writeCall(tasksPath(taskFileName(5)), string(h.files[taskFileName(5)]))), 0)
	// A restoring write (here the orchestrator's) is allowed, and only
	// restores.
	wantAllow(t, h.writeFile(writeCall(tasksPath(name), recorded)))
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
	// A restoring write of a file orch-hook never recorded does not exist.
	h.files["notes.md"] = []byte("x")
	if o := h.writeFile(writeCall(tasksPath("notes.md"), "")); o.Verdict == gates.Allow {
		t.Errorf("write to an unrecorded file allowed")
	}
}

// ======================================================================
// 8. Bash reads
// ======================================================================

// FINDING (bypass of the Bash rule): env's --split-string (and -S in a
// cluster: -iS, -vS) sets variables the scanner does not see. git reads
// GIT_EXTERNAL_DIFF and runs it through the shell for each file, so a
// command the rule takes for `git diff` (a read) runs any program over
// the named files; with --no-index on a directory it walks .orchestrator,
// state included. Verified with git 2.x: the first command truncates
// MASTER_PLAN.md, the second .orchestrator/state/checkpoint.json. `env -S
// 'GIT_EXTERNAL_DIFF=...'` (separate word) is refused.
func TestRedteamBashEnvSplitString(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range []string{
		`env --split-string='GIT_EXTERNAL_DIFF="truncate -s0" git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
		`env --split-string='GIT_EXTERNAL_DIFF="truncate -s0" git' diff --no-index empty .orchestrator`,
		`env --split-str='GIT_EXTERNAL_DIFF=rm git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
		`env -iS'GIT_EXTERNAL_DIFF=rm PATH=/usr/bin git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
		`env -vS'GIT_EXTERNAL_DIFF=rm git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
	} {
		if o := h.do(bashCall(cmd)); o.Verdict == gates.Allow {
			t.Errorf("allowed: %s", cmd)
		}
	}
	// Held: the forms the scanner sees.
	for _, cmd := range []string{
		`env -S'GIT_EXTERNAL_DIFF=rm git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
		`env --split-string 'GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
		`GIT_EXTERNAL_DIFF=rm git diff .orchestrator`,
	} {
		wantDeny(t, h.do(bashCall(cmd)), 0)
	}
}

// FINDING (bypass of the Bash rule): commands that write files but are not
// in the writers' list are taken for reads next to .orchestrator. The plan
// is caught later by its hashes; .orchestrator/ESCALATION.md and
// learnings.md are not hashed.
func TestRedteamBashWritersNotListed(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range []string{
		"sort -o .orchestrator/tasks/MASTER_PLAN.md .orchestrator/tasks/MASTER_PLAN.md",
		"uniq notes.txt .orchestrator/ESCALATION.md",
		"shuf -o .orchestrator/tasks/MASTER_PLAN.md -e x",
		"dos2unix .orchestrator/tasks/MASTER_PLAN.md",
		"link notes.txt .orchestrator/tasks/task-09-x.md",
		"xxd -r dump .orchestrator/tasks/MASTER_PLAN.md",
		"yq -i '.a = 1' .orchestrator/tasks/MASTER_PLAN.md",
		"iconv -f utf8 -t utf8 -o .orchestrator/learnings.md notes.txt",
		"prettier --write .orchestrator/tasks/MASTER_PLAN.md",
		"clang-format -i .orchestrator/tasks/MASTER_PLAN.md",
		"sd 'review: true' 'review: false' .orchestrator/tasks/task-04-step.md",
		"fallocate -l 1M .orchestrator/tasks/MASTER_PLAN.md",
		"cd .orchestrator && dos2unix tasks/MASTER_PLAN.md",
	} {
		if o := h.do(bashCall(cmd)); o.Verdict == gates.Allow {
			t.Errorf("allowed: %s", cmd)
		}
	}
}

// HELD: device redirections and git's reads, and their write look-alikes.
func TestRedteamBashReadsHeld(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range []string{
		"cat .orchestrator/tasks/MASTER_PLAN.md > /dev/null",
		"cat .orchestrator/tasks/MASTER_PLAN.md 2>&1 >/dev/null",
		"git --no-pager log -p -- .orchestrator",
		"git diff --no-index /dev/null .orchestrator/tasks/MASTER_PLAN.md",
		"git -C .orchestrator/tasks diff",
	} {
		wantAllow(t, h.do(bashCall(cmd)))
	}
	for _, cmd := range []string{
		"cat .orchestrator/tasks/MASTER_PLAN.md >/dev/fd/1/../../../tmp/x",
		"cat .orchestrator/tasks/MASTER_PLAN.md >/dev//null",
		"cat .orchestrator/tasks/MASTER_PLAN.md >/dev/nul?",
		"cat .orchestrator/tasks/MASTER_PLAN.md >&1x",
		"cat .orchestrator/tasks/MASTER_PLAN.md {fd}>x",
		"cat .orchestrator/tasks/MASTER_PLAN.md >&$FD",
		"{ cat .orchestrator/tasks/MASTER_PLAN.md >/dev/stdout; } > .orchestrator/tasks/x",
		"exec > .orchestrator/tasks/x; git diff .orchestrator",
		"git diff .orchestrator > >(cat > .orchestrator/tasks/x)",
		"git log .orchestrator | xargs -I{} git checkout {}",
		"git() { rm -rf \"$@\"; }; git diff .orchestrator",
		"alias git='rm -rf'; git diff .orchestrator",
		"PATH=.:$PATH git diff .orchestrator",
		"git -C \"$X\" diff .orchestrator",
		"git diff .orchestrator --no-index -ox",
		"/usr/bin/../bin/git diff .orchestrator",
		"trap 'export GIT_EXTERNAL_DIFF=rm' DEBUG; git diff --no-index /dev/null .orchestrator/tasks/MASTER_PLAN.md",
		"git cat-file --textconv HEAD:.orchestrator/tasks/MASTER_PLAN.md",
		"git grep --open .orchestrator",
	} {
		if o := h.do(bashCall(cmd)); o.Verdict == gates.Allow {
			t.Errorf("allowed: %s", cmd)
		}
	}
}

// FINDING (bypass through a user decision that does not show the change):
// /orch-hook:resolve skip after a 4b escalation rewrites MASTER_PLAN.md
// from the file as it now is (ParsePlan(env.files()).MarkSkipped) and
// records that text as allowed, without checking it against the recorded
// hash. A change made outside orch-hook before the skip (here: phase 2
// removed) is adopted without a word: the user typed "skip phase 1" and
// phase 2 (with its UX/DX task) is never run.
func TestRedteamResolveSkipLaundersOutsideChange(t *testing.T) {
	h := driveTo(t, escalatedFix, twoPhases(true)...)
	master := string(h.files[MasterPlan])
	cut := strings.Index(master, "\n## Phase 2")
	if cut < 0 {
		t.Fatal("no phase 2")
	}
	h.files[MasterPlan] = []byte(master[:cut+1]) // outside orch-hook: phase 2 removed
	o := h.user("/orch-hook:resolve skip")
	if o.Verdict == gates.Allow && len(ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files))) == 0 {
		t.Errorf("skip adopted MASTER_PLAN.md as changed outside orch-hook (phase 2 removed) without saying so; now %s, phase %d, context %q", h.w.Current, h.w.Phase, o.Context)
	}
}

// FINDING (wedge / denial of service; panic-class by the threat model's
// own rule that a hook Claude Code kills lets the call through): reading
// MASTER_PLAN.md is quadratic in indented field lines with an empty value
// ("  - Files:"): parseMaster calls readFields(p.lines[i:]) from each such
// line to the end of the file, and keeps every list it reads. 88 KB take
// ~17 s here (the hooks' timeout is 15 s); 1 MiB (the size limit) would
// take ~40 min and gigabytes. cutFileComments is quadratic too (160 KB of
// "a.go (x) (x) ..." ~0.75 s). A plan the task-planner writes this way
// makes every hook that reads the plan time out: the planner's completion
// is never recorded (step 2 wedged), a PreToolUse that parses it (4c
// CheckTicking, F1 uxChanged, 4a awaiting takeAppendedPhase) is killed and
// its call let through (the plan hashes catch the writes afterwards).
func TestRedteamPlanParseQuadratic(t *testing.T) {
	master := "# Plan\n\n## Phase 1: Core\n- [ ] Task 01: a\n" + strings.Repeat("  - Files:\n", 4000)
	files := PlanFiles{MasterPlan: []byte(master), "task-01.md": []byte("Files: a.go\nrequires_ux_dx_review: false\n")}
	start := time.Now()
	ParsePlan(files).Validate()
	if d := time.Since(start); d > time.Second {
		t.Errorf("ParsePlan of a %d-byte MASTER_PLAN.md took %v (quadratic in its indented \"- Files:\" lines)", len(master), d)
	}
	task := "Files: x.go" + strings.Repeat(" (b)", 40000) + "\nrequires_ux_dx_review: false\n"
	start = time.Now()
	ParsePlan(PlanFiles{MasterPlan: []byte("## Phase 1\n- [ ] Task 01: a\n"), "task-01.md": []byte(task)}).Validate()
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("ParsePlan of a %d-byte task file took %v (cutFileComments is quadratic)", len(task), d)
	}
}

// FINDING (wedge): a plan numbered from "## Phase 0: Setup" validates and
// is presented for approval, but FirstOpenPhase uses 0 for "no open
// phase", so /orch-hook:approve is refused with "the plan has no
// unchecked task, so there is nothing to implement" (false: it has three).
// Nothing says to renumber the phases; the plan should be refused at step
// 2 (phases start at 1), or phase 0 handled.
func TestRedteamPhaseZeroWedge(t *testing.T) {
	master := "# Plan\n\nProgress: 0/3\n\n## Phase 0: Setup\nStatus: pending\n\n- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n\n## Phase 1: CLI\nStatus: pending\n\n- [ ] Task 03: CLI\n"
	files := rtFiles3(master, rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", ""), rtTask(3, "c.go", "false", ""))
	h := newHarness(t)
	h.analyst(LineClear)
	h.rtPlan(files)
	if h.w.Current != S3 {
		return // refused at step 2, with a reason: fine
	}
	o := h.approve()
	if h.w.Current != S4a {
		t.Errorf("plan with phase 0 validated, then the approval was refused: %q", o.Reason)
	}
}

// FINDING (cosmetic / misread shown to the user): the plan shown before
// the approval ("the plan as orch-hook read it") prints titles verbatim,
// so a title can show what orch-hook did not read: "CLI · UX/DX review"
// for a task whose flag is false.
func TestRedteamDescribeSpoofedByTitle(t *testing.T) {
	master := strings.Replace(rtMaster3, "Task 03: CLI", "Task 03: CLI · UX/DX review", 1)
	p, err := rtValidates(rtFiles3(master, rtTask(1, "a.go", "false", ""), rtTask(2, "b.go", "false", ""), rtTask(3, "c.go", "false", "")))
	if err != nil {
		return
	}
	// The titles are quoted, so what a title says cannot pass for what
	// orch-hook read: the flag stays outside the quotes.
	if d := p.Snapshot().Describe(); !p.Tasks[3].UXDX && strings.Contains(strings.ReplaceAll(d, `"CLI · UX/DX review"`, ""), "UX/DX review") {
		t.Errorf("Task 03 (requires_ux_dx_review: false) is shown to the user as:\n%s", d)
	}
}
