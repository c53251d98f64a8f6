package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestClarificationRounds(t *testing.T) {
	h := driveTo(t, S0a)
	for round := 1; round <= MaxRounds; round++ {
		o := h.analyst(LineQuestions)
		wantContext(t, o, fmt.Sprintf("round %d/3", round))
		// Questions pending: no relaunch until the user answers.
		wantDeny(t, h.start(Analyst, "Analyze again").launch, 0, "the user has not answered the questions yet", "waiting for the user's answers")
		// A task-notification is no answer.
		h.do(notification("a999", "toolu_999", "completed", "unrelated"))
		if h.w.WaitingOn != "answers" {
			t.Fatalf("round %d: a task-notification answered the questions", round)
		}
		if round < MaxRounds {
			h.answer()
			h.expect(S0a)
		}
	}
	if h.w.Rounds != MaxRounds {
		t.Fatalf("rounds = %d", h.w.Rounds)
	}
	o := h.answer()
	h.expect(S2)
	if h.w.Forced != "defaults" {
		t.Errorf("forced = %q", h.w.Forced)
	}
	wantContext(t, o, "-> 2 (forced: defaults) | launch task-planner; fill remaining gaps with sensible defaults")
	// Further analyst launches are denied.
	wantDeny(t, h.start(Analyst, "One more round").launch, 0, "requirements-analyst is not part of planning (step 2): launch task-planner.")
	wantAllow(t, h.start(Planner, "Plan with defaults").launch)
}

func TestClarificationWrongAgents(t *testing.T) {
	for _, target := range []string{S0a, S0b} {
		h := driveTo(t, target)
		for _, a := range []string{Researcher, Explorer, Planner, Implementer, Quality, UXDX} {
			wantDeny(t, h.start(a, "x").launch, 0, a+" is not part of step "+target+"; clarification is requirements-analyst's job.")
		}
		r := h.launch(Analyst, "Analyze")
		wantDeny(t, h.start(Analyst, "Analyze twice").launch, 0, "requirements-analyst is already running ("+r.toolUse+"); wait for it to return.")
	}
}

func TestDiscoveryRules(t *testing.T) {
	h := driveTo(t, S1)
	if h.w.Discovery != 1 {
		t.Fatalf("the entry from 0a counts: discovery = %d", h.w.Discovery)
	}
	for _, a := range []string{Analyst, Planner, Implementer} {
		wantDeny(t, h.start(a, "x").launch, 0, a+" is not part of discovery (phase 1): launch researcher and code-explorer.")
	}
	// Any text completes a discovery agent; each returns once per round.
	r := h.launch(Researcher, "Research")
	wantDeny(t, h.start(Researcher, "Research more").launch, 0, "researcher is already running")
	r.finish("Some notes without any result line.")
	wantDeny(t, h.start(Researcher, "Research again").launch, 0, "researcher already returned in this discovery round.", "Next: launch code-explorer (in parallel).")
	h.run(Explorer, "Explore", "Map.")
	h.expect(S0b)
	// A second round (discovery 2/2) launches both again.
	o := h.analyst(LineDiscovery)
	wantContext(t, o, "discovery 2/2")
	h.expect(S1)
	r2 := h.launch(Researcher, "Research round 2")
	h.expect(S1)
	h.run(Explorer, "Explore round 2", "More.")
	h.expect(S1) // the researcher of this round has not returned yet
	r2.finish("Done.")
	h.expect(S0b)
	// discovery >= 2: forced to planning.
	o = h.analyst(LineDiscovery)
	h.expect(S2)
	wantContext(t, o, "(forced: discovery limit 2 reached)")
}

func TestPlanningNeedsValidPlan(t *testing.T) {
	valid := planFiles(twoPhases(false)...)
	cases := []struct {
		name  string
		files PlanFiles
		why   string
	}{
		{"no MASTER_PLAN.md", PlanFiles{taskFileName(1): valid[taskFileName(1)]}, ".orchestrator/tasks/MASTER_PLAN.md does not exist"},
		{"no phase", PlanFiles{MasterPlan: []byte("# Plan\n\n- [ ] Task 01: x\n")}, "MASTER_PLAN.md has no phase heading"},
		{"no task", PlanFiles{MasterPlan: []byte("# Plan\n\n## Phase 1: Empty\n")}, "MASTER_PLAN.md lists no task"},
		{"a task file missing", func() PlanFiles { f := copyFiles(valid); delete(f, taskFileName(5)); return f }(), "MASTER_PLAN.md lists Task 05 but .orchestrator/tasks/task-05*.md does not exist"},
		{"a task listed twice", func() PlanFiles {
			f := copyFiles(valid)
			f[MasterPlan] = []byte(string(f[MasterPlan]) + "- [ ] Task 02: again\n")
			return f
		}(), "MASTER_PLAN.md lists Task 02 twice (phases 1 and 2)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := driveTo(t, S2)
			r := h.launch(Planner, "Plan")
			for name, content := range tc.files {
				wantAllow(t, r.write(name, string(content)))
			}
			o := r.finish("Plan written.")
			h.expect(S2)
			wantContext(t, o, "the plan does not validate: "+tc.why, "Relaunch task-planner to fix it.")
			// The planner may be relaunched and fix it.
			r = h.launch(Planner, "Fix the plan")
			for name, content := range valid {
				wantAllow(t, r.write(name, string(content)))
			}
			r.finish("Fixed.")
			h.expect(S3)
		})
	}
}

