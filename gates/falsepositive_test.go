package gates

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// False-refusal survey (branch fp-texts): realistic artifacts, written the
// way capable models write them while following agents/*.md and
// commands/orchestrate.md, each pinned to orch-hook's CURRENT outcome.
// The tests pass against current behaviour; they document it. Each case is
// classified:
//
//	ok  accepted and read right
//	A   refused, justified, the message says what to write
//	B   refused, justified, but the message is unclear or misleading
//	C   false refusal: unambiguous to a human; orch-hook should accept it
//	M   MISREAD: accepted (or silently dropped) but read wrong
//
// Artifacts live in testdata/fp: plan*/ are plan directories
// (MASTER_PLAN.md and task files), report*.md agent reports (the job is
// the word after the number: gate, impl, fa, ux), prompt*.md
// code-implementer prompts ("description: ..." then "---" then the prompt).

func fpPlanDir(t *testing.T, dir string) PlanFiles {
	t.Helper()
	files := PlanFiles{}
	ents, err := os.ReadDir(filepath.Join("testdata/fp", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/fp", dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

func TestFalsePositivePlans(t *testing.T) {
	cases := []struct {
		dir, class string
		// accepted: substrings of the plan as shown to the user; refused:
		// substrings of the refusal.
		want []string
		ok   bool
	}{
		{"plan01-claude-rich", "ok", []string{
			`Task 03 "Add ` + "`--format`" + ` flag to the reports command" · after Task 01, Task 02`,
			`Task 05 "Update README and man page" · after Task 03 · files: README.md, docs/reports.1.md · UX/DX review`}, true},
		// C: the mermaid edge "T03 --> T04[...]" in a fenced block (the
		// other two edges, "T01[...] --> T03", are not matched: inconsistent);
		// C/B: "After this, Task 03 can start." is Task 03's dependency, and
		// the message tells Task 02 to write `Depends On: NN` (which would
		// invert it); C: "after implementing; Task 04 will document" (the
		// dependency word and the task are in different clauses).
		{"plan02-gpt-mermaid", "C", []string{
			`"T03 --> T04[Task 04: Docs]": it states a dependency orch-hook does not read`,
			`"- After this, Task 03 can start.": it states a dependency orch-hook does not read; write it as ` + "`Depends On: NN`",
			`after implementing; Task 04 will document the behaviour.": it states a dependency`}, false},
		// C: "- Create `src/styles/tokens.css` — the light and dark palettes";
		// B: it then also says "it has no `Files:` line" (it has one);
		// C/B: a Files table, refused with "separate the files with commas";
		// C: "This task depends on Task 01 (tokens) and Task 02 (persistence)."
		// under "## Dependencies"; C: "requires_ux_dx_review: true — the
		// toggle is user-facing" (an em-dash note, not cut as " # " is).
		{"plan03-files-styles", "C", []string{
			"\"Create `src/styles/tokens.css` — the light and dark palettes\" is not one file path",
			"task-01-tokens.md, task-02-persist.md: it has no `Files:` line",
			`"## Files / | File | Change |": separate the files with commas`,
			`"This" is not a task number`,
			"requires_ux_dx_review: true — the toggle is user-facing\": the value is not one of true, yes, false, no"}, false},
		// C (and B): a section heading "## Dependencies" / "## UX/DX Review"
		// followed by the exact instructed line "Depends On: none" /
		// "requires_ux_dx_review: false": the heading swallows the line as
		// its value; the message asks for the line that is there.
		{"plan04-section-headings", "C", []string{
			`"## Dependencies / Depends On: none": "Depends" is not a task number`,
			`"## UX/DX Review / requires_ux_dx_review: false": the value is not one of true, yes, false, no`,
			"task-01-query.md: it has no `requires_ux_dx_review:` line"}, false},
		// C/B: "### Exit criteria" checklists inside a phase are told to be
		// written as `- [ ] Task NN: title`; C: "**Dependencies:** Tasks 01
		// and 02 (Phase 1)" under Phase 2 (implied by phase order).
		{"plan05-phase-criteria", "C", []string{
			`"- [ ] Interface documented in godoc": a checkbox under a phase must be a task: write ` + "`- [ ] Task NN: title`",
			`"**Dependencies:** Tasks 01 and 02 (Phase 1)": it states a dependency orch-hook does not read`}, false},
		// M: "  - Must land after Task 01 ..." indented under Task 02 is
		// silently ignored (the same sentence in a task file is refused);
		// M (cosmetic): the title "`--max-retries` CLI flag" loses its
		// opening backtick.
		{"plan06-inline-fields", "M", []string{
			`Task 02 "Jitter strategies (full, equal, decorrelated)" · files: runner/jitter.go`,
			"Task 04 \"--max-retries` CLI flag\" · after Task 03"}, true},
		// C/B: "- Task 01 has no dependencies." under "## Dependencies".
		{"plan07-deps-section", "C", []string{
			`"- Task 01 has no dependencies.": under a Dependencies heading orch-hook reads only`}, false},
		{"plan08-deps-section-clean", "ok", []string{
			`Task 04 "CLI entry point and output formats" · after Task 02, Task 03`}, true},
		{"plan09-yaml-frontmatter", "ok", []string{
			`Task 02 "Retry worker" · after Task 01`,
			`Task 03 "Admin page listing failed deliveries" · after Task 01 · files: web/admin/deliveries.tsx, web/admin/deliveries.test.tsx, internal/api/admin_deliveries.go · UX/DX review`}, true},
		// C: "No regressions in CLI tests that existed before Task 01" in
		// Task 01's own file; A: "Not required — ..." as a UX/DX value (B:
		// followed by "it has no requires_ux_dx_review line"); C: "needs the
		// same config loader as Task 01" and "once Task 02's keys are final"
		// name tasks the file's Depends On already lists.
		{"plan10-task-prose", "C", []string{
			`"- [ ] No regressions in CLI tests that existed before Task 01": it states a dependency`,
			`"requires_ux_dx_review: Not required — strings are unchanged in English": the value is not one of`,
			"task-02-extract.md: it has no `requires_ux_dx_review:` line",
			`"This task needs the same config loader as Task 01; reuse it rather than adding a second one.": it states a dependency`,
			`Run it once Task 02's keys are final.": it states a dependency`}, false},
		// B: "Task 1.1" / "Task 1.2" (hierarchical numbers) are both read as
		// Task 01; the message does not say 1.1 is not a task number.
		{"plan11-hier-numbers", "B", []string{"MASTER_PLAN.md lists Task 01 twice (phases 1 and 1)"}, false},
		// B: "Depends On: 1.1" gets "it says both `none` and task numbers".
		{"plan12-one-per-phase-hier", "B", []string{`"Depends On: 1.1": it says both ` + "`none`" + ` and task numbers`}, false},
		// M: "Task 2.1: Search box component" is accepted as Task 02 titled
		// "1: Search box component" (task-2.1-box.md as Task 02's file).
		{"plan13-hier-accepted", "M", []string{`Task 01 "1: Search endpoint"`, `Task 02 "1: Search box component" · after Task 01`}, true},
		// C: "- src/api/routes.ts: add the `/export` route" (the note has a
		// '/', so "path: note" reads two ways); B: plus "no `Files:` line".
		{"plan14-files-notes", "C", []string{
			"\"src/api/routes.ts: add the `/export` route\" is not one file path",
			"task-01-endpoint.md: it has no `Files:` line"}, false},
		{"plan15-gpt-numbered", "ok", []string{
			`Task 01 "Write the JSON Schema for config.yaml" · files: schema/config.schema.json, docs/config.md · UX/DX review`,
			`Task 03 "Validate on startup with readable errors (blocked by Task 02)" · after Task 02`}, true},
		// C/B: a "## Task Details" section with "### Task 01: ..." headings
		// for tasks that ARE listed under their phase; the message asks to
		// list them, which the plan does.
		{"plan16-task-details", "C", []string{
			`"### Task 01: Reset token model and email": a heading is not a task line; list Task 01 under its phase as ` + "`- [ ] Task 01: title`"}, false},
		// C/B: success criteria "- [ ] 100% of ..." and "- [ ] 0 false
		// positives ..." after the phases are read as Task 100 and Task 00.
		{"plan17-success-numbers", "C", []string{
			`"- [ ] 100% of CommonMark spec examples tokenize without panics": Task 100 is not under a phase heading`,
			`"- [ ] 0 false positives on the repository's own docs": Task 00 is not under a phase heading`}, false},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			p := ParsePlan(fpPlanDir(t, tc.dir))
			err := p.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("[%s] accepted=%v, want %v: %v", tc.class, err == nil, tc.ok, err)
			}
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = p.Snapshot().Describe()
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("[%s] missing %q in:\n%s", tc.class, w, got)
				}
			}
		})
	}
}

