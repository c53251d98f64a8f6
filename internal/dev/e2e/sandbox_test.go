package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

// requireSandboxTools: Claude Code's sandbox on Linux needs bubblewrap and
// socat; without them the test skips, or fails under ORCH_HOOK_E2E_REQUIRED.
func requireSandboxTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bwrap", "socat"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " not found (apt-get install bubblewrap socat)"
			if os.Getenv(envRequired) == "1" {
				t.Fatalf("%s=1 but %s", envRequired, msg)
			}
			t.Skip("sandbox e2e skipped: " + msg)
		}
	}
}

// installUnder copies a plugin directory under home, where an installed
// plugin lives (~/.claude/plugins/), so the scenario protects what a real
// install has: the sandbox makes HOME read-only to Bash.
func installUnder(t *testing.T, plugin, home string) string {
	t.Helper()
	dst := filepath.Join(home, ".claude", "plugins", "orch-hook-e2e")
	copyTree(t, plugin, dst)
	return dst
}

// TestSandbox is scenario 8 (testdata/sandbox.txtar): the user turns the
// sandbox on with /orch-hook:protect; then every attack of the model's Bash
// on the state fails, and the workflow runs to complete.
func TestSandbox(t *testing.T) {
	requireSandboxTools(t)
	home := newProject(t)
	// orch-hook's config directory where a user has it, under HOME, which
	// the sandbox makes read-only (and its keys unreadable).
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	plugin := installUnder(t, pluginCopy(t, ""), home)
	project := newProject(t)

	// Session 1: the user types /orch-hook:protect. The hook writes the
	// settings and blocks the prompt (it was for orch-hook, not the model).
	protect := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Home:       home,
		Script:     &mockapi.Script{},
		Messages:   []string{"/orch-hook:protect"},
		MaxTurns:   2,
		Timeout:    60 * time.Second,
	})
	var c checks
	settings, err := os.ReadFile(filepath.Join(project, ".claude", "settings.local.json"))
	if err != nil {
		t.Fatalf("/orch-hook:protect wrote no .claude/settings.local.json: %v\n%s", err, protect.Dump())
	}
	for _, want := range []string{`"enabled": true`, `"allowUnsandboxedCommands": false`, `"failIfUnavailable": true`, `".orchestrator"`} {
		if !strings.Contains(string(settings), want) {
			c.errorf("settings.local.json lacks %s:\n%s", want, settings)
		}
	}
	if n := len(protect.Mock.MessageRequests()); n != 0 {
		c.errorf("/orch-hook:protect reached the model (%d requests); the hook should block it", n)
	}
	// The user sees the block's reason (an informational event), with the
	// diff; the model sees nothing.
	shown := false
	for _, e := range protect.Events {
		if e.Type == "system" && e.Subtype == "informational" && strings.Contains(string(e.Raw), "wrote .claude/settings.local.json") && strings.Contains(string(e.Raw), "denyWrite") {
			shown = true
		}
	}
	if !shown {
		c.errorf("the user was not shown what /orch-hook:protect wrote:\n%s", protect.Dump())
	}

	// Session 2: the workflow, with the model's attacks at step 3.
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Home:       home,
		Script:     scenario(t, "sandbox", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-SBX]] Build a greeting module", "/orch-hook:approve"},
		MaxTurns:   40,
		Timeout:    150 * time.Second,
	})
	for _, id := range []string{"toolu_attack_sed", "toolu_attack_forge", "toolu_attack_cp", "toolu_attack_rm", "toolu_attack_plan"} {
		tr, ok := toolResult(run, id)
		t.Logf("%s: %q", id, tr.Text)
		switch {
		case !ok:
			c.errorf("%s: no tool result", id)
		case !tr.IsError:
			c.errorf("%s succeeded: %q", id, tr.Text)
		case !strings.Contains(strings.ToLower(tr.Text), "read-only file system"):
			c.errorf("%s failed, but not by the sandbox: %q", id, tr.Text)
		}
	}
	// The keys that seal the state: hidden from the sandboxed command.
	if tr, ok := toolResult(run, "toolu_attack_keys"); !ok || !tr.IsError || !strings.Contains(tr.Text, "No such file or directory") || regexp.MustCompile(`[0-9a-f]{64}`).MatchString(tr.Text) {
		c.errorf("toolu_attack_keys: the keys were not hidden from Bash: %v %q", ok, tr.Text)
	}
	if keys, _ := os.ReadDir(filepath.Join(home, ".config", "orch-hook", "keys")); len(keys) == 0 {
		c.errorf("no key was written under %s/.config/orch-hook/keys: the attack read nothing to hide", home)
	}
	if run.Saw("runs without Claude Code's sandbox") {
		c.errorf("the protected workflow was announced as unprotected")
	}
	for _, line := range []string{
		"[STEP 2] MASTER_PLAN.md created -> 3",
		"[STEP 3] APPROVED -> 4a",
		"4a OK -> 4b",
		"[STEP 5a] PASS -> 6",
		"[STEP 6] SUCCESS_EXTRACTION -> complete",
	} {
		c.wantText(run, line)
	}
	// The binary the hooks run, which the cp attack aimed at.
	hookBin := filepath.Join(home, ".claude", "plugins", "data", "orch-hook-inline", "bin", pluginVersionOf(t, plugin), "orch-hook")
	if _, err := os.Stat(hookBin); err != nil {
		c.errorf("the binary is gone: %v", err)
	} else if out, err := exec.Command(hookBin, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "orch-hook") {
		c.errorf("the binary was replaced: %v %q", err, out)
	}
	plan, _ := os.ReadFile(filepath.Join(project, ".orchestrator", "tasks", "task-01-greet.md"))
	if !strings.Contains(string(plan), "requires_ux_dx_review: false") {
		c.errorf("the Bash edit of the plan went through:\n%s", plan)
	}
	st := statusOf(t, plugin, project)
	if got := workflowState(st); got != "complete" {
		c.errorf("final state %q, want complete", got)
	}
	if p, _ := st["protection"].(map[string]any); p["protected"] != true {
		c.errorf("status does not report the project protected: %v", st["protection"])
	}
	// What status saw: each attack the sandbox stopped is logged.
	log, err := exec.Command(filepath.Join(plugin, "bin", "orch-hook"), "--project", project, "log", "--type", "deny").Output()
	if err != nil {
		c.errorf("orch-hook log: %v", err)
	}
	if n := strings.Count(string(log), "the sandbox refused a Bash write"); n != 5 {
		c.errorf("the log shows %d of the 5 attempts:\n%s", n, log)
	}
	stText, _ := exec.Command(filepath.Join(plugin, "bin", "orch-hook"), "--project", project, "status").Output()
	if !strings.Contains(string(stText), "the sandbox refused a Bash write") {
		c.errorf("status does not show the attempts:\n%s", stText)
	}
	c.report(t, run)
}

// toolResult finds the result of the tool call with a fixed id.
func toolResult(run *Run, id string) (mockapi.ToolResult, bool) {
	for _, r := range run.Mock.MessageRequests() {
		for _, tr := range r.ToolResults() {
			if tr.ToolUseID == id {
				return tr, true
			}
		}
	}
	return mockapi.ToolResult{}, false
}
