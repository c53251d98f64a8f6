package hooks

import (
	"io"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// Decision is what orch-hook answers to one hook event. The zero value is
// allow, which is rendered as nothing at all: printing
// permissionDecision "allow" would skip the user's own permission prompts.
type Decision struct {
	// Deny refuses a PreToolUse call.
	Deny bool
	// Block refuses a Stop, SubagentStop or UserPromptSubmit.
	Block bool
	// Reason says why, and what to do instead.
	Reason string
	// Context is added to the model's context (additionalContext).
	Context string
	// Message is shown to the user, not the model (systemMessage).
	Message string
	// ReadOnly is set when the state could not be written because its
	// file system is read-only to this process (Claude Code's sandbox, when
	// the model runs the binary): the call exits 1 with one line.
	ReadOnly error
}

type hookSpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

type output struct {
	Decision           string              `json:"decision,omitempty"`
	Reason             string              `json:"reason,omitempty"`
	SystemMessage      string              `json:"systemMessage,omitempty"`
	HookSpecificOutput *hookSpecificOutput `json:"hookSpecificOutput,omitempty"`
}

// Render writes d for event in the form Claude Code reads (README, "Exit codes"):
// a PreToolUse deny as permissionDecision "deny"; a block as
// {"decision":"block"}; context as hookSpecificOutput.additionalContext.
// Allow without context writes nothing.
func Render(w io.Writer, event string, d Decision) error {
	var out output
	switch {
	case d.Deny && event == gates.PreToolUse:
		out.HookSpecificOutput = &hookSpecificOutput{
			HookEventName:            event,
			PermissionDecision:       "deny",
			PermissionDecisionReason: d.Reason,
			AdditionalContext:        d.Context,
		}
	case d.Deny || d.Block:
		out.Decision = "block"
		out.Reason = d.Reason
		if d.Context != "" && contextEvents[event] {
			out.HookSpecificOutput = &hookSpecificOutput{HookEventName: event, AdditionalContext: d.Context}
		}
	case d.Context != "" && contextEvents[event]:
		out.HookSpecificOutput = &hookSpecificOutput{HookEventName: event, AdditionalContext: d.Context}
	case d.Message == "":
		return nil
	}
	out.SystemMessage = d.Message
	b, err := jsonenc.Marshal(out)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// contextEvents accept hookSpecificOutput.additionalContext.
var contextEvents = map[string]bool{
	gates.PreToolUse: true, gates.PostToolUse: true, gates.PostToolUseFailure: true,
	gates.UserPromptSubmit: true, gates.SessionStart: true, gates.SubagentStart: true,
}
