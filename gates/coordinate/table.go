package coordinate

import (
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// The coordinate workflow's states (README, "The coordinate workflow").
const (
	CInitialize = "initialize"
	CResearch   = "research"
	CPlan       = "plan"
	CImplement  = "implement"
	CTest       = "test"
	CDebug      = "debug"
	CDocument   = "document"
	CComplete   = "complete"
)

// TableVersion stamps the coordinate tables stored in checkpoints.
const TableVersion = 2

// The coordinate workflow's agents.
const (
	ResearchSpecialist = "research-specialist"
	ResearchSupervisor = "research-sub-supervisor"
	ImplSupervisor     = "implementation-sub-supervisor"
	TestSupervisor     = "testing-sub-supervisor"
	PlanArchitect      = "plan-architect"
	ImplementationExec = "implementation-executor"
	TestSpecialist     = "test-specialist"
	DebugAnalyst       = "debug-analyst"
	DocWriter          = "doc-writer"
	MaxDebugRetries    = 2 // debug -> test retries per workflow (README, "Scopes")
)

// Agents lists the coordinate workflow's agents.
var Agents = []string{ResearchSpecialist, ResearchSupervisor, ImplSupervisor, TestSupervisor, PlanArchitect, ImplementationExec, TestSpecialist, DebugAnalyst, DocWriter}

// supervisorWorker: the worker each supervisor launches.
var supervisorWorker = map[string]string{
	ResearchSupervisor: ResearchSpecialist,
	ImplSupervisor:     ImplementationExec,
	TestSupervisor:     TestSpecialist,
}

// Coordinate triggers.
const (
	OnInitialized      = "initialized"
	OnResearchVerified = "research reports verified"
	OnPlanVerified     = "PLAN_CREATED verified"
	OnImplemented      = "implementation complete"
	OnTestsPass        = LineTestsPass
	OnTestsFail        = LineTestsFail
	OnDebugVerified    = "debug report verified"
	OnSummaryVerified  = "summary verified"
	OnSkip             = "/orch-hook:resolve skip"
)

// Guard names of the coordinate table: each names the scopes whose path
// takes the edge.
const (
	GuardScopeResearchOnly = "scope research-only"
	GuardScopePlans        = "scope research-and-plan or research-and-revise"
	GuardScopeFull         = "scope full-implementation"
	GuardScopeDebug        = "scope debug-only"
	GuardDebugLeft         = "debug retries < 2"
	GuardDebugUsed         = "debug retries = 2 (complete, failure recorded)"
)

// Transitions is the coordinate workflow's table, with the edges each
// scope's path takes (README, "Scopes"). debug-only skips implement: its
// path is research -> debug -> test, and test PASS ends it (there is no
// document step).
var Transitions = []gates.Transition{
	{From: CInitialize, To: CResearch, On: OnInitialized},
	{From: CResearch, To: CComplete, On: OnResearchVerified, Guard: GuardScopeResearchOnly},
	{From: CResearch, To: CPlan, On: OnResearchVerified, Guard: GuardScopePlans},
	{From: CResearch, To: CPlan, On: OnResearchVerified, Guard: GuardScopeFull},
	{From: CResearch, To: CDebug, On: OnResearchVerified, Guard: GuardScopeDebug},
	{From: CPlan, To: CComplete, On: OnPlanVerified, Guard: GuardScopePlans},
	{From: CPlan, To: CImplement, On: OnPlanVerified, Guard: GuardScopeFull},
	{From: CImplement, To: CTest, On: OnImplemented},
	{From: CTest, To: CDocument, On: OnTestsPass, Guard: GuardScopeFull},
	{From: CTest, To: CComplete, On: OnTestsPass, Guard: GuardScopeDebug},
	{From: CTest, To: CDebug, On: OnTestsFail, Guard: GuardDebugLeft},
	{From: CTest, To: CComplete, On: OnTestsFail, Guard: GuardDebugUsed},
	{From: CDebug, To: CTest, On: OnDebugVerified},
	{From: CDocument, To: CComplete, On: OnSummaryVerified},
	// The user skips a state an escalation stopped in (failures.go).
	{From: CTest, To: CDocument, On: OnSkip, Guard: GuardScopeFull},
	{From: CTest, To: CComplete, On: OnSkip, Guard: GuardScopeDebug},
	{From: CDebug, To: CComplete, On: OnSkip},
	{From: CDocument, To: CComplete, On: OnSkip},
}

var coordGuards = map[string]func(*Workflow) bool{
	GuardScopeResearchOnly: func(c *Workflow) bool { return c.Scope == ScopeResearchOnly },
	GuardScopePlans:        func(c *Workflow) bool { return c.Scope == ScopeResearchAndPlan || c.Scope == ScopeResearchAndRevise },
	GuardScopeFull:         func(c *Workflow) bool { return c.Scope == ScopeFullImplementation },
	GuardScopeDebug:        func(c *Workflow) bool { return c.Scope == ScopeDebugOnly },
	GuardDebugLeft:         func(c *Workflow) bool { return c.Retries < MaxDebugRetries },
	GuardDebugUsed:         func(c *Workflow) bool { return c.Retries >= MaxDebugRetries },
}

// scopeGuard reports whether a guard is about the scope (fixed for the
// workflow) rather than a counter.
func scopeGuard(g string) bool { return strings.HasPrefix(g, "scope ") }

// coordinate is the coordinate workflow's machine: a scope guard is fixed,
// so each scope's table holds only its own path.
var coordinate = &gates.Machine[*Workflow]{Rows: Transitions, Guards: coordGuards, Fixed: scopeGuard}

// Table is the table stored in a coordinate checkpoint: the states and
// edges of the scope's path only, so a transition off the path is refused
// by the table itself.
func Table(scope string) map[string]string {
	return coordinate.Compile(&Workflow{Scope: scope}, CInitialize)
}

// Path is the rows of CoordTransitions a scope's path takes ("" for
// every row), in table order: what `orch-hook graph --workflow coordinate`
// draws.
func Path(scope string) []gates.Transition {
	if scope == "" {
		return append([]gates.Transition(nil), Transitions...)
	}
	return coordinate.Path(&Workflow{Scope: scope}, CInitialize)
}

func (c *Workflow) fire(on gates.Trigger) (gates.Transition, error) {
	t, err := coordinate.Fire(c, c.Current, on)
	if err != nil {
		return gates.Transition{}, err
	}
	if c.Current != "" && !slices.Contains(c.Completed, c.Current) {
		c.Completed = append(c.Completed, c.Current)
	}
	if t.To != c.Current {
		c.Failures = nil // the state is left: its failures no longer count
	}
	c.Current = t.To
	c.StopBlocks = 0
	return t, nil
}

// Triggers lists the triggers the scope's path has from state, sorted.
func Triggers(scope string, from gates.State) []gates.Trigger {
	return coordinate.Triggers(&Workflow{Scope: scope}, from)
}
