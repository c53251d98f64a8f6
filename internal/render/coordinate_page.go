package render

import (
	"fmt"
	htmltemplate "html/template"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates/coordinate"
)

// coordPage is the coordinate part of a page, in the words people read
// (not escaped: the templates escape).
type coordPage struct {
	Scope, Terminal, Topic, Research, Outcome string
	Retries                                   string // "1 of 2"
	LastError, FailedState                    string
	Artifacts                                 []coordArtifactLine
	Supervisors                               []supervisorLine
	Relaunches                                []relaunchLine
	WorkerSavings                             []savingLine
	TimeSavings, ContextReduction             string
	Denials                                   []denialLine
}

type coordArtifactLine struct{ Kind, Path, By, Exists string }

type supervisorLine struct {
	ID, Agent, Job, State, Status, Duration string
	SupervisorID, AgentID                   string
	Color                                   htmltemplate.CSS
	Counts                                  string // "4 workers: 3 completed, 1 failed"
	// Replaced: no supervisor_state entry is this launch's (a relaunch
	// replaced it, or it launched no worker).
	Replaced bool
	// The aggregated metadata of its SUPERVISOR_COMPLETE, once accepted:
	// the supervisor's own words, except PartialFailures (observed).
	Aggregated      bool
	Summary         string
	KeyFindings     []string
	PartialFailures []string
	Tests           string
	Workers         []workerLine
}

type workerLine struct {
	ID, Agent, Unit, Status, Duration, Output, Error string
	Color                                            htmltemplate.CSS
}

type relaunchLine struct{ ID, Agent, Job, State, Of, OfStatus string }

type savingLine struct{ Supervisor, Sequential, Parallel, Saved, Share string }

func newCoordPage(r *Report) *coordPage {
	cr := r.Coordinate
	mode := "flat: the orchestrator launched the research-specialists"
	if cr.Hierarchical {
		mode = "hierarchical: through research-sub-supervisor"
	}
	p := &coordPage{
		Scope: cr.Scope, Terminal: cr.Terminal, Topic: cr.Topic,
		Research: fmt.Sprintf("%d topics, %s", cr.Topics, mode),
		Outcome:  cr.Outcome, Retries: fmt.Sprintf("%d of %d", cr.Retries, cr.MaxRetries),
		LastError: cr.LastError, FailedState: cr.FailedState,
		TimeSavings: cr.TimeSavings, ContextReduction: cr.ContextReduction,
	}
	if cr.ScopeWhy != "" {
		p.Scope += " (" + cr.ScopeWhy + ")"
	}
	if cr.ComplexWhy != "" {
		p.Research += " (" + cr.ComplexWhy + ")"
	}
	for _, a := range cr.Artifacts {
		by := a.ByID()
		if by != "" {
			by += " " + a.Agent
		}
		p.Artifacts = append(p.Artifacts, coordArtifactLine{Kind: a.Kind, Path: a.Path, By: by, Exists: existsText(ProjectFile{Exists: a.Exists, Known: a.Known})})
	}
	for _, s := range cr.Supervisors {
		p.Supervisors = append(p.Supervisors, supervisorPage(r, s))
		if s.Returned {
			p.WorkerSavings = append(p.WorkerSavings, savingLine{
				Supervisor: s.Row.ID() + ". " + s.Row.Agent,
				Sequential: Duration(s.Sequential), Parallel: Duration(s.Parallel),
				Saved: Duration(s.Sequential - s.Parallel), Share: fmt.Sprintf("%d%%", s.SavedPercent),
			})
		}
	}
	for _, l := range cr.Relaunches {
		p.Relaunches = append(p.Relaunches, relaunchLine{ID: l.Row.ID(), Agent: l.Row.Agent, Job: l.Row.Job, State: l.Row.State, Of: l.Of.ID(), OfStatus: l.Of.Status})
	}
	for _, d := range cr.Denials {
		p.Denials = append(p.Denials, denialLine{Gate: d.Step, Count: d.Count, Last: d.Last})
	}
	return p
}

func supervisorPage(r *Report, s SupervisorRow) supervisorLine {
	a := s.Row
	l := supervisorLine{
		ID: a.ID(), Agent: a.Agent, Job: a.Job, State: a.State, Status: statusText(a),
		Duration: Duration(a.Duration()), Color: htmltemplate.CSS(agentColor(a.Agent)), Replaced: s.Record == nil,
	}
	if a.Open {
		l.Status += " (for " + Duration(a.Duration()) + ")"
	}
	counts := map[string]int{}
	var order []string
	for _, w := range s.Workers {
		wl := workerLine{
			ID: w.Row.ID(), Agent: w.Row.Agent, Unit: w.Row.Job, Status: w.Row.Status, Output: w.Row.Output,
			Duration: Duration(w.Row.Duration()), Color: htmltemplate.CSS(agentColor(w.Row.Agent)),
		}
		if rec := w.Record; rec != nil {
			wl.Status, wl.Error = rec.Status, rec.Error
			if u := firstOf(rec.Topic, rec.TrackName); u != "" {
				wl.Unit = u
			}
			if rec.DurationMs > 0 {
				// What the workflow recorded and checked the aggregation
				// against: the client's own measure when it gave one.
				wl.Duration = Duration(time.Duration(rec.DurationMs) * time.Millisecond)
			}
			if rec.OutputPath != "" {
				wl.Output = rec.OutputPath
			}
		}
		if counts[wl.Status] == 0 {
			order = append(order, wl.Status)
		}
		counts[wl.Status]++
		l.Workers = append(l.Workers, wl)
	}
	parts := make([]string, 0, len(order))
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	l.Counts = fmt.Sprintf("%d workers", len(s.Workers))
	if len(parts) > 0 {
		l.Counts += ": " + strings.Join(parts, ", ")
	}
	if st := s.Record; st != nil {
		l.SupervisorID, l.AgentID = st.SupervisorID, st.AgentID
		if m := st.AggregatedMetadata; m != nil {
			l.Aggregated = true
			l.Summary = m.Summary
			for i, f := range m.KeyFindings {
				if i == coordinate.MaxKeyFindings {
					break
				}
				l.KeyFindings = append(l.KeyFindings, f)
			}
			l.PartialFailures = m.PartialFailures
			if a.Agent == coordinate.TestSupervisor {
				l.Tests = fmt.Sprintf("%d tests: %d passed, %d failed", m.TotalTests, m.TestsPassed, m.TestsFailed)
			}
		}
	}
	return l
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// coordAgentSummary: the launches, those of supervisors, and the
// orchestrator's parallelism.
func coordAgentSummary(r *Report) string {
	running := 0
	for _, a := range r.Agents {
		if a.Open {
			running++
		}
	}
	s := fmt.Sprintf("%d launches (%d by supervisors)", len(r.Agents), r.Coordinate.Workers)
	if running > 0 {
		s += fmt.Sprintf(" (%d running)", running)
	}
	return s + fmt.Sprintf("; the orchestrator's: sequential %s, parallel %s, saved %s", Duration(r.Sequential), Duration(r.Parallel), Duration(r.Saved()))
}
