package app

import (
	"fmt"
	"math"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/state"
)

// MetricsSchema names the metrics line's schema (README, "Statistics"):
// fields are only added within a version.
const MetricsSchema = "orch-hook.metrics/1"

// Outcomes of a finished workflow.
const (
	OutcomeCompleted    = "completed"
	OutcomeTestsFailing = "tests_failing" // coordinate: it ended with its last test run failing
	OutcomeAborted      = "aborted"
)

// Patterns: supervised or not (seed 003's flat vs hierarchical).
const (
	PatternFlat         = "flat"
	PatternHierarchical = "hierarchical"
)

// MetricsLine is one finished workflow in .orchestrator/records/metrics.jsonl
// (state.MetricsFile). Everything in it is what orch-hook recorded (the
// checkpoint and its log), never what an agent said of itself.
type MetricsLine struct {
	Schema  string `json:"schema"`
	Lineage string `json:"lineage"`
	Kind    string `json:"kind"`            // orchestrate | coordinate
	Scope   string `json:"scope,omitempty"` // coordinate
	Pattern string `json:"pattern"`         // flat | hierarchical
	// Supervisors are the kinds of supervisor the workflow launched
	// (research, implementation, testing), in that order; coordinate.
	Supervisors []string `json:"supervisors,omitempty"`

	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended"` // the commit that finished it
	DurationMs int64     `json:"duration_ms"`

	// Agents counts every agent launch orch-hook allowed, relaunches and a
	// supervisor's workers included; AgentsByName by agent.
	Agents       int            `json:"agents"`
	AgentsByName map[string]int `json:"agents_by_name"`
	// Workers are the launches made by supervisors (in Agents); coordinate.
	Workers *int `json:"workers,omitempty"`

	// Orchestrate: the plan's phases (0 before a plan), the quality gate's
	// FAILs (4b -> F1 or escalated) and the final validation's (5a/5b ->
	// 4a or escalated).
	Phases                  *int `json:"phases,omitempty"`
	FixIterations           *int `json:"fix_iterations,omitempty"`
	FinalValidationFailures *int `json:"final_validation_failures,omitempty"`
	// DebugRetries: test FAIL -> debug -> test; coordinate.
	DebugRetries *int `json:"debug_retries,omitempty"`

	// ContextReduction and TimeSavings are the supervisors' measured
	// effects as the workflow recorded them (coordinate: the research
	// supervisor's, the implementation supervisor's); null when none was
	// measured.
	ContextReduction *ContextReductionMetric `json:"context_reduction"`
	TimeSavings      *TimeSavingsMetric      `json:"time_savings"`
	// Tokens is what the agents used, summed over those whose transcript
	// was read at their SubagentStop (the four counts; TokenCounts has
	// them apart); absent when no agent's is known. TokensUnknown counts
	// the agents that ended with theirs unknown. Informational: an agent
	// could write its own transcript.
	Tokens        *int64        `json:"tokens,omitempty"`
	TokenCounts   *gates.Tokens `json:"token_counts,omitempty"`
	TokensUnknown int           `json:"tokens_unknown_agents,omitempty"`

	Escalations int    `json:"escalations"`
	KnownIssues int    `json:"known_issues"`
	Outcome     string `json:"outcome"` // completed | tests_failing | aborted
}

// ContextReductionMetric is a research supervisor's context reduction:
// (report bytes - metadata characters) / report bytes.
type ContextReductionMetric struct {
	Percent       float64 `json:"percent"` // to one decimal
	ReportBytes   int     `json:"report_bytes"`
	MetadataChars int     `json:"metadata_chars"`
}

// TimeSavingsMetric is an implementation supervisor's parallel run: its
// tracks' durations summed against first launch to last return.
type TimeSavingsMetric struct {
	SequentialMs int64 `json:"sequential_ms"`
	ParallelMs   int64 `json:"parallel_ms"`
	Percent      int   `json:"percent"`
}

// recordMetrics is the Committed hook's metrics part: on the change that
// finishes a workflow (complete or aborted), and only then, it appends the
// workflow's line, once per lineage. It runs under the state lock.
func recordMetrics(store *state.Store, prev, next *state.Checkpoint) error {
	if prev.Finished() || !next.Finished() || next.Lineage == "" {
		return nil
	}
	events, _, err := store.Events()
	if err != nil {
		return fmt.Errorf("metrics: reading the log: %w", err)
	}
	line, err := BuildMetricsLine(next, events)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if line == nil {
		return nil
	}
	b, err := jsonenc.Marshal(line)
	if err != nil {
		return err
	}
	if _, err := store.AppendMetrics(line.Lineage, b); err != nil {
		return fmt.Errorf("metrics: appending to %s: %w", state.MetricsFile, err)
	}
	return nil
}

// BuildMetricsLine computes a finished workflow's metrics line from its
// checkpoint and its committed log (oldest first). A workflow of a kind
// this binary has no engine for gives nil.
func BuildMetricsLine(cp *state.Checkpoint, events []state.Event) (*MetricsLine, error) {
	m := &MetricsLine{
		Schema: MetricsSchema, Lineage: cp.Lineage, Kind: cp.StateMachine.WorkflowConfig.Command,
		Started: cp.Metadata.CreatedAt.UTC(), Ended: cp.Metadata.UpdatedAt.UTC(),
		AgentsByName: map[string]int{},
	}
	if m.Started.IsZero() && len(events) > 0 {
		m.Started = events[0].Time.UTC()
	}
	m.DurationMs = max(m.Ended.Sub(m.Started).Milliseconds(), 0)
	switch m.Kind {
	case "orchestrate":
		w, err := LoadWorkflow(cp)
		if err != nil {
			return nil, err
		}
		orchestrateMetrics(m, w, events)
		m.tokens(w.TokenUse())
		m.Outcome = OutcomeCompleted
		if cp.StateMachine.CurrentState == orchestrate.Aborted {
			m.Outcome = OutcomeAborted
		}
	case "coordinate":
		c, err := LoadCoord(cp)
		if err != nil {
			return nil, err
		}
		coordinateMetrics(m, c, events)
		m.tokens(c.TokenUse())
	default:
		return nil, nil
	}
	return m, nil
}

