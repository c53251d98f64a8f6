package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestStateDirIsOffLimits(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	state := testRoot + "/.orchestrator/state/checkpoint.json"
	for _, c := range []*gates.Call{
		writeCall(state, "{}"),
		editCall(state, "a", "b"),
		{Event: gates.PreToolUse, Tool: "NotebookEdit", Path: testRoot + "/.orchestrator/state/x.ipynb", Write: &gates.FileWrite{Notebook: true}},
		by(writeCall(state, "{}"), r.agentID, Implementer),
		writeCall(testRoot+"/.orchestrator/state", "x"),
	} {
		o := h.do(c)
		wantDeny(t, o, 0, "is orch-hook's state; no agent writes there. Use `orch-hook status` to read it.")
	}
	wantDeny(t, h.do(bashCall("echo {} > .orchestrator/state/checkpoint.json")), 0, "commands that name .orchestrator/state, or change or remove anything under .orchestrator, are not allowed")
	// Other files under .orchestrator are orch-hook's too (ESCALATION.md,
	// ...); only the task-planner's learnings file in step 6 is open.
	wantDeny(t, h.do(writeCall(testRoot+"/.orchestrator/notes.md", "notes")), 0, ".orchestrator/notes.md is orch-hook's")
	wantDeny(t, h.do(writeCall(testRoot+"/.orchestrator/ESCALATION.md", "forged")), 0, ".orchestrator/ESCALATION.md is orch-hook's")
	// Case does not get around it (macOS and Windows are case-insensitive).
	wantDeny(t, h.do(writeCall(testRoot+"/.Orchestrator/State/checkpoint.json", "{}")), 0, "is orch-hook's state")
	// Claude Code's own configuration is off limits while a workflow runs.
	wantDeny(t, h.do(by(writeCall(testRoot+"/.claude/settings.json", "{}"), r.agentID, Implementer)), 0, "is Claude Code's configuration")
}

func TestWritesOutsideTheProject(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	for _, p := range []string{"/etc/passwd", "/home/user/project-other/x.go", "/home/user/x.go", ""} {
		o := h.do(by(writeCall(p, "x"), r.agentID, Implementer))
		wantDeny(t, o, 0, "is outside the project (/home/user/project); while a workflow is active, files are written only inside it.")
	}
}

func TestProjectFileWrites(t *testing.T) {
	file := testRoot + "/src/a.go"
	t.Run("a code-implementer in flight in 4a", func(t *testing.T) {
		h := driveTo(t, S4a)
		r := h.launch(Implementer, implPrompt(1))
		wantAllow(t, h.do(by(writeCall(file, "package src"), r.agentID, Implementer)))
		wantAllow(t, h.do(by(editCall(file, "a", "b"), r.agentID, Implementer)))
		nb := by(&gates.Call{Event: gates.PreToolUse, Tool: "NotebookEdit", Path: testRoot + "/nb.ipynb", Write: &gates.FileWrite{Notebook: true}}, r.agentID, Implementer)
		wantAllow(t, h.do(nb))
		r.finish(implComplete)
		// Once returned, it writes no more.
		wantDeny(t, h.do(by(writeCall(file, "late"), r.agentID, Implementer)), 0, "orch-hook:code-implementer may not edit src/a.go now: only a code-implementer launched for a task in 4a or F2 writes project files.")
	})
	t.Run("a foreground code-implementer not tied yet", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.fg = true
		r := h.launch(Implementer, implPrompt(1))
		wantAllow(t, h.do(by(writeCall(file, "x"), r.agentID, Implementer)))
	})
	t.Run("in F2", func(t *testing.T) {
		h := driveTo(t, SF2)
		r := h.launch(Implementer, implPrompt(2))
		wantAllow(t, h.do(by(writeCall(file, "fix"), r.agentID, Implementer)))
	})
	t.Run("the main thread", func(t *testing.T) {
		for _, tc := range []struct {
			target string
			gate   int
		}{{S0a, 0}, {S2, 0}, {S4a, 0}, {S4b, 1}, {SF1, 3}, {SF2, 3}, {S4c, 0}, {S5a, 0}, {S6, 0}, {escalatedFix, 0}} {
			h := driveTo(t, tc.target)
			o := h.do(writeCall(file, "x"))
			wantDeny(t, o, tc.gate, "the orchestrator may not edit src/a.go now", "Delegate the change to code-implementer.")
		}
	})
	t.Run("other agents", func(t *testing.T) {
		h := driveTo(t, S4b)
		r := h.launch(Quality, "Gate")
		o := h.do(by(writeCall(file, "x"), r.agentID, Quality))
		wantDeny(t, o, 1, "orch-hook:code-quality may not edit src/a.go now")
		if strings.Contains(o.Reason, "Delegate") {
			t.Error("a subagent is told to delegate")
		}
		h = driveTo(t, S4a)
		h.launch(Implementer, implPrompt(1))
		ex := writeCall(file, "x")
		ex.AgentID, ex.AgentType = "a-explore", "Explore"
		wantDeny(t, h.do(ex), 0, "Explore may not edit src/a.go now")
	})
	t.Run("nothing is gated once complete", func(t *testing.T) {
		h := driveTo(t, Complete)
		wantAllow(t, h.do(writeCall(file, "x")))
	})
}

