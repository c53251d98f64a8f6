package orchestrate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
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
		// Issue 13's false-refusal pass, after its fixes. A (was C): the
		// mermaid diagram is refused, and the message says to remove it; the
		// clause-separated "after implementing; Task 04 will ..." and the
		// reverse "After this, Task 03 can start." are no longer refused.
		{"plan02-gpt-mermaid", "A", []string{
			`"T03 --> T04[Task 04: Docs]": it states a dependency orch-hook does not read (an arrow or a diagram)`, "and remove the diagram"}, false},
		// A (was C/B): only the Files table is refused, with what to write;
		// "Create `src/styles/tokens.css` — ...", the dependency sentence
		// under "## Dependencies" and the em-dash note are read.
		{"plan03-files-styles", "A", []string{`"## Files / | File | Change |": a table is not read; list the files as ` + "`- path`"}, false},
		// ok (was C): a section heading over the instructed field line.
		{"plan04-section-headings", "ok", []string{`Task 02 "CSV download button" · after Task 01`}, true},
		// ok (was C): exit criteria under a phase's sub-heading, and a
		// phase-level note naming tasks of earlier phases.
		{"plan05-phase-criteria", "ok", []string{`Task 03 "Port the sitemap generator to a plugin" · after Task 01, Task 02`}, true},
		// A (was M): prose indented under a task that states a dependency is
		// refused, as in a task file (it was ignored).
		{"plan06-inline-fields", "A", []string{`"- Must land after Task 01 so it can reuse the policy type": it states a dependency orch-hook does not read`}, false},
		// ok (was C): "- Task 01 has no dependencies." under "## Dependencies".
		{"plan07-deps-section", "ok", []string{`Task 02 "Rule engine" · after Task 01`}, true},
		{"plan08-deps-section-clean", "ok", []string{
			`Task 04 "CLI entry point and output formats" · after Task 02, Task 03`}, true},
		{"plan09-yaml-frontmatter", "ok", []string{
			`Task 02 "Retry worker" · after Task 01`,
			`Task 03 "Admin page listing failed deliveries" · after Task 01 · files: web/admin/deliveries.tsx, web/admin/deliveries.test.tsx, internal/api/admin_deliveries.go · UX/DX review`}, true},
		// A: "Not required — ..." as a UX/DX value (no longer followed by
		// "it has no requires_ux_dx_review line"); the prose naming the
		// file's own dependencies, or the task itself, is accepted.
		{"plan10-task-prose", "A", []string{`"requires_ux_dx_review: Not required — strings are unchanged in English": the value is not one of`}, false},
		// A (was B/M): hierarchical numbers are refused as such.
		{"plan11-hier-numbers", "A", []string{`"Task 1.1" is not a task number; number the tasks 01, 02, 03, ... across the whole plan`}, false},
		{"plan12-one-per-phase-hier", "A", []string{`"Task 1.1" is not a task number`}, false},
		{"plan13-hier-accepted", "A", []string{`"Task 2.1" is not a task number`}, false},
		// A (was C): "src/api/routes.ts: add the `/export` route" is read;
		// a note naming another file in backticks is refused.
		{"plan14-files-notes", "A", []string{"names more than one file; write one path per item"}, false},
		{"plan15-gpt-numbered", "ok", []string{
			`Task 01 "Write the JSON Schema for config.yaml" · files: schema/config.schema.json, docs/config.md · UX/DX review`,
			`Task 03 "Validate on startup with readable errors (blocked by Task 02)" · after Task 02`}, true},
		// ok (was C): "### Task 01: ..." detail headings for listed tasks.
		{"plan16-task-details", "ok", []string{`Task 01 "Reset token model and email"`}, true},
		// ok (was C): success criteria "- [ ] 100% of ..." after the phases.
		{"plan17-success-numbers", "ok", []string{`Task 04 "CLI entry point and output formats"`}, true},
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
		// A (was M): a note naming another file after a backticked path
		// is refused, as it is without backticks.
		{"A", "Files: `c.go` (and `b.go`)\nDepends On: none\nrequires_ux_dx_review: false\n", "names more than one file", nil, nil},
		{"A", "Files: c.go (and b.go)\nDepends On: none\nrequires_ux_dx_review: false\n", `the note "(and b.go)" names another file`, nil, nil},
		{"A", "## Files\n- `src/a.go` (also update `src/b.go`)\n\nDepends On: none\nrequires_ux_dx_review: false\n", "names more than one file", nil, nil},
		// ok (was C): an em-dash note after a dependency value.
		{"ok", "Files: src/a.go\nDepends On: none — can start immediately\nrequires_ux_dx_review: false\n", "", []string{"src/a.go"}, nil},
		{"ok", "Files: src/a.go\nDepends On: 01 — needs the parser API\nrequires_ux_dx_review: false\n", "", []string{"src/a.go"}, []int{1}},
		{"A", "Files: src/a.go\nDepends On: 01 — and Task 03 too\nrequires_ux_dx_review: false\n", `the note "and Task 03 too" names another task`, nil, nil},
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
		// ok (was C): a dash note after the verdict.
		{"report03-gate-pass-dash.md", "ok", LineGatePass, nil, ""},
		// ok (was M): "FAILING TASKS: 03 — the CLI bypasses the encoder".
		{"report04-gate-fail-tasks-dash.md", "ok", LineGateFail, []int{3}, ""},
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
		// ok (was M): "FAILING TASKS: 02 ❌, 04 ❌".
		{"report13-gate-fail-emoji-tasks.md", "ok", LineGateFail, []int{2, 4}, ""},
		// ok (was C): an italic recap that agrees with the verdict above it.
		{"report14-gate-pass-final-recap.md", "ok", LineGatePass, nil, ""},
		{"report15-gate-fail-later-phase.md", "ok", LineGateFail, []int{3, 4}, ""},
		{"report16-impl-complete.md", "ok", gates.LineImplComplete, nil, ""},
		// ok (was C): COMPLETE — note.
		{"report17-impl-complete-note.md", "ok", gates.LineImplComplete, nil, ""},
		// ok (was C): BLOCKED - reason (the agent is told to "say what").
		{"report18-impl-blocked-reason.md", "ok", gates.LineImplBlocked, nil, ""},
		{"report19-impl-blocked-paren.md", "ok", gates.LineImplBlocked, nil, ""},
		{"report20-impl-complete-paren-lint.md", "ok", gates.LineImplComplete, nil, ""},
		{"report21-fa-fixtasks.md", "ok", LineAnalysis, nil, ""},
		{"report22-ux-pass-suggestions.md", "ok", LineUXPass, nil, ""},
		// A: "PASS with minor suggestions" (the message says what to write).
		{"report23-ux-pass-with.md", "A", "", nil, "the verdict is followed by other text"},
		// A: README refuses table cells.
		{"report24-gate-table-verdict-last.md", "A", "", nil, "a table cell is not a result line"},
		{"report25-impl-status-then-next.md", "ok", gates.LineImplComplete, nil, ""},
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
		if got := gates.FindResult(text, owed); got != tc.form {
			t.Errorf("%s [%s]: FindResult = %q, want %q", tc.file, tc.class, got, tc.form)
		}
		if got := FailingTasks(text); !reflect.DeepEqual(got, tc.failing) {
			t.Errorf("%s [%s]: FailingTasks = %v, want %v", tc.file, tc.class, got, tc.failing)
		}
		if tc.form == "" {
			msg := gates.MissingLineProblem(text, owed)
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
		// A (was C/B): a context line naming Tasks 01 and 02 before the
		// line naming the task file is refused (a line naming several tasks
		// could be an order to implement them); the message now says to
		// start with `Task NN: <title>`.
		{"prompt04-context-line-before-file.md", "A", 0, "start the prompt with a `Task NN: <title>` line naming it"},
		// ok (was C): a status list "- Task 01: CSV encoder — COMPLETE"
		// after the prompt's own header is context.
		{"prompt05-status-list.md", "ok", 4, ""},
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
