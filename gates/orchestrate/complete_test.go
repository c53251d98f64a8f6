package orchestrate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestForegroundCorrelation(t *testing.T) {
	h := driveTo(t, S4a)
	h.fg = true
	r := h.launch(Implementer, implPrompt(1))
	// SubagentStop comes first: the launch is not tied yet; kept pending.
	s := r.stop(implComplete)
	wantAllow(t, s)
	if s.Context != "" || len(h.w.Pending) != 1 || h.w.Tasks[1].Status != gates.Running {
		t.Fatalf("context %q pending %d task %+v", s.Context, len(h.w.Pending), h.w.Tasks[1])
	}
	// PostToolUse ties it and applies the pending completion.
	o := r.post("ignored: the SubagentStop text is the report")
	if len(h.w.Pending) != 0 || h.w.Tasks[1].Status != TaskComplete {
		t.Fatalf("pending %d task %+v", len(h.w.Pending), h.w.Tasks[1])
	}
	l := h.w.launchByTool(r.toolUse)
	if l.AgentID != r.agentID || l.Status != gates.Returned || l.Result != gates.LineImplComplete || l.Background {
		t.Errorf("launch %+v", l)
	}
	wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4a Task 01 COMPLETE -> 4a | still open: Task 02, Task 03")
}

func TestBackgroundCorrelation(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	l := h.w.launchByTool(r.toolUse)
	if l.AgentID != r.agentID || !l.Background {
		t.Fatalf("launch %+v not tied at PostToolUse(async_launched)", l)
	}
	s := r.stop(implComplete)
	if s.Context != "" || l.Status != gates.Returned || l.Notice == "" {
		t.Fatalf("stop context %q launch %+v", s.Context, l)
	}
	// The checkpoint line waits for the task-notification.
	n := r.notify(implComplete)
	wantContext(t, n, "[PHASE 1 | Tasks 01-03] 4a Task 01 COMPLETE -> 4a")
	if l.Notice != "" {
		t.Error("notice kept after delivery")
	}
	// The same task-id may notify again: nothing more.
	again := r.notify(implComplete)
	if again.Context != "" || again.Changed {
		t.Errorf("second notification: %+v", again)
	}
	// A notification carries no user decision and resets nothing.
	h.w.StopBlocks = 2
	r.notify("/orch-hook:approve")
	if h.w.StopBlocks != 2 {
		t.Error("a task-notification reset the Stop counter")
	}
}

func TestNotificationWithoutSubagentStop(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	o := r.notify("All done.\n" + gates.LineImplComplete)
	if h.w.Tasks[1].Status != TaskComplete {
		t.Fatalf("task %+v", h.w.Tasks[1])
	}
	wantContext(t, o, "4a Task 01 COMPLETE -> 4a")
	// Found by tool-use-id when the agent id is unknown.
	r2 := h.launch(Implementer, implPrompt(2))
	h.w.launchByTool(r2.toolUse).AgentID = ""
	o = h.do(notification("", r2.toolUse, "completed", gates.LineImplComplete))
	wantContext(t, o, "4a Task 02 COMPLETE")
	// A notification of a failed agent closes it; it may be relaunched.
	r3 := h.launch(Implementer, implPrompt(3))
	o = h.do(notification(r3.agentID, r3.toolUse, "failed", "crashed"))
	wantContext(t, o, "code-implementer (Task 03) ended with status \"failed\"; relaunch it (retry 1/2, a transient failure).")
	if l := h.w.launchByTool(r3.toolUse); l.Status != gates.Failed {
		t.Errorf("launch %+v", l)
	}
	// A notification whose result lacks the line closes it unrecognized.
	r4 := h.launch(Implementer, "Task 03: again")
	o = r4.notify("no line")
	wantContext(t, o, "returned without its result line")
	if l := h.w.launchByTool(r4.toolUse); l.Status != gates.Unrecognized {
		t.Errorf("launch %+v", l)
	}
}

func TestRepeatedAndCompactionStopsIgnored(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	r.finish(implComplete)
	before := *h.w.Tasks[1]
	o := r.stop(implBlocked)
	wantAllow(t, o)
	if o.Changed || !hasRecord(o, gates.RecError, "repeated completion of code-implementer ignored") || *h.w.Tasks[1] != before {
		t.Errorf("repeat: %+v task %+v", o, h.w.Tasks[1])
	}
	// /compact fires a SubagentStop with agent_type "".
	r2 := h.launch(Implementer, implPrompt(2))
	c := subStop(r2.agentID, "", implComplete)
	c.AgentType = ""
	o = h.do(c)
	if o.Changed || !hasRecord(o, gates.RecError, "empty agent_type (compaction) ignored") || h.w.Tasks[2].Status != gates.Running {
		t.Errorf("compaction: %+v", o)
	}
	// Agents orch-hook did not launch, and non-workflow agents.
	if o := h.do(subStop("a-unknown", Quality, "PHASE GATE STATUS: PASS")); o.Changed {
		t.Errorf("unknown agent changed the workflow: %+v", o)
	}
	ex := subStop("a-explore", "", "found it")
	ex.AgentType = "Explore"
	if o := h.do(ex); o.Changed || o.Verdict != gates.Allow {
		t.Errorf("Explore: %+v", o)
	}
}

