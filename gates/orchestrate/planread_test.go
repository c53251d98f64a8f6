package orchestrate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The plan as models write it (issue 13): every spelling below means the
// same plan, and is read as that plan; every refusal quotes the line and
// says how to write it. The base plan: phase 1 with Tasks 01-02, phase 2
// with Task 03 (depends on 01, UX/DX review).

const baseMaster = `# Master Plan: word counter

Progress: 0/3

## Phase 1: Core
Status: pending
- [ ] Task 01: Parser
- [ ] Task 02: Formatter

## Phase 2: Docs
Status: pending
- [ ] Task 03: Document it
`

func basePlanFiles() PlanFiles {
	return PlanFiles{
		MasterPlan:             []byte(baseMaster),
		"task-01-parser.md":    []byte("# Task 01: Parser\n\nDepends On: none\nFiles: src/parser.go\nrequires_ux_dx_review: false\n"),
		"task-02-formatter.md": []byte("# Task 02: Formatter\n\nFiles: src/format.go\nrequires_ux_dx_review: false\n"),
		"task-03-docs.md":      []byte("# Task 03: Document it\n\nDepends On: 01\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n"),
	}
}

// readTask is what the gates read of one task.
type readTask struct {
	Phase int
	Deps  []int
	Files []string
	UXDX  bool
}

func readPlan(t *testing.T, files PlanFiles) (map[int]readTask, error) {
	t.Helper()
	p := ParsePlan(files)
	err := p.Validate()
	out := map[int]readTask{}
	for _, ph := range p.Snapshot().Phases {
		for _, tk := range ph.Tasks {
			out[tk.Number] = readTask{Phase: ph.Number, Deps: tk.DependsOn, Files: tk.Files, UXDX: tk.UXDX}
		}
	}
	return out, err
}

var baseRead = map[int]readTask{
	1: {Phase: 1, Files: []string{"src/parser.go"}},
	2: {Phase: 1, Files: []string{"src/format.go"}},
	3: {Phase: 2, Deps: []int{1}, Files: []string{"docs/usage.md"}, UXDX: true},
}

func TestBasePlanReads(t *testing.T) {
	got, err := readPlan(t, basePlanFiles())
	if err != nil || !reflect.DeepEqual(got, baseRead) {
		t.Fatalf("read %+v, %v", got, err)
	}
}

// edit changes one file of the base plan: replace old with new in it, or
// rename it (new name, same content) when old is "".
type edit struct{ file, old, new string }

func applyEdits(t *testing.T, edits ...edit) PlanFiles {
	t.Helper()
	f := basePlanFiles()
	for _, e := range edits {
		text, ok := f[e.file]
		if !ok {
			t.Fatalf("no file %s", e.file)
		}
		if e.old == "" {
			delete(f, e.file)
			f[e.new] = text
			continue
		}
		if !strings.Contains(string(text), e.old) {
			t.Fatalf("%s lacks %q", e.file, e.old)
		}
		f[e.file] = []byte(strings.Replace(string(text), e.old, e.new, 1))
	}
	return f
}

func with(read map[int]readTask, n int, change func(*readTask)) map[int]readTask {
	out := map[int]readTask{}
	for k, v := range read {
		out[k] = v
	}
	v := out[n]
	change(&v)
	out[n] = v
	return out
}

const t1, t2, t3 = "task-01-parser.md", "task-02-formatter.md", "task-03-docs.md"

