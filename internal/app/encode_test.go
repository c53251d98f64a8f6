package app

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// The hand encoders write what jsonenc.Marshal writes, byte for byte, so
// records read back with encoding/json.
func TestEncodeMatchesJSON(t *testing.T) {
	content, empty := "line 1\nline \"2\"\t<tag> & \\ \x01 \u2028 é 😀", ""
	calls := []*gates.Call{
		{},
		{Event: "PreToolUse", Session: "s-1", PromptID: "p", AgentID: "a", AgentType: "orch-hook:x", Tool: "Agent", ToolUseID: "t",
			SubagentType: "orch-hook:code-implementer", Prompt: content, Description: "d", Background: true, Isolation: "worktree"},
		{Event: "PreToolUse", Tool: "Write", Path: "/p/a b.md", Write: &gates.FileWrite{Content: &content}, Unresolved: true},
		{Event: "PreToolUse", Tool: "Write", Write: &gates.FileWrite{Content: &empty}},
		{Event: "PreToolUse", Tool: "Edit", Write: &gates.FileWrite{OldString: "a", NewString: "b\x7f", ReplaceAll: true, Notebook: true}},
		{Event: "PreToolUse", Tool: "Bash", Command: "ls 'a'\n", Unsandboxed: true, CwdRel: "sub/dir", MCPPaths: []string{"/x", "/y\"z"}},
		{Event: "PostToolUse", Status: "completed", LinkAgentID: "ag", DurationMs: 12345, Text: "bad utf8 \xff\xfe end", Failure: "f",
			StopHookActive: true, BackgroundRuns: []string{"r1"}, Source: "resume", EndReason: "clear", Skill: "orch-hook:follow-up", SkillArgs: "x", SendTo: "y"},
	}
	for i, c := range calls {
		want, err := jsonenc.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeCall(c); !bytes.Equal(got, want) {
			t.Errorf("call %d:\n got %s\nwant %s", i, got, want)
		}
	}
	rs := []*reads{
		{Root: "/r", Now: time.Date(2026, 11, 26, 5, 0, 0, 120000000, time.UTC)},
		{Root: "/r\"x", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), StopCap: 3, PlanRead: true,
			Plan: map[string]string{"b.md": "22", "MASTER_PLAN.md": "11"}, PlanErr: "reading: \"no\"", Recorded: map[string]string{"x": "", "y": "33"},
			Inspect: map[string]fileCheck{"/p/b": {Rel: "b", Inside: true, Exists: true, Size: 9}, "/out": {}},
			Hash:    map[string]hashRead{"/p/b": {Rel: "b", Sum: "ff"}, "/q": {Err: "open /q: no such file"}},
			List:    map[string][]string{"specs/": {"a.md", "b.md"}, "none/": {}},
			Read:    map[string]string{"p.md": "44", "gone.md": ""}},
		{Root: "/r", Tokens: &gates.Tokens{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 5, Unread: "1 record \"cut\""}},
		{Root: "/r", Tokens: &gates.Tokens{Unknown: "transcript missing"}},
		{Root: "/r", Tokens: &gates.Tokens{}},
	}
	for i, r := range rs {
		want, err := jsonenc.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.encode(); !bytes.Equal(got, want) {
			t.Errorf("reads %d:\n got %s\nwant %s", i, got, want)
		}
		var back reads
		if err := json.Unmarshal(r.encode(), &back); err != nil || back.Root != r.Root || !back.Now.Equal(r.Now) {
			t.Errorf("reads %d does not read back: %v (root %q, now %v)", i, err, back.Root, back.Now)
		}
	}
}

// FuzzEncodeCall: any strings encode to what jsonenc writes.
func FuzzEncodeCall(f *testing.F) {
	f.Add("prompt", "text\n\"x\"", "cmd \xff")
	f.Fuzz(func(t *testing.T, prompt, text, cmd string) {
		c := &gates.Call{Event: "E", Prompt: prompt, Text: text, Command: cmd, MCPPaths: []string{text}}
		want, err := jsonenc.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeCall(c); !bytes.Equal(got, want) {
			t.Errorf("got %s\nwant %s", got, want)
		}
	})
}
