package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Plan formats (README, "Planning": how the plan is read): the
// task-planner writes MASTER_PLAN.md and the task files the ways models
// write them. An accepted spelling declares the plan orch-hook must read
// (tasks per phase, Depends On, Files, requires_ux_dx_review; checked in
// status --json at the end) and runs the standard workflow to complete,
// its phases ticked from the file as written. Where a misreading would
// change what the gates do, the variant also asserts it: Task 03 launched
// too early waits for Task 01 (a dependency read) or for Task 02 (a shared
// file read), a UX/DX flag read as true leads through 5b. A plan that must
// be refused fails validation: the step-2 checkpoint line quotes the line
// ("[STEP 2] task-planner returned, but the plan does not validate: ..."),
// the workflow stays in 2, and the task-planner is relaunched to write the
// corrected file. Variants marked "issue:" are the misreads the project's
// issue listed; each would now be caught as misread (or wedged) if
// orch-hook regressed.

// The standard plan's task files (reach_test.go).
const (
	tf1 = "task-01-parser.md"
	tf2 = "task-02-formatter.md"
	tf3 = "task-03-cli.md"
	tf4 = "task-04-docs.md"
)

// planEdit changes one file of the standard plan: replace old with new
// in it (once), or, when old is "", rename it to new.
type planEdit struct{ file, old, new string }

// editedPlan is the standard plan with the edits applied.
func editedPlan(edits ...planEdit) map[string]string {
	files := maps.Clone(standardPlan)
	for _, e := range edits {
		text, ok := files[e.file]
		if !ok {
			panic(fmt.Sprintf("editedPlan: no file %s", e.file))
		}
		if e.old == "" {
			delete(files, e.file)
			files[e.new] = text
			continue
		}
		if !strings.Contains(text, e.old) {
			panic(fmt.Sprintf("editedPlan: %s has no %q", e.file, e.old))
		}
		files[e.file] = strings.Replace(text, e.old, e.new, 1)
	}
	return files
}

// plannerWrites makes the task-planner write files (MASTER_PLAN.md first,
// then the task files by name) instead of the standard plan.
func plannerWrites(a *action, files map[string]string) {
	a.writes = nil
	names := slices.Sorted(maps.Keys(files))
	names = slices.DeleteFunc(names, func(n string) bool { return n == masterPlan })
	if _, ok := files[masterPlan]; ok {
		names = append([]string{masterPlan}, names...)
	}
	for _, n := range names {
		a.writing(".orchestrator/tasks/"+n, files[n])
	}
}

// planWith is a plan spelling's change: the task-planner writes files and
// orch-hook must read want (nil: the standard plan's reading).
func planWith(files map[string]string, want *planWant) func(s *script) {
	if want == nil {
		want = standardPlanWant()
	}
	return func(s *script) {
		plannerWrites(s.at("tp"), files)
		s.end.plan = want
	}
}

// readAs is the standard plan's reading, changed.
func readAs(change func(p *planWant)) *planWant {
	p := standardPlanWant()
	change(p)
	return p
}

// task03Early launches Task 03 with the phase 1 pair, in one message: it
// must wait (for Task 01, or for Task 02's file), so its launch is
// refused with why and the model launches it later, as the base does.
func task03Early(s *script) {
	p1 := s.at("p1")
	early := launch("i3-early", "code-implementer", "Task 03: CLI flag", "IMPLEMENTATION STATUS: COMPLETE").describedAs("Implement cli flag")
	p1.members = append(p1.members, early)
}

const (
	waitsForTask01 = "Task 03 depends on Task 01, which has not returned; launch it after Task 01."
	waitsForFile   = "Task 03 and Task 02 (in flight) both change src/shared.go; run them one after the other."
)

// planSpelling is an accepted spelling: the plan as edited, read as want.
func planSpelling(name string, want *planWant, edits ...planEdit) variant {
	return variant{name: name, change: planWith(editedPlan(edits...), want)}
}

