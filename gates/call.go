package gates

import "github.com/orch-hook/orch-hook/internal/jsonfast"

// Call is one hook event, normalized by package hooks. Only the fields the
// event carries are set.
type Call struct {
	Event     string `json:"event,omitempty"` // hook_event_name
	Session   string `json:"session,omitempty"`
	PromptID  string `json:"prompt_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"` // the subagent the event fired in ("" on the main thread)
	AgentType string `json:"agent_type,omitempty"`
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`

	// Agent launches.
	SubagentType string `json:"subagent_type,omitempty"`
	Prompt       string `json:"prompt,omitempty"`      // the Agent prompt, or the user's prompt
	Description  string `json:"description,omitempty"` // the Agent description
	Background   bool   `json:"background,omitempty"`
	Isolation    string `json:"isolation,omitempty"`

	// File writes: Path is absolute and cleaned (symlinks of existing
	// directories resolved by the caller).
	Path  string     `json:"path,omitempty"`
	Write *FileWrite `json:"write,omitempty"`
	// Unresolved: Path (or an MCP path) does not resolve inside the
	// project: outside it, too long, or a link loop.
	Unresolved bool `json:"unresolved,omitempty"`

	Command string `json:"command,omitempty"` // Bash
	// Unsandboxed: the Bash call asks to run outside Claude Code's sandbox
	// (dangerouslyDisableSandbox).
	Unsandboxed bool `json:"unsandboxed,omitempty"`
	// CwdRel is the session's directory relative to the project root (""
	// at the root), against which a Bash command's relative paths resolve.
	CwdRel string `json:"cwd_rel,omitempty"`
	// bash memoizes what the rules read of Command (see bashFacts).
	bash      *bashFacts
	Skill     string `json:"skill,omitempty"`      // Skill
	SkillArgs string `json:"skill_args,omitempty"` // Skill's args
	SendTo    string `json:"send_to,omitempty"`    // SendMessage
	// MCPPaths are the paths an MCP tool's input names (absolute, resolved
	// like Path).
	MCPPaths []string `json:"mcp_paths,omitempty"`

	// Completions and stops.
	Status         string   `json:"status,omitempty"`        // PostToolUse(Agent) tool_response.status
	LinkAgentID    string   `json:"link_agent_id,omitempty"` // PostToolUse(Agent) tool_response.agentId
	DurationMs     int64    `json:"duration_ms,omitempty"`   // PostToolUse(Agent) tool_response.totalDurationMs (foreground)
	Text           string   `json:"text,omitempty"`          // the agent's final report
	Failure        string   `json:"failure,omitempty"`       // PostToolUseFailure error
	StopHookActive bool     `json:"stop_hook_active,omitempty"`
	BackgroundRuns []string `json:"background_runs,omitempty"` // ids of running background subagents (Stop)
	Source         string   `json:"source,omitempty"`          // SessionStart
	EndReason      string   `json:"end_reason,omitempty"`      // SessionEnd
}

// FileWrite is what a Write, Edit or NotebookEdit would do.
type FileWrite struct {
	Content    *string `json:"content,omitempty"`    // Write
	OldString  string  `json:"old_string,omitempty"` // Edit
	NewString  string  `json:"new_string,omitempty"`
	ReplaceAll bool    `json:"replace_all,omitempty"`
	Notebook   bool    `json:"notebook,omitempty"`
}

// Verdict is the kind of answer.
type Verdict int

// Verdicts.
const (
	Allow Verdict = iota
	Deny          // PreToolUse: the tool does not run
	Block         // Stop, SubagentStop, UserPromptSubmit: refused with a reason
)

// Outcome is a decision and what it did to the workflow.
type Outcome struct {
	Verdict Verdict
	Gate    int
	// Reason is what a Deny or Block tells the model. For a refusal by a
	// rule it is Refusal.Told() (see Refuse); the few refusals made
	// without a rule's parts set it alone.
	Reason string
	// Refusal is the rule's refusal, as a value: what Reason renders, and
	// what the log record keeps.
	Refusal *Refusal
	Context string
	// Message is shown to the user, not the model (a systemMessage): the
	// plan as orch-hook read it, before the user approves it.
	Message string
	// Changed: the workflow was modified and must be saved.
	Changed bool
	// Records are what to log (state changes, denies, errors).
	Records []Record
	// Files to write in the project (relative path -> content): the
	// ESCALATION.md report, MASTER_PLAN.md after a skip.
	Files map[string]string
	// Start asks the caller to archive a finished workflow and start a new
	// one with this request.
	Start string
}

// Record is one line for the event log.
type Record struct {
	Type      string // transition, update, deny, agent_launch, agent_complete, user_decision, error
	Gate      int
	Reason    string
	AgentID   string
	AgentType string
	ToolUseID string
	Task      int
	Phase     int
	Input     string
	// Refusal is a deny record's refusal (Reason is its Text): the parts
	// the log keeps beside the text.
	Refusal *Refusal
}

// Record types (the names of state's event types).
const (
	RecTransition = "transition"
	RecUpdate     = "update"
	RecDeny       = "deny"
	RecLaunch     = "agent_launch"
	RecComplete   = "agent_complete"
	RecDecision   = "user_decision"
	RecError      = "error"
)

func (o *Outcome) Log(r Record) { o.Records = append(o.Records, r) }

// DecodeSection decodes a workflow's section of the checkpoint; an empty
// section is a zero workflow.
func DecodeSection[T any](raw []byte) (*T, error) {
	v := new(T)
	if len(raw) > 0 {
		if err := jsonfast.Unmarshal(raw, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}
