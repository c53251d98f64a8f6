package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// Claude Code gives hook commands and the Bash tool's commands different
// environments (README, "Threat model"): a hook sees CLAUDE_PROJECT_DIR,
// and the Bash tool's commands see variables a hook does not. Both are easy
// to fake from a shell, so this is a tripwire that catches a model running
// the binary the obvious way, not a boundary.

// bashOnly are set by Claude Code for the Bash tool's commands and never
// for a hook's (observed with 2.1.328: CLAUDE_CODE_EXECPATH always,
// SANDBOX_RUNTIME in the sandbox). Variables a user might export too
// (TMPPREFIX, CLAUDE_CODE_TMPDIR; CLAUDE_TMPDIR, which hooks also get once
// a sandboxed command ran) are not used.
var bashOnly = []string{"CLAUDE_CODE_EXECPATH", "SANDBOX_RUNTIME"}

// ForgedError is a state-changing subcommand run from the model's shell.
type ForgedError struct{ Command, Why string }

func (e *ForgedError) Error() string {
	return fmt.Sprintf("refusing `orch-hook %s` from Claude Code's Bash tool: %s", shorten.Bytes(e.Command, 60, "..."), e.Why)
}

// Hint says what to do.
func (e *ForgedError) Hint() string {
	return "hook events come from Claude Code, and decisions are the user's (typed /orch-hook:... commands); a person runs this in their own terminal. The attempt is logged (`orch-hook log --type deny`) where the state is writable"
}

// Tripwire reports why the process environment is the Bash tool's and not
// a hook's ("" when it looks like a hook, or like a person's terminal,
// where CLAUDECODE is unset and running the hook by hand is fine).
func Tripwire(getenv func(string) string) string {
	if getenv("CLAUDECODE") == "" {
		return ""
	}
	var seen []string
	for _, v := range bashOnly {
		if getenv(v) != "" {
			seen = append(seen, v)
		}
	}
	// AI_AGENT is claude-code_<version>_agent for the Bash tool and
	// ..._harness for hooks.
	if strings.HasSuffix(getenv("AI_AGENT"), "_agent") {
		seen = append(seen, "AI_AGENT="+getenv("AI_AGENT"))
	}
	switch {
	case len(seen) > 0:
		return fmt.Sprintf("the environment is a Bash tool command's (%s is set)", strings.Join(seen, ", "))
	case getenv("CLAUDE_PROJECT_DIR") == "":
		return "the environment is a Bash tool command's (CLAUDECODE is set but CLAUDE_PROJECT_DIR, which every hook gets, is not)"
	}
	return ""
}

// LogForgery records a refused run in the project's event log, where
// `orch-hook status` and `log` show it. Best effort: under Claude Code's
// sandbox the state is read-only to the model's processes, this one
// included, and nothing is written.
func LogForgery(command, why string) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	store := state.Open(state.FindRoot(wd))
	if _, err := os.Stat(store.CheckpointPath()); err != nil {
		return
	}
	_ = store.Append(state.Event{Type: state.EventDeny, Reason: "refused `orch-hook " + shorten.Bytes(command, 60, "...") + "` run from the model's shell: " + why})
}