// TestForegroundRepeatBeforeLink: a foreground agent's SubagentStop
// repeated before its PostToolUse completes it once.
func TestForegroundRepeatBeforeLink(t *testing.T) {
	h := driveTo(t, S4a)
	h.fg = true
	r := h.launch(Implementer, implPrompt(1))
	r.stop(implComplete)
	o := r.stop(implBlocked)
	if !hasRecord(o, gates.RecError, "repeated completion") {
		t.Errorf("the repeat is not logged as ignored: %+v", o.Records)
	}
	r.post("")
	if len(h.w.Pending) != 0 || h.w.Tasks[1].Status != TaskComplete {
		t.Errorf("pending %d task %+v", len(h.w.Pending), h.w.Tasks[1])
	}
}

func TestMissingResultLineBlockedOnce(t *testing.T) {
	for _, fg := range []bool{false, true} {
		name := map[bool]string{false: "background", true: "foreground"}[fg]
		t.Run(name+"/line added", func(t *testing.T) {
			h := driveTo(t, S4a)
			h.fg = fg
			r := h.launch(Implementer, implPrompt(1))
			o := r.stop("I changed a.go.")
			wantVerdict(t, o, gates.Block)
			const want = "orch-hook: your report must end with the result line `IMPLEMENTATION STATUS: COMPLETE` or `IMPLEMENTATION STATUS: BLOCKED`, alone on its line. Reply with your complete report again, ending with that line; the orchestrator cannot go on without it."
			if o.Reason != want {
				t.Errorf("reason %q", o.Reason)
			}
			o = r.finish("I changed a.go.\n" + gates.LineImplComplete)
			if h.w.Tasks[1].Status != TaskComplete {
				t.Errorf("task %+v", h.w.Tasks[1])
			}
		})
		t.Run(name+"/still missing", func(t *testing.T) {
			h := driveTo(t, S4b)
			h.fg = fg
			r := h.launch(Quality, "Gate")
			wantVerdict(t, r.stop("Looks fine to me."), gates.Block)
			s := r.stop("Still looks fine.")
			wantAllow(t, s)
			var o gates.Outcome
			if fg {
				o = r.post("Still looks fine.")
			} else {
				o = r.notify("Still looks fine.")
			}
			h.expect(S4b)
			if h.w.FixIterations != 0 {
				t.Errorf("an unrecognized report counted as a FAIL")
			}
			wantContext(t, o, "[PHASE 1 | Tasks 01-03] 4b code-quality returned without its result line (PHASE GATE STATUS: PASS | PHASE GATE STATUS: FAIL): nothing advanced; relaunch it (retry 1/2, a permanent failure).")
			if l := h.w.launchByTool(r.toolUse); l.Status != gates.Unrecognized {
				t.Errorf("launch %+v", l)
			}
			h.gate(true) // relaunch
			h.expect(S4c)
		})
	}
	t.Run("FAIL without FAILING TASKS", func(t *testing.T) {
		h := driveTo(t, S4b)
		r := h.launch(Quality, "Gate")
		o := r.stop("Broken.\nPHASE GATE STATUS: FAIL")
		wantVerdict(t, o, gates.Block)
		if !strings.Contains(o.Reason, "after `PHASE GATE STATUS: FAIL` your report must end with the line `FAILING TASKS: NN, NN` naming the tasks that fail (of phase 1, or of an earlier phase") {
			t.Errorf("reason %q", o.Reason)
		}
		// Issue 13: after the one nudge a FAIL always counts and moves on
		// (it used to close as unrecognized and loop). Numbers of a later
		// phase are dropped and named.
		o = r.finish("FAILING TASKS: 04")
		h.expect(SF1)
		if h.w.FixIterations != 1 || len(h.w.FailingTasks) != 0 {
			t.Errorf("fix iterations %d, failing %v", h.w.FixIterations, h.w.FailingTasks)
		}
		wantContext(t, o, "4b FAIL -> F1 | no failing task named: Broken.", "FAILING TASKS named 04, not a task of phases up to 1: dropped", "The agent's report before orch-hook asked for its result line:\nBroken.\nPHASE GATE STATUS: FAIL")
	})
	t.Run("discovery owes no line", func(t *testing.T) {
		h := driveTo(t, S1)
		r := h.launch(Researcher, "Research")
		wantAllow(t, r.stop("Anything at all."))
	})
	t.Run("every job owes its line", func(t *testing.T) {
		for _, tc := range []struct {
			target, agent, line string
		}{
			{S0a, Analyst, "`REQUIREMENTS_CLEAR` or `QUESTIONS_NEEDED` or `DISCOVERY_NEEDED`"},
			{SF1, Planner, "`FAILURE_ANALYSIS: COMPLETE`"},
			{S5a, Quality, "`PHASE GATE STATUS: PASS` or `PHASE GATE STATUS: FAIL`"},
			{S6, Planner, "`SUCCESS_EXTRACTION: COMPLETE`"},
		} {
			h := driveTo(t, tc.target)
			r := h.launch(tc.agent, "x")
			o := r.stop("No line here.")
			wantVerdict(t, o, gates.Block)
			if !strings.Contains(o.Reason, "the result line "+tc.line+", alone on its line") {
				t.Errorf("%s: reason %q", tc.target, o.Reason)
			}
		}
		h := driveTo(t, S5b, twoPhases(true)...)
		o := h.launch(UXDX, "x").stop("No line.")
		if !strings.Contains(o.Reason, "`UX/DX STATUS: PASS` or `UX/DX STATUS: FAIL`") {
			t.Errorf("5b reason %q", o.Reason)
		}
	})
}

