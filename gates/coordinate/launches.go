package coordinate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// coordAgent strips the plugin namespace; ok when it is a coordinate agent.
func coordAgent(t string) (string, bool) {
	name := strings.TrimPrefix(t, gates.PluginPrefix)
	return name, slices.Contains(Agents, name)
}

// IsAgent reports whether an agent type (orch-hook:<name>, or the bare
// name) is one of the workflow's agents.
func IsAgent(agentType string) bool {
	_, ok := coordAgent(agentType)
	return ok
}

// launchRule: an agent the orchestrator (the main thread) may launch in a
// state, when its named guard holds ("" always).
type launchRule struct {
	Agent, Guard string
}

// Guards of the launch rules.
const (
	GuardFlatResearch         = "research has fewer than 4 topics"
	GuardHierarchicalResearch = "research has 4 or more topics"
)

// launchGuards are the launch rules' guards, by name.
var launchGuards = map[string]func(*Workflow) bool{
	GuardFlatResearch:         func(c *Workflow) bool { return !c.Hierarchical },
	GuardHierarchicalResearch: func(c *Workflow) bool { return c.Hierarchical },
}

// LaunchRules: who the orchestrator may launch in each state, as data
// (README, "Scopes" and "Supervisors"). A supervisor's own launches
// follow supervisorWorker.
var LaunchRules = map[gates.State][]launchRule{
	CResearch:  {{ResearchSupervisor, GuardHierarchicalResearch}, {ResearchSpecialist, GuardFlatResearch}},
	CPlan:      {{PlanArchitect, ""}},
	CImplement: {{ImplementationExec, ""}, {ImplSupervisor, ""}},
	CTest:      {{TestSpecialist, ""}, {TestSupervisor, ""}},
	CDebug:     {{DebugAnalyst, ""}},
	CDocument:  {{DocWriter, ""}},
}

// allowedHere: the coordinate agents the orchestrator launches in the
// current state (LaunchRules whose guard holds).
func (c *Workflow) allowedHere() []string {
	var out []string
	for _, r := range LaunchRules[c.Current] {
		if r.Guard == "" || launchGuards[r.Guard](c) {
			out = append(out, r.Agent)
		}
	}
	return out
}

