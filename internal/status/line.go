package status

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

// peekSettled reads the state without the lock (Store.Peek never takes it
// nor writes): a read that raced a write can look like a change made
// outside orch-hook, so such a read is tried again, twice, a few
// milliseconds apart, before the line says the state needs you.
func peekSettled(store *state.Store) (*state.Checkpoint, error) {
	cp, err := store.Peek()
	for try := 0; try < 2 && err != nil && !errors.Is(err, state.ErrNoState); try++ {
		var unadopted *state.UnadoptedError
		if errors.As(err, &unadopted) {
			break
		}
		time.Sleep(15 * time.Millisecond)
		cp, err = store.Peek()
	}
	return cp, err
}

// Line is the status line Claude Code shows under the prompt (`orch-hook
// statusline`, README, "Status line"): the workflow and its step, what
// runs, whether the sandbox protects the state, and a marker when the user
// is waited on. "" when no workflow is active: the line then shows
// nothing. It never takes the lock and writes nothing (peekSettled).
// protected is nil when unknown.
func Line(store *state.Store, protected *bool) string {
	cp, err := peekSettled(store)
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
		parts = append(parts, fmt.Sprintf("fix %d/%d", w.FixIterations, w.Settings().Limits.FixIterations))
	case orchestrate.S0a, orchestrate.S0b:
		parts = append(parts, fmt.Sprintf("round %d/%d", w.Rounds, w.Settings().Limits.ClarificationRounds))
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

// PanelTask is one row of Claude Code's agent panel, as its
// subagentStatusLine command receives it (tasks[] on stdin, observed:
// internal/dev/e2e/testdata/observed): the agent id its hooks carry, its
// agent type, the Agent call's description and when it started (ms).
type PanelTask struct {
	ID          string `json:"id"`
	AgentType   string `json:"agentType"`
	Description string `json:"description"`
	StartTime   int64  `json:"startTime"`
}

// panelLaunch is what a row may be labelled from: one launch of either
// workflow.
type panelLaunch struct {
	agentID string
	role    string
	work    string
	step    string
	task    int // orchestrate's task number (0: none)
	running bool
	started time.Time
}

// startSlack is how much earlier than its launch's PreToolUse a row may
// say its agent started (the two clocks are the same machine's; the
// slack covers rounding).
const startSlack = time.Second

// AgentLabel is what the subagent status line shows beside each agent of
// Claude Code's agent panel that the active workflow launched (`orch-hook
// subagent-statusline`, README, "Status line"): its agent, its work and
// the step it was launched in, "code-implementer · Task 02 · F2", the
// agent named as the team's configuration maps the role
// ("backend-dev · Task 02 · F2"). A row is the workflow's when its id is
// a launch's agent id. A foreground agent's id is known only when it
// returns (PostToolUse), so a running row whose id no launch has yet is
// matched to a running launch of its agent type, launched before it
// started, that no other row holds: the one such launch (the Agent call's
// description, when it names a task, picks among an implementer's), else
// the parts of its label all such launches share. Rows the workflow did
// not launch get no label.
func AgentLabel(store *state.Store, tasks []PanelTask) map[string]string {
	out := map[string]string{}
	// Never the lock: a read that raced a write labels nothing this time,
	// and Claude Code asks again 5 s later.
	cp, err := store.Peek()
	if err != nil || cp.Finished() {
		return out
	}
	var launches []panelLaunch
	var team gates.TeamAgents
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		w, err := app.LoadWorkflow(cp)
		if err != nil {
			return out
		}
		team = gates.TeamAgents(w.Settings().Agents)
		for _, l := range w.Launches {
			pl := panelLaunch{agentID: l.AgentID, role: l.Agent, step: string(l.State), task: l.Task, running: l.Status == gates.Running, started: l.Started}
			if l.Task > 0 {
				pl.work = fmt.Sprintf("Task %02d", l.Task)
			} else {
				pl.work = l.Job
			}
			launches = append(launches, pl)
		}
	case "coordinate":
		c, err := app.LoadCoord(cp)
		if err != nil {
			return out
		}
		team = gates.TeamAgents(c.Settings().Agents)
		for _, l := range c.Launches {
			launches = append(launches, panelLaunch{agentID: l.AgentID, role: l.Agent, work: shortUnit(l.Unit), step: "coordinate " + string(l.State), running: l.Status == gates.Running, started: l.Started})
		}
	default:
		return out
	}
	label := func(ls []*panelLaunch) string {
		first := ls[0]
		parts := []string{team.Text(first.role)}
		work, step := first.work, first.step
		for _, l := range ls[1:] {
			if l.work != work {
				work = ""
			}
			if l.step != step {
				step = ""
			}
		}
		for _, p := range []string{work, step} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, " · ")
	}
	// Rows whose id a launch holds.
	byID := map[string]*panelLaunch{}
	for i := range launches {
		if id := launches[i].agentID; id != "" {
			byID[id] = &launches[i]
		}
	}
	var open []PanelTask
	for _, t := range tasks {
		if l, ok := byID[t.ID]; ok && t.ID != "" {
			out[t.ID] = label([]*panelLaunch{l})
		} else if t.ID != "" {
			open = append(open, t)
		}
	}
	// The other rows, by their agent type, against the running launches no
	// agent id holds yet: a row with one candidate takes it, which may
	// leave another row one; what stays shared is labelled by what its
	// candidates have in common.
	taken := map[*panelLaunch]bool{}
	candidates := func(t PanelTask) []*panelLaunch {
		role := roleOf(team, t.AgentType)
		// The description names the launch's task when it names one:
		// the gate refuses a launch whose prompt names another.
		n, _ := orchestrate.TaskOfLaunch("", t.Description)
		var c []*panelLaunch
		for i := range launches {
			l := &launches[i]
			if l.agentID != "" || !l.running || taken[l] || l.role != role ||
				t.StartTime > 0 && time.UnixMilli(t.StartTime).Add(startSlack).Before(l.started) ||
				n > 0 && l.task > 0 && l.task != n {
				continue
			}
			c = append(c, l)
		}
		return c
	}
	for progress := true; progress; {
		progress = false
		for _, t := range open {
			if _, done := out[t.ID]; done {
				continue
			}
			if c := candidates(t); len(c) == 1 {
				out[t.ID] = label(c)
				taken[c[0]] = true
				progress = true
			}
		}
	}
	for _, t := range open {
		if _, done := out[t.ID]; done {
			continue
		}
		if c := candidates(t); len(c) > 0 {
			out[t.ID] = label(c)
		}
	}
	return out
}

// roleOf is the workflow role an agent type plays: the role the team's
// configuration maps that agent to, else its name without the plugin's
// prefix.
func roleOf(team gates.TeamAgents, agentType string) string {
	for role, agent := range team {
		if agent == agentType {
			return role
		}
	}
	return strings.TrimPrefix(agentType, gates.PluginPrefix)
}

// shortUnit keeps a launch's first prompt line short enough for a row.
func shortUnit(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return string(r)
}