// TestPostToolUseContentWithoutLine: when no SubagentStop was seen (its
// hook failed open), the PostToolUse content is the report; without its
// result line the launch closes unrecognized, it is no FAIL.
func TestPostToolUseContentWithoutLine(t *testing.T) {
	h := driveTo(t, S4b)
	h.fg = true
	r := h.launch(Quality, "Gate")
	o := r.post("The tests look fine.")
	h.expect(S4b)
	if h.w.FixIterations != 0 {
		t.Fatalf("a report without its line counted as a 4b FAIL (fix iteration %d)", h.w.FixIterations)
	}
	wantContext(t, o, "returned without its result line")
	// With the line, PostToolUse content completes it.
	r = h.launch(Quality, "Gate again")
	o = r.post("ok\n" + LineGatePass)
	h.expect(S4c)
}

func TestResultLineParsingThroughDecide(t *testing.T) {
	cases := []struct {
		name, text string
		want       string
	}{
		{"bold and backticks", "Report.\n**PHASE GATE STATUS:** `PASS`", S4c},
		{"heading", "Report.\n## PHASE GATE STATUS: PASS  ", S4c},
		{"last line wins", "PHASE GATE STATUS: PASS\nthen a regression\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 01", SF1},
		{"last line wins (pass)", "PHASE GATE STATUS: FAIL\nFAILING TASKS: 01\nfixed it myself\n`PHASE GATE STATUS: PASS`", S4c},
		{"not alone on its line", "The PHASE GATE STATUS: PASS line follows\nPHASE GATE STATUS: FAIL\n**FAILING TASKS:** Task 01, Task 03", SF1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := driveTo(t, S4b)
			h.run(Quality, "Gate", tc.text)
			h.expect(tc.want)
		})
	}
	h := driveTo(t, S4b)
	h.run(Quality, "Gate", "PHASE GATE STATUS: FAIL\n**FAILING TASKS:** Task 01, Task 03")
	if got := h.w.FailingTasks; len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("failing %v", got)
	}
}

func TestStaleLaunches(t *testing.T) {
	h := driveTo(t, S4a)
	a := h.launch(Implementer, implPrompt(1))
	b := h.launch(Implementer, implPrompt(2))
	// Stop lists a as running: waiting on it, nothing is stale.
	o := h.do(stopCall(a.agentID, b.agentID))
	wantAllow(t, o)
	o = h.do(stopCall(a.agentID))
	wantAllow(t, o)
	lb := h.w.launchByTool(b.toolUse)
	if lb.Status != gates.Stale || h.w.Tasks[2].Status != "" || !hasRecord(o, gates.RecUpdate, "stale launch cleared at Stop") {
		t.Fatalf("launch %+v task %+v records %+v", lb, h.w.Tasks[2], o.Records)
	}
	if h.w.launchByTool(a.toolUse).Status != gates.Running {
		t.Error("a running agent was cleared")
	}
	// Task 02 may be relaunched; a late completion of the stale one still counts.
	wantAllow(t, h.start(Implementer, implPrompt(2)).launch)
	// /orch-hook:resolve clear-stale closes what is stale.
	o = h.user("/orch-hook:resolve clear-stale")
	wantContext(t, o, "orch-hook: 1 stale launch(es) cleared.")
	if lb.Status != gates.Failed || !hasRecord(o, gates.RecDecision, "clear-stale: 1 stale launch(es) cleared") {
		t.Error("clear-stale left the launch stale")
	}
	o = h.user("/orch-hook:resolve clear-stale")
	wantContext(t, o, "0 stale launch(es) cleared.")
}