func TestPlanningWhoWrites(t *testing.T) {
	h := driveTo(t, S2)
	wantDeny(t, h.writeFile(writeCall(tasksPath(MasterPlan), "# Plan\n")), 0, "in planning (2) only the task-planner writes .orchestrator/tasks; launch task-planner.")
	for _, a := range []string{Analyst, Implementer, Quality} {
		wantDeny(t, h.start(a, "x").launch, 0, a+" is not part of planning (step 2): launch task-planner.")
	}
	r := h.launch(Planner, "Plan")
	wantDeny(t, h.start(Planner, "Plan twice").launch, 0, "task-planner is already running")
	// Another agent's write is no planner's.
	wantDeny(t, h.writeFile(by(writeCall(tasksPath(MasterPlan), "x"), "a998", Researcher)), 0, "only the task-planner writes")
	wantAllow(t, r.write(MasterPlan, masterText(twoPhases(false)...)))
}

func TestApproval(t *testing.T) {
	t.Run("only in 3", func(t *testing.T) {
		h := driveTo(t, S2)
		wantBlock(t, h.approve(), 0, "there is no plan waiting for approval.")
		wantBlock(t, h.user("/orch-hook:request-changes more"), 0, "there is no plan waiting for approval to change.")
		h.expect(S2)
	})
	t.Run("nothing runs before approval", func(t *testing.T) {
		h := driveTo(t, S3)
		for _, a := range WorkflowAgents {
			wantDeny(t, h.start(a, "Task 01").launch, 0, a+" may not run before the user approves the plan.")
		}
		wantAllow(t, h.do(stopCall())) // the user is waited on
	})
	t.Run("request-changes needs text, then approval again", func(t *testing.T) {
		h := driveTo(t, S3)
		wantBlock(t, h.user("/orch-hook:request-changes"), 0, "say what to change: /orch-hook:request-changes <what to change>.")
		h.expect(S3)
		h.user("/orch-hook:request-changes one phase only")
		h.expect(S2)
		if h.w.WaitingOn != "" {
			t.Errorf("waiting %q", h.w.WaitingOn)
		}
		h.plan = onePhase(false)
		r := h.launch(Planner, "Revise")
		wantAllow(t, r.write(MasterPlan, masterText(h.plan...)))
		r.finish("Revised.")
		h.expect(S3)
		o := h.approve()
		h.expect(S4a)
		wantContext(t, o, "phase 1 of 1")
	})
	t.Run("a plan with ticked tasks does not validate", func(t *testing.T) {
		// Ticking phase 1 in the plan would skip it (the workflow starts
		// at the first open phase): only tasks orch-hook saw done may be
		// ticked.
		plan := twoPhases(false)
		for i := range plan[0].Tasks {
			plan[0].Tasks[i].Done = true
		}
		h := driveTo(t, S2, plan...)
		r := h.launch(Planner, "Plan it")
		wantAllow(t, r.write(MasterPlan, masterText(h.plan...)))
		for _, ph := range h.plan {
			for _, tk := range ph.Tasks {
				h.files[taskFileName(tk.N)] = []byte(taskText(tk))
			}
		}
		wantContext(t, r.finish("Planned."), "the plan does not validate", "Task 01, Task 02, Task 03 are ticked ([x]) in MASTER_PLAN.md before orch-hook saw them done; untick them")
		h.expect(S2)
	})
	t.Run("a plan changed between validation and approval", func(t *testing.T) {
		h := driveTo(t, S3, twoPhases(true)...)
		// A Bash edit at step 3: Task 03 loses its dependencies, Task 04
		// its UX/DX flag, and phase 1 gets ticked.
		h.files[taskFileName(3)] = []byte(taskText(task{N: 3, Files: []string{"c.go"}}))
		h.files[taskFileName(4)] = []byte(taskText(task{N: 4, Files: []string{"d.go"}}))
		wantBlock(t, h.approve(), 0, "approval refused: the plan changed since it was validated, not through a write orch-hook allowed (task-03", "task 03: Depends On 01 -> none", "task 04: requires_ux_dx_review true -> false", "review it and type /orch-hook:approve again")
		h.expect(S3)
		// Re-validated: approving again approves what the user now saw.
		h.approve()
		h.expect(S4a)
		if s := h.w.Plan.Task(3); len(s.DependsOn) != 0 {
			t.Errorf("Task 03 depends on %v after approval", s.DependsOn)
		}
		if h.w.uxRequired() {
			t.Error("the UX/DX flag of Task 04 is still set")
		}
	})
	t.Run("ticks added at step 3 are refused at approval", func(t *testing.T) {
		h := driveTo(t, S3, twoPhases(false)...)
		plan := twoPhases(false)
		for i := range plan[0].Tasks {
			plan[0].Tasks[i].Done = true
		}
		h.files[MasterPlan] = []byte(masterText(plan...))
		wantBlock(t, h.approve(), 0, "approval refused", "task 01: ticked [x] in MASTER_PLAN.md", "Task 01, Task 02, Task 03 are ticked ([x])")
		wantBlock(t, h.approve(), 0, "approval refused: Task 01, Task 02, Task 03 are ticked")
		h.expect(S3)
	})
	t.Run("a plan that no longer validates", func(t *testing.T) {
		h := driveTo(t, S3)
		delete(h.files, taskFileName(4))
		wantBlock(t, h.approve(), 0, "the plan does not validate any more", "/orch-hook:request-changes")
		h.expect(S3)
	})
	t.Run("dependencies and UX/DX flags are snapshotted at approval", func(t *testing.T) {
		h := driveTo(t, S3, twoPhases(true)...)
		h.approve()
		if s := h.w.Plan.Task(3); len(s.DependsOn) == 0 {
			t.Errorf("Task 03's dependencies were not snapshotted")
		}
		if !h.w.Plan.Task(4).UXDX || !h.w.uxRequired() {
			t.Error("the UX/DX flag of Task 04 was not snapshotted")
		}
	})
}

