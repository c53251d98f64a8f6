package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/state"
)

// TestParallelTasks runs a phase of 32 independent tasks the way Claude Code
// runs them: 32 Agent launches whose PreToolUse hooks run at once, then 32
// PostToolUse, 32 SubagentStop and 32 task-notification hooks, each batch
// concurrently, as real orch-hook processes. Every launch must be allowed,
// every completion counted once, and exactly one call moves 4a -> 4b.
func TestParallelTasks(t *testing.T) {
	parallelPhase(t, 32, 32)
}

// TestManyCompletions: 256 tasks of one phase, launched 16 at a time (a
// launch gates, so it waits for the lock only briefly), then their 256
// SubagentStop and 256 task-notification hooks all at once on this
// machine's cores. Each completion waits for the lock within its budget:
// none is dropped, and all are applied when the last hook returns.
func TestManyCompletions(t *testing.T) {
	if testing.Short() {
		t.Skip("256 processes at once: not in -short")
	}
	parallelPhase(t, 256, 16)
}

// phaseRun runs one hook process on a payload template in a test project.
type phaseRun func(template string, overrides ...string) string

// approvedPhase starts a workflow whose approved plan has one phase of n
// independent tasks, ready for their launches (state 4a's entry).
func approvedPhase(t *testing.T, n int) (string, phaseRun) {
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

	run("user-prompt", fmt.Sprintf("prompt=/orch-hook:orchestrate %d independent changes", n))
	agent("ra", "requirements-analyst", "analyse", "REQUIREMENTS_CLEAR")
	tasks := filepath.Join(work, ".orchestrator", "tasks")
	if err := os.MkdirAll(tasks, 0o755); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	plan.WriteString("# Master Plan\n\n## Phase 1: Everything at once\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&plan, "- [ ] Task %02d: change %d\n", i, i)
		task := fmt.Sprintf("# Task %02d\nFiles: src/file%02d.go\nrequires_ux_dx_review: false\n", i, i)
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
	return work, run
}

// parallelPhase runs one phase of n independent tasks: launches, launches
// at a time; every completion hook of a kind at once.
func parallelPhase(t *testing.T, n, launches int) {
	work, run := approvedPhase(t, n)
	mustAllow := func(out, what string) {
		t.Helper()
		if strings.Contains(out, `"deny"`) || strings.Contains(out, `"block"`) {
			t.Fatalf("%s refused: %s", what, out)
		}
	}

	batchOf := func(width int, f func(i int) string) []string {
		outs := make([]string, n+1)
		var wg sync.WaitGroup
		slots := make(chan struct{}, width)
		for i := 1; i <= n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				outs[i] = f(i)
			}()
		}
		wg.Wait()
		return outs[1:]
	}
	batch := func(f func(i int) string) []string {
		start := time.Now()
		defer func() { t.Logf("%d hooks at once: %s", n, time.Since(start).Round(time.Millisecond)) }()
		return batchOf(n, f)
	}
	for i, out := range batchOf(launches, func(i int) string {
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

// TestCompletionWaitsForHeldLock: a task's completion arrives while another
// process holds the state lock for 10 s. The completion's hook waits (its
// budget is 14 s, as hooks.json passes it) and applies it: nothing is
// dropped, and the hook returns soon after the lock is released.
func TestCompletionWaitsForHeldLock(t *testing.T) {
	if testing.Short() {
		t.Skip("holds the lock for 10 s: not in -short")
	}
	work, run := approvedPhase(t, 2)
	for i := 1; i <= 2; i++ {
		run("pre-agent", fmt.Sprintf("tool_use_id=t-%d", i), "tool_input.subagent_type=orch-hook:code-implementer", fmt.Sprintf("tool_input.prompt=Task %02d: change", i))
		run("post-agent-bg", fmt.Sprintf("tool_use_id=t-%d", i), fmt.Sprintf("tool_response.agentId=a-%d", i))
	}
	// The holder: a flock(2) on the sidecar lock file, as another orch-hook
	// (or anything else) would take it.
	fl := flock.New(filepath.Join(work, state.Dir, "lock"))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	const hold = 10 * time.Second
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(hold)
		fl.Unlock()
		released <- time.Now()
	}()
	start := time.Now()
	out := run("subagent-stop", "agent_id=a-1", "agent_type=orch-hook:code-implementer", "last_assistant_message=IMPLEMENTATION STATUS: COMPLETE")
	done := time.Now()
	at := <-released
	if done.Before(at) {
		t.Fatalf("the completion returned after %s, before the lock was released: %q", done.Sub(start), out)
	}
	if strings.Contains(out, "not recorded") {
		t.Fatalf("the completion was not recorded: %s", out)
	}
	cp, err := state.Open(work).Load()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cp.Workflow), `"result":"IMPLEMENTATION STATUS: COMPLETE"`) {
		t.Errorf("the completion that waited for the lock is not in the state:\n%s", cp.Workflow)
	}
	events, _, err := state.Open(work).Events()
	if err != nil {
		t.Fatal(err)
	}
	done1 := 0
	for _, ev := range events {
		if ev.Type == state.EventAgentDone && ev.AgentID == "a-1" {
			done1++
		}
	}
	if done1 != 1 {
		t.Errorf("%d agent_complete records for a-1, want 1", done1)
	}
}

// TestCompletionPastBudget: a lock held past the hook's whole budget. The
// completion cannot be recorded; the hook says so to the user (never a
// silent exit), names the holder, and does not block.
func TestCompletionPastBudget(t *testing.T) {
	work, run := approvedPhase(t, 1)
	run("pre-agent", "tool_use_id=t-1", "tool_input.subagent_type=orch-hook:code-implementer", "tool_input.prompt=Task 01: change")
	fl := flock.New(filepath.Join(work, state.Dir, "lock"))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	defer fl.Unlock()
	input, err := buildPayload("subagent-stop", work, "session-1", "agent_id=a-1", "agent_type=orch-hook:code-implementer", "last_assistant_message=IMPLEMENTATION STATUS: COMPLETE")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("orch-hook")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hook", "--budget", "3s", gates.SubagentStop)
	cmd.Dir, cmd.Stdin = work, bytes.NewReader(input)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_PROJECT_DIR=" + work, "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the hook failed: %v", err)
	}
	var msg struct {
		SystemMessage string `json:"systemMessage"`
		Decision      string `json:"decision"`
	}
	if err := json.Unmarshal(out, &msg); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if msg.Decision != "" || !strings.Contains(msg.SystemMessage, "was not recorded") || !strings.Contains(msg.SystemMessage, "gave up after 2") {
		t.Errorf("want a message to the user naming the wait, and no block; got %s", out)
	}
}