func TestStaleLaunchCompletesLate(t *testing.T) {
	h := driveTo(t, S4b)
	r := h.launch(Quality, "Gate")
	h.do(stopCall()) // not listed: stale
	if h.w.launchByTool(r.toolUse).Status != gates.Stale {
		t.Fatal("not stale")
	}
	r.finish(gateText(true))
	h.expect(S4c)
}

func TestStopBlocked(t *testing.T) {
	t.Run("with the next step, released by the cap", func(t *testing.T) {
		h := driveTo(t, S4b)
		for i := 1; i <= gates.DefaultStopCap; i++ {
			c := stopCall()
			c.StopHookActive = i > 1 // a block repeats even then
			o := h.do(c)
			wantBlock(t, o, 1, "the workflow is not finished and the next step is yours (stop blocked "+strconv.Itoa(i)+"/3).", "Next: launch code-quality for the phase 1 quality gate.")
		}
		o := h.do(stopCall())
		wantAllow(t, o)
		if !hasRecord(o, gates.RecError, "Stop allowed after 3 consecutive blocks (stop cap 3)") {
			t.Errorf("records %+v", o.Records)
		}
	})
	t.Run("ORCH_HOOK_STOP_CAP", func(t *testing.T) {
		h := driveTo(t, S4b)
		h.stopCap = 1
		wantBlock(t, h.do(stopCall()), 1, "(stop blocked 1/1)")
		wantAllow(t, h.do(stopCall()))
	})
	t.Run("reset by a typed prompt, not by a notification", func(t *testing.T) {
		h := driveTo(t, S4b)
		h.stopCap = 2
		h.do(stopCall())
		h.do(stopCall())
		wantAllow(t, h.do(stopCall()))
		h.do(notification("a999", "toolu_999", "completed", "x"))
		wantAllow(t, h.do(stopCall()))
		h.user("please go on")
		wantBlock(t, h.do(stopCall()), 1, "(stop blocked 1/2)")
	})
	t.Run("reset by a transition", func(t *testing.T) {
		h := driveTo(t, S4b)
		h.stopCap = 1
		h.do(stopCall())
		h.gate(true)
		wantBlock(t, h.do(stopCall()), 2, "(stop blocked 1/1)", "Next: mark phase 1's tasks [x]")
	})
	t.Run("allowed while the user or an agent is waited on", func(t *testing.T) {
		for _, target := range []string{questionsPending, S3, escalatedFix, Complete, Aborted} {
			h := driveTo(t, target)
			wantAllow(t, h.do(stopCall()))
		}
		h := driveTo(t, S4a)
		r := h.launch(Implementer, implPrompt(1))
		wantAllow(t, h.do(stopCall(r.agentID)))
		// Finished, but its task-notification is still on its way: that
		// will wake the orchestrator, so it may stop meanwhile.
		r.stop(implComplete)
		wantAllow(t, h.do(stopCall()))
		// Once the notification is delivered, the main thread owes the
		// other tasks.
		r.notify(implComplete)
		wantBlock(t, h.do(stopCall()), 0, "Next: launch code-implementer for Task 02, Task 03 (in parallel, one message).")
	})
	t.Run("the gate a Stop would skip", func(t *testing.T) {
		for _, tc := range []struct {
			target string
			plan   []phase
			gate   int
		}{
			{S0a, nil, 0}, {S1, nil, 0}, {S0b, nil, 0}, {S2, nil, 0}, {S4a, nil, 0}, {S4b, nil, 1}, {SF1, nil, 3}, {SF2, nil, 3},
			{S4c, nil, 2}, {S5a, nil, 0}, {S5b, twoPhases(true), 5}, {S6, nil, 4}, {awaitFix5a, nil, 6}, {awaitFix5b, onePhase(true), 7},
		} {
			h := driveTo(t, tc.target, tc.plan...)
			o := h.do(stopCall())
			wantBlock(t, o, tc.gate, "Now: "+h.w.Where()+". Next: ")
		}
	})
}

// A checkpoint line names at most maxTaskList tasks: it is kept with every
// background completion, so its length must not grow with the plan.
func TestTaskListCut(t *testing.T) {
	var nums []int
	for i := 256; i >= 1; i-- {
		nums = append(nums, i)
	}
	got := taskList(nums)
	want := "Task 01, Task 02, Task 03, Task 04, Task 05, Task 06, Task 07, Task 08, Task 09, Task 10, and 246 more"
	if got != want {
		t.Errorf("taskList(256 tasks) = %q, want %q", got, want)
	}
	if got := taskList(nums[244:]); strings.Count(got, "Task") != 12 || strings.Contains(got, "more") {
		t.Errorf("12 tasks are all named: %q", got)
	}
}
