package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/transcript"
	"github.com/orch-hook/orch-hook/state"
)

// agentTokens reads what a stopping workflow agent used from its transcript
// (agent_transcript_path), before the lock: nil for any other call. A
// transcript that is missing or does not read gives tokens that say so
// (Unknown), never an error: tokens are informational, and a SubagentStop
// may be gating.
func agentTokens(env Env, in *hooks.Input, cp *state.Checkpoint) *gates.Tokens {
	if in.HookEventName != gates.SubagentStop || in.AgentType == nil || cp.Finished() {
		return nil
	}
	ours := false
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		ours = orchestrate.IsAgent(*in.AgentType)
	case "coordinate":
		ours = coordinate.IsAgent(*in.AgentType)
	}
	if !ours {
		return nil
	}
	u, err := transcript.Read(in.AgentTranscriptPath, in.AgentID)
	if err != nil {
		env.debugf("the tokens of agent %s are unknown: %v", in.AgentID, err)
		why := "transcript unreadable"
		var te *transcript.Error
		if errors.As(err, &te) {
			why = te.Why
		}
		return &gates.Tokens{Unknown: why}
	}
	t := &gates.Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Responses: u.Responses}
	var unread []string
	if u.Unread > 0 {
		unread = append(unread, gates.Plural(u.Unread, "record")+" too long, cut short or malformed")
	}
	if u.Capped {
		unread = append(unread, fmt.Sprintf("the transcript past %d MiB", transcript.MaxBytes>>20))
	}
	t.Unread = strings.Join(unread, "; ")
	return t
}
