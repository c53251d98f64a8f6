package orchestrate

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePlanTolerant(t *testing.T) {
	master := `# Master Plan

**Progress:** 1/6

## Phase 1: Foundation
**Status:** in progress

- [x] Task 01: Set up
* [ ] **Task 02**: Models
1. [ ] 03 - Handlers

### **Phase 2** - Polish
Status: pending
- [X] Task 4. Docs
+ [ ] Task 005: Styles
- [ ] Task 06 — Final touch
`
	p := ParsePlan(PlanFiles{MasterPlan: []byte(master)})
	if len(p.Phases) != 2 {
		t.Fatalf("phases %d", len(p.Phases))
	}
	got := map[int][]int{}
	for _, ph := range p.Phases {
		got[ph.Number] = nil
		for _, tk := range ph.Tasks {
			got[ph.Number] = append(got[ph.Number], tk.Number)
		}
	}
	if !reflect.DeepEqual(got, map[int][]int{1: {1, 2, 3}, 2: {4, 5, 6}}) {
		t.Errorf("tasks %v", got)
	}
	ph1, ph2 := p.Phase(1), p.Phase(2)
	if ph1.Title != "Foundation" || ph1.Status != "in progress" || ph2.Title != "Polish" || ph2.Status != "pending" {
		t.Errorf("phase 1 %q/%q, phase 2 %q/%q", ph1.Title, ph1.Status, ph2.Title, ph2.Status)
	}
	if !ph1.Tasks[0].Checked || ph1.Tasks[1].Checked || !ph2.Tasks[0].Checked {
		t.Error("checked marks")
	}
	if ph1.Tasks[1].Title != "Models" || ph1.Tasks[2].Title != "Handlers" || ph2.Tasks[2].Title != "Final touch" {
		t.Errorf("titles %q %q %q", ph1.Tasks[1].Title, ph1.Tasks[2].Title, ph2.Tasks[2].Title)
	}
	if p.progress != 2 {
		t.Errorf("progress line %d", p.progress)
	}
	if p.MaxTask() != 6 || p.FirstOpenPhase() != 1 || p.NextOpenPhase(1) != 2 || p.NextOpenPhase(2) != 0 || p.PhaseOf(5).Number != 2 || p.PhaseOf(9) != nil {
		t.Error("phase helpers")
	}
	if p.PhaseChecked(1) || p.PhaseChecked(3) || p.Phase(3) != nil {
		t.Error("PhaseChecked")
	}
}