// tokens fills the token counts from the workflow's.
func (m *MetricsLine) tokens(u gates.TokenUse) {
	m.TokensUnknown = u.Unknown
	if u.Known == 0 {
		return
	}
	total, counts := u.Total.Total(), u.Total
	m.Tokens, m.TokenCounts = &total, &counts
}

// orchestrateMetrics fills the orchestrate workflow's part: its launches,
// and from the log's state changes the fix iterations, final-validation
// failures and escalations, counted as `orch-hook report` counts them.
func orchestrateMetrics(m *MetricsLine, w *orchestrate.Workflow, events []state.Event) {
	m.Pattern = PatternFlat
	for _, l := range w.Launches {
		m.Agents++
		m.AgentsByName[l.Agent]++
	}
	phases, fixes, finals := 0, 0, 0
	if w.Plan != nil {
		phases = len(w.Plan.Phases)
	}
	for _, ch := range stateChanges(events) {
		switch {
		case ch.from == orchestrate.S4b && (ch.to == orchestrate.SF1 || ch.to == orchestrate.Escalated):
			fixes++
		case (ch.from == orchestrate.S5a || ch.from == orchestrate.S5b) && (ch.to == orchestrate.S4a || ch.to == orchestrate.Escalated):
			finals++
		}
		if ch.to == orchestrate.Escalated {
			m.Escalations++
		}
	}
	m.Phases, m.FixIterations, m.FinalValidationFailures = &phases, &fixes, &finals
	m.KnownIssues = len(w.KnownIssues)
}

// supervisorKinds names each supervisor by what it supervises, in
// workflow order.
var supervisorKinds = []struct{ agent, kind string }{
	{coordinate.ResearchSupervisor, "research"},
	{coordinate.ImplSupervisor, "implementation"},
	{coordinate.TestSupervisor, "testing"},
}

// coordinateMetrics fills the coordinate workflow's part: its launches
// (a supervisor's workers carry its agent id as their parent), the
// supervisors it ran, the debug retries, the measured context reduction
// and time savings, the escalations the log records, and how it ended.
func coordinateMetrics(m *MetricsLine, c *coordinate.Workflow, events []state.Event) {
	m.Scope = c.Scope
	launched := map[string]bool{}
	supervisor := map[string]bool{} // agent ids of supervisor launches
	for _, l := range c.Launches {
		m.Agents++
		m.AgentsByName[l.Agent]++
		launched[l.Agent] = true
		if l.Parent == "" && l.AgentID != "" {
			supervisor[l.AgentID] = true
		}
	}
	workers := 0
	for _, l := range c.Launches {
		if l.Parent != "" && supervisor[l.Parent] {
			workers++
		}
	}
	m.Workers = &workers
	m.Pattern = PatternFlat
	for _, s := range supervisorKinds {
		if launched[s.agent] {
			m.Supervisors = append(m.Supervisors, s.kind)
			m.Pattern = PatternHierarchical
		}
	}
	retries := c.Retries
	m.DebugRetries = &retries
	if r, a, ok := coordinate.ContextReductionOf(c.ContextReduction); ok {
		pct := 0.0
		if r > 0 {
			pct = math.Round(float64(r-a)/float64(r)*1000) / 10
		}
		m.ContextReduction = &ContextReductionMetric{Percent: pct, ReportBytes: r, MetadataChars: a}
	}
	if s, p, pct, ok := coordinate.TimeSavingsOf(c.TimeSavings); ok {
		m.TimeSavings = &TimeSavingsMetric{SequentialMs: s, ParallelMs: p, Percent: pct}
	}
	for _, ev := range events {
		if ev.Type == state.EventTransition && coordinate.EscalationRecord(ev.Reason) {
			m.Escalations++
		}
	}
	m.KnownIssues = len(c.KnownIssues)
	switch {
	case c.Aborted():
		m.Outcome = OutcomeAborted
	case c.TestsFailing():
		m.Outcome = OutcomeTestsFailing
	default:
		m.Outcome = OutcomeCompleted
	}
}

// stateChange is one committed change of current_state.
type stateChange struct{ from, to gates.State }

// stateChanges lists the log's changes of state, each once: the records
// of one change share its serial (as the report's timeline reads them).
func stateChanges(events []state.Event) []stateChange {
	var out []stateChange
	var last uint64
	seen := false
	for _, ev := range events {
		if ev.Type == state.EventDeny || ev.Type == state.EventError {
			continue
		}
		if ev.StateAfter == "" || ev.StateAfter == ev.StateBefore {
			continue
		}
		if seen && ev.Serial == last {
			continue
		}
		seen, last = true, ev.Serial
		out = append(out, stateChange{from: gates.State(ev.StateBefore), to: gates.State(ev.StateAfter)})
	}
	return out
}
