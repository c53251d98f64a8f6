package coordinate

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// Next says what the orchestrator does now.
func (c *Workflow) Next() string {
	if c.Escalation != nil {
		return "wait for the user: /orch-hook:resolve " + c.resolveOptions() + " (see " + EscalationFile + ")"
	}
	switch c.Current {
	case CResearch:
		if c.Hierarchical {
			return fmt.Sprintf("launch research-sub-supervisor for the %d research topics (reports in %s)", c.Topics, c.Paths.ReportsDir)
		}
		return fmt.Sprintf("launch research-specialist for each of the %d topics, in parallel (reports in %s; %d verified so far)", c.Topics, c.Paths.ReportsDir, len(c.Reports))
	case CPlan:
		return "launch plan-architect to write " + c.Paths.PlanPath
	case CImplement:
		// The plan's declared size decides, when it declares one (scale.go).
		switch declared, hier, _ := c.Scale.implementation(); {
		case declared && hier:
			return "launch implementation-sub-supervisor to implement " + c.Paths.PlanPath + " in parallel tracks"
		case declared:
			return "launch implementation-executor to implement " + c.Paths.PlanPath
		}
		return "launch implementation-executor (or implementation-sub-supervisor for parallel tracks) to implement " + c.Paths.PlanPath
	case CTest:
		switch declared, hier, _ := c.Scale.testing(); {
		case declared && hier:
			return "launch testing-sub-supervisor to run the tests"
		case declared:
			return "launch test-specialist to run the tests"
		}
		return "launch test-specialist (or testing-sub-supervisor) to run the tests"
	case CDebug:
		if c.Retries == 0 {
			return fmt.Sprintf("launch debug-analyst (report in %s; the first debug round, before any retry)", c.Paths.DebugDir)
		}
		return fmt.Sprintf("launch debug-analyst (report in %s; debug retry %d/%d)", c.Paths.DebugDir, c.Retries, MaxDebugRetries)
	case CDocument:
		return "launch doc-writer (summary in " + c.Paths.SummariesDir + ")"
	case CComplete:
		return "nothing; the workflow is complete"
	}
	return "see `orch-hook status`"
}

// refusal is a refusal at the current state: "WHAT Now: coordinate
// (SCOPE), state S. Next: NEXT." (gates.Refusal.Text).
func (c *Workflow) refusal(what string) *gates.Refusal {
	return &gates.Refusal{Rule: strings.TrimSpace(what), Where: fmt.Sprintf("coordinate (%s), state %s", c.Scope, c.Current), Next: c.Next()}
}

func (c *Workflow) deny(what string, call *gates.Call) gates.Outcome {
	r := c.refusal(what)
	if call.AgentID != "" {
		// Inside a subagent: the orchestrator's next step is no advice
		// here; "WHAT (coordinate workflow, state S.)".
		r.Where, r.Next = "coordinate workflow, state "+string(c.Current), ""
	}
	return gates.Refuse(gates.Deny, r, gates.Record{ToolUseID: call.ToolUseID, AgentID: call.AgentID})
}

// StartContext is what the orchestrator is told when a coordinate workflow
// starts.
func (c *Workflow) StartContext() string {
	mode := "flat: one research-specialist per topic, in parallel"
	if c.Hierarchical {
		mode = "hierarchical: one research-sub-supervisor launches the research-specialists"
	}
	plan := c.Paths.PlanPath
	if c.Scope == ScopeResearchAndRevise {
		plan += " (the existing plan: revise it in place)"
	}
	return fmt.Sprintf("orch-hook: coordinate workflow started. Scope: %s (%s); terminal state %s. Topic: %s (%s). Research: %d topics (%s; %s). Reports: %s. Plan: %s. Debug: %s. Summaries: %s. Next: %s.",
		c.Scope, c.ScopeWhy, ScopeTerminal[c.Scope], c.Topic, c.Paths.TopicPath, c.Topics, c.ComplexWhy, mode,
		strings.Join(c.Paths.ReportPaths, ", "), plan, c.Paths.DebugDir, c.Paths.SummariesDir, c.Next())
}
