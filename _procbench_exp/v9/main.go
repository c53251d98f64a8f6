package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PromptID       string `json:"prompt_id"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`

	// AgentID is set only inside a subagent; main-thread payloads have no
	// agent_id key. AgentType is a pointer because "" (compaction) differs
	// from absent.
	AgentID   string  `json:"agent_id"`
	AgentType *string `json:"agent_type"`

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        string          `json:"error"`
	IsInterrupt  bool            `json:"is_interrupt"`

	Prompt        string `json:"prompt"`
	ExpansionType string `json:"expansion_type"`
	CommandName   string `json:"command_name"`
	CommandArgs   string `json:"command_args"`
	CommandSource string `json:"command_source"`

	Source string `json:"source"` // SessionStart
	Reason string `json:"reason"` // SessionEnd

	StopHookActive       bool             `json:"stop_hook_active"`
	LastAssistantMessage string           `json:"last_assistant_message"`
	AgentTranscriptPath  string           `json:"agent_transcript_path"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks"`
}
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Description string `json:"description"`
	AgentType   string `json:"agent_type"`
}

func main() {
	data, _ := io.ReadAll(os.Stdin)
	t1 := time.Now()
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		panic(err)
	}
	t2 := time.Now()
	var in2 Input
	json.Unmarshal(data, &in2)
	fmt.Fprintf(os.Stderr, "std decode cold %v warm %v\n", t2.Sub(t1), time.Since(t2))
}