func TestImplementationParallelRules(t *testing.T) {
	shared := []phase{{N: 1, Title: "Core", Tasks: []task{
		{N: 1, Files: []string{"a.go", "shared.go"}},
		{N: 2, Files: []string{"shared.go"}},
		{N: 3, Files: []string{"c.go"}, Deps: []int{1}},
		{N: 4, Files: []string{"d.go"}},
	}}, {N: 2, Title: "Next", Tasks: []task{{N: 5, Files: []string{"e.go"}}}}}

	t.Run("independent tasks run in parallel", func(t *testing.T) {
		h := driveTo(t, S4a)
		a := h.launch(Implementer, implPrompt(1))
		b := h.launch(Implementer, implPrompt(2))
		if got := h.w.runningTasks(); fmt.Sprint(got) != "[1 2]" {
			t.Fatalf("running %v", got)
		}
		if n := h.w.Next(h.env()); n != "wait for code-implementer (Task 01, Task 02)" {
			t.Errorf("next = %q", n)
		}
		o := b.finish(implComplete) // in any order
		wantContext(t, o, "4a Task 02 COMPLETE -> 4a | still open: Task 01, Task 03")
		a.finish(implComplete)
		h.implement(3)
		h.expect(S4b)
	})
	t.Run("Depends On", func(t *testing.T) {
		h := driveTo(t, S4a)
		wantDeny(t, h.start(Implementer, implPrompt(3)).launch, 0, "Task 03 depends on Task 01, which has not returned; launch it after Task 01.")
		a := h.launch(Implementer, implPrompt(1))
		wantDeny(t, h.start(Implementer, implPrompt(3)).launch, 0, "depends on Task 01")
		a.finish(implBlocked) // BLOCKED is not returned
		wantDeny(t, h.start(Implementer, implPrompt(3)).launch, 0, "depends on Task 01")
		h.implement(1)
		wantAllow(t, h.start(Implementer, implPrompt(3)).launch)
	})
	t.Run("Files overlap a task in flight", func(t *testing.T) {
		h := driveTo(t, S4a, shared...)
		a := h.launch(Implementer, implPrompt(1))
		wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 0, "Task 02 and Task 01 (in flight) both change shared.go; run them one after the other.")
		wantAllow(t, h.start(Implementer, implPrompt(4)).launch)
		a.finish(implComplete)
		wantAllow(t, h.start(Implementer, implPrompt(2)).launch)
	})
	t.Run("one launch per task", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.launch(Implementer, implPrompt(1))
		wantDeny(t, h.start(Implementer, "Task 1: again").launch, 0, "Task 01 is already in flight; one code-implementer per task.")
		wantDeny(t, h.start(Implementer, "Task 001: again").launch, 0, "already in flight")
	})
	t.Run("only tasks of the current phase", func(t *testing.T) {
		h := driveTo(t, S4a)
		wantDeny(t, h.start(Implementer, implPrompt(4)).launch, 0, "Task 04 is not in the current phase 1 (Task 01, Task 02, Task 03); phases run in order.")
		wantDeny(t, h.start(Implementer, implPrompt(42)).launch, 0, "Task 42 is not in the current phase 1")
	})
	t.Run("the prompt names one task", func(t *testing.T) {
		h := driveTo(t, S4a)
		wantDeny(t, h.start(Implementer, "Implement the login form").launch, 0, "the prompt names no task; start it with \"Task NN\" naming the one task to implement. The tasks of phase 1: Task 01, Task 02, Task 03.")
		wantDeny(t, h.start(Implementer, "Implement Task 01 and Task 02").launch, 0, "names more than one task; one code-implementer implements one task: start the prompt with a `Task NN: <title>` line")
		c := agentCall(Implementer, "Task 01: the parser", "t-desc")
		c.Description = "Task 02"
		wantDeny(t, h.do(c), 0, "the prompt names Task 01")
		r := h.launch(Implementer, "Task 02: like Task 01, see Task 03")
		if l := h.w.launchByTool(r.toolUse); l.Task != 2 || l.Job != JobImplement || l.Phase != 1 {
			t.Errorf("launch %+v", l)
		}
		// Issue 13: the task may follow a preamble (paired with the
		// refusals above: the task read is still one task of the phase).
		r = h.launch(Implementer, "You are a careful engineer.\n\nImplement Task 01 (see task-01-step.md).")
		if l := h.w.launchByTool(r.toolUse); l.Task != 1 {
			t.Errorf("launch %+v", l)
		}
		c = agentCall(Implementer, "Implement the remaining step.", "t-desc2")
		c.Description = "Task 03: step 3"
		wantDeny(t, h.do(c), 0, "Task 03 depends on Task 01, which has not returned")
	})
	t.Run("COMPLETE cannot be relaunched", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.implement(1)
		wantDeny(t, h.start(Implementer, implPrompt(1)).launch, 0, "Task 01 already returned IMPLEMENTATION STATUS: COMPLETE in this step.")
	})
	t.Run("BLOCKED allows two more launches", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.implement(1)
		h.implement(3)
		o := h.run(Implementer, implPrompt(2), implBlocked)
		wantContext(t, o, "4a Task 02 BLOCKED (relaunch allowed, 1 of 2 retries used) -> 4a | still open: Task 02")
		o = h.run(Implementer, implPrompt(2), implBlocked)
		wantContext(t, o, "BLOCKED (relaunch allowed, 2 of 2 retries used)")
		h.expect(S4a)
		o = h.run(Implementer, implPrompt(2), implBlocked)
		h.expect(S4b) // counts as returned: the quality gate catches it
		wantContext(t, o, "4a OK -> 4b")
		if tr := h.w.Tasks[2]; tr.Status != gates.Returned || tr.Blocked != 3 || tr.Launches != 3 {
			t.Errorf("task 02 %+v", tr)
		}
	})
	t.Run("BLOCKED three times goes on to 4b with the block reported", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.implement(1)
		h.implement(3)
		blocked := "The schema is not there.\nIMPLEMENTATION STATUS: BLOCKED (the migrations table is missing)"
		var o gates.Outcome
		for i := 0; i < 3; i++ {
			o = h.run(Implementer, implPrompt(2), blocked)
		}
		h.expect(S4b)
		wantContext(t, o, "4a OK -> 4b | 3 tasks implemented; Task 02 BLOCKED 3 times (the migrations table is missing); launch code-quality and report the block in its prompt, for the gate to judge")
		// The gate's prompt must name the blocked task and its block.
		for _, prompt := range []string{"Gate phase 1.", "Gate phase 1: Task 02 is done.", "Gate phase 1. Something was blocked."} {
			wantDeny(t, h.start(Quality, prompt).launch, 1, "Task 02 BLOCKED 3 times (the migrations table is missing) and counts as returned; the quality gate judges it: say so in code-quality's prompt (name the task and its block")
		}
		wantAllow(t, h.start(Quality, "Gate phase 1. Task 02 is BLOCKED: the migrations table is missing; judge it.").launch)
	})
	t.Run("a block reason is the result line's note, else the report's first line", func(t *testing.T) {
		for text, want := range map[string]string{
			"IMPLEMENTATION STATUS: BLOCKED (the DB is down)":             "the DB is down",
			"Tried twice.\n**IMPLEMENTATION STATUS:** BLOCKED - no creds": "no creds",
			implBlocked: "Cannot go on: missing dependency.",
		} {
			if got := blockReason(text); got != want {
				t.Errorf("blockReason(%q) = %q, want %q", text, got, want)
			}
		}
	})
	t.Run("BLOCKED three times refuses a fourth launch", func(t *testing.T) {
		h := driveTo(t, S4a)
		for i := 0; i < 3; i++ {
			h.run(Implementer, implPrompt(2), implBlocked)
		}
		h.expect(S4a)
		wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 0, "Task 02 was BLOCKED 3 times and counts as returned; the quality gate will judge it.")
	})
	t.Run("other agents wait for the phase", func(t *testing.T) {
		h := driveTo(t, S4a)
		h.implement(1)
		wantDeny(t, h.start(Quality, "Gate").launch, 0, "code-quality (4b) runs only after every task of phase 1 returned (still open: Task 02, Task 03).")
		for _, a := range []string{Planner, Analyst, UXDX} {
			wantDeny(t, h.start(a, "x").launch, 0, a+" is not part of implementation (4a): launch code-implementer for the tasks of phase 1.")
		}
	})
	t.Run("only the main thread launches workflow agents", func(t *testing.T) {
		h := driveTo(t, S4a)
		r := h.launch(Implementer, implPrompt(1))
		c := by(agentCall(Implementer, implPrompt(2), "toolu_nested"), r.agentID, Implementer)
		wantDeny(t, h.do(c), 0, "only the orchestrator (the main thread) launches workflow agents; orch-hook:code-implementer may not launch code-implementer.")
	})
	t.Run("a failed launch may be relaunched", func(t *testing.T) {
		h := driveTo(t, S4a)
		r := h.start(Implementer, implPrompt(1))
		o := h.do(postFailure(r.toolUse, "Agent type 'orch-hook:code-implementer' not found"))
		wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4a code-implementer (Task 01) launch failed (Agent type 'orch-hook:code-implementer' not found); relaunch it (retry 1/2, a transient failure).")
		if l := h.w.launchByTool(r.toolUse); l.Status != gates.Failed {
			t.Errorf("status %q", l.Status)
		}
		wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
	})
	t.Run("bare agent names of an init install", func(t *testing.T) {
		h := driveTo(t, S4a)
		c := agentCall(Implementer, implPrompt(1), "toolu_bare")
		c.SubagentType = Implementer
		wantAllow(t, h.do(c))
		h.do(postAsync("toolu_bare", "abare"))
		s := subStop("abare", Implementer, implComplete)
		s.AgentType = Implementer
		wantAllow(t, h.do(s))
		if h.w.Tasks[1].Status != TaskComplete {
			t.Errorf("task 01 %+v", h.w.Tasks[1])
		}
	})
}