// Single task-file lines, in a three-task plan (Task 02's file varies).
func TestFalsePositiveTaskLines(t *testing.T) {
	master := "# P\n\n## Phase 1: A\n- [ ] Task 01: a\n- [ ] Task 02: b\n- [ ] Task 03: c\n"
	cases := []struct {
		class, file string
		refused     string // "" when accepted
		files       []string
		deps        []int
	}{
		// M: a note after a backticked path is never looked at: "(and
		// `b.go`)" adds a file, and is refused without backticks (next).
		{"M", "Files: `c.go` (and `b.go`)\nDepends On: none\nrequires_ux_dx_review: false\n", "", []string{"c.go"}, nil},
		{"A", "Files: c.go (and b.go)\nDepends On: none\nrequires_ux_dx_review: false\n", `the note "(and b.go)" names another file`, nil, nil},
		{"M", "## Files\n- `src/a.go` (also update `src/b.go`)\n\nDepends On: none\nrequires_ux_dx_review: false\n", "", []string{"src/a.go"}, nil},
		// C: an em-dash note after a dependency value.
		{"C", "Files: src/a.go\nDepends On: none — can start immediately\nrequires_ux_dx_review: false\n", `"—" is not a task number`, nil, nil},
		{"C", "Files: src/a.go\nDepends On: 01 — needs the parser API\nrequires_ux_dx_review: false\n", `"—" is not a task number`, nil, nil},
		{"A", "Files: src/a.go\nDependencies: None. This task can start immediately.\nrequires_ux_dx_review: false\n", `"This" is not a task number`, nil, nil},
		{"ok", "Files: src/a.go\nDepends On: Task 01 (needs the parser API)\nrequires_ux_dx_review: false\n", "", []string{"src/a.go"}, []int{1}},
		{"ok", "Files: src/a.go\nDepends On: none (but Task 03 depends on this)\nrequires_ux_dx_review: false\n", "", []string{"src/a.go"}, nil},
		{"ok", "Files: src/a.go\nDepends On: none\nrequires_ux_dx_review: false\n\nThis task blocks Task 03. Coordinate with Task 01 on the API shape.\n", "", []string{"src/a.go"}, nil},
	}
	for i, tc := range cases {
		p := ParsePlan(PlanFiles{MasterPlan: []byte(master),
			"task-01.md": []byte("Files: x.go\nrequires_ux_dx_review: false\n"),
			"task-02.md": []byte(tc.file),
			"task-03.md": []byte("Files: y.go\nrequires_ux_dx_review: false\n")})
		err := p.Validate()
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%d [%s] refused: %v", i, tc.class, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%d [%s] want refusal %q, got %v", i, tc.class, tc.refused, err)
		case tc.refused == "":
			tf := p.Tasks[2]
			if !reflect.DeepEqual(tf.Files, tc.files) || !reflect.DeepEqual(tf.DependsOn, tc.deps) {
				t.Errorf("%d [%s] read files %v deps %v, want %v %v", i, tc.class, tf.Files, tf.DependsOn, tc.files, tc.deps)
			}
		}
	}
}

