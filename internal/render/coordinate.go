package render

import (
	"slices"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/state"
)

// CoordReport is the coordinate workflow's part of a report (README, "The
// coordinate workflow"): where it ended, the verified artifacts, the
// supervisors with their workers, retries and relaunches, and the
// supervisors' measured effects.
type CoordReport struct {
	Scope, ScopeWhy string
	Terminal        string // the scope's terminal state
	Topic           string // the topic directory
	Topics          int    // research topics
	Hierarchical    bool
	ComplexWhy      string
	Outcome         string
	// Retries are the debug retries used (test FAIL -> debug -> test).
	Retries, MaxRetries    int
	LastError, FailedState string

	Artifacts   []VerifiedArtifact
	Supervisors []SupervisorRow
	Relaunches  []Relaunch
	// Workers counts the launches made by supervisors.
	Workers int
	// TimeSavings and ContextReduction are the workflow's own records, made
	// when a supervisor's aggregation was accepted.
	TimeSavings, ContextReduction string
	Denials                       []StepDenials
}

// Kinds of verified artifacts, in workflow order.
const (
	KindReport  = "research report"
	KindPlan    = "plan"
	KindDebug   = "debug report"
	KindSummary = "summary"
)

// VerifiedArtifact is an artifact the workflow verified on disk when its
// agent reported it.
type VerifiedArtifact struct {
	Kind string
	Path string // relative to the project root
	// By is the row of the launch that reported it; 0 when not known (a
	// checkpoint written before launches kept their artifact).
	By            int
	BySub         int
	Agent         string
	Exists, Known bool
}

// ByID names the reporting launch as in the agents table ("1.2"); "" when
// not known.
func (v VerifiedArtifact) ByID() string {
	if v.By == 0 {
		return ""
	}
	return AgentRow{N: v.By, Sub: v.BySub}.ID()
}

// SupervisorRow is one supervisor launch and its workers.
type SupervisorRow struct {
	Row AgentRow
	// Record is its supervisor_state entry; nil when a later launch of the
	// same supervisor replaced it, or before it launched a worker.
	Record  *coordinate.SupervisorState
	Workers []WorkerRow
	// The workers' parallel run as the workflow measures it for an
	// implementation supervisor (coordinate.TimeSavings): the sum of their
	// launch-to-return times against the time from the first launch to the
	// last return, on the hooks' clock. Returned reports whether a worker
	// returned (else they are 0).
	Sequential, Parallel time.Duration
	SavedPercent         int
	Returned             bool
}

// WorkerRow is one worker of a supervisor.
type WorkerRow struct {
	Row AgentRow
	// Record is the worker as the supervisor's state records it; nil
	// while it runs.
	Record *coordinate.WorkerRecord
}

// Relaunch is a launch that repeats an earlier one.
type Relaunch struct {
	Row, Of AgentRow
}

// StepDenials counts the denials (and blocked returns) in one step.
type StepDenials struct {
	Step  string
	Count int
	Last  string // the last one's reason, on one line
}

var supervisorAgents = map[string]bool{coordinate.ResearchSupervisor: true, coordinate.ImplSupervisor: true, coordinate.TestSupervisor: true}

// artifactRef is a verified artifact and the launch that reported it (nil
// when not known).
type artifactRef struct {
	kind, path string
	by         *coordinate.Launch
}

// verifiedArtifacts lists what the workflow verified: the research
// reports it accepted, the plan, the debug reports and the summary.
func verifiedArtifacts(c *coordinate.Workflow) []artifactRef {
	var out []artifactRef
	for _, p := range c.Reports {
		ref := artifactRef{kind: KindReport, path: p}
		for _, l := range c.Launches {
			if l.Agent == coordinate.ResearchSpecialist && l.Output == p {
				ref.by = l
			}
		}
		out = append(out, ref)
	}
	plan := false
	for _, kind := range []struct{ agent, kind string }{{coordinate.PlanArchitect, KindPlan}, {coordinate.DebugAnalyst, KindDebug}, {coordinate.DocWriter, KindSummary}} {
		for _, l := range c.Launches {
			if l.Agent == kind.agent && l.Output != "" {
				out = append(out, artifactRef{kind: kind.kind, path: l.Output, by: l})
				plan = plan || kind.kind == KindPlan
			}
		}
		if kind.kind == KindPlan && !plan && slices.Contains(c.Completed, coordinate.CPlan) {
			// A plan verified before launches kept their artifact.
			out = append(out, artifactRef{kind: KindPlan, path: c.Paths.PlanPath})
		}
	}
	return out
}