func TestFixCycle(t *testing.T) {
	h := driveTo(t, S4b)
	for it := 1; it < MaxFixIterations; it++ {
		o := h.gate(false, 2)
		h.expect(SF1)
		wantContext(t, o, fmt.Sprintf("(fix iteration %d/3)", it))
		if got := h.w.Where(); got != fmt.Sprintf("phase 1, step F1, fix iteration %d/3", it) {
			t.Errorf("where = %q", got)
		}
		h.analysis()
		h.expect(SF2)
		if h.w.Tasks[2] != nil {
			t.Errorf("task 02 was not reset for its fix: %+v", h.w.Tasks[2])
		}
		if n := h.w.Next(h.env()); n != "launch code-implementer for the failing tasks only: Task 02" {
			t.Errorf("next = %q", n)
		}
		// A BLOCKED fix may be relaunched.
		h.run(Implementer, implPrompt(2), implBlocked)
		h.expect(SF2)
		h.implement(2)
		h.expect(S4b)
	}
	o := h.gate(false, 2)
	h.expect(Escalated)
	if _, ok := o.Files[EscalationFile]; !ok {
		t.Errorf("ESCALATION.md not requested: %v", o.Files)
	}
	// Escalated: the user decides; nothing runs, Stop is allowed.
	wantAllow(t, h.do(stopCall()))
	for _, a := range WorkflowAgents {
		wantDeny(t, h.start(a, "Task 02").launch, 0, a+" may not run while the workflow is escalated to the user.", "Now: escalated, waiting for the user's decision. Next: wait for the user: /orch-hook:resolve retry|skip|abort")
	}
	wantBlock(t, h.user("/orch-hook:resolve later"), 0, "unknown option \"later\": use /orch-hook:resolve retry, skip or abort (or clear-stale, accept-plan, accept-state).")
	h.expect(Escalated)
}

