package hooks

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
	"github.com/orch-hook/orch-hook/state"
)

// toolInput holds the tool_input fields orch-hook reads, across tools.
type toolInput struct {
	// Agent
	Prompt          string `json:"prompt"`
	Description     string `json:"description"`
	SubagentType    string `json:"subagent_type"`
	RunInBackground *bool  `json:"run_in_background"`
	Isolation       string `json:"isolation"`
	// Write, Edit, NotebookEdit
	FilePath     string  `json:"file_path"`
	NotebookPath string  `json:"notebook_path"`
	Content      *string `json:"content"`
	OldString    string  `json:"old_string"`
	NewString    string  `json:"new_string"`
	ReplaceAll   bool    `json:"replace_all"`
	// Bash
	Command                   string `json:"command"`
	DangerouslyDisableSandbox bool   `json:"dangerouslyDisableSandbox"`
	// Skill
	Skill string `json:"skill"`
	Args  string `json:"args"`
	// SendMessage
	To string `json:"to"`
}

// agentResponse is PostToolUse(Agent)'s tool_response.
type agentResponse struct {
	Status     string         `json:"status"`
	AgentID    string         `json:"agentId"`
	DurationMs int64          `json:"totalDurationMs"`
	Content    []agentContent `json:"content"`
}

// agentContent is one block of an Agent's tool_response content.
type agentContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToCall normalizes a hook payload for package gates. root is the project
// root, used to resolve relative file paths.
func ToCall(in *Input, root string) *gates.Call {
	c := &gates.Call{
		Event:     in.HookEventName,
		Session:   in.SessionID,
		PromptID:  in.PromptID,
		AgentID:   in.AgentID,
		Tool:      in.ToolName,
		ToolUseID: in.ToolUseID,
	}
	if in.AgentType != nil {
		c.AgentType = *in.AgentType
	}
	var ti toolInput
	if len(in.ToolInput) > 0 {
		// Decode errors leave fields empty; a gate that needs one denies.
		_ = jsonfast.Unmarshal(in.ToolInput, &ti)
	}
	switch in.HookEventName {
	case gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure:
		switch in.ToolName {
		case "Agent", "Task":
			c.SubagentType = ti.SubagentType
			c.Prompt, c.Description = ti.Prompt, ti.Description
			c.Background = ti.RunInBackground == nil || *ti.RunInBackground
			c.Isolation = ti.Isolation
		case "Write", "Edit", "NotebookEdit":
			path := ti.FilePath
			if in.ToolName == "NotebookEdit" && path == "" {
				path = ti.NotebookPath
			}
			if path != "" {
				var ok bool
				c.Path, ok = confinePath(in, root, path)
				c.Unresolved = !ok
			}
			c.Write = &gates.FileWrite{Content: ti.Content, OldString: ti.OldString, NewString: ti.NewString, ReplaceAll: ti.ReplaceAll, Notebook: in.ToolName == "NotebookEdit"}
			if in.ToolName == "Edit" {
				c.Write.Content = nil
			}
		case "Bash":
			c.Command = ti.Command
			c.Unsandboxed = ti.DangerouslyDisableSandbox
			c.CwdRel = cwdRel(root, in.Cwd)
		case "Skill":
			c.Skill, c.SkillArgs = ti.Skill, ti.Args
		case "SendMessage":
			c.SendTo = ti.To
		default:
			if gates.IsMCP(in.ToolName) && in.HookEventName == gates.PreToolUse && gates.MCPWrites(in.ToolName) {
				for _, p := range mcpPaths(in.ToolInput) {
					real, ok := confinePath(in, root, p)
					c.MCPPaths = append(c.MCPPaths, real)
					c.Unresolved = c.Unresolved || !ok
				}
			}
		}
		if in.HookEventName == gates.PostToolUse && (in.ToolName == "Agent" || in.ToolName == "Task") {
			var r agentResponse
			if len(in.ToolResponse) > 0 && in.ToolResponse[0] == '{' {
				_ = jsonfast.Unmarshal(in.ToolResponse, &r)
			}
			c.Status, c.LinkAgentID, c.DurationMs = r.Status, r.AgentID, r.DurationMs
			for i := len(r.Content) - 1; i >= 0; i-- {
				if r.Content[i].Type == "text" {
					c.Text = r.Content[i].Text
					break
				}
			}
		}
		c.Failure = in.Error
	case gates.SubagentStop:
		c.Text = in.LastAssistantMessage
		c.StopHookActive = in.StopHookActive
	case gates.Stop:
		c.StopHookActive = in.StopHookActive
		for _, t := range in.BackgroundTasks {
			if t.Type == "subagent" && (t.Status == "running" || t.Status == "") {
				c.BackgroundRuns = append(c.BackgroundRuns, t.ID)
			}
		}
	case gates.UserPromptSubmit:
		c.Prompt = in.Prompt
	case gates.SessionStart:
		c.Source = in.Source
	case gates.SessionEnd:
		c.EndReason = in.Reason
	}
	return c
}

// cwdRel is the session's directory relative to the project root ("" at
// the root or when unknown; "../x" outside it).
func cwdRel(root, cwd string) string {
	if cwd == "" || root == "" {
		return ""
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// confinePath resolves a tool's file path as the tool would (relative to
// the session's cwd; ".." after a symlink applies to the link's target),
// following every symlink. ok is false when the path cannot be resolved
// inside the project (outside, too long, a ~user form, a link loop).
func confinePath(in *Input, root, path string) (real string, ok bool) {
	if !filepath.IsAbs(path) && !strings.HasPrefix(path, "~") {
		path = gates.OrText(in.Cwd, root) + string(filepath.Separator) + path
	}
	real, ok = state.Confine(root, path)
	if !ok && len(real) > 200 {
		real = real[:200] + "..."
	}
	return real, ok
}

// mcpPathWords: a key of an MCP tool's input whose words (snake_case,
// camelCase, kebab-case) include one of these names a path.
var mcpPathWords = map[string]bool{"path": true, "paths": true, "file": true, "files": true, "filepath": true, "filename": true, "dir": true, "directory": true, "folder": true, "source": true, "src": true, "target": true, "dest": true, "destination": true, "uri": true}

// maxMCPPaths bounds the paths collected from one input.
const maxMCPPaths = 64

// mcpPaths collects the string values of path-like keys anywhere in an MCP
// tool's input (nested objects and lists included), at most maxMCPPaths.
func mcpPaths(raw json.RawMessage) []string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > 8 || len(out) >= maxMCPPaths {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				walk(k, x, depth+1)
			}
		case []any:
			for _, x := range t {
				walk(key, x, depth+1)
			}
		case string:
			if t != "" && pathKey(key) {
				out = append(out, strings.TrimPrefix(t, "file://"))
			}
		}
	}
	walk("", v, 0)
	sort.Strings(out)
	return out
}

// pathKey: file_path, filePath, path, paths, destination, ...
func pathKey(key string) bool {
	word := make([]rune, 0, len(key))
	check := func() bool {
		ok := mcpPathWords[strings.ToLower(string(word))]
		word = word[:0]
		return ok
	}
	prev := ' '
	for _, r := range key {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			if check() {
				return true
			}
			prev = r
			continue
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			if check() {
				return true
			}
		}
		word = append(word, r)
		prev = r
	}
	return check()
}
