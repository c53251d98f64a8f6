package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// denyReason is what the smoke plugin's PreToolUse hook answers for Bash.
const denyReason = "E2E-SMOKE-DENY: Bash is not allowed here"

// writeSmokePlugin writes a throwaway plugin whose PreToolUse hook for Bash
// is a one-line shell command printing a deny decision.
func writeSmokePlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name": "e2e-smoke", "version": "0.0.1", "description": "orch-hook e2e smoke test plugin"}`,
		"hooks/hooks.json": `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"` + denyReason + `\"}}'"
          }
        ]
      }
    ]
  }
}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSmoke proves the harness end to end: the hook's deny reason reaches
// the model as the Bash call's tool_result, and the command never ran.
func TestSmoke(t *testing.T) {
	run := runClaude(t, Config{
		PluginDir: writeSmokePlugin(t),
		Script:    loadScript(t, "testdata/smoke.txtar"),
		Messages:  []string{"[[E2E-SMOKE]] Please write the marker file."},
		MaxTurns:  5,
		Timeout:   45 * time.Second,
	})
	mock := run.Mock

	want := "PreToolUse:Bash hook error: " + denyReason
	req, tr, ok := mock.FindToolResult(want)
	if !ok {
		t.Fatalf("no tool_result %q reached the model; requests:\n%s", want, mock.Summary())
	}
	if !tr.IsError {
		t.Errorf("tool_result %q: is_error is false", tr.Text)
	}
	if req.Conversation != "main" || req.Turn != 1 {
		t.Errorf("deny reached conversation %q turn %d, want main turn 1", req.Conversation, req.Turn)
	}
	first := mock.For("main")[0]
	if len(first.ToolUseIDs) != 1 || tr.ToolUseID != first.ToolUseIDs[0] {
		t.Errorf("tool_result is for %q, the Bash call was %v", tr.ToolUseID, first.ToolUseIDs)
	}
	if _, err := os.Stat(filepath.Join(run.ProjectDir, "ran.txt")); err == nil {
		t.Errorf("the denied command ran")
	}
	if o := mock.Overflows(); len(o) > 0 {
		t.Errorf("the main conversation ran out of turns: %v", o)
	}

	res := run.Results()
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Result, "done") {
		t.Errorf("want one successful result saying done, got:\n%s", run.Dump())
	}
	pre := run.HookEventsFor("PreToolUse")
	if len(pre) == 0 {
		t.Errorf("no PreToolUse hook events in the output:\n%s", run.Dump())
	}
}