func TestFailingTasksOfTheCurrentPhaseOnly(t *testing.T) {
	h := driveTo(t, S4b)
	o := h.run(Quality, "Gate", "Broken.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02, 04, 99")
	h.expect(SF1)
	if fmt.Sprint(h.w.FailingTasks) != "[2]" {
		t.Errorf("failing = %v", h.w.FailingTasks)
	}
	wantContext(t, o, "4b FAIL -> F1 | Task 02 failed: Broken.", "(FAILING TASKS named 04, 99, not tasks of phases up to 1: dropped)")
}

func TestEscalationSkipOfTheLastPhase(t *testing.T) {
	h := driveTo(t, escalatedFix, onePhase(false)...)
	o := h.user("/orch-hook:resolve skip")
	h.expect(S5a)
	wantContext(t, o, "orch-hook: [RESOLVE] skip -> 4c", "4c OK -> 5a")
	if !strings.Contains(o.Files[TasksDir+"/"+MasterPlan], "- [x] Task 02: step 2 (skipped: known issue)") {
		t.Errorf("MASTER_PLAN.md:\n%s", o.Files[TasksDir+"/"+MasterPlan])
	}
}

func TestEscalationMarkdown(t *testing.T) {
	h := driveTo(t, escalatedFix)
	md := h.w.EscalationMarkdown([]FailureEntry{
		{Iteration: 1, Failure: "test error | pipe", Fix: "fix b.go"},
		{Iteration: 2, Failure: "still failing"},
		{Iteration: 3, Failure: "again", Fix: "another"},
	})
	for _, want := range []string{
		"## Escalation Required\n",
		"**Phase**: 1\n",
		"**Tasks**: Task 01, Task 02, Task 03\n",
		"**Iteration**: 3/3 (maximum reached)\n",
		"| Iteration | Failure | Fix Attempted | Result |",
		"| 1 | test error \\| pipe | fix b.go | FAIL |",
		"| 2 | still failing | - | FAIL |",
		"### Root Cause Analysis\nRoot cause: off-by-one in b.go.\n",
		"`/orch-hook:resolve retry`", "`/orch-hook:resolve skip`", "`/orch-hook:resolve abort`",
		"3. `/orch-hook:resolve abort`",
		"**User decision required to proceed.**",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("ESCALATION.md lacks %q:\n%s", want, md)
		}
	}
	// The options are priced from the situation: the same failure every
	// time makes a retry look futile; abort says what is done.
	same := h.w.EscalationMarkdown([]FailureEntry{{Iteration: 1, Failure: "TestFormat fails"}, {Iteration: 2, Failure: "TestFormat fails"}, {Iteration: 3, Failure: "TestFormat fails"}})
	for _, want := range []string{
		"Costs up to 3 more fix cycles (analysis, fixes, quality gate). The last 3 gates failed the same way (TestFormat fails): unless the plan or the approach changes, a retry is likely to fail again.",
		"The failure stays in the code",
		"`/orch-hook:resolve abort`: end the workflow here (0 of 5 tasks done). Nothing is reverted",
	} {
		if !strings.Contains(same, want) {
			t.Errorf("ESCALATION.md lacks %q:\n%s", want, same)
		}
	}
	if strings.Contains(md, "likely to fail again") {
		t.Errorf("different failures priced as the same:\n%s", md)
	}
	h = driveTo(t, escalatedFinal, onePhase(false)...)
	md = h.w.EscalationMarkdown(nil)
	for _, want := range []string{"**Phase**: final validation (5a)", "**Iteration**: 3/3 (maximum reached)", "No FAILURE_ANALYSIS covered this failure", "go on to phase 6 with the failure recorded as a known issue"} {
		if !strings.Contains(md, want) {
			t.Errorf("final ESCALATION.md lacks %q:\n%s", want, md)
		}
	}
}

