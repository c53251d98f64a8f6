package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orch-hook/orch-hook/state"
)

// TestParallelTasks runs a phase of 32 independent tasks the way Claude Code
// runs them: 32 Agent launches whose PreToolUse hooks run at once, then 32
// PostToolUse, 32 SubagentStop and 32 task-notification hooks, each batch
// concurrently, as real orch-hook processes. Every launch must be allowed,
// every completion counted once, and exactly one call moves 4a -> 4b.
func TestParallelTasks(t *testing.T) {
	const n = 32
	work := t.TempDir()
	env := map[string]string{"CLAUDE_PROJECT_DIR": work}
	run := func(template string, overrides ...string) string {
		t.Helper()
		input, err := buildPayload(template, work, "session-1", overrides...)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, err := execHook(work, input, env)
		if err != nil {
			t.Fatalf("hook %s: %v\n%s", template, err, stderr)
		}
		return stdout
	}
	mustAllow := func(out, what string) {
		t.Helper()
		if strings.Contains(out, `"deny"`) || strings.Contains(out, `"block"`) {
			t.Fatalf("%s refused: %s", what, out)
		}
	}
	agent := func(id, name, prompt, report string) string {
		mustAllow(run("pre-agent", "tool_use_id=t-"+id, "tool_input.subagent_type=orch-hook:"+name, "tool_input.run_in_background:=false", "tool_input.prompt="+prompt), name)
		run("subagent-stop", "agent_id=a-"+id, "agent_type=orch-hook:"+name, "last_assistant_message="+report)
		return run("post-agent-fg", "tool_use_id=t-"+id, "tool_response.agentId=a-"+id)
	}

	run("user-prompt", "prompt=/orch-hook:orchestrate Thirty-two independent changes")
	agent("ra", "requirements-analyst", "analyse", "REQUIREMENTS_CLEAR")
	tasks := filepath.Join(work, ".orchestrator", "tasks")
	if err := os.MkdirAll(tasks, 0o755); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	plan.WriteString("# Master Plan\n\n## Phase 1: Everything at once\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&plan, "- [ ] Task %02d: change %d\n", i, i)
		task := fmt.Sprintf("# Task %02d\nFiles: src/file%02d.go\n", i, i)
		if err := os.WriteFile(filepath.Join(tasks, fmt.Sprintf("task-%02d.md", i)), []byte(task), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tasks, "MASTER_PLAN.md"), []byte(plan.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := agent("tp", "task-planner", "plan", "Plan written."); !strings.Contains(out, "-> 3") {
		t.Fatalf("plan not taken: %s", out)
	}
	run("user-prompt", "prompt=/orch-hook:approve", "prompt_id=p-approve")

	batch := func(f func(i int) string) []string {
		outs := make([]string, n+1)
		var wg sync.WaitGroup
		for i := 1; i <= n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i] = f(i)
			}()
		}
		wg.Wait()
		return outs[1:]
	}
	for i, out := range batch(func(i int) string {
		return run("pre-agent", fmt.Sprintf("tool_use_id=t-%d", i), "tool_input.subagent_type=orch-hook:code-implementer", fmt.Sprintf("tool_input.prompt=Task %02d: change", i))
	}) {
		mustAllow(out, fmt.Sprintf("launch of Task %02d", i+1))
	}
	batch(func(i int) string {
		return run("post-agent-bg", fmt.Sprintf("tool_use_id=t-%d", i), fmt.Sprintf("tool_response.agentId=a-%d", i))
	})
	batch(func(i int) string {
		return run("subagent-stop", fmt.Sprintf("agent_id=a-%d", i), "agent_type=orch-hook:code-implementer", "last_assistant_message=IMPLEMENTATION STATUS: COMPLETE")
	})
	notes := batch(func(i int) string {
		prompt := fmt.Sprintf("<task-notification>\n<task-id>a-%d</task-id>\n<tool-use-id>t-%d</tool-use-id>\n<status>completed</status>\n<result>IMPLEMENTATION STATUS: COMPLETE</result>\n</task-notification>", i, i)
		return run("notification", "prompt="+prompt)
	})

	toB := 0
	for i, out := range notes {
		if !strings.Contains(out, "additionalContext") {
			t.Errorf("notification of Task %02d delivered no checkpoint line: %q", i+1, out)
		}
		if strings.Contains(out, "4a OK -> 4b") {
			toB++
		}
	}
	if toB != 1 {
		t.Errorf("%d notifications said 4a OK -> 4b, want exactly 1", toB)
	}
	store := state.Open(work)
	cp, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if cp.StateMachine.CurrentState != "4b" {
		t.Errorf("state %s, want 4b", cp.StateMachine.CurrentState)
	}
	events, _, err := store.Events()
	if err != nil {
		t.Fatal(err)
	}
	launches, completions, transitions := 0, 0, 0
	for _, ev := range events {
		switch {
		case ev.Type == state.EventAgentLaunch && ev.AgentType == "code-implementer":
			launches++
		case ev.Type == state.EventAgentDone && ev.AgentType == "code-implementer":
			completions++
		case ev.Type == state.EventTransition && ev.StateBefore == "4a" && ev.StateAfter == "4b":
			transitions++
		}
	}
	if launches != n || completions != n || transitions != 1 {
		t.Errorf("logged %d launches, %d completions, %d 4a->4b transitions; want %d, %d, 1", launches, completions, transitions, n, n)
	}
}