func TestFailureAnalysisWrites(t *testing.T) {
	h := driveTo(t, SF1, twoPhases(true)...)
	wantDeny(t, h.writeFile(writeCall(tasksPath(taskFileName(2)), "x")), 3, "task-02-step.md may change in F1 only by task-planner's FAILURE_ANALYSIS.")
	r := h.launch(Planner, "FAILURE_ANALYSIS")
	updated := taskText(task{N: 2, Files: []string{"b.go", "b_test.go"}}) + "\n## Fix instructions\nHandle the empty case.\n"
	wantAllow(t, r.write(taskFileName(2), updated))
	if len(ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files))) != 0 {
		t.Error("the allowed change's hash was not recorded")
	}
	wantDeny(t, r.write(MasterPlan, string(h.files[MasterPlan])+"\n"), 3, "FAILURE_ANALYSIS may update task files only, not MASTER_PLAN.md.")
	flip := strings.Replace(taskText(task{N: 4, Files: []string{"d.go"}, UX: true}), "requires_ux_dx_review: true", "requires_ux_dx_review: false", 1)
	wantDeny(t, r.write(taskFileName(4), flip), 3, "task-04-step.md: requires_ux_dx_review was fixed at approval and may not change.")
	// The flag is read as the plan reads it (issue 13): another spelling
	// of the same value is fine; another value, a value that does not
	// read, or removing the line is a change. Paired with the flip above.
	base4 := taskText(task{N: 4, Files: []string{"d.go"}, UX: true})
	for _, tc := range []struct {
		name, text string
		deny       bool
	}{
		{"same value, another spelling", strings.Replace(base4, "requires_ux_dx_review: true", "Requires UX/DX review: yes  # user-facing", 1), false},
		{"flipped with yes/no", strings.Replace(base4, "requires_ux_dx_review: true", "requires_ux_dx_review: no", 1), true},
		{"unreadable", strings.Replace(base4, "requires_ux_dx_review: true", "requires_ux_dx_review: true|false", 1), true},
		{"removed", strings.Replace(base4, "requires_ux_dx_review: true\n", "", 1), true},
		{"a second, contrary line", base4 + "\nrequires_ux_dx_review: false\n", true},
	} {
		o := r.write(taskFileName(4), tc.text)
		if tc.deny {
			wantDeny(t, o, 3, "requires_ux_dx_review was fixed at approval and may not change.")
		} else {
			wantAllow(t, o)
		}
	}
	wantDeny(t, r.write("task-04-other.md", base4), 0, "Task 04 already has its file task-04-step.md; change that one instead of adding task-04-other.md.")
	nb := by(&gates.Call{Event: gates.PreToolUse, Tool: "NotebookEdit", Path: tasksPath(taskFileName(2)), Write: &gates.FileWrite{Notebook: true}}, r.agentID, Planner)
	wantDeny(t, h.do(nb), 0, "task-02-step.md may only be changed with Write or Edit.")
	r.finish("Root cause found.\n" + LineAnalysis)
	h.expect(SF2)
	wantDeny(t, h.writeFile(by(writeCall(tasksPath(taskFileName(2)), "late"), r.agentID, Planner)), 3, "task-02-step.md may not change at step F2.")
}

