package status

import (
	"errors"
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

// Line is the status line Claude Code shows under the prompt (`orch-hook
// statusline`, README, "Status line"): the workflow and its step, what
// runs, whether the sandbox protects the state, and a marker when the user
// is waited on. "" when no workflow is active: the line then shows
// nothing. It reads the state without the lock and writes nothing.
// protected is nil when unknown.
func Line(store *state.Store, protected *bool) string {
	cp, err := store.Load()
	var unadopted *state.UnadoptedError
	switch {
	case errors.Is(err, state.ErrNoState):
		return ""
	case errors.As(err, &unadopted):
		return "orch-hook · a v1.3 checkpoint waits · your turn: orch-hook migrate --write, or /orch-hook:resume"
	case err != nil:
		return "orch-hook · the state needs you · your turn: orch-hook status"
	case cp.Finished():
		return ""
	}
	var parts []string
	turn := ""
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		w, err := app.LoadWorkflow(cp)
		if err != nil {
			return "orch-hook · the state needs you · your turn: orch-hook status"
		}
		parts, turn = orchestrateLine(w)
	case "coordinate":
		c, err := app.LoadCoord(cp)
		if err != nil {
			return "orch-hook · the state needs you · your turn: orch-hook status"
		}
		parts, turn = coordinateLine(c)
	default:
		return ""
	}
	if protected != nil && !*protected {
		parts = append(parts, "sandbox off")
	}
	if turn != "" {
		parts = append(parts, "your turn: "+turn)
	}
	return "orch-hook " + strings.Join(parts, " · ")
}

func orchestrateLine(w *orchestrate.Workflow) (parts []string, turn string) {
	parts = []string{string(w.Current)}
	if w.Plan != nil && w.Phase > 0 {
		parts = append(parts, fmt.Sprintf("phase %d/%d", w.Phase, len(w.Plan.Phases)))
	}
	switch w.Current {
	case orchestrate.S4b, orchestrate.SF1, orchestrate.SF2:
		parts = append(parts, fmt.Sprintf("fix %d/%d", w.FixIterations, orchestrate.MaxFixIterations))
	case orchestrate.S0a, orchestrate.S0b:
		parts = append(parts, fmt.Sprintf("round %d/%d", w.Rounds, orchestrate.MaxRounds))
	}
	if n := len(w.InFlight()); n > 0 {
		parts = append(parts, gates.Plural(n, "agent")+" running")
	}
	if t := lineTokens(w.TokenUse()); t != "" {
		parts = append(parts, t)
	}
	switch {
	case w.Current == orchestrate.Escalated && w.Escalation != nil && w.Escalation.Kind == orchestrate.EscalationAgent:
		turn = "/orch-hook:resolve " + strings.TrimSuffix(strings.TrimPrefix(w.Next(nil), "wait for the user: /orch-hook:resolve "), " (see .orchestrator/ESCALATION.md)")
	case w.Current == orchestrate.Escalated:
		turn = "/orch-hook:resolve retry|skip|abort"
	case w.WaitingOn == "approval":
		turn = "/orch-hook:approve or /orch-hook:request-changes"
	case w.WaitingOn == "answers":
		turn = "answer the questions"
	}
	return parts, turn
}

func coordinateLine(c *coordinate.Workflow) (parts []string, turn string) {
	parts = []string{"coordinate " + string(c.Current)}
	if c.Current == coordinate.CResearch {
		parts = append(parts, fmt.Sprintf("%d/%d reports", len(c.Reports), c.Topics))
	}
	if c.Current == coordinate.CDebug || c.Retries > 0 {
		parts = append(parts, fmt.Sprintf("debug %d/%d", c.Retries, coordinate.MaxDebugRetries))
	}
	running := 0
	for _, l := range c.Launches {
		if l.Status == gates.Running {
			running++
		}
	}
	if running > 0 {
		parts = append(parts, gates.Plural(running, "agent")+" running")
	}
	if t := lineTokens(c.TokenUse()); t != "" {
		parts = append(parts, t)
	}
	if c.Escalation != nil {
		turn = strings.TrimSuffix(strings.TrimPrefix(c.Next(), "wait for the user: "), " (see "+coordinate.EscalationFile+")")
	}
	return parts, turn
}

// lineTokens is the tokens the agents that ended used, for the status
// line: "41.2k tok", "≥41.2k tok" when some agent's count is unknown or
// partial; "" before any agent's is known.
func lineTokens(u gates.TokenUse) string {
	if u.Known == 0 {
		return ""
	}
	at := ""
	if u.Unknown > 0 || u.Partial > 0 {
		at = "≥"
	}
	return at + gates.CompactTokens(u.Total.Total()) + " tok"
}

// AgentLabel is what the subagent status line shows beside one running
// agent (`orch-hook subagent-statusline`, README, "Status line"): its
// agent, its work and the step it was launched in, "code-implementer ·
// Task 02 · F2"; "" for an agent the workflow did not launch.
func AgentLabel(store *state.Store, agentIDs []string) map[string]string {
	out := map[string]string{}
	cp, err := store.Load()
	if err != nil || cp.Finished() {
		return out
	}
	want := map[string]bool{}
	for _, id := range agentIDs {
		want[id] = true
	}
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		w, err := app.LoadWorkflow(cp)
		if err != nil {
			return out
		}
		for _, l := range w.Launches {
			if l.AgentID == "" || !want[l.AgentID] {
				continue
			}
			parts := []string{l.Agent}
			if l.Task > 0 {
				parts = append(parts, fmt.Sprintf("Task %02d", l.Task))
			} else if l.Job != "" {
				parts = append(parts, l.Job)
			}
			out[l.AgentID] = strings.Join(append(parts, string(l.State)), " · ")
		}
	case "coordinate":
		c, err := app.LoadCoord(cp)
		if err != nil {
			return out
		}
		for _, l := range c.Launches {
			if l.AgentID == "" || !want[l.AgentID] {
				continue
			}
			parts := []string{l.Agent}
			if l.Unit != "" {
				parts = append(parts, shortUnit(l.Unit))
			}
			out[l.AgentID] = strings.Join(append(parts, "coordinate "+string(l.State)), " · ")
		}
	}
	return out
}

// shortUnit keeps a launch's first prompt line short enough for a row.
func shortUnit(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return string(r)
}
