package gates

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/internal/shorten"
)

// With Claude Code's sandbox on, a Bash write to orch-hook's state fails
// with EROFS before orch-hook could see it as anything but a command; the
// failure comes back as PostToolUseFailure. orch-hook logs it, so status
// shows what the model tried (README, "Threat model").

// RefusedBySandbox: a failed Bash command's error that says the sandbox
// (a read-only file system) or orch-hook's tripwire refused it.
func RefusedBySandbox(failure string) bool {
	return strings.Contains(strings.ToLower(failure), "read-only file system") || strings.Contains(failure, "orch-hook: refusing `orch-hook")
}

// SandboxRefusal logs a Bash command the sandbox or the tripwire stopped.
func SandboxRefusal(c *Call) (Outcome, bool) {
	if c.Tool != "Bash" || !RefusedBySandbox(c.Failure) {
		return Outcome{}, false
	}
	what := "the sandbox refused a Bash write (read-only file system)"
	if !strings.Contains(strings.ToLower(c.Failure), "read-only file system") {
		what = "orch-hook refused to run from the model's shell"
	}
	o := Outcome{}
	o.Log(Record{Type: RecDeny, Reason: fmt.Sprintf("%s: %s", what, shorten.Runes(shorten.OneLine(c.Command), 200)), ToolUseID: c.ToolUseID, AgentID: c.AgentID, AgentType: c.AgentType})
	return o, true
}

// GuardFinishedState keeps the state directory orch-hook's own after a
// workflow ended (complete or aborted, when nothing else is gated): a
// checkpoint written by the model would be read by the next hook, a follow-up
// or a new workflow.
func GuardFinishedState(c *Call, root string) (Outcome, bool) {
	if c.Event != PreToolUse {
		return Outcome{}, false
	}
	what := ""
	switch {
	case c.Tool == "Write" || c.Tool == "Edit" || c.Tool == "NotebookEdit":
		if rel, inside := RelPath(root, c.Path); inside && Under(rel, StateDir) {
			what = rel + " is orch-hook's state; no agent writes there, also after the workflow ended. Use `orch-hook status` to read it."
		}
	case c.Tool == "Bash":
		if c.mentions(StateDir) && c.changesFiles() {
			what = "commands that change .orchestrator/state are not allowed, also after the workflow ended: it is orch-hook's state."
		}
	case IsMCP(c.Tool) && MCPWrites(c.Tool):
		for _, p := range c.MCPPaths {
			if rel, inside := RelPath(root, p); inside && Under(rel, StateDir) {
				what = rel + " is orch-hook's state; no tool writes there."
			}
		}
	}
	if what == "" {
		return Outcome{}, false
	}
	return Refuse(Deny, &Refusal{Rule: what}, Record{ToolUseID: c.ToolUseID, AgentID: c.AgentID}), true
}
