package coordinate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// AdoptFrom is what a v1.3 checkpoint (and the project) says of the
// workflow the user adopts.
type AdoptFrom struct {
	Description string
	// Scope is the one the user named, or the v1.3 workflow_scope (ScopeWhy
	// says which); "" detects it from the description, which must then
	// say it (the default rule is a guess, and a guess is not a resume).
	Scope    string
	ScopeWhy string
	Session  string
	TopicDir string
	// Phase is the v1.3 current phase, as a state name.
	Phase gates.State
	// Plan is the newest plan under the topic's plans/ ("" for none).
	Plan string
}

// Adopt builds the workflow that continues a v1.3 checkpoint the user
// adopted (README, "Continuing a v1.3 checkpoint"): the scope's table, the
// state it was at, and what that state needs from the states before it,
// read from the topic directory: the research reports there, and the plan
// (whose declarations are checked as when it was verified). A state whose
// plan is missing or unreadable resumes at plan. It returns the workflow
// and one line saying where it resumes.
func Adopt(from AdoptFrom, env *Env) (*Workflow, string, error) {
	if from.Scope == "" {
		scope, why := DetectScope(from.Description)
		if strings.HasPrefix(why, ScopeRuleDefault+":") {
			return nil, "", &ScopeUnknownError{Description: from.Description}
		}
		from.Scope, from.ScopeWhy = scope, why
	}
	if !ValidScope(from.Scope) {
		return nil, "", fmt.Errorf("unknown scope %q (one of %s)", from.Scope, strings.Join(Scopes, ", "))
	}
	if from.Scope == ScopeResearchAndRevise && from.Plan == "" {
		return nil, "", fmt.Errorf("scope research-and-revise revises a plan, and there is none under %s/plans/", from.TopicDir)
	}
	c, err := NewWorkflow(from.Description, from.Scope, from.Session, from.TopicDir)
	if err != nil {
		return nil, "", err
	}
	c.ScopeWhy = from.ScopeWhy
	c.Topic = c.Paths.TopicName
	table := Table(c.Scope)
	if _, ok := table[string(from.Phase)]; !ok {
		states := make([]string, 0, len(table))
		for s := range table {
			states = append(states, s)
		}
		sort.Strings(states)
		return nil, "", fmt.Errorf("the v1.3 workflow was at %s, which scope %s does not have (its states: %s): name the scope it ran with", from.Phase, c.Scope, strings.Join(states, ", "))
	}
	if from.Scope == ScopeResearchAndRevise {
		c.Paths.PlanPath = from.Plan
	}
	at, note := from.Phase, ""
	if at != CInitialize && at != CResearch && env.List != nil {
		// Research was done by the v1.3 run: its reports are what there
		// is, however many topics the description would give now.
		names := env.List(c.Paths.ReportsDir)
		sort.Strings(names)
		c.Paths.ReportPaths = []string{}
		for _, name := range names {
			if strings.HasSuffix(name, ".md") {
				c.noteReport(c.Paths.ReportsDir + name)
			}
		}
		if len(c.Reports) > 0 {
			c.Topics, c.ComplexWhy = len(c.Reports), "the reports the v1.3 run left in "+c.Paths.ReportsDir
			c.Hierarchical = Hierarchical(c.Topics)
		}
	}
	if c.Scope == ScopeFullImplementation && slices.Contains([]gates.State{CImplement, CTest, CDebug, CDocument}, at) {
		if why := c.adoptPlan(from.Plan, env); why != "" {
			at, note = CPlan, fmt.Sprintf(" (it was at %s, but %s)", from.Phase, why)
		}
	}
	c.Completed = pathTo(table, CInitialize, at)
	c.Current = at
	if at == CComplete {
		c.Outcome = "completed (v1.3)"
	}
	return c, fmt.Sprintf("resumes at %s%s; scope %s, %d research %s found; next: %s", at, note, c.Scope, len(c.Reports), gates.Pick(len(c.Reports), "report", "reports"), c.Next()), nil
}

// adoptPlan takes the plan a resumed implementation works from, checked
// as a verified plan is; it returns why it cannot be.
func (c *Workflow) adoptPlan(plan string, env *Env) string {
	if plan == "" {
		return "there is no plan under " + c.Paths.PlansDir
	}
	var text string
	if env.Read != nil {
		b := env.Read(plan)
		if b == nil {
			return "the plan " + plan + " cannot be read"
		}
		text = string(b)
	}
	scale, problems := PlanScale(text)
	if len(problems) > 0 {
		return "the plan's size declarations do not read one way: " + strings.Join(problems, "; ")
	}
	deps := TrackDependencies(text)
	if problems := CheckTrackDependencies(deps); len(problems) > 0 {
		return "the plan's phase dependencies cannot all be met: " + strings.Join(problems, " ")
	}
	c.Paths.PlanPath, c.Scale, c.TrackDeps, c.PhaseTitles = plan, &scale, deps, PhaseTitles(text)
	return ""
}

// pathTo lists the states on the shortest way from one state to another
// through a table (state -> "next,next"), excluding the last: what a
// workflow that reached to has completed.
func pathTo(table map[string]string, from, to gates.State) []gates.State {
	prev := map[string]string{string(from): ""}
	queue := []string{string(from)}
	for len(queue) > 0 && prev[string(to)] == "" && string(to) != string(from) {
		s := queue[0]
		queue = queue[1:]
		for _, n := range strings.Split(table[s], ",") {
			if _, seen := prev[n]; n != "" && !seen {
				prev[n] = s
				queue = append(queue, n)
			}
		}
	}
	var out []gates.State
	for s := prev[string(to)]; s != ""; s = prev[s] {
		out = append([]gates.State{gates.State(s)}, out...)
	}
	return out
}

// ScopeUnknownError: the scope of a resumed workflow is neither recorded
// nor said by its description.
type ScopeUnknownError struct{ Description string }

func (e *ScopeUnknownError) Error() string {
	return fmt.Sprintf("the v1.3 checkpoint records no workflow_scope, and its description (%q) does not say one", e.Description)
}

// Hint says how to name it.
func (e *ScopeUnknownError) Hint() string {
	return "name the scope: `orch-hook migrate --write --scope SCOPE`, or type /orch-hook:resume --scope SCOPE (one of " + strings.Join(Scopes, ", ") + ")"
}
