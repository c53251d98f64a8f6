package coordinate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

func (c *Workflow) stop(call *gates.Call, env *Env) gates.Outcome {
	if c.Owner != "" && call.Session != "" && call.Session != c.Owner {
		return gates.Outcome{}
	}
	if c.Escalation != nil {
		return gates.Outcome{} // the user decides: the session may stop
	}
	// The main thread stopping proves some launches dead: a foreground agent
	// returns before its caller's turn goes on, and a background one is
	// confirmed by its PostToolUse at once. A launch with neither never ran
	// (its call was rejected or denied by another hook); it must not hold
	// the workflow.
	var stale gates.Outcome
	for _, l := range c.Launches {
		if l.Status == gates.Running && l.Parent == "" && (!l.Background || !l.Linked) {
			l.Status, l.Ended = gates.Stale, env.Now
			stale.Changed = true
			stale.Log(gates.Record{Type: gates.RecUpdate, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "launch never ran or never returned; cleared at Stop"})
		}
	}
	for _, l := range c.Launches {
		if l.Status == gates.Running && l.Parent == "" || l.Notice != "" {
			return stale
		}
	}
	limit := c.limits().StopCap
	if env.StopCap > 0 {
		limit = env.StopCap // $ORCH_HOOK_STOP_CAP overrides the configuration
	}
	if c.StopBlocks >= limit {
		o := stale
		o.Log(gates.Record{Type: gates.RecError, Reason: fmt.Sprintf("Stop allowed after %d consecutive blocks", c.StopBlocks)})
		return o
	}
	c.StopBlocks++
	o := stale
	o.Refuse(gates.Block, c.refusal(fmt.Sprintf("the workflow is not finished and the next step is yours (stop blocked %d/%d).", c.StopBlocks, limit)), gates.Record{})
	o.Changed = true
	return o
}

func (c *Workflow) userPrompt(call *gates.Call, env *Env) gates.Outcome {
	o := gates.Outcome{}
	if c.StopBlocks > 0 {
		c.StopBlocks = 0
		o.Changed = true
	}
	if c.Owner == "" && call.Session != "" {
		c.Owner = call.Session
		o.Changed = true
	}
	name, args, ok := gates.UserCommand(call.Prompt)
	if !ok {
		return o
	}
	switch name {
	case "coordinate", "orchestrate":
		return gates.Refuse(gates.Block, c.refusal("a workflow is already active here; end it with /orch-hook:abort before starting another."), gates.Record{})
	case "abort", "resolve":
		if call.Session == "" || call.PromptID == "" || slices.Contains(c.Decisions, call.PromptID) {
			return o
		}
		c.Decisions = append(c.Decisions, call.PromptID)
		if name == "resolve" {
			r := c.resolve(strings.ToLower(strings.TrimSpace(args)), env)
			r.Changed = true // the decision is recorded either way
			return r
		}
		c.Escalation = nil
		c.abort()
		a := gates.Outcome{Changed: true, Context: "orch-hook: the user aborted the coordinate workflow; nothing is gated any more."}
		a.Log(gates.Record{Type: gates.RecDecision, Reason: "abort"})
		return a
	}
	return o
}

// abort ends the workflow where it is, at the user's word.
func (c *Workflow) abort() {
	if !slices.Contains(c.Completed, c.Current) {
		c.Completed = append(c.Completed, c.Current)
	}
	c.Outcome = abortedOutcome + string(c.Current)
	c.Current = CComplete
	c.Failures = nil
}
