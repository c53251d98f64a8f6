package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

// TestLooseModel is scenario 10: the whole workflow with a model that is
// less literal than the templates ask (testdata/loose.txtar): decorated
// result lines, implementer prompts with a preamble before the task, a
// background quality gate whose FAIL lacks its FAILING TASKS line until
// orch-hook's one nudge, the plan updated in four Edits. It must reach
// complete with exactly one refusal, the nudge.
func TestLooseModel(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "loose", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-LOOSE]] Build a greeting module with a small CLI", "/orch-hook:approve"},
		MaxTurns:   60,
		Timeout:    120 * time.Second,
	})
	var c checks

	// Every checkpoint line the orchestrator was to get, in the order of
	// the workflow: each decorated result line was read.
	lastSeq := 0
	for _, line := range []string{
		"[STEP 0a] REQUIREMENTS_CLEAR -> 2",
		"[STEP 2] MASTER_PLAN.md created -> 3 | 1 phases, 2 tasks",
		"[STEP 3] APPROVED -> 4a",
		"[PHASE 1 | Tasks 01-02] 4a Task 01 COMPLETE -> 4a | still open: Task 02",
		"[PHASE 1 | Tasks 01-02] 4a OK -> 4b | 2 tasks implemented",
		"[PHASE 1 | Tasks 01-02] 4b FAIL -> F1 | Task 01 failed: Ran the suite: 11 of 12 tests pass. (fix iteration 1/3)",
		"[PHASE 1 | Tasks 01-02] F1 OK -> F2 | fix only Task 01",
		"[PHASE 1 | Tasks 01-02] F2 OK -> 4b | Task 01 fixed",
		"[PHASE 1 | Tasks 01-02] 4b OK -> 4c",
		"[PHASE 1 | Tasks 01-02] 4c OK -> 5a",
		"[STEP 5a] PASS -> 5b",
		"[STEP 5b] PASS -> 6",
		"[STEP 6] SUCCESS_EXTRACTION -> complete",
	} {
		c.wantText(run, line)
		if req, ok := run.Mock.FindText(line); ok {
			if req.Seq < lastSeq {
				c.errorf("%q reached the orchestrator (request #%d) before the line above it (#%d)", line, req.Seq, lastSeq)
			}
			lastSeq = req.Seq
		}
	}

	// The one refusal is the nudge of the first quality gate, whose
	// report ended with the FAIL but no FAILING TASKS line.
	const nudge = "orch-hook: after `PHASE GATE STATUS: FAIL` your report must end with the line `FAILING TASKS: NN, NN`"
	got := refusals(run)
	if len(got) != 1 || got[0].Hook != "SubagentStop" || got[0].Kind != "block" || !strings.HasPrefix(got[0].Reason, nudge) {
		c.errorf("want exactly one refusal, the SubagentStop nudge; got %+v", got)
	}

	// The gate agent itself was told, in its next request: Claude Code
	// 2.1.328 adds the reason as a user message "Stop hook feedback:\n..."
	// and as a system message "SubagentStop hook blocking error from
	// command: ...". It answered with only the missing line.
	if q1 := run.Mock.For("q1"); len(q1) != 2 {
		c.errorf("the first quality gate made %d requests, want 2 (its report, then its answer to the nudge)", len(q1))
	} else {
		feedback := false
		for _, text := range q1[1].LastUserTexts() {
			if strings.HasPrefix(text, "Stop hook feedback:\n"+nudge) && strings.Contains(text, "Reply with your complete report again, ending with that line") {
				feedback = true
			}
		}
		if !feedback {
			c.errorf("the nudged gate agent was not told to reply with its complete report; its next request added:\n%s", q1[1].NewText())
		}
	}

	// The gate ran in the background, and its task notification held
	// only its last message: the details reached the orchestrator with
	// orch-hook's checkpoint line (UserPromptSubmit context), in the same
	// request as the notification.
	gateTask := ""
	for id, summary := range notificationSummaries(run) {
		if strings.TrimSpace(summary) == "FAILING TASKS: 01" {
			gateTask = id
		}
	}
	switch {
	case gateTask == "":
		c.errorf("no task notification held only the gate's answer %q", "FAILING TASKS: 01")
	case !backgrounded(run)[gateTask]:
		c.errorf("the nudged quality gate (%s) did not run in the background", gateTask)
	}
	const failLine = "UserPromptSubmit hook additional context: [PHASE 1 | Tasks 01-02] 4b FAIL -> F1 | Task 01 failed: Ran the suite: 11 of 12 tests pass. (fix iteration 1/3); launch task-planner for FAILURE_ANALYSIS" +
		"\n\nThe agent's report before orch-hook asked for its result line:\n" +
		"Ran the suite: 11 of 12 tests pass.\n\nFailures:\n- TestGreeting: src/greet.txt says \"helo\", want \"hello\" (Task 01).\n\nPHASE GATE STATUS: FAIL"
	if req, ok := run.Mock.FindText(failLine); !ok {
		c.errorf("the orchestrator never got the 4b FAIL line with the gate's earlier report:\n%s", failLine)
	} else {
		notified := false
		for _, text := range req.LastUserTexts() {
			if strings.Contains(text, "<task-notification>") && strings.Contains(text, "<task-id>"+gateTask+"</task-id>") {
				notified = true
				if !strings.Contains(text, "<result>FAILING TASKS: 01</result>") || strings.Contains(text, "helo") {
					c.errorf("the gate's notification should hold only its answer:\n%s", text)
				}
			}
		}
		if !notified {
			c.errorf("the FAIL line did not come with the gate's task notification (request #%d)", req.Seq)
		}
	}

	// Implementers: Task 01 in the background, Task 02 and the fix in the
	// foreground, each read from a prompt with a preamble.
	bg := backgrounded(run)
	var impl []string
	for _, ts := range tasksStarted(run) {
		if ts.SubagentType != "orch-hook:code-implementer" {
			continue
		}
		impl = append(impl, fmt.Sprintf("%s/%t", ts.Description, bg[ts.TaskID]))
		if strings.HasPrefix(ts.Prompt, "Task") {
			c.errorf("the implementer prompt %q has no preamble", ts.Prompt)
		}
	}
	if got := strings.Join(impl, ", "); got != "Greeting function/true, Greeting CLI/false, Fix the greeting/false" {
		c.errorf("implementers (description/backgrounded): %s", got)
	}

	// Every hook ran where expected, and answered (allowed but for the
	// nudge): 11 launches, 4 Edits of the plan (2 ticks in 4c, Status: and
	// Progress: in 5a), 12 SubagentStops (the nudged gate stopped twice),
	// 4 Stops of the orchestrator (after presenting the plan, while each
	// background agent ran, at the end), none blocked.
	count := map[string]int{}
	for _, e := range run.HookEvents() {
		if e.Subtype == "hook_response" {
			count[e.HookName]++
		}
	}
	for hook, want := range map[string]int{"PreToolUse:Agent": 11, "PreToolUse:Edit": 4, "PostToolUse:Edit": 4, "SubagentStop": 12, "Stop": 4} {
		if count[hook] != want {
			c.errorf("%d %s hook responses, want %d", count[hook], hook, want)
		}
	}
	applied := 0
	for _, tr := range lastRequest(run, "main").ToolResults() {
		if strings.Contains(tr.Text, "MASTER_PLAN.md has been updated") && !tr.IsError {
			applied++
		}
	}
	if applied != 4 {
		c.errorf("4c: %d Edits of the plan applied, want 4", applied)
	}
	plan, err := os.ReadFile(filepath.Join(project, ".orchestrator", "tasks", "MASTER_PLAN.md"))
	if err != nil {
		c.errorf("read the plan: %v", err)
	} else {
		for _, want := range []string{"Progress: 2/2", "Status: complete", "- [x] Task 01: Greeting function", "- [x] Task 02: Greeting CLI"} {
			if !strings.Contains(string(plan), want) {
				c.errorf("the final plan lacks %q:\n%s", want, plan)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(project, "src", "greet.txt")); err != nil || string(b) != "hello\n" {
		c.errorf("src/greet.txt = %q, %v; want the fix's content", b, err)
	}

	st := statusOf(t, plugin, project)
	if got := workflowState(st); got != "complete" {
		c.errorf("final state %q, want complete", got)
	}
	wf, _ := st["workflow"].(map[string]any)
	completed, _ := json.Marshal(wf["completed_states"])
	if string(completed) != `["0a","2","3","4a","4b","F1","F2","4c","5a","5b","6"]` {
		c.errorf("completed_states %s", completed)
	}
	// orch-hook's own record agrees: one denial (the nudge), no agent
	// left in flight or stale, no hook health warning.
	var rest struct {
		Agents struct {
			InFlight []any `json:"in_flight"`
			Stale    []any `json:"stale"`
		} `json:"agents"`
		Recent struct {
			Denials []struct {
				HookEvent string `json:"hook_event"`
				Reason    string `json:"reason"`
			} `json:"denials"`
		} `json:"recent"`
		Health struct {
			Warnings []any `json:"warnings"`
		} `json:"health"`
	}
	if b, err := json.Marshal(st); err != nil || json.Unmarshal(b, &rest) != nil {
		c.errorf("status --json does not read: %v", err)
	} else {
		if d := rest.Recent.Denials; len(d) != 1 || d[0].HookEvent != "SubagentStop" || !strings.HasPrefix(d[0].Reason, nudge) {
			c.errorf("status lists denials %+v, want only the nudge", d)
		}
		if len(rest.Agents.InFlight)+len(rest.Agents.Stale) > 0 {
			c.errorf("agents left in flight %v or stale %v", rest.Agents.InFlight, rest.Agents.Stale)
		}
		if len(rest.Health.Warnings) > 0 {
			c.errorf("hook health warnings: %v", rest.Health.Warnings)
		}
	}
	// Every agent's tokens read whole, the nudged quality gate's with the
	// response that answered the nudge (its second stop's transcript).
	checkTokens(&c, run, st, nil)
	if len(run.Mock.Overflows()) > 0 {
		c.errorf("a conversation ran out of turns: %v", run.Mock.Overflows())
	}
	c.report(t, run)
}

// lastRequest is the last request of a conversation (an empty one when
// there is none).
func lastRequest(run *Run, conv string) *mockapi.Request {
	reqs := run.Mock.For(conv)
	if len(reqs) == 0 {
		return &mockapi.Request{}
	}
	return reqs[len(reqs)-1]
}

// taskStarted is a task_started event of the CLI.
type taskStarted struct {
	TaskID         string `json:"task_id"`
	Description    string `json:"description"`
	SubagentType   string `json:"subagent_type"`
	Prompt         string `json:"prompt"`
	IsBackgrounded bool   `json:"is_backgrounded"`
}

// tasksStarted are the run's task_started events, in order.
func tasksStarted(run *Run) []taskStarted {
	var out []taskStarted
	for _, e := range run.Events {
		var ts taskStarted
		if e.Type == "system" && e.Subtype == "task_started" && json.Unmarshal(e.Raw, &ts) == nil {
			out = append(out, ts)
		}
	}
	return out
}

// backgrounded says which task ids were started in the background.
func backgrounded(run *Run) map[string]bool {
	out := map[string]bool{}
	for _, ts := range tasksStarted(run) {
		out[ts.TaskID] = ts.IsBackgrounded
	}
	return out
}

// hookDecision is a hook's refusal as the CLI reported it in a
// hook_response event: a PreToolUse deny or a Stop/SubagentStop block.
type hookDecision struct {
	Hook   string // e.g. "PreToolUse:Edit", "SubagentStop"
	Kind   string // "deny" or "block"
	Reason string
}

// refusals lists every deny and block the hooks answered during the run.
func refusals(run *Run) []hookDecision {
	var out []hookDecision
	for _, e := range run.HookEvents() {
		if e.Subtype != "hook_response" {
			continue
		}
		var output string
		if e.Field("output", &output) != nil || strings.TrimSpace(output) == "" {
			continue
		}
		var d struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
			Specific struct {
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(output), &d) != nil {
			continue
		}
		switch {
		case d.Specific.PermissionDecision == "deny":
			out = append(out, hookDecision{e.HookName, "deny", d.Specific.PermissionDecisionReason})
		case d.Decision == "block":
			out = append(out, hookDecision{e.HookName, "block", d.Reason})
		}
	}
	return out
}

// notificationSummaries are the summaries of the CLI's task_notification
// events (a background agent's final message), by task id.
func notificationSummaries(run *Run) map[string]string {
	out := map[string]string{}
	for _, e := range run.Events {
		if e.Type != "system" || e.Subtype != "task_notification" {
			continue
		}
		var n struct {
			TaskID  string `json:"task_id"`
			Summary string `json:"summary"`
		}
		if json.Unmarshal(e.Raw, &n) == nil {
			out[n.TaskID] = n.Summary
		}
	}
	return out
}
