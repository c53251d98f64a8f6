package app

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/transcript"
	"github.com/orch-hook/orch-hook/state"
)

// transcriptWait bounds how long a SubagentStop waits for the CLI to write
// the agent's last response into its transcript (observed: some 20 ms; it
// writes while the hook runs). Only a transcript that never gets there
// costs the whole wait.
const transcriptWait = time.Second

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
	start := time.Now()
	budget := env.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	u, err := transcript.ReadFinal(in.AgentTranscriptPath, in.AgentID, in.LastAssistantMessage, min(transcriptWait, budget/4))
	env.debugf("the transcript of agent %s read in %v: %d responses (last response there: %v)", in.AgentID, time.Since(start).Round(time.Microsecond), u.Responses, !u.Unfinished)
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
	if u.TimeUp {
		unread = append(unread, "the part of the transcript not read in time")
	}
	if u.Unfinished {
		unread = append(unread, "its last response, not in the transcript yet")
	}
	t.Unread = strings.Join(unread, "; ")
	return t
}
