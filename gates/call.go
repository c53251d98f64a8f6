package gates

import "encoding/json"

// Call is one hook event, normalized by package hooks. Only the fields the
// event carries are set.
type Call struct {
	Event     string // hook_event_name
	Session   string
	PromptID  string
	AgentID   string // the subagent the event fired in ("" on the main thread)
	AgentType string
	Tool      string
	ToolUseID string

	// Agent launches.
	SubagentType string
	Prompt       string // the Agent prompt, or the user's prompt
	Description  string // the Agent description
	Background   bool
	Isolation    string

	// File writes: Path is absolute and cleaned (symlinks of existing
	// directories resolved by the caller).
	Path  string
	Write *FileWrite
	// Unresolved: Path (or an MCP path) does not resolve inside the
	// project: outside it, too long, or a link loop.
	Unresolved bool

	Command string // Bash
	// Unsandboxed: the Bash call asks to run outside Claude Code's sandbox
	// (dangerouslyDisableSandbox).
	Unsandboxed bool
	// CwdRel is the session's directory relative to the project root (""
	// at the root), against which a Bash command's relative paths resolve.
	CwdRel string
	// bash memoizes what the rules read of Command (see bashFacts).
	bash      *bashFacts
	Skill     string // Skill
	SkillArgs string // Skill's args
	SendTo    string // SendMessage
	// MCPPaths are the paths an MCP tool's input names (absolute, resolved
	// like Path).
	MCPPaths []string

	// Completions and stops.
	Status         string // PostToolUse(Agent) tool_response.status
	LinkAgentID    string // PostToolUse(Agent) tool_response.agentId
	DurationMs     int64  // PostToolUse(Agent) tool_response.totalDurationMs (foreground)
	Text           string // the agent's final report
	Failure        string // PostToolUseFailure error
	StopHookActive bool
	BackgroundRuns []string // ids of running background subagents (Stop)
	Source         string   // SessionStart
	EndReason      string   // SessionEnd
}

// FileWrite is what a Write, Edit or NotebookEdit would do.
type FileWrite struct {
	Content    *string // Write
	OldString  string  // Edit
	NewString  string
	ReplaceAll bool
	Notebook   bool
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
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, err
		}
	}
	return v, nil
}