func TestFalsePositiveReports(t *testing.T) {
	cases := []struct {
		file, class, form string
		failing           []int
		problem           string // the nudge's reason, when form is ""
	}{
		{"report01-gate-claude-pass.md", "ok", LineGatePass, nil, ""},
		{"report02-gate-fail-tasks.md", "ok", LineGateFail, []int{3}, ""},
		// C: a dash note after the verdict.
		{"report03-gate-pass-dash.md", "C", "", nil, "the verdict is followed by other text"},
		// M: "FAILING TASKS: 03 — the CLI bypasses the encoder" does not
		// read; no nudge (the key is there), the whole phase is fixed.
		{"report04-gate-fail-tasks-dash.md", "M", LineGateFail, nil, ""},
		{"report05-gate-fail-tasks-paren.md", "ok", LineGateFail, []int{2, 1}, ""},
		{"report06-gate-pass-counts.md", "ok", LineGatePass, nil, ""},
		// A: README refuses a word before the key.
		{"report07-gate-overall.md", "A", "", nil, "the key does not start the line, or other words are mixed into it"},
		{"report08-gate-fenced-result.md", "ok", LineGatePass, nil, ""},
		{"report09-gate-pass-trailing-prose.md", "ok", LineGatePass, nil, ""},
		{"report10-gate-fail-none.md", "ok", LineGateFail, nil, ""},
		// A: "flaky" after PASS (README: a note saying something failed).
		{"report11-gate-pass-flaky.md", "A", "", nil, "it names both verdicts (flaky)"},
		{"report12-gate-fail-tasks-bold.md", "ok", LineGateFail, []int{2, 4}, ""},
		// M: "FAILING TASKS: 02 ❌, 04 ❌" does not read (the marks), no
		// nudge: the whole phase is fixed.
		{"report13-gate-fail-emoji-tasks.md", "M", LineGateFail, nil, ""},
		// C: an italic recap that agrees with the verdict line above it.
		{"report14-gate-pass-final-recap.md", "C", "", nil, "the key does not start the line"},
		{"report15-gate-fail-later-phase.md", "ok", LineGateFail, []int{3, 4}, ""},
		{"report16-impl-complete.md", "ok", LineImplComplete, nil, ""},
		// C: COMPLETE — note.
		{"report17-impl-complete-note.md", "C", "", nil, "the verdict is followed by other text"},
		// C: BLOCKED - reason (the agent is told to "say what").
		{"report18-impl-blocked-reason.md", "C", "", nil, "the verdict is followed by other text"},
		{"report19-impl-blocked-paren.md", "ok", LineImplBlocked, nil, ""},
		{"report20-impl-complete-paren-lint.md", "ok", LineImplComplete, nil, ""},
		{"report21-fa-fixtasks.md", "ok", LineAnalysis, nil, ""},
		{"report22-ux-pass-suggestions.md", "ok", LineUXPass, nil, ""},
		// C (borderline A): "PASS with minor suggestions".
		{"report23-ux-pass-with.md", "C", "", nil, "the verdict is followed by other text"},
		// A: README refuses table cells.
		{"report24-gate-table-verdict-last.md", "A", "", nil, "a table cell is not a result line"},
		{"report25-impl-status-then-next.md", "ok", LineImplComplete, nil, ""},
	}
	for _, tc := range cases {
		b, err := os.ReadFile(filepath.Join("testdata/fp", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		job := JobGate
		switch strings.SplitN(tc.file, "-", 3)[1] {
		case "impl":
			job = JobImplement
		case "fa":
			job = JobAnalysis
		case "ux":
			job = JobUXDX
		}
		owed := OwedLines(job)
		if got := FindResult(text, owed); got != tc.form {
			t.Errorf("%s [%s]: FindResult = %q, want %q", tc.file, tc.class, got, tc.form)
		}
		if got := FailingTasks(text); !reflect.DeepEqual(got, tc.failing) {
			t.Errorf("%s [%s]: FailingTasks = %v, want %v", tc.file, tc.class, got, tc.failing)
		}
		if tc.form == "" {
			msg := missingLineProblem(text, owed)
			if !strings.Contains(msg, tc.problem) || !strings.Contains(msg, "End your report with exactly") {
				t.Errorf("%s [%s]: nudge %q, want %q", tc.file, tc.class, msg, tc.problem)
			}
		}
	}
}

func TestFalsePositivePrompts(t *testing.T) {
	cases := []struct {
		file, class string
		task        int
		problem     string
	}{
		{"prompt01-header.md", "ok", 3, ""},
		{"prompt02-you-are.md", "ok", 3, ""},
		{"prompt03-context-first.md", "ok", 3, ""},
		// C/B: a context line naming Tasks 01 and 02 comes before the line
		// naming the task file; the description names Task 03. The message
		// does not say to start the prompt with `Task 03: title`.
		{"prompt04-context-line-before-file.md", "C", 0, "names more than one task; one code-implementer implements one task."},
		// C/B: a status list "- Task 01: CSV encoder — COMPLETE" after the
		// prompt's own header is read as a second header.
		{"prompt05-status-list.md", "C", 0, "the prompt has a header for Task 04"},
		{"prompt06-file-first.md", "ok", 4, ""},
		{"prompt07-heading-impl.md", "ok", 2, ""},
		{"prompt08-fix-f2.md", "ok", 3, ""},
		{"prompt09-phase-task.md", "ok", 4, ""},
		{"prompt10-desc-only.md", "ok", 5, ""},
		{"prompt11-markdown-sections.md", "ok", 2, ""},
		{"prompt12-multi-deps-header.md", "ok", 4, ""},
		{"prompt13-quote-fix-analysis.md", "ok", 2, ""},
	}
	for _, tc := range cases {
		b, err := os.ReadFile(filepath.Join("testdata/fp", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		head, prompt, _ := strings.Cut(string(b), "\n---\n")
		desc := strings.TrimPrefix(head, "description: ")
		n, problem := TaskOfLaunch(prompt, desc)
		if n != tc.task || !strings.Contains(problem, tc.problem) || (tc.problem == "") != (problem == "") {
			t.Errorf("%s [%s]: TaskOfLaunch = %d %q, want %d %q", tc.file, tc.class, n, problem, tc.task, tc.problem)
		}
	}
}