func TestPlanUpdateTicking(t *testing.T) {
	cases := []struct {
		name string
		edit func(text string) string
		ok   bool
		why  string
	}{
		{"tick the phase's tasks", func(s string) string { return tickText(s, 1, 2, 3) }, true, ""},
		{"tick one task", func(s string) string { return tickText(s, 2) }, true, ""},
		{"Status: and Progress: of the phase", func(s string) string {
			return strings.Replace(strings.Replace(s, "Progress: 0/5", "Progress: 1/5", 1), "Status: pending", "**Status:** in progress", 1)
		}, true, ""},
		{"tick another phase's task", func(s string) string { return tickText(s, 1, 4) }, false, "Task 04 belongs to another phase; only phase 1's tasks may be ticked now."},
		{"another phase's Status:", func(s string) string {
			i := strings.LastIndex(s, "Status: pending")
			return s[:i] + "Status: done" + s[i+len("Status: pending"):]
		}, false, "may not change in 4c (only ticks of phase 1's tasks, the Status: lines of phases up to 1 and the Progress: line may change)"},
		{"rename a task", func(s string) string { return strings.Replace(s, "Task 02: step 2", "Task 02: renamed", 1) }, false, "may not change in 4c"},
		{"edit the title", func(s string) string { return strings.Replace(s, "# Master Plan: login page", "# Plan", 1) }, false, "line 1 may not change in 4c"},
		{"add a line", func(s string) string { return s + "- [ ] Task 09: new\n" }, false, "this edit adds or removes lines"},
		{"remove a line", func(s string) string { return strings.Replace(s, "- [ ] Task 05: step 5\n", "", 1) }, false, "adds or removes lines"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := driveTo(t, S4c)
			o := h.writeFile(writeCall(tasksPath(MasterPlan), tc.edit(string(h.files[MasterPlan]))))
			if tc.ok {
				wantAllow(t, o)
			} else {
				wantDeny(t, o, 2, tc.why)
			}
		})
	}
	t.Run("untick", func(t *testing.T) {
		h := driveTo(t, S4c)
		wantAllow(t, h.tick(1))
		text := strings.Replace(string(h.files[MasterPlan]), "- [x] Task 01", "- [ ] Task 01", 1)
		wantDeny(t, h.writeFile(writeCall(tasksPath(MasterPlan), text)), 2, "Task 01 may only go from [ ] to [x]")
	})
	t.Run("Edit one tick at a time", func(t *testing.T) {
		h := driveTo(t, S4c)
		for n := 1; n <= 3; n++ {
			o := h.writeFile(editCall(tasksPath(MasterPlan), fmt.Sprintf("- [ ] Task %02d", n), fmt.Sprintf("- [x] Task %02d", n)))
			wantAllow(t, o)
		}
		h.expect(S4a)
		if len(ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files))) != 0 {
			t.Error("the hash after the last tick was not recorded")
		}
	})
	t.Run("Edit that cannot apply", func(t *testing.T) {
		h := driveTo(t, S4c)
		wantDeny(t, h.do(editCall(tasksPath(MasterPlan), "- [ ] Task 77", "- [x] Task 77")), 0, "MASTER_PLAN.md: Edit's old_string is not in the file")
		wantDeny(t, h.do(editCall(tasksPath(MasterPlan), "- [ ] Task", "- [x] Task")), 0, "Edit's old_string is not unique in the file")
		c := editCall(tasksPath(MasterPlan), "- [ ] Task", "- [x] Task")
		c.Write.ReplaceAll = true
		wantDeny(t, h.do(c), 2, "Task 04 belongs to another phase")
		wantDeny(t, h.do(editCall(tasksPath("task-09-new.md"), "a", "b")), 0, "Edit of a file that does not exist")
	})
	t.Run("task files do not change in 4c", func(t *testing.T) {
		h := driveTo(t, S4c)
		wantDeny(t, h.writeFile(writeCall(tasksPath(taskFileName(1)), "changed")), 2, "in 4c only MASTER_PLAN.md changes (ticks, Status:, Progress:), not task-01-step.md.")
	})
}

func TestFinalValidationAgents(t *testing.T) {
	h := driveTo(t, S5a)
	for _, a := range []string{Planner, Implementer, Analyst} {
		wantDeny(t, h.start(a, "x").launch, 0, a+" is not part of final validation (5a): launch code-quality.")
	}
	r := h.launch(Quality, "Final")
	wantDeny(t, h.start(Quality, "Final twice").launch, 0, "code-quality is already running")
	wantAllow(t, h.do(stopCall(r.agentID))) // waiting on a workflow agent
	r.finish("ok\nPHASE GATE STATUS: PASS")
	h.expect(S6)
}