// TestPlanSpellings: each variant changes one thing; it must read as the
// declared plan (usually the base plan: same meaning, other spelling).
func TestPlanSpellings(t *testing.T) {
	noDeps3 := with(baseRead, 3, func(r *readTask) { r.Deps = nil })
	for _, tc := range []struct {
		name  string
		edits []edit
		want  map[int]readTask
	}{
		// Task lines.
		{"task line lower case", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] task 01: Parser"}}, baseRead},
		{"task line bare number", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] 01: Parser"}}, baseRead},
		{"task line bold", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] **Task 01**: Parser"}}, baseRead},
		{"task line bold with title", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] **Task 01: Parser**"}}, baseRead},
		{"task line link", []edit{{MasterPlan, "- [ ] Task 02: Formatter", "- [ ] [Task 02](task-02-formatter.md)"}}, baseRead},
		{"task line link with title", []edit{{MasterPlan, "- [ ] Task 02: Formatter", "- [ ] [Task 02: Formatter](task-02-formatter.md)"}}, baseRead},
		{"task line star marker", []edit{{MasterPlan, "- [ ] Task 01: Parser", "* [ ] Task 01: Parser"}}, baseRead},
		{"task line numbered", []edit{{MasterPlan, "- [ ] Task 01: Parser", "1. [ ] Task 01: Parser"}}, baseRead},
		{"task line dash title", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] Task 01 - Parser"}}, baseRead},
		{"task line em dash", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] Task 01 — Parser"}}, baseRead},
		{"task line hash", []edit{{MasterPlan, "- [ ] Task 01: Parser", "- [ ] Task #1: Parser"}}, baseRead},
		{"indented sub-checkbox is not a task", []edit{{MasterPlan, "- [ ] Task 01: Parser\n", "- [ ] Task 01: Parser\n  - [ ] write the tests\n"}}, baseRead},
		{"checkbox before the first phase is not a task", []edit{{MasterPlan, "Progress: 0/3\n", "Progress: 0/3\n\n- [ ] review with the team\n"}}, baseRead},
		{"CRLF line endings", []edit{{MasterPlan, "- [ ] Task 01: Parser\n", "- [ ] Task 01: Parser\r\n"}, {t3, "Depends On: 01\n", "Depends On: 01\r\n"}}, baseRead},

		// Task file names.
		{"task file underscore", []edit{{t1, "", "task_01_parser.md"}}, baseRead},
		{"task file upper case", []edit{{t1, "", "TASK-01-Parser.md"}}, baseRead},
		{"task file number first", []edit{{t1, "", "01-parser.md"}}, baseRead},
		{"task file no slug", []edit{{t1, "", "task-01.md"}}, baseRead},
		{"task file no dash", []edit{{t1, "", "task01.md"}}, baseRead},

		// Depends On.
		{"depends_on", []edit{{t3, "Depends On: 01", "depends_on: 01"}}, baseRead},
		{"depends_on YAML list", []edit{{t3, "Depends On: 01", "depends_on: [01]"}}, baseRead},
		{"depends_on YAML quoted", []edit{{t3, "Depends On: 01", "depends_on: [\"01\"]"}}, baseRead},
		{"depends_on YAML block", []edit{{t3, "Depends On: 01\n", "depends_on:\n  - 01\n"}}, baseRead},
		{"Dependencies", []edit{{t3, "Depends On: 01", "Dependencies: 01"}}, baseRead},
		{"Dependencies heading list", []edit{{t3, "Depends On: 01\n", "## Dependencies\n\n- Task 01 (the parser)\n\n"}}, baseRead},
		{"Dependencies heading prose none", []edit{{t3, "Depends On: 01\n", "## Dependencies\nNone\n\n"}}, noDeps3},
		{"Depends On Task 01", []edit{{t3, "Depends On: 01", "Depends On: Task 01"}}, baseRead},
		{"Depends On bold", []edit{{t3, "Depends On: 01", "- **Depends On:** `01`"}}, baseRead},
		{"Depends On with a note", []edit{{t3, "Depends On: 01", "Depends On: 01 (see section 1.2)"}}, baseRead},
		{"Depends On with a comment", []edit{{t3, "Depends On: 01", "Depends On: 01  # the parser"}}, baseRead},
		{"Depends On none with a note", []edit{{t1, "Depends On: none", "Depends On: none (can run in parallel with Task 02)"}, {t2, "Files:", "Depends On: none (can run in parallel with Task 01)\nFiles:"}}, baseRead},
		{"Depends On N/A", []edit{{t1, "Depends On: none", "Depends On: N/A"}}, baseRead},
		{"Depends On empty YAML list", []edit{{t1, "Depends On: none", "depends_on: []"}}, baseRead},
		{"dependency only in MASTER_PLAN.md task line", []edit{{t3, "Depends On: 01\n", ""}, {MasterPlan, "- [ ] Task 03: Document it", "- [ ] Task 03: Document it (depends on 01)"}}, with(baseRead, 3, func(*readTask) {})},
		{"dependency only in MASTER_PLAN.md sub-bullet", []edit{{t3, "Depends On: 01\n", ""}, {MasterPlan, "- [ ] Task 03: Document it\n", "- [ ] Task 03: Document it\n  - Depends On: Task 01\n"}}, baseRead},
		{"dependency only in MASTER_PLAN.md sentence", []edit{{t3, "Depends On: 01\n", ""}, {MasterPlan, "## Phase 2: Docs\n", "## Phase 2: Docs\nTask 03 depends on Task 01.\n"}}, baseRead},
		{"dependency as (after Task 01)", []edit{{t3, "Depends On: 01\n", ""}, {MasterPlan, "- [ ] Task 03: Document it", "- [ ] Task 03: Document it (after Task 01)"}}, baseRead},
		{"dependency as Task 03 requires Task 01", []edit{{t3, "Depends On: 01\n", ""}, {MasterPlan, "## Phase 2: Docs\n", "## Phase 2: Docs\n- Task 03 requires Task 01\n"}}, baseRead},
		{"checkboxes after the phases are not tasks", []edit{{MasterPlan, "- [ ] Task 03: Document it\n", "- [ ] Task 03: Document it\n\n## Success criteria\n- [ ] All tests pass\n- [ ] The README explains it\n"}}, baseRead},
		{"a deeper heading inside a phase", []edit{{MasterPlan, "- [ ] Task 02: Formatter\n", "\n### Formatting\n- [ ] Task 02: Formatter\n"}}, baseRead},
		{"dependency in both places, agreeing", []edit{{MasterPlan, "- [ ] Task 03: Document it", "- [ ] Task 03: Document it (depends on Task 01)"}}, baseRead},

		// Files.
		{"Files to modify", []edit{{t1, "Files: src/parser.go", "Files to modify: src/parser.go"}}, baseRead},
		{"Files list", []edit{{t1, "Files: src/parser.go\n", "Files:\n- src/parser.go\n"}}, baseRead},
		{"Files heading list with notes", []edit{{t1, "Files: src/parser.go\n", "## Files to modify\n\n- `src/parser.go` — the tokenizer\n\n## Notes\nnone\n"}}, baseRead},
		{"Files bold code", []edit{{t1, "Files: src/parser.go", "**Files:** `src/parser.go`"}}, baseRead},
		{"Files with a note", []edit{{t1, "Files: src/parser.go", "Files: src/parser.go (new)"}}, baseRead},
		{"Files YAML list", []edit{{t1, "Files: src/parser.go", "files: [\"src/parser.go\"]"}}, baseRead},
		{"Files space separated", []edit{{t2, "Files: src/format.go", "Files: src/format.go src/pad.go"}}, with(baseRead, 2, func(r *readTask) { r.Files = []string{"src/format.go", "src/pad.go"} })},
		{"Files to create and to modify add up", []edit{{t2, "Files: src/format.go", "Files to create: src/pad.go\nFiles to modify: src/format.go"}}, with(baseRead, 2, func(r *readTask) { r.Files = []string{"src/pad.go", "src/format.go"} })},
		{"Files with a route group", []edit{{t2, "Files: src/format.go", "Files: app/(auth)/page.tsx"}}, with(baseRead, 2, func(r *readTask) { r.Files = []string{"app/(auth)/page.tsx"} })},
		{"Files in MASTER_PLAN.md sub-list", []edit{{t2, "Files: src/format.go\n", ""}, {MasterPlan, "- [ ] Task 02: Formatter\n", "- [ ] Task 02: Formatter\n  - Files: src/format.go\n"}}, baseRead},

		// UX/DX.
		{"UX/DX yes", []edit{{t3, "requires_ux_dx_review: true", "requires_ux_dx_review: yes"}}, baseRead},
		{"UX/DX with a note", []edit{{t3, "requires_ux_dx_review: true", "requires_ux_dx_review: true (users read the docs)"}}, baseRead},
		{"UX/DX with a comment", []edit{{t3, "requires_ux_dx_review: true", "requires_ux_dx_review: true  # user-facing"}}, baseRead},
		{"UX/DX spelled out", []edit{{t3, "requires_ux_dx_review: true", "Requires UX/DX review: true"}}, baseRead},
		{"UX/DX bold code", []edit{{t3, "requires_ux_dx_review: true", "- **requires_ux_dx_review:** `true`"}}, baseRead},
		{"UX/DX no", []edit{{t1, "requires_ux_dx_review: false", "requires_ux_dx_review: no"}}, baseRead},
		{"UX/DX in a fenced block", []edit{{t3, "Depends On: 01\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n", "```\nDepends On: 01\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n```\n"}}, baseRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readPlan(t, applyEdits(t, tc.edits...))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("read %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPlanRefusals: what could be read two ways, or not at all, fails
// validation quoting the line and saying how to write it. Paired with the
// spellings above: the same field, another meaning.
func TestPlanRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []edit
		want  string
	}{
		{"a checkbox that is not a task", []edit{{MasterPlan, "- [ ] Task 02: Formatter\n", "- [ ] Task 02: Formatter\n- [ ] Write the docs\n"}},
			`MASTER_PLAN.md line 9: "- [ ] Write the docs": a checkbox under a phase must be a task: write ` + "`- [ ] Task NN: title`"},
		{"a checkbox neither open nor done", []edit{{MasterPlan, "- [ ] Task 02", "- [-] Task 02"}},
			`MASTER_PLAN.md line 8: "- [-] Task 02: Formatter": the checkbox [-] is neither`},
		{"two tasks on one line", []edit{{MasterPlan, "- [ ] Task 02: Formatter", "- [ ] Task 02 & 04: Formatter"}},
			`MASTER_PLAN.md line 8: "- [ ] Task 02 & 04: Formatter": it names more than one task`},
		{"UX/DX template literal", []edit{{t3, "requires_ux_dx_review: true", "requires_ux_dx_review: true|false"}},
			`task-03-docs.md line 5: "requires_ux_dx_review: true|false": the value is not one of true, yes, false, no`},
		{"UX/DX maybe", []edit{{t3, "requires_ux_dx_review: true", "requires_ux_dx_review: maybe"}},
			`the value is not one of true, yes, false, no`},
		{"UX/DX missing", []edit{{t3, "requires_ux_dx_review: true\n", ""}},
			"task-03-docs.md: it has no `requires_ux_dx_review:` line"},
		{"UX/DX twice, differing", []edit{{t3, "requires_ux_dx_review: true\n", "requires_ux_dx_review: true\n\n## Notes\nrequires_ux_dx_review: false\n"}},
			`task-03-docs.md line 8: "requires_ux_dx_review: false": it says false, line 5 says true`},
		{"Files missing", []edit{{t2, "Files: src/format.go\n", ""}},
			"task-02-formatter.md: it has no `Files:` line; list every file the task creates or changes"},
		{"Files none", []edit{{t2, "Files: src/format.go", "Files: none"}},
			"task-02-formatter.md: its `Files:` line lists no file"},
		{"Files prose", []edit{{t2, "Files: src/format.go", "Files: update the formatter"}},
			`task-02-formatter.md line 3: "Files: update the formatter": separate the files with commas`},
		{"Depends On a missing task", []edit{{t3, "Depends On: 01", "Depends On: 07"}},
			`task-03-docs.md line 3: "Depends On: 07": Task 07 is not a task of MASTER_PLAN.md`},
		{"Depends On prose", []edit{{t3, "Depends On: 01", "Depends On: the parser task"}},
			`task-03-docs.md line 3: "Depends On: the parser task": "the" is not a task number`},
		{"Depends On none and a task", []edit{{t3, "Depends On: 01", "Depends On: none, 01"}},
			`it says both`},
		{"Depends On empty", []edit{{t3, "Depends On: 01", "Depends On:"}},
			`task-03-docs.md line 3: "Depends On:": the value is empty`},
		{"Files note naming another file after a code span", []edit{{t2, "Files: src/format.go", "Files: `src/format.go` (and src/pad.go)"}},
			`names another file (src/pad.go) beside its path`},
		{"Depends On as a range with an en dash is not a note", []edit{{t3, "Depends On: 01", "Depends On: 01 – 02"}},
			`task-03-docs.md line 3: "Depends On: 01 – 02"`},
		{"Depends On twice, differing", []edit{{t3, "Depends On: 01\n", "Depends On: 01\nDependencies: 02\n"}},
			`task-03-docs.md line 4: "Dependencies: 02": it says other dependencies than line 3`},
		{"MASTER_PLAN.md and task file disagree", []edit{{MasterPlan, "- [ ] Task 03: Document it", "- [ ] Task 03: Document it (depends on 02)"}},
			`MASTER_PLAN.md line 12: "- [ ] Task 03: Document it (depends on 02)": Task 03's dependencies here differ from its file task-03-docs.md`},
		{"a dependency sentence orch-hook cannot read", []edit{{MasterPlan, "## Phase 1: Core\n", "## Phase 1: Core\nThe formatter depends on Task 01 being merged.\n"}},
			`MASTER_PLAN.md line 6: "The formatter depends on Task 01 being merged.": it states a dependency orch-hook does not read`},
		{"a task outside any phase", []edit{{MasterPlan, "- [ ] Task 03: Document it\n", "- [ ] Task 03: Document it\n\n## Later\n- [ ] Task 04: Polish\n"}},
			`MASTER_PLAN.md line 15: "- [ ] Task 04: Polish": Task 04 is not under a phase heading`},
		{"a title that may state a dependency", []edit{{MasterPlan, "- [ ] Task 03: Document it", "- [ ] Task 03: Document it once Task 01 is done, after review"}},
			`MASTER_PLAN.md line 12: "- [ ] Task 03: Document it once Task 01 is done, after review": its title may state a dependency`},
		{"a dependency written before", []edit{{MasterPlan, "## Phase 2: Docs\n", "## Phase 2: Docs\nTask 01 must finish before Task 03.\n"}},
			`MASTER_PLAN.md line 11: "Task 01 must finish before Task 03.": it states a dependency orch-hook does not read`},
		{"a phase heading twice", []edit{{MasterPlan, "## Phase 2: Docs", "## Phase 1: Docs"}},
			`MASTER_PLAN.md line 10: "## Phase 1: Docs": phase 1 has two headings`},
		{"a dependency on a later phase", []edit{{t1, "Depends On: none", "Depends On: 03"}},
			`task-01-parser.md line 3: "Depends On: 03": Task 01 depends on Task 03 of a later phase (2)`},
		{"two files for one task", []edit{{t2, "", "task-02-formatter.md"}, {t1, "", "task-02-other.md"}},
			"task-02-formatter.md, task-02-other.md are all Task 02's file; keep one"},
		{"a cycle quotes its lines", []edit{{t1, "Depends On: none", "Depends On: 02"}, {t2, "Files:", "Depends On: 01\nFiles:"}},
			`tasks Task 01, Task 02 depend on each other in a cycle (task-01-parser.md line 3: "Depends On: 02"; task-02-formatter.md line 3: "Depends On: 01")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readPlan(t, applyEdits(t, tc.edits...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}

func TestTaskFileNumber(t *testing.T) {
	for name, want := range map[string]int{
		"task-01.md": 1, "task-01-parser.md": 1, "task_12_x.md": 12, "TASK-03.MD": 3, "Task-004-a.md": 4,
		"07-docs.md": 7, "task07.md": 7, "task-1.2.md": 1,
		"notes.md": -1, "01.md": -1, "task-x.md": -1, "task-01.txt": -1, "MASTER_PLAN.md": -1, "task-01a.md": -1, "12345-x.md": -1,
	} {
		n, ok := TaskFileNumber(name)
		if want < 0 && ok || want >= 0 && (!ok || n != want) {
			t.Errorf("%s: %d %v, want %d", name, n, ok, want)
		}
	}
}

func FuzzParsePlan(f *testing.F) {
	for _, files := range []PlanFiles{basePlanFiles()} {
		f.Add(string(files[MasterPlan]), string(files[t3]))
	}
	f.Add("## Phase 1\n- [ ] [Task 1](x\n  - Files:\n", "## Dependencies\n\n- \n\nFiles:\n- `")
	f.Fuzz(func(t *testing.T, master, task string) {
		p := ParsePlan(PlanFiles{MasterPlan: []byte(master), "task-01.md": []byte(task)})
		_ = p.Validate()
		_ = p.Snapshot()
		_ = fmt.Sprint(p.Problems)
	})
}