// planRefused is a plan that must fail validation: the step-2 line quotes
// problem (a line of the plan and what is wrong with it) and the workflow
// stays in 2; the fix is the task-planner relaunched to write the files
// named as the standard plan has them.
func planRefused(name, problem string, edits []planEdit, fixed ...string) variant {
	const told = "[STEP 2] task-planner returned, but the plan does not validate: "
	return variant{
		name: "refused: " + name,
		change: func(s *script) {
			tp := s.at("tp")
			plannerWrites(tp, editedPlan(edits...))
			tp.want.context = append(tp.want.context, told+problem)
		},
		fixes: []fix{{told: true, match: told + problem, redo: func(s *script) []*action {
			a := copyAction(s.at("tp"), "tp-fix")
			a.prompt = "Fix the plan: " + problem
			a.description = "Fix the plan"
			a.report = "Plan fixed."
			files := map[string]string{}
			for _, n := range fixed {
				files[n] = standardPlan[n]
			}
			plannerWrites(a, files)
			a.want = want{state: "3", context: []string{toldPlanned}}
			// Before the fix, the plan is not taken: still step 2.
			return []*action{onDisk("tp-refused", nil).expecting(want{state: "2"}), a}
		}}},
	}
}

// lightweightFollowUp is a LIGHTWEIGHT follow-up typed after complete:
// the orchestrator appends phase 3 with Task 05, whose file lists files
// (five: its launch is refused, the orchestrator shrinks the list to two
// and relaunches it), then the phase runs to complete again.
func lightweightFollowUp(files string) func(s *script) {
	return func(s *script) {
		s.insertAfter("end",
			userPrompt("fu", "/orch-hook:follow-up lightweight Add a --chars flag").
				expecting(want{state: "4a", context: []string{"LIGHTWEIGHT follow-up -> 4a"}}),
			writePlanFile("fu-plan", masterPlan, planAllDone+"\n## Phase 3: Chars\nStatus: pending\n- [ ] Task 05: Chars flag\n").expecting(want{state: "4a"}),
			writePlanFile("fu-task", task5File, "# Task 05: Chars flag\n"+files+"requires_ux_dx_review: false\n").expecting(want{state: "4a"}),
			launch("i5", "code-implementer", "Task 05: Chars flag", "Added --chars.\nIMPLEMENTATION STATUS: COMPLETE").fg().
				expecting(want{state: "4b", context: []string{"[PHASE 3 | Task 05] 4a OK -> 4b"}}),
			launch("q5", "code-quality", "Quality gate, phase 3", "PHASE GATE STATUS: PASS").fg().
				expecting(want{state: "4c", context: []string{"[PHASE 3 | Task 05] 4b OK -> 4c"}}),
			tickPhase("tick3", 3).expecting(want{state: "5a"}),
			launch("final2", "code-quality", "Final validation again", "PHASE GATE STATUS: PASS").fg().expecting(want{state: "5b"}),
			launch("ux2", "ux-dx-quality", "UX/DX review again", "UX/DX STATUS: PASS").fg().expecting(want{state: "6"}),
			launch("se2", "task-planner", "SUCCESS_EXTRACTION again", "SUCCESS_EXTRACTION: COMPLETE").fg().expecting(want{state: "complete"}),
			stopTurn("end2"),
		)
		p := standardPlanWant()
		p.phases = append(p.phases, []int{5})
		p.files[5] = []string{"src/chars.go", "src/cli.go"}
		s.end = want{state: "complete", plan: p, check: allTicked}
	}
}

const task5File = "task-05-chars.md"

