package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// acceptStatePrompt: the user typed /orch-hook:resolve accept-state.
func acceptStatePrompt(prompt string) bool {
	name, args, ok := gates.UserCommand(prompt)
	if !ok || name != "resolve" {
		return false
	}
	f := strings.Fields(strings.ToLower(args))
	return len(f) == 1 && (f[0] == "accept-state" || f[0] == "accept_state")
}

// acceptState applies /orch-hook:resolve accept-state before the state is
// read: it is the way out of a state changed outside orch-hook, which every
// other call refuses. The prompt is blocked (it was for orch-hook, not the
// model); the block's reason is what the user sees.
func acceptState(store *state.Store) hooks.Decision {
	store.Check = CheckWorkflow
	msg, err := store.AcceptState("the user (/orch-hook:resolve accept-state)")
	switch {
	case errors.Is(err, state.ErrNoState):
		msg = "there is no workflow here; nothing to accept."
	case err != nil:
		hint := ""
		var h interface{ Hint() string }
		if errors.As(err, &h) {
			hint = " " + h.Hint() + "."
		}
		msg = fmt.Sprintf("could not accept the state: %s.%s", shorten.OneLine(err.Error()), hint)
	default:
		msg += ". Every step is checked again from here."
	}
	return hooks.Decision{Block: true, Reason: "orch-hook: " + msg}
}