func TestFixPhaseAppend(t *testing.T) {
	t.Run("by the orchestrator, then run, then 5a again", func(t *testing.T) {
		h := driveTo(t, awaitFix5a)
		nums := h.appendPhase(task{N: 6, Files: []string{"x.go"}}, task{N: 7, Files: []string{"y.go"}})
		o := h.start(Implementer, implPrompt(nums[0])).launch
		wantAllow(t, o)
		if h.w.Phase != 3 || len(h.w.Plan.Phases) != 3 {
			t.Fatalf("phase %d of %d", h.w.Phase, len(h.w.Plan.Phases))
		}
		if h.w.Where() != "phase 3, step 4a, fix iteration 0/3" {
			t.Errorf("where = %q", h.w.Where())
		}
	})
	t.Run("by the task-planner", func(t *testing.T) {
		h := driveTo(t, awaitFix5a)
		r := h.launch(Planner, "Create a fix phase")
		wantDeny(t, h.start(Planner, "again").launch, 0, "task-planner is already creating the phase.")
		wantAllow(t, r.write(taskFileName(6), taskText(task{N: 6, Files: []string{"x.go"}})))
		text := string(h.files[MasterPlan]) + "\n## Phase 3: Fixes\n- [ ] Task 06: fix the build\n"
		wantAllow(t, r.write(MasterPlan, text))
		o := r.finish("Fix phase created.")
		h.expect(S4a)
		if h.w.Phase != 3 || h.w.Awaiting != "" {
			t.Fatalf("phase %d awaiting %q", h.w.Phase, h.w.Awaiting)
		}
		wantContext(t, o, "[PHASE 3 | Task 06] phase created -> 4a | next: launch code-implementer for Task 06")
	})
	t.Run("the task-planner returns without a phase", func(t *testing.T) {
		h := driveTo(t, awaitFix5a)
		o := h.run(Planner, "Create a fix phase", "I could not.")
		h.expect(S4a)
		wantContext(t, o, "[STEP 4a] task-planner returned, but append a fix phase to MASTER_PLAN.md")
		if h.w.Awaiting != "fix" {
			t.Errorf("awaiting %q", h.w.Awaiting)
		}
	})
	rules := []struct {
		name string
		do   func(h *harness) gates.Outcome
		why  string
	}{
		{"change an existing phase", func(h *harness) gates.Outcome {
			text := strings.Replace(string(h.files[MasterPlan]), "step 1", "step one", 1) + "\n## Phase 3: Fixes\n- [ ] Task 06: fix\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "only appending one phase is allowed now; line "},
		{"append two phases", func(h *harness) gates.Outcome {
			text := string(h.files[MasterPlan]) + "\n## Phase 3: A\n- [ ] Task 06: a\n\n## Phase 4: B\n- [ ] Task 07: b\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "append one phase at a time"},
		{"reuse a task number", func(h *harness) gates.Outcome {
			text := string(h.files[MasterPlan]) + "\n## Phase 3: Fixes\n- [ ] Task 02: again\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "Task 02 is not a new task number (the plan already goes up to Task 05)"},
		{"a checked new task", func(h *harness) gates.Outcome {
			text := string(h.files[MasterPlan]) + "\n## Phase 3: Fixes\n- [x] Task 06: done\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "the new phase's Task 06 must start unchecked"},
		{"a lower phase number", func(h *harness) gates.Outcome {
			text := string(h.files[MasterPlan]) + "\n## Phase 2: Again\n- [ ] Task 06: x\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "the new phase must be numbered after phase 2"},
		{"a task added to an old phase", func(h *harness) gates.Outcome {
			text := string(h.files[MasterPlan]) + "- [ ] Task 06: sneaked in\n"
			return h.writeFile(writeCall(tasksPath(MasterPlan), text))
		}, "tasks may only be added in a new phase"},
		{"an existing task file", func(h *harness) gates.Outcome {
			return h.writeFile(writeCall(tasksPath(taskFileName(2)), "changed"))
		}, "only the new phase's task files (numbers after Task 05) may be written now, not task-02-step.md."},
		{"another agent", func(h *harness) gates.Outcome {
			return h.writeFile(by(writeCall(tasksPath(taskFileName(6)), "x"), "a997", Quality))
		}, "only the orchestrator or the task-planner creating the phase may append it."},
	}
	for _, tc := range rules {
		t.Run(tc.name, func(t *testing.T) {
			h := driveTo(t, awaitFix5a)
			wantDeny(t, tc.do(h), 0, tc.why)
		})
	}
}

func TestFollowUps(t *testing.T) {
	t.Run("nothing is gated while complete", func(t *testing.T) {
		h := driveTo(t, Complete)
		wantAllow(t, h.do(stopCall()))
		wantAllow(t, h.start(Implementer, "anything").launch)
		wantAllow(t, h.start("general-purpose", "anything").launch)
		wantAllow(t, mainWrite(h))
		wantAllow(t, h.do(&gates.Call{Event: gates.PreToolUse, Tool: "Workflow"}))
		o := h.do(&gates.Call{Event: gates.SessionStart, Source: "startup"})
		wantContext(t, o, "is complete. For a follow-up the user asks for, invoke the orch-hook:follow-up skill with `lightweight|partial|full <request>`")
		// The static rules still hold.
		wantDeny(t, h.do(skillCall("orch-hook:approve")), 0)
	})
	t.Run("lightweight: fewer than 3 files", func(t *testing.T) {
		h := driveTo(t, Complete)
		if _, err := FollowUp(h.w, "lightweight", "Add a logout link", h.env()); err != nil {
			t.Fatal(err)
		}
		wantBlock(t, h.do(stopCall()), 0, "waiting for a follow-up phase to be appended")
		nums := h.appendPhase(task{N: 6, Files: []string{"nav.go"}}, task{N: 7, Files: []string{"nav.go", "logout.go"}})
		for _, n := range nums {
			h.implement(n)
		}
		h.expect(S4b)
		h.gate(true)
		h.tick()
		h.expect(S5a)
	})
	t.Run("lightweight: 3 files are refused", func(t *testing.T) {
		h := driveTo(t, Complete)
		FollowUp(h.w, "lightweight", "Rework the navigation", h.env())
		nums := h.appendPhase(task{N: 6, Files: []string{"a.go", "b.go"}}, task{N: 7, Files: []string{"c.go"}})
		o := h.start(Implementer, implPrompt(nums[0])).launch
		wantDeny(t, o, 0, "a LIGHTWEIGHT follow-up may touch fewer than 3 files; phase 3's tasks list 3. Shrink the phase (its task files' Files: lines)")
		if h.w.Awaiting != "lightweight" || h.w.Phase != 2 {
			t.Errorf("awaiting %q phase %d", h.w.Awaiting, h.w.Phase)
		}
	})
	t.Run("lightweight: five files in list form are refused", func(t *testing.T) {
		// Issue 13: a Files list gave no files, so five files passed the
		// "fewer than 3 files" limit. Paired: two files in list form pass.
		for _, tc := range []struct {
			files []string
			deny  bool
		}{{[]string{"a.go", "b.go", "c.go", "d.go", "e.go"}, true}, {[]string{"a.go", "b.go"}, false}} {
			h := driveTo(t, Complete)
			FollowUp(h.w, "lightweight", "Rework the navigation", h.env())
			body := "# Task 06: nav\n\nrequires_ux_dx_review: false\n\n## Files to modify\n\n"
			for _, f := range tc.files {
				body += "- `src/" + f + "` (update)\n"
			}
			if o := h.writeFile(writeCall(tasksPath(taskFileName(6)), body)); o.Verdict != gates.Allow {
				t.Fatalf("task file: %s", o.Reason)
			}
			master := strings.TrimRight(string(h.files[MasterPlan]), "\n") + "\n\n## Phase 3: Nav\nStatus: pending\n\n- [ ] Task 06: nav\n"
			if o := h.writeFile(writeCall(tasksPath(MasterPlan), master)); o.Verdict != gates.Allow {
				t.Fatalf("append: %s", o.Reason)
			}
			o := h.start(Implementer, implPrompt(6)).launch
			if tc.deny {
				wantDeny(t, o, 0, "a LIGHTWEIGHT follow-up may touch fewer than 3 files; phase 3's tasks list 5.")
			} else {
				wantAllow(t, o)
			}
		}
	})
	t.Run("partial: planning and approval again", func(t *testing.T) {
		h := driveTo(t, Complete)
		if _, err := FollowUp(h.w, "partial", "Add password reset", h.env()); err != nil {
			t.Fatal(err)
		}
		h.expect(S2)
		r := h.launch(Planner, "Extend the plan")
		text := string(h.files[MasterPlan]) + "\n## Phase 3: Reset\n- [ ] Task 06: reset\n"
		wantAllow(t, r.write(taskFileName(6), taskText(task{N: 6})))
		wantAllow(t, r.write(MasterPlan, text))
		r.finish("Extended.")
		h.expect(S3)
		h.approve()
		h.expect(S4a)
		if h.w.Phase != 3 {
			t.Errorf("phase %d, want the new phase 3", h.w.Phase)
		}
		h.implement(6)
		h.expect(S4b)
	})
	t.Run("full: a new workflow", func(t *testing.T) {
		h := driveTo(t, Complete)
		o, err := FollowUp(h.w, "full", "Build billing", h.env())
		if err != nil || o.Start != "Build billing" || o.Changed {
			t.Fatalf("%+v %v", o, err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		h := driveTo(t, Complete)
		if _, err := FollowUp(h.w, "medium", "x", h.env()); err == nil || !strings.Contains(err.Error(), "use lightweight, partial or full") {
			t.Errorf("err = %v", err)
		}
		if _, err := FollowUp(h.w, "partial", "  ", h.env()); err == nil {
			t.Error("an empty request was accepted")
		}
		h.expect(Complete)
	})
}

// TestEscalationSkipNamesDependents: skipping a phase says which later
// tasks build on it.
func TestEscalationSkipNamesDependents(t *testing.T) {
	w := &Workflow{Phase: 1, Plan: &PlanSnapshot{Phases: []PhaseSnap{
		{Number: 1, Tasks: []TaskSnap{{Number: 1}, {Number: 2}}},
		{Number: 2, Tasks: []TaskSnap{{Number: 3, DependsOn: []int{2}}, {Number: 4}}},
	}}}
	opts := w.escalationOptions("fix", nil)
	if want := "later tasks build on this phase: Task 03 (phase 2) depends on Task 02;"; !strings.Contains(opts[1], want) {
		t.Errorf("skip option %q lacks %q", opts[1], want)
	}
}