func init() {
	std := standardPlan
	var vs []variant
	add := func(v ...variant) { vs = append(vs, v...) }
	noDep3 := readAs(func(p *planWant) { delete(p.deps, 3) })

	// Task lines in MASTER_PLAN.md.
	for _, f := range []struct{ name, line string }{
		{"lower case", "- [ ] task 01: Parser"},
		{"bare number", "- [ ] 01: Parser"},
		{"bold number", "- [ ] **Task 01**: Parser"},
		{"star marker", "* [ ] Task 01: Parser"},
		{"em dash", "- [ ] Task 01 — Parser"},
		{"#1", "- [ ] Task #1: Parser"},
	} {
		add(planSpelling("task line "+f.name, nil, planEdit{masterPlan, "- [ ] Task 01: Parser", f.line}))
	}
	add(
		// issue: the link form was dropped (and Task 02 with it).
		planSpelling("issue: task line [Task 02](task-02.md)", nil,
			planEdit{masterPlan, "- [ ] Task 02: Formatter", "- [ ] [Task 02](task-02.md)"}, planEdit{tf2, "", "task-02.md"}),
		planSpelling("task lines as a numbered list", nil, planEdit{masterPlan,
			"- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n- [ ] Task 03: CLI flag",
			"1. [ ] Task 01: Parser\n2. [ ] Task 02: Formatter\n3. [ ] Task 03: CLI flag"}),
		planSpelling("indented sub-checkboxes are not tasks", nil, planEdit{masterPlan,
			"- [ ] Task 01: Parser\n", "- [ ] Task 01: Parser\n  - [ ] tokenize\n  - [ ] write the tests\n"}),
		planSpelling("a checkbox before the first phase is not a task", nil, planEdit{masterPlan,
			"Progress: 0/4\n", "Progress: 0/4\n\n- [ ] review with the team\n"}),
		planSpelling("a deeper heading inside a phase", nil, planEdit{masterPlan,
			"- [ ] Task 02: Formatter\n", "\n### Output\n- [ ] Task 02: Formatter\n"}),
		planSpelling("a Success criteria checklist after the phases", nil, planEdit{masterPlan,
			"- [ ] Task 04: Document it\n", "- [ ] Task 04: Document it\n\n## Success criteria\n- [ ] All tests pass\n- [ ] The README explains the flags\n"}),
		variant{name: "CRLF line endings in every file", change: func(s *script) {
			files := map[string]string{}
			for n, text := range std {
				files[n] = strings.ReplaceAll(text, "\n", "\r\n")
			}
			planWith(files, nil)(s)
		}},
	)

	// Task file names.
	for _, name := range []string{"task_01_parser.md", "TASK-01-Parser.md", "01-parser.md", "task01.md", "task-01.md"} {
		add(planSpelling("task file "+name, nil, planEdit{tf1, "", name}))
	}

	// Depends On, in Task 03's file.
	dep3 := func(name, line string) variant {
		return planSpelling("Depends On as "+name, nil, planEdit{tf3, "Depends On: 01\n", line})
	}
	add(
		dep3("depends_on", "depends_on: 01\n"),
		dep3("a YAML list", "depends_on: [01]\n"),
		dep3("a YAML block", "depends_on:\n  - 01\n"),
		dep3("Dependencies", "Dependencies: 01\n"),
		dep3("a Dependencies heading list", "\n## Dependencies\n\n- Task 01 (the parser)\n\n"),
		dep3("a note", "Depends On: 01 (see section 1.2)\n"),
		dep3("a comment", "Depends On: 01  # the parser\n"),
		planSpelling("Depends On as N-A (written with a slash)", nil, planEdit{tf1, "Parallel With: 02\n", "Depends On: N/A\n"}),
		planSpelling("Depends On as None under a Dependencies heading", noDep3, planEdit{tf3, "Depends On: 01\n", "## Dependencies\nNone\n\n"}),
		// issue: "none" with a note naming the other task was read as a
		// dependency each way: a cycle, so the plan did not validate.
		planSpelling("issue: Depends On: none (can run in parallel with ...) on two tasks", nil,
			planEdit{tf1, "Parallel With: 02\n", "Depends On: none (can run in parallel with Task 02)\n"},
			planEdit{tf2, "Parallel With: 01\n", "Depends On: none (can run in parallel with Task 01)\n"}),
	)
	// Dependencies only in MASTER_PLAN.md (Task 03's file has none).
	inMaster := func(name string, e planEdit) variant {
		return planSpelling("dependency only in MASTER_PLAN.md: "+name, nil, planEdit{tf3, "Depends On: 01\n", ""}, e)
	}
	add(
		inMaster("(depends on 01)", planEdit{masterPlan, "- [ ] Task 03: CLI flag", "- [ ] Task 03: CLI flag (depends on 01)"}),
		inMaster("(after Task 01)", planEdit{masterPlan, "- [ ] Task 03: CLI flag", "- [ ] Task 03: CLI flag (after Task 01)"}),
		inMaster("an indented Depends On under the task", planEdit{masterPlan, "- [ ] Task 03: CLI flag\n", "- [ ] Task 03: CLI flag\n  - Depends On: Task 01\n"}),
		inMaster("a Task 03 depends on Task 01 line", planEdit{masterPlan, "## Phase 1: Core\n", "## Phase 1: Core\nTask 03 depends on Task 01.\n"}),
	)
	// issue: Task 04's dependency on Task 03 (of phase 1) was ignored in
	// these spellings, or a note's numbers were read as tasks.
	dep4 := readAs(func(p *planWant) { p.deps[4] = []int{3} })
	for _, f := range []struct{ name, line string }{
		{"depends_on: [03]", "depends_on: [03]\n"},
		{"Dependencies: 03", "Dependencies: 03\n"},
		{"a ## Dependencies list", "\n## Dependencies\n\n- Task 03\n\n"},
		{"Depends On: 03 (see section 1.2)", "Depends On: 03 (see section 1.2)\n"},
	} {
		add(planSpelling("issue: Task 04 "+f.name, dep4, planEdit{tf4, "Files:", strings.TrimPrefix(f.line, "\n") + "Files:"}))
	}
	// issue: a dependency ignored let Task 03 start beside Task 01: each
	// spelling must make an early launch wait.
	for _, f := range []struct {
		name string
		e    []planEdit
	}{
		{"depends_on: [01]", []planEdit{{tf3, "Depends On: 01", "depends_on: [01]"}}},
		{"Dependencies: 01", []planEdit{{tf3, "Depends On: 01", "Dependencies: 01"}}},
		{"a ## Dependencies list", []planEdit{{tf3, "Depends On: 01\n", "\n## Dependencies\n\n- Task 01\n\n"}}},
		{"only in MASTER_PLAN.md", []planEdit{{tf3, "Depends On: 01\n", ""}, {masterPlan, "- [ ] Task 03: CLI flag", "- [ ] Task 03: CLI flag (depends on 01)"}}},
	} {
		files := editedPlan(f.e...)
		add(variant{name: "issue: Task 03 waits for Task 01, Depends On as " + f.name,
			change: func(s *script) { planWith(files, nil)(s); task03Early(s) },
			fixes:  []fix{{match: waitsForTask01}}})
	}

	// Files.
	files2 := func(name, value string) variant {
		return planSpelling("Files as "+name, nil, planEdit{tf2, "Files: src/format.go, src/shared.go\n", value})
	}
	add(
		planSpelling("Files as Files to modify", nil, planEdit{tf1, "Files: src/parser.go", "Files to modify: src/parser.go"}),
		files2("a Markdown list", "Files:\n- src/format.go\n- src/shared.go\n"),
		files2("a heading list with notes", "\n## Files to modify\n\n- `src/format.go` — the padding\n- `src/shared.go` — shared helpers\n\n## Notes\nnone\n\n"),
		files2("backticks", "**Files:** `src/format.go`, `src/shared.go`\n"),
		files2("a YAML list", "files: [\"src/format.go\", \"src/shared.go\"]\n"),
		files2("space-separated paths", "Files: src/format.go src/shared.go\n"),
		files2("Files to create and Files to modify", "Files to create: src/format.go\nFiles to modify: src/shared.go\n"),
		planSpelling("Files in MASTER_PLAN.md under the task", nil, planEdit{tf1, "Files: src/parser.go\n", ""},
			planEdit{masterPlan, "- [ ] Task 01: Parser\n", "- [ ] Task 01: Parser\n  - Files: src/parser.go\n"}),
	)
	// issue: files in these forms gave no files, so Task 03 ran beside
	// Task 02 though both change src/shared.go. Task 03 without its
	// dependency: only the shared file makes its early launch wait.
	for _, f := range []struct {
		name string
		e    []planEdit
	}{
		{"a Files: list in Task 03", []planEdit{{tf3, "Files: src/cli.go, src/shared.go\n", "Files:\n- src/cli.go\n- src/shared.go\n"}}},
		{"a Files to modify: list in both", []planEdit{
			{tf2, "Files: src/format.go, src/shared.go\n", "Files to modify:\n- src/format.go\n- src/shared.go\n"},
			{tf3, "Files: src/cli.go, src/shared.go\n", "Files to modify:\n- src/cli.go\n- src/shared.go\n"}}},
		{"space-separated names in both", []planEdit{
			{tf2, "Files: src/format.go, src/shared.go", "Files: src/format.go src/shared.go"},
			{tf3, "Files: src/cli.go, src/shared.go", "Files: src/cli.go src/shared.go"}}},
	} {
		files := editedPlan(append([]planEdit{{tf3, "Depends On: 01\n", ""}}, f.e...)...)
		add(variant{name: "issue: Task 03 waits for the shared file, " + f.name,
			change: func(s *script) { planWith(files, noDep3)(s); task03Early(s) },
			fixes:  []fix{{match: waitsForFile}}})
	}
	// issue: a LIGHTWEIGHT follow-up whose five files were in list form
	// passed the limit of fewer than 3.
	add(variant{name: "issue: lightweight follow-up with five files in list form",
		change: lightweightFollowUp("Files:\n- src/chars.go\n- src/cli.go\n- src/count.go\n- src/count_test.go\n- docs/usage.md\n"),
		fixes: []fix{{match: "a LIGHTWEIGHT follow-up may touch fewer than 3 files; phase 3's tasks list 5.",
			redo: func(s *script) []*action {
				return []*action{
					writePlanFile("fu-shrink", task5File, "# Task 05: Chars flag\nFiles: src/chars.go, src/cli.go\nrequires_ux_dx_review: false\n"),
					copyAction(s.at("i5"), "i5-again"),
				}
			}}}})

	// requires_ux_dx_review.
	ux := func(name, file, old, new string, want *planWant) variant {
		return planSpelling("requires_ux_dx_review as "+name, want, planEdit{file, old, new})
	}
	add(
		// issue: yes was read as false, and 5b skipped (the base goes
		// through 5b).
		planSpelling("issue: requires_ux_dx_review: yes leads through 5b", nil, planEdit{tf4, "requires_ux_dx_review: true", "requires_ux_dx_review: yes"}),
		ux("no", tf1, "requires_ux_dx_review: false", "requires_ux_dx_review: no", nil),
		ux("a note", tf4, "requires_ux_dx_review: true", "requires_ux_dx_review: true (users read the docs)", nil),
		ux("a comment", tf4, "requires_ux_dx_review: true", "requires_ux_dx_review: true  # user-facing", nil),
		ux("Requires UX-DX review: (spelled out)", tf4, "requires_ux_dx_review: true", "Requires UX/DX review: true", nil),
		ux("a fenced block", tf4, "Files: docs/usage.md\nrequires_ux_dx_review: true\n", "```yaml\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n```\n", nil),
		// A phase 1 task flagged yes: 5b still, from two flags.
		ux("yes on Task 02 too", tf2, "requires_ux_dx_review: false", "requires_ux_dx_review: yes",
			readAs(func(p *planWant) { p.ux = []int{2, 4} })),
	)
	// No task flagged: 5a PASS goes straight to 6, no UX/DX review.
	add(variant{name: "requires_ux_dx_review no on every task: 5b skipped",
		change: func(s *script) {
			planWith(editedPlan(planEdit{tf4, "requires_ux_dx_review: true", "requires_ux_dx_review: no"}),
				readAs(func(p *planWant) { p.ux = nil }))(s)
			s.replace("ux")
			s.at("final").want = want{state: "6", context: []string{"[STEP 5a] PASS -> 6"}}
			s.end.check = allOf(completedStates("0a", "2", "3", "4a", "4b", "F1", "F2", "4c", "5a", "6"), allTicked)
		}})

	// Refused, quoted in the step-2 line, fixed by the task-planner.
	add(
		planRefused("a checkbox that is not a task", `MASTER_PLAN.md line 10: "- [ ] Write the tests": a checkbox under a phase must be a task`,
			[]planEdit{{masterPlan, "- [ ] Task 03: CLI flag\n", "- [ ] Task 03: CLI flag\n- [ ] Write the tests\n"}}, masterPlan),
		planRefused("a [-] checkbox", `MASTER_PLAN.md line 8: "- [-] Task 02: Formatter": the checkbox [-] is neither`,
			[]planEdit{{masterPlan, "- [ ] Task 02", "- [-] Task 02"}}, masterPlan),
		planRefused("two tasks on one line", `MASTER_PLAN.md line 8: "- [ ] Task 02 & 05: Formatter": it names more than one task`,
			[]planEdit{{masterPlan, "- [ ] Task 02: Formatter", "- [ ] Task 02 & 05: Formatter"}}, masterPlan),
		planRefused("requires_ux_dx_review: true|false", `task-04-docs.md line 3: "requires_ux_dx_review: true|false": the value is not one of true, yes, false, no`,
			[]planEdit{{tf4, "requires_ux_dx_review: true", "requires_ux_dx_review: true|false"}}, tf4),
		planRefused("no requires_ux_dx_review", "task-04-docs.md: it has no `requires_ux_dx_review:` line",
			[]planEdit{{tf4, "requires_ux_dx_review: true\n", ""}}, tf4),
		planRefused("requires_ux_dx_review twice, differing", `task-04-docs.md line 5: "requires_ux_dx_review: false": it says false, line 3 says true`,
			[]planEdit{{tf4, "requires_ux_dx_review: true\n", "requires_ux_dx_review: true\n\nrequires_ux_dx_review: false\n"}}, tf4),
		planRefused("no Files", "task-02-formatter.md: it has no `Files:` line",
			[]planEdit{{tf2, "Files: src/format.go, src/shared.go\n", ""}}, tf2),
		planRefused("Files in prose", `task-02-formatter.md line 3: "Files: update the formatter": separate the files with commas`,
			[]planEdit{{tf2, "Files: src/format.go, src/shared.go", "Files: update the formatter"}}, tf2),
		planRefused("a dependency on a missing task", `task-03-cli.md line 2: "Depends On: 07": Task 07 is not a task of MASTER_PLAN.md`,
			[]planEdit{{tf3, "Depends On: 01", "Depends On: 07"}}, tf3),
		planRefused("a dependency in prose", `task-03-cli.md line 2: "Depends On: the parser task": "the" is not a task number`,
			[]planEdit{{tf3, "Depends On: 01", "Depends On: the parser task"}}, tf3),
		planRefused("a dependency on a later phase", `task-01-parser.md line 2: "Depends On: 04": Task 01 depends on Task 04 of a later phase (2)`,
			[]planEdit{{tf1, "Parallel With: 02", "Depends On: 04"}}, tf1),
		// (A sentence naming only tasks of earlier phases says what the
		// phase order does: accepted; one naming a task of its own phase is
		// not read, so refused.)
		planRefused("a dependency sentence orch-hook cannot read", `MASTER_PLAN.md line 12: "The examples wait for Task 04 to settle.": it states a dependency orch-hook does not read`,
			[]planEdit{{masterPlan, "## Phase 2: Docs\n", "## Phase 2: Docs\nThe examples wait for Task 04 to settle.\n"}}, masterPlan),
		planRefused("a title that may state a dependency", `MASTER_PLAN.md line 9: "- [ ] Task 03: CLI flag once Task 01 is done": its title may state a dependency`,
			[]planEdit{{masterPlan, "- [ ] Task 03: CLI flag", "- [ ] Task 03: CLI flag once Task 01 is done"}}, masterPlan),
		planRefused("MASTER_PLAN.md and the task file disagree", `MASTER_PLAN.md line 9: "- [ ] Task 03: CLI flag (depends on 02)": Task 03's dependencies here differ from its file task-03-cli.md`,
			[]planEdit{{masterPlan, "- [ ] Task 03: CLI flag", "- [ ] Task 03: CLI flag (depends on 02)"}}, masterPlan),
		planRefused("a task outside any phase", `MASTER_PLAN.md line 16: "- [ ] Task 05: Polish": Task 05 is not under a phase heading`,
			[]planEdit{{masterPlan, "- [ ] Task 04: Document it\n", "- [ ] Task 04: Document it\n\n## Later\n- [ ] Task 05: Polish\n"}}, masterPlan),
		planRefused("a cycle", `tasks Task 01, Task 03 depend on each other in a cycle (task-01-parser.md line 2: "Depends On: 03"; task-03-cli.md line 2: "Depends On: 01")`,
			[]planEdit{{tf1, "Parallel With: 02", "Depends On: 03"}}, tf1),
	)
	registerVariants("plan formats", vs...)
}