func (c *Workflow) preAgent(call *gates.Call, env *Env) gates.Outcome {
	name, ok := coordAgent(call.SubagentType)
	if !ok {
		if gates.ReadOnlyAgents[call.SubagentType] {
			return gates.Outcome{}
		}
		return c.deny(fmt.Sprintf("agent type %q is not part of the coordinate workflow; only its agents (orch-hook:<name>) and the read-only Explore and Plan may run.", gates.OrText(call.SubagentType, "general-purpose")), call)
	}
	if call.Isolation != "" {
		return c.deny("isolation on a workflow agent is not allowed.", call)
	}
	if e := c.Escalation; e != nil {
		return c.deny(fmt.Sprintf("the workflow is escalated: %s failed %d times in %s, and nothing runs until the user decides (%s).", e.what(), len(e.Attempts), e.From, EscalationFile), call)
	}
	parent, stage := "", ""
	if call.AgentID != "" {
		// A nested launch: only a supervisor launches, and only its workers.
		sup, _ := coordAgent(call.AgentType)
		worker, isSup := supervisorWorker[sup]
		if !isSup {
			return c.deny(fmt.Sprintf("%s may not launch agents; only the sub-supervisors launch their workers.", gates.OrText(sup, call.AgentType)), call)
		}
		if name != worker {
			return c.deny(fmt.Sprintf("%s launches %s workers, not %s.", sup, worker, name), call)
		}
		// Tie the supervisor's launch to its agent id at its first launch.
		if c.byAgent(call.AgentID) == nil {
			if l := c.running(sup, ""); len(l) > 0 && l[0].AgentID == "" {
				l[0].AgentID = call.AgentID
			}
		}
		parent = call.AgentID
		if sup == ImplSupervisor {
			track := trackNumber(call.Prompt)
			if track == 0 {
				return c.deny(fmt.Sprintf("an implementation track's prompt starts with `Track N: <phase title>` (N the plan's phase number in %s), so its dependencies can be checked.", c.Paths.PlanPath), call)
			}
			if _, known := c.TrackDeps[track]; len(c.TrackDeps) > 0 && !known {
				return c.deny(fmt.Sprintf("the plan %s has no phase %d (its phases: %s); a track is one of the plan's phases.", c.Paths.PlanPath, track, joinInts(trackNumbers(c.TrackDeps))), call)
			}
			if blocked := TrackBlockedBy(track, c.TrackDeps, c.tracksDone()); len(blocked) > 0 {
				return c.deny(fmt.Sprintf("track %d depends on track(s) %s (the plan's dependencies), which have not completed; launch those first and this one after they return.", track, joinInts(blocked)), call)
			}
		}
		if sup == TestSupervisor {
			var why string
			if stage, why = c.preStage(call); why != "" {
				return c.deny(why, call)
			}
		}
	} else {
		allowed := c.allowedHere()
		if !slices.Contains(allowed, name) {
			why := fmt.Sprintf("%s does not run in state %s (there: %s).", name, c.Current, strings.Join(allowed, ", "))
			if c.Current == CResearch && (name == ResearchSpecialist || name == ResearchSupervisor) {
				if c.Hierarchical {
					why = fmt.Sprintf("research has %d topics (4 or more): it goes through one research-sub-supervisor, which launches the research-specialists.", c.Topics)
				} else {
					why = fmt.Sprintf("research has %d topics (fewer than 4): launch research-specialists directly, one per topic, not research-sub-supervisor.", c.Topics)
				}
			}
			return c.deny(why, call)
		}
		if why := c.scaleRefusal(name); why != "" {
			return c.deny(why, call)
		}
		if running := len(c.running(name, "")); name == ResearchSpecialist && len(c.Reports)+running >= c.Topics {
			return c.deny(fmt.Sprintf("research has %d topics and all are covered (%d reports verified, %d research-specialists running); wait for the running ones to return.", c.Topics, len(c.Reports), running), call)
		}
		if name != ResearchSpecialist && len(c.running(name, "")) > 0 {
			return c.deny(name+" is already running; wait for it to return.", call)
		}
	}
	l := &Launch{ToolUseID: call.ToolUseID, Agent: name, Parent: parent, Unit: shorten.Runes(firstLine(call.Prompt), 80), Stage: stage, State: c.Current, Background: call.Background, Status: gates.Running, Started: env.Now}
	if parent != "" && name == ImplementationExec {
		l.Track = trackNumber(call.Prompt)
	}
	c.Launches = append(c.Launches, l)
	if sup := c.byAgent(parent); stage != "" && sup != nil {
		c.syncStages(c.supervisor(sup)) // the stage is in progress from its first launch
	}
	o := gates.Outcome{Changed: true}
	o.Log(gates.Record{Type: gates.RecLaunch, AgentType: name, ToolUseID: call.ToolUseID, AgentID: call.AgentID, Reason: string(c.Current)})
	return o
}

var reTrackPrompt = gates.LazyRegexp(`(?i)^\s*track\s+(\d+)\b`)

// trackNumber reads N from a track worker's prompt "Track N: <title>"; 0
// when it has none.
func trackNumber(prompt string) int {
	m := reTrackPrompt.FindStringSubmatch(firstLine(prompt))
	if m == nil {
		return 0
	}
	n := 0
	fmt.Sscanf(m[1], "%d", &n)
	return n
}

// tracksDone lists the tracks completed by supervisors' workers (a
// relaunched supervisor keeps what the previous one finished).
func (c *Workflow) tracksDone() []int {
	var out []int
	for _, l := range c.Launches {
		if l.Parent != "" && l.Track > 0 && l.Status == gates.Returned {
			out = append(out, l.Track)
		}
	}
	return out
}

func trackNumbers(m map[int][]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}