// CoordinateArtifactPaths lists the files a coordinate workflow verified,
// for the caller to tell whether each still exists (ReportInput.Exists).
func CoordinateArtifactPaths(c *coordinate.Workflow) []string {
	var out []string
	for _, a := range verifiedArtifacts(c) {
		out = append(out, a.path)
	}
	return out
}

// coordinateReport fills r.Agents with the coordinate launches, each
// supervisor's workers right after it, and returns the coordinate part.
// r.Steps must be set (relaunches are told apart by the step's stay).
func coordinateReport(c *coordinate.Workflow, in ReportInput, r *Report) *CoordReport {
	cr := &CoordReport{
		Scope: c.Scope, ScopeWhy: c.ScopeWhy, Terminal: coordinate.ScopeTerminal[c.Scope],
		Topic: c.Paths.TopicPath, Topics: c.Topics, Hierarchical: c.Hierarchical, ComplexWhy: c.ComplexWhy,
		Outcome: c.Outcome, Retries: c.Retries, MaxRetries: coordinate.MaxDebugRetries,
		LastError: c.LastError, FailedState: string(c.FailedState),
		TimeSavings: c.TimeSavings, ContextReduction: c.ContextReduction,
	}
	rowOf := map[*coordinate.Launch]int{} // index in r.Agents
	add := func(l *coordinate.Launch, n, sub int) {
		a := AgentRow{
			N: n, Sub: sub, Agent: l.Agent, Job: l.Unit, State: string(l.State),
			Background: l.Background, Status: l.Status, Result: l.Result, Output: l.Output,
			Start: l.Started.UTC(), End: l.Ended.UTC(), Tokens: l.Tokens,
		}
		if l.Status == gates.Running {
			a.End, a.Open = r.Now, true
		}
		if l.Ended.IsZero() && !a.Open || a.End.Before(a.Start) {
			a.End = a.Start
		}
		rowOf[l] = len(r.Agents)
		r.Agents = append(r.Agents, a)
	}
	// A worker's launch carries its supervisor's agent id.
	launcher := map[string]bool{}
	for _, l := range c.Launches {
		if l.Parent == "" && l.AgentID != "" {
			launcher[l.AgentID] = true
		}
	}
	n := 0
	for _, l := range c.Launches {
		if l.Parent != "" && launcher[l.Parent] {
			continue // listed under its supervisor
		}
		n++
		add(l, n, 0)
		if l.Parent != "" || l.AgentID == "" {
			continue
		}
		sub := 0
		for _, w := range c.Launches {
			if w.Parent == l.AgentID {
				sub++
				add(w, n, sub)
			}
		}
	}
	for _, a := range r.Agents {
		if a.Sub > 0 {
			cr.Workers++
		}
	}

	for _, ref := range verifiedArtifacts(c) {
		v := VerifiedArtifact{Kind: ref.kind, Path: ref.path}
		if i, ok := rowOf[ref.by]; ok {
			v.By, v.BySub, v.Agent = r.Agents[i].N, r.Agents[i].Sub, r.Agents[i].Agent
		}
		v.Exists, v.Known = in.Exists[ref.path]
		cr.Artifacts = append(cr.Artifacts, v)
	}

	for _, l := range c.Launches {
		if !supervisorAgents[l.Agent] || l.Parent != "" {
			continue
		}
		s := SupervisorRow{Row: r.Agents[rowOf[l]]}
		for _, st := range c.Supervisors {
			if st != nil && l.AgentID != "" && st.AgentID == l.AgentID {
				s.Record = st
			}
		}
		var ds []int64
		var first, last time.Time
		for _, w := range c.Launches {
			if w.Parent == "" || w.Parent != l.AgentID {
				continue
			}
			s.Workers = append(s.Workers, WorkerRow{Row: r.Agents[rowOf[w]], Record: workerRecord(s.Record, w.AgentID)})
			if w.Ended.IsZero() {
				continue
			}
			ds = append(ds, w.Ended.Sub(w.Started).Milliseconds())
			if first.IsZero() || w.Started.Before(first) {
				first = w.Started
			}
			last = maxTime(last, w.Ended)
		}
		if len(ds) > 0 {
			seq, par, pct := coordinate.TimeSavings(ds, last.Sub(first).Milliseconds())
			s.Sequential, s.Parallel, s.SavedPercent = time.Duration(seq)*time.Millisecond, time.Duration(par)*time.Millisecond, pct
			s.Returned = true
		}
		cr.Supervisors = append(cr.Supervisors, s)
	}

	cr.Relaunches = relaunches(r.Agents, r.Steps)
	cr.Denials = stepDenials(in.Events)
	return cr
}

