package orchestrate

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// Permission says whether an action is allowed now and, when it is not,
// why and under which gate.
type Permission struct {
	Action  string `json:"action"`
	Allowed bool   `json:"allowed"`
	Gate    int    `json:"gate,omitempty"`
	Why     string `json:"why,omitempty"`
}

// Permissions lists, for `orch-hook status`, what the orchestrator may do
// now: each workflow agent's launch and a Stop. It decides on a copy: w is
// not changed.
func (w *Workflow) Permissions(env *Env) []Permission {
	var out []Permission
	if Finished(w.Current) {
		return []Permission{{Action: "anything", Allowed: true, Why: "the workflow is " + string(w.Current) + "; nothing is gated"}}
	}
	for _, agent := range WorkflowAgents {
		c := &gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: gates.PluginPrefix + agent}
		action := "launch " + agent
		if agent == Implementer {
			tasks := w.candidateTasks(env)
			if len(tasks) > 0 {
				c.Prompt = fmt.Sprintf("Task %02d", tasks[0])
				action = "launch code-implementer for " + taskList(tasks)
			}
		}
		probe := w.clone()
		var o gates.Outcome
		_, _, gate, why := probe.jobFor(agent, c, env, &o)
		p := Permission{Action: action, Allowed: why == "", Gate: gate, Why: strings.TrimSpace(why)}
		if p.Allowed && agent == Implementer && c.Prompt != "" {
			// Each ready task is allowed; list those that are not.
			var ready []int
			for _, n := range w.candidateTasks(env) {
				probe := w.clone()
				c.Prompt = fmt.Sprintf("Task %02d", n)
				if _, _, _, why := probe.jobFor(agent, c, env, &o); why == "" {
					ready = append(ready, n)
				}
			}
			p.Action = "launch code-implementer for " + taskList(ready)
		}
		out = append(out, p)
	}
	stop := Permission{Action: "stop", Allowed: true}
	switch {
	case w.Current == Escalated || w.WaitingOn != "":
		stop.Why = "the user is waited on"
	case len(w.InFlight()) > 0:
		stop.Why = "while workflow agents run in the background"
	default:
		stop.Allowed = false
		stop.Gate = stopGate(w)
		stop.Why = "the next step is the orchestrator's: " + w.Next(env)
	}
	return append(out, stop)
}

// candidateTasks are the tasks a code-implementer could be launched for
// now: the open tasks of the phase (4a) or the open failing tasks (F2).
func (w *Workflow) candidateTasks(env *Env) []int {
	switch w.Current {
	case S4a:
		if w.Awaiting == "" {
			return w.openTasks()
		}
	case SF2:
		return w.openFailing()
	}
	return nil
}

// clone copies the workflow through its encoding.
func (w *Workflow) clone() *Workflow {
	b, err := w.Encode()
	if err != nil {
		return &Workflow{Current: w.Current}
	}
	c, err := DecodeWorkflow(b)
	if err != nil {
		return &Workflow{Current: w.Current}
	}
	c.Current = w.Current
	c.Completed = append([]gates.State(nil), w.Completed...)
	return c
}