func TestPlanFilesAtOtherSteps(t *testing.T) {
	for _, tc := range []struct {
		target string
		gate   int
	}{{S0a, 0}, {S3, 0}, {S4a, 0}, {S4b, 1}, {S5a, 0}, {S6, 0}, {escalatedFix, 0}} {
		h := driveTo(t, tc.target)
		o := h.writeFile(writeCall(tasksPath(MasterPlan), "# Plan\n"))
		want := "MASTER_PLAN.md may not change at step " + string(h.w.Current) + "."
		if bookkeeping[h.w.Current] {
			want = "MASTER_PLAN.md may not change at step " + string(h.w.Current) + ": only the Status: lines of phases up to"
		}
		wantDeny(t, o, tc.gate, want)
	}
}

// 4c as models do it (issue 13): ticks first, then Status: and Progress:
// in separate Edits, after the phase has moved on; a Write whose trailing
// newline differs. Paired: nothing else changes after the ticks.
func TestPlanBookkeepingAfterTicks(t *testing.T) {
	for _, last := range []bool{false, true} {
		plan := twoPhases(false)
		if last {
			plan = onePhase(false)
		}
		h := driveTo(t, S4c, plan...)
		master := string(h.files[MasterPlan])
		next := S4a
		if last {
			next = S5a
		}
		// Ticks as one Write without the trailing newline.
		o := h.writeFile(writeCall(tasksPath(MasterPlan), strings.TrimSuffix(tickText(master, h.phaseTasks()...), "\n")))
		wantAllow(t, o)
		h.expect(next)
		edit := func(old, new string) gates.Outcome {
			return h.writeFile(editCall(tasksPath(MasterPlan), old, new))
		}
		wantAllow(t, edit("## Phase 1: "+plan[0].Title+"\nStatus: pending", "## Phase 1: "+plan[0].Title+"\nStatus: complete"))
		total := 3
		if last {
			total = 2
		}
		wantAllow(t, edit(fmt.Sprintf("Progress: 0/%d", len(plan[0].Tasks)+map[bool]int{false: 2, true: 0}[last]), fmt.Sprintf("Progress: %d/%d", len(plan[0].Tasks), total+map[bool]int{false: 2, true: 0}[last])))
		h.expect(next)
		// Paired refusals: a task line, a later phase's Status:, an added
		// line, a subagent's edit.
		wantDeny(t, edit("Task 01: step 1", "Task 01: step one"), 0, "may not change at step "+next)
		if !last {
			// The new current phase's Status: is the orchestrator's too;
			// ticking its tasks is not (yet).
			wantAllow(t, edit("## Phase 2: Polish\nStatus: pending", "## Phase 2: Polish\nStatus: in progress"))
			wantDeny(t, edit("- [ ] Task 04", "- [x] Task 04"), 0, "may not change at step 4a: line")
		}
		wantDeny(t, edit("Status: complete", "Status: complete\nNote: done"), 0, "this edit adds or removes lines")
		if !last {
			r := h.launch(Implementer, implPrompt(h.phaseTasks()[0]))
			wantDeny(t, h.writeFile(by(editCall(tasksPath(MasterPlan), "Status: complete", "Status: done"), r.agentID, Implementer)), 0, "may not change at step 4a")
		}
	}
	// Past 5a the plan is closed.
	h := driveTo(t, S6)
	wantDeny(t, h.writeFile(editCall(tasksPath(MasterPlan), "Progress:", "Progress:")), 0, "MASTER_PLAN.md may not change at step 6.")
}