// workerRecord finds a worker in its supervisor's state by agent id.
func workerRecord(st *coordinate.SupervisorState, agentID string) *coordinate.WorkerRecord {
	if st == nil || agentID == "" {
		return nil
	}
	lists := [][]coordinate.WorkerRecord{st.Workers, st.Tracks}
	for _, stage := range st.Stages {
		lists = append(lists, stage.Workers)
	}
	for _, list := range lists {
		for i := range list {
			if list[i].AgentID == agentID {
				return &list[i]
			}
		}
	}
	return nil
}

// relaunches finds the launches that repeat an earlier one of the same
// agent by the same launcher (the orchestrator, or the same supervisor
// launch) within the same stay in a step, after that one ended. A
// research-specialist or a supervisor's worker runs once per topic, track
// or stage, so for those only a launch with the same job counts; the
// other agents run one at a time, and a second launch in the same stay
// means the first did not move the workflow on.
func relaunches(rows []AgentRow, spans []Span) []Relaunch {
	stay := func(t time.Time) int {
		i := -1
		for j, s := range spans {
			if !s.Start.After(t) {
				i = j
			}
		}
		return i
	}
	var out []Relaunch
	for i, l := range rows {
		perJob := l.Sub > 0 || l.Agent == coordinate.ResearchSpecialist
		var of *AgentRow
		for j := range rows {
			e := rows[j]
			if j == i || e.Agent != l.Agent || (e.Sub > 0) != (l.Sub > 0) || l.Sub > 0 && e.N != l.N {
				continue
			}
			earlier := e.Start.Before(l.Start) || e.Start.Equal(l.Start) && j < i
			if !earlier || e.Open || e.End.After(l.Start) {
				continue
			}
			if perJob && e.Job != l.Job || stay(e.Start) != stay(l.Start) {
				continue
			}
			if of == nil || !e.Start.Before(of.Start) {
				of = &rows[j]
			}
		}
		if of != nil {
			out = append(out, Relaunch{Row: l, Of: *of})
		}
	}
	return out
}

// stepDenials counts the denials by the step the workflow was in, in the
// order the steps first saw one.
func stepDenials(events []state.Event) []StepDenials {
	var out []StepDenials
	for _, ev := range events {
		if ev.Type != state.EventDeny {
			continue
		}
		i := slices.IndexFunc(out, func(d StepDenials) bool { return d.Step == ev.StateBefore })
		if i < 0 {
			out = append(out, StepDenials{Step: ev.StateBefore})
			i = len(out) - 1
		}
		out[i].Count++
		out[i].Last = denyReason(ev.Reason)
	}
	return out
}
