package hooks

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/state"
)

// toolInput holds the tool_input fields orch-hook reads, across tools.
type toolInput struct {
	// Agent
	Prompt          string `json:"prompt"`
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
	Command string `json:"command"`
	// Skill
	Skill string `json:"skill"`
	// SendMessage
	To string `json:"to"`
}

// agentResponse is PostToolUse(Agent)'s tool_response.
type agentResponse struct {
	Status     string `json:"status"`
	AgentID    string `json:"agentId"`
	DurationMs int64  `json:"totalDurationMs"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// toCall normalizes a hook payload for package gates. root is the project
// root, used to resolve relative file paths.
func toCall(in *Input, root string) *gates.Call {
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
		_ = json.Unmarshal(in.ToolInput, &ti)
	}
	switch in.HookEventName {
	case PreToolUse, PostToolUse, PostToolUseFailure:
		switch in.ToolName {
		case "Agent", "Task":
			c.SubagentType = ti.SubagentType
			c.Prompt = ti.Prompt
			c.Background = ti.RunInBackground == nil || *ti.RunInBackground
			c.Isolation = ti.Isolation
		case "Write", "Edit", "NotebookEdit":
			path := ti.FilePath
			if in.ToolName == "NotebookEdit" && path == "" {
				path = ti.NotebookPath
			}
			if path != "" && !filepath.IsAbs(path) {
				path = filepath.Join(orDefault(in.Cwd, root), path)
			}
			if path != "" {
				c.Path, _ = state.Confine(root, path)
			}
			c.Write = &gates.FileWrite{Content: ti.Content, OldString: ti.OldString, NewString: ti.NewString, ReplaceAll: ti.ReplaceAll, Notebook: in.ToolName == "NotebookEdit"}
			if in.ToolName == "Edit" {
				c.Write.Content = nil
			}
		case "Bash":
			c.Command = ti.Command
		case "Skill":
			c.Skill = ti.Skill
		case "SendMessage":
			c.SendTo = ti.To
		}
		if in.HookEventName == PostToolUse && (in.ToolName == "Agent" || in.ToolName == "Task") {
			var r agentResponse
			if len(in.ToolResponse) > 0 && in.ToolResponse[0] == '{' {
				_ = json.Unmarshal(in.ToolResponse, &r)
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
	case SubagentStop:
		c.Text = in.LastAssistantMessage
		c.StopHookActive = in.StopHookActive
	case Stop:
		c.StopHookActive = in.StopHookActive
		for _, t := range in.BackgroundTasks {
			if t.Type == "subagent" && (t.Status == "running" || t.Status == "") {
				c.BackgroundRuns = append(c.BackgroundRuns, t.ID)
			}
		}
	case UserPromptSubmit:
		c.Prompt = in.Prompt
	case SessionStart:
		c.Source = in.Source
	case SessionEnd:
		c.EndReason = in.Reason
	}
	return c
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// isStartPrompt recognizes "/orch-hook:orchestrate <request>" (or the
// /orch-hook-orchestrate form of an init install).
func isStartPrompt(prompt string) bool {
	p := strings.TrimSpace(prompt)
	return strings.HasPrefix(p, "/orch-hook:orchestrate") || strings.HasPrefix(p, "/orch-hook-orchestrate")
}