func TestParseTaskFile(t *testing.T) {
	text := `# Task 03

- **Depends On:** 01, 02
Parallel With: Task 04
**Files**: ` + "`a.go`, b/c.go , \"d.go\"" + `
requires_ux_dx_review: ` + "`true`" + `
`
	tf := parseTaskFile(3, "task-03-x.md", text)
	got := TaskFile{Number: tf.Number, Name: tf.Name, DependsOn: tf.DependsOn, ParallelWith: tf.ParallelWith, Files: tf.Files, UXDX: tf.UXDX, Problems: tf.Problems}
	want := TaskFile{Number: 3, Name: "task-03-x.md", DependsOn: []int{1, 2}, ParallelWith: []int{4}, Files: []string{"a.go", "b/c.go", "d.go"}, UXDX: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// Issue 13: "yes" is true (it was read as false: a misread that
	// skipped 5b); a value that is none of true/yes/false/no is a problem.
	for s, want := range map[string]bool{"requires_ux_dx_review: false": false, "requires_ux_dx_review: yes": true, "**requires_ux_dx_review**: True": true} {
		tf := parseTaskFile(1, "t", s)
		if tf.UXDX != want || len(tf.Problems) != 0 {
			t.Errorf("%q: UXDX = %v, problems %v", s, tf.UXDX, tf.Problems)
		}
	}
	if f := parseTaskFile(1, "t", "Files: none").Files; len(f) != 0 {
		t.Errorf("Files: none = %v", f)
	}
	// Only task-NN*.md files are task files; the first name wins.
	p := ParsePlan(PlanFiles{"task-02-a.md": []byte("Files: a.go"), "task-02-b.md": []byte("Files: b.go"), "notes.md": []byte("Files: z.go"), "task-x.md": nil})
	if len(p.Tasks) != 1 || p.Tasks[2].Name != "task-02-a.md" {
		t.Errorf("tasks %+v", p.Tasks)
	}
}

func TestValidate(t *testing.T) {
	ok := planFiles(twoPhases(false)...)
	if err := ParsePlan(ok).Validate(); err != nil {
		t.Fatalf("valid plan: %v", err)
	}
	// A task file the plan does not list is ignored (a planner that
	// revised the plan to fewer tasks cannot delete files), and the user
	// is shown it before the approval.
	extra := copyFiles(ok)
	extra[taskFileName(9)] = []byte("# spare")
	p := ParsePlan(extra)
	if err := p.Validate(); err != nil {
		t.Errorf("extra task file: %v", err)
	}
	if d := p.Snapshot().Describe(); !strings.Contains(d, "Ignored (task files MASTER_PLAN.md does not list): task-09-step.md") {
		t.Errorf("the spare file is not shown:\n%s", d)
	}
}

func TestSnapshot(t *testing.T) {
	p := ParsePlan(planFiles(twoPhases(true)...))
	s := p.Snapshot()
	if len(s.Phases) != 2 || s.Phase(2).Title != "Polish" || !reflect.DeepEqual(s.Phase(1).Numbers(), []int{1, 2, 3}) {
		t.Fatalf("snapshot %+v", s)
	}
	t3 := s.Task(3)
	if !reflect.DeepEqual(t3.DependsOn, []int{1}) || !reflect.DeepEqual(t3.Files, []string{"c.go"}) || t3.UXDX {
		t.Errorf("task 03 %+v", t3)
	}
	if !s.Task(4).UXDX || !reflect.DeepEqual(s.Task(2).Parallel, []int{1}) || s.Task(9) != nil || s.Phase(9) != nil {
		t.Error("snapshot fields")
	}
	var nilSnap *PlanSnapshot
	if nilSnap.Phase(1) != nil || nilSnap.Task(1) != nil {
		t.Error("nil snapshot")
	}
}

func TestHashes(t *testing.T) {
	f := planFiles(onePhase(false)...)
	h1 := HashPlanFiles(f)
	if len(h1) != 3 || len(ChangedFiles(h1, HashPlanFiles(copyFiles(f)))) != 0 {
		t.Fatalf("hashes %v", h1)
	}
	g := copyFiles(f)
	g[MasterPlan] = append(g[MasterPlan], '\n')
	delete(g, taskFileName(1))
	g["z.md"] = nil
	if got := ChangedFiles(h1, HashPlanFiles(g)); !reflect.DeepEqual(got, []string{MasterPlan, taskFileName(1), "z.md"}) {
		t.Errorf("changed %v", got)
	}
}

func TestCheckTickingUnits(t *testing.T) {
	base := masterText(twoPhases(false)...)
	p := ParsePlan(PlanFiles{MasterPlan: []byte(base)})
	if err := p.CheckTicking(1, base); err != nil {
		t.Errorf("no change: %v", err)
	}
	if err := p.CheckTicking(2, tickText(base, 4)); err != nil {
		t.Errorf("phase 2 tick: %v", err)
	}
	err := p.CheckTicking(2, tickText(base, 1))
	if _, ok := err.(*PlanEditError); !ok || !strings.Contains(err.Error(), "Task 01 belongs to another phase; only phase 2's tasks may be ticked now") {
		t.Errorf("err = %v", err)
	}
}

func TestCheckAppendUnits(t *testing.T) {
	base := masterText(onePhase(false)...)
	p := ParsePlan(PlanFiles{MasterPlan: []byte(base)})
	added, err := p.CheckAppend(base + "\n## Phase 2: Fix\n- [ ] Task 03: fix\n")
	if err != nil || added == nil || added.Number != 2 || len(added.Tasks) != 1 {
		t.Fatalf("append: %+v %v", added, err)
	}
	// Nothing appended yet; a Progress: update alone is fine.
	if added, err := p.CheckAppend(strings.Replace(base, "Progress: 0/2", "Progress: 0/3", 1)); err != nil || added != nil {
		t.Errorf("progress: %+v %v", added, err)
	}
	if _, err := p.CheckAppend("# Plan\n"); err == nil || !strings.Contains(err.Error(), "removes lines") {
		t.Errorf("truncate: %v", err)
	}
}

func TestMarkSkipped(t *testing.T) {
	plan := twoPhases(false)
	plan[0].Tasks[0].Done = true
	p := ParsePlan(planFiles(plan...))
	text := p.MarkSkipped(1)
	for _, want := range []string{"- [x] Task 01: step 1\n", "- [x] Task 02: step 2 (skipped: known issue)\n", "- [x] Task 03: step 3 (skipped: known issue)\n", "- [ ] Task 04: step 4\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	q := ParsePlan(PlanFiles{MasterPlan: []byte(text)})
	if !q.PhaseChecked(1) || q.PhaseChecked(2) {
		t.Error("the skipped phase does not parse as checked")
	}
	if p.MarkSkipped(9) != masterText(plan...) {
		t.Error("an unknown phase changed the text")
	}
}
