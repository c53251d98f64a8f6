package gates

// Hook event names (Call.Event, Claude Code's hook_event_name) orch-hook
// knows. Others decode fine and are allowed.
const (
	PreToolUse          = "PreToolUse"
	PostToolUse         = "PostToolUse"
	PostToolUseFailure  = "PostToolUseFailure"
	SubagentStart       = "SubagentStart"
	SubagentStop        = "SubagentStop"
	Stop                = "Stop"
	UserPromptSubmit    = "UserPromptSubmit"
	UserPromptExpansion = "UserPromptExpansion"
	SessionStart        = "SessionStart"
	SessionEnd          = "SessionEnd"
)
