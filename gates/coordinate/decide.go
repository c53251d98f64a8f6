package coordinate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Decide answers one hook event against the coordinate workflow.
func Decide(c *Workflow, call *gates.Call, env *Env) gates.Outcome {
	return gates.TeamAgents(c.Settings().Agents).DecideAsTeam(call, c.deny,
		func(call *gates.Call) gates.Outcome { return decide(c, call, env) },
		c.Config, env.ConfigHash, func() bool { return c.Current != CComplete })
}

func decide(c *Workflow, call *gates.Call, env *Env) gates.Outcome {
	if o, denied := gates.StaticRules(call); denied {
		return o
	}
	if c.Current == CComplete {
		if o, denied := gates.GuardFinishedState(call, env.Root); denied {
			return o
		}
		if call.Event == gates.UserPromptSubmit && !gates.IsNotification(call.Prompt) {
			if name, _, ok := gates.UserCommand(call.Prompt); ok && (name == "coordinate" || name == "orchestrate") {
				return gates.StartFromPrompt(call)
			}
		}
		if call.Event == gates.PostToolUse && (call.Tool == "Agent" || call.Tool == "Task") {
			return c.postAgent(call) // the last foreground agent's line
		}
		return c.deliver(call)
	}
	switch call.Event {
	case gates.PreToolUse:
		switch call.Tool {
		case "Agent", "Task":
			return c.preAgent(call, env)
		case "Bash":
			if call.Unsandboxed {
				return c.deny(gates.UnsandboxedWhat, call)
			}
			if call.TouchesState() {
				return c.deny(call.StateWhat(), call)
			}
			if topic := strings.TrimSuffix(c.Paths.TopicPath, "/"); call.AgentID == "" && topic != "" && call.Reaches(topic) {
				return c.deny(fmt.Sprintf("this command may change %s, the workflow's artifacts; the orchestrator does not write them: launch the agent that owes them.", topic), call)
			}
		case "Workflow":
			return c.deny("the native Workflow tool is not allowed while an orch-hook workflow is active.", call)
		case "Skill":
			if name, ok := gates.CommandName(strings.ToLower(call.Skill)); ok && name == "follow-up" {
				return c.deny("orch-hook:follow-up reopens a complete orchestrate workflow; the coordinate workflow has no follow-ups.", call)
			}
		case "Write", "Edit", "NotebookEdit":
			return c.preWrite(call, env)
		}
		if gates.IsMCP(call.Tool) {
			return c.preMCP(call, env)
		}
	case gates.PostToolUse:
		switch call.Tool {
		case "Agent", "Task":
			return c.postAgent(call)
		case "Write", "Edit", "NotebookEdit":
			return c.recordWrite(call, env)
		}
	case gates.PostToolUseFailure:
		if o, ok := gates.SandboxRefusal(call); ok {
			return o
		}
		if call.Tool == "Agent" || call.Tool == "Task" {
			if l := c.byTool(call.ToolUseID); l != nil && l.Status == gates.Running {
				l.Status, l.Ended = gates.Failed, env.Now
				o := gates.Outcome{Changed: true}
				o.Log(gates.Record{Type: gates.RecComplete, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "failed (transient): " + shorten.OneLine(call.Failure)})
				why := "launch failed (" + shorten.Runes(shorten.OneLine(gates.OrText(call.Failure, "no reason given")), 120) + ")"
				if l.Parent == "" {
					o.Context = c.failed(l, gates.Transient, why, env, &o)
				}
				return o
			}
		}
	case gates.SubagentStop:
		return c.subagentStop(call, env)
	case gates.Stop:
		return c.stop(call, env)
	case gates.UserPromptSubmit:
		if gates.IsNotification(call.Prompt) {
			if o, failed := c.notifiedFailure(call, env); failed {
				return o
			}
			return c.deliver(call)
		}
		return c.userPrompt(call, env)
	case gates.SessionStart:
		return gates.Outcome{Context: shorten.Runes(fmt.Sprintf("orch-hook: a coordinate workflow (%s) is active: %q. Now: state %s. Next: %s.", c.Scope, shorten.Runes(c.Description, 200), c.Current, c.Next()), 1990)}
	}
	return gates.Outcome{}
}

// preWrite keeps writes inside the project and out of orch-hook's and
// Claude Code's configuration, and the orchestrator out of the topic
// directory: its artifacts are written by the agents that owe them.
func (c *Workflow) preWrite(call *gates.Call, env *Env) gates.Outcome {
	rel, inside := gates.RelPath(env.Root, call.Path)
	topic := strings.TrimSuffix(c.Paths.TopicPath, "/")
	switch {
	case !inside || call.Unresolved:
		return c.deny(gates.OutsideWhat(call.Path, env.Root, inside), call)
	case gates.Under(rel, ".orchestrator"):
		return c.deny(fmt.Sprintf("%s is orch-hook's; no agent writes there. Use `orch-hook status` to read it.", rel), call)
	case gates.Under(rel, ".claude") && !gates.Under(rel, ".claude/specs"):
		return c.deny(fmt.Sprintf("%s is Claude Code's configuration; it may not change while a workflow is active. Ask the user.", rel), call)
	case call.AgentID == "" && topic != "" && gates.Under(rel, topic):
		return c.deny(fmt.Sprintf("%s is an artifact of the workflow (%s); the orchestrator does not write it: launch the agent that owes it.", rel, topic), call)
	case topic != "" && gates.Under(rel, topic):
		agent, _ := coordAgent(call.AgentType)
		for _, o := range c.artifactOwners() {
			if gates.Under(rel, strings.TrimSuffix(o.dir, "/")) && !slices.Contains(o.agents, agent) {
				return c.deny(fmt.Sprintf("%s belongs to %s; %s does not write there.", rel, strings.Join(o.agents, " and "), gates.OrText(agent, call.AgentType)), call)
			}
		}
	}
	return gates.Outcome{}
}

type artifactOwner struct {
	dir    string
	agents []string
}

// artifactOwners: who writes each directory of the topic.
func (c *Workflow) artifactOwners() []artifactOwner {
	return []artifactOwner{
		{c.Paths.ReportsDir, []string{ResearchSpecialist}},
		{c.Paths.PlansDir, []string{PlanArchitect, ImplementationExec}},
		{c.Paths.DebugDir, []string{DebugAnalyst}},
		{c.Paths.SummariesDir, []string{DocWriter}},
	}
}