func TestPlanTampering(t *testing.T) {
	const (
		recorded = "Progress is blocked until every file is back to the content orch-hook recorded. To repair: Write the file back with exactly its recorded content (shown in the diff)"
		removed  = "Progress is blocked until it is removed."
	)
	cases := []struct {
		name   string
		tamper func(f PlanFiles)
		files  string
		then   string
	}{
		{"ticking another phase through Bash", func(f PlanFiles) { f[MasterPlan] = []byte(tickText(string(f[MasterPlan]), 4)) }, "MASTER_PLAN.md", recorded},
		{"editing a UX/DX flag through Bash", func(f PlanFiles) {
			f[taskFileName(4)] = []byte(strings.Replace(string(f[taskFileName(4)]), "false", "true", 1))
		}, "task-04-step.md", recorded},
		{"a new file", func(f PlanFiles) { f["task-09-extra.md"] = []byte("# Task 09") }, "task-09-extra.md", removed},
		{"a deleted file", func(f PlanFiles) { delete(f, taskFileName(5)) }, "task-05-step.md", recorded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := driveTo(t, S4a)
			saved := copyFiles(h.files)
			tc.tamper(h.files)
			o := h.start(Implementer, implPrompt(1)).launch
			wantDeny(t, o, 0, "the plan changed outside orch-hook (not through an allowed Write/Edit): "+tc.files+" under .orchestrator/tasks. "+tc.then)
			if len(h.w.InFlight()) != 0 {
				t.Fatal("a launch went through")
			}
			// Reverted: progress again.
			h.files = saved
			wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
		})
	}
	t.Run("plan writes are blocked too", func(t *testing.T) {
		h := driveTo(t, S4c)
		h.files[taskFileName(5)] = []byte("changed by sed")
		wantDeny(t, h.tick(), 0, "the plan changed outside orch-hook", "task-05-step.md")
		h.expect(S4c)
	})
	t.Run("not checked while planning", func(t *testing.T) {
		h := driveTo(t, S3)
		h.user("/orch-hook:request-changes smaller")
		h.files["scratch.md"] = []byte("the planner's notes, written through Bash")
		wantAllow(t, h.start(Planner, "Revise").launch)
	})
	t.Run("the hash follows every allowed change", func(t *testing.T) {
		h := driveTo(t, S4c)
		h.tick(1)
		h.tick(2, 3)
		h.expect(S4a)
		wantAllow(t, h.start(Implementer, implPrompt(4)).launch)
	})
}

func TestUnderFolds(t *testing.T) {
	for _, tc := range []struct {
		rel, dir string
		want     bool
	}{
		{".orchestrator/state/checkpoint.json", gates.StateDir, true},
		{".Orchestrator/STATE/x", gates.StateDir, true},
		{".orche\u017ftrator/\u017ftate/checkpoint.json", gates.StateDir, true},
		{".orchestrator/state", gates.StateDir, true},
		{".orchestrator/statefile", gates.StateDir, false},
		{".orchestrator", gates.StateDir, false},
		{"src/.orchestrator/state", gates.StateDir, false},
	} {
		if got := gates.Under(tc.rel, tc.dir); got != tc.want {
			t.Errorf("under(%q, %q) = %v, want %v", tc.rel, tc.dir, got, tc.want)
		}
	}
}

// A Write to the tasks directory itself, below it, or through a folded
// spelling is refused, never cut by byte counts (which panicked, and a
// crashed hook lets the call through).
func TestPlanWriteOddPaths(t *testing.T) {
	h := driveTo(t, S4c)
	for _, rel := range []string{TasksDir, TasksDir + "/sub/x.md", ".orche\u017ftrator/tasks/MASTER_PLAN.md"} {
		c := &gates.Call{Event: gates.PreToolUse, Tool: "Write", Path: testRoot + "/" + rel, Write: &gates.FileWrite{Content: new(string)}}
		o := h.do(c)
		if o.Verdict != gates.Deny {
			t.Errorf("Write %s: verdict %v (%s)", rel, o.Verdict, o.Reason)
		}
	}
}
