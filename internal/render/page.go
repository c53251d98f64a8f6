package render

import (
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"sync"
	texttemplate "text/template"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// page is what the report shows, in the words and numbers people read
// (not escaped): report.md.tmpl draws it as Markdown, report.html.tmpl as
// HTML.
type page struct {
	r *Report

	Request, Command, State string
	Finished                bool
	// Started, Ended and Now are full UTC times; Wall is the time from the
	// start to the end (or now).
	Started, Ended, Now, Wall string
	AgentSummary              string
	DenialsTotal              int
	// Tokens sums what the agents that ended used ("none recorded" before
	// one ended); TokenPhases are by phase.
	Tokens      string
	TokenPhases []tokenPhaseLine

	Steps  []stepLine
	Agents []agentLine

	Sequential, Parallel, Saved string
	SavedShare                  string // Saved as a share of Sequential, "28%"

	Phases []phaseLine
	// FixLimit is the fix iteration that escalates ("3rd").
	FixLimit                            string
	FinalFailures, FinalFailuresAllowed int

	Denials []denialLine

	Artifacts    []Artifact
	ProjectFiles []fileLine
	PlanKnown    bool

	// Coordinate is the coordinate workflow's part; nil for another.
	Coordinate *coordPage
}

type stepLine struct{ Label, Start, End, Duration string }

type agentLine struct {
	N                                             int
	Agent, Task, Job, State, Start, End, Duration string
	Status, Result, Tokens                        string
	Color                                         htmltemplate.CSS
	// ID is "3", or "3.2" for a supervisor's worker (Worker), whose
	// supervisor is Parent ("3"). Output is the artifact verified for it.
	ID, Parent, Output string
	Worker             bool
}

type phaseLine struct {
	Label, Start, End, Duration, Tokens  string
	FixIterations, Escalations, Launches int
}

// tokenPhaseLine is one phase's tokens: its agents counted, the four
// counts and their total, and the agents whose tokens are unknown.
type tokenPhaseLine struct {
	Phase                                       string
	Agents, Unknown                             int
	Total, Input, Output, CacheRead, CacheWrite string
}

type denialLine struct {
	Gate  string
	Count int
	Last  string
}

type fileLine struct{ Path, Tasks, Implemented, Exists string }

// legendItem is one agent's colour in the HTML timeline's legend.
type legendItem struct {
	Agent string
	Color htmltemplate.CSS
}

func newPage(r *Report) *page {
	p := &page{
		r: r, Request: r.Request, Command: r.Command, State: r.State, Finished: r.Finished,
		Started: stamp(r.Start), Ended: stamp(r.End), Now: stamp(r.Now), Wall: Duration(r.End.Sub(r.Start)),
		AgentSummary: agentSummary(r), DenialsTotal: r.DenialsTotal, Tokens: gates.OrText(r.Tokens.Summary(), "none recorded yet (an agent's are read when it stops)"),
		Sequential: Duration(r.Sequential), Parallel: Duration(r.Parallel), Saved: Duration(r.Saved()),
		SavedShare: percent(r.Saved(), r.Sequential),
		FixLimit:   ordinal(r.Limits.FixIterations), FinalFailures: r.FinalFailures, FinalFailuresAllowed: r.Limits.FinalValidationFailures,
		Artifacts: r.Artifacts, PlanKnown: r.PlanKnown,
	}
	for _, s := range r.Steps {
		end := r.clock(s.End)
		if s.Open {
			end = "(now)"
		}
		p.Steps = append(p.Steps, stepLine{Label: stepLabel(s), Start: r.clock(s.Start), End: end, Duration: Duration(s.Duration())})
	}
	for _, a := range r.Agents {
		l := agentLine{
			N: a.N, Agent: a.Agent, Job: a.Job, State: a.State, Start: r.clock(a.Start), End: r.clock(a.End),
			Duration: Duration(a.Duration()), Status: statusText(a), Result: a.Result, Tokens: a.TokensText(), Color: htmltemplate.CSS(agentColor(a.Agent)),
			ID: a.ID(), Output: a.Output, Worker: a.Sub > 0,
		}
		if l.Worker {
			l.Parent = AgentRow{N: a.N}.ID()
		}
		if a.Task != 0 {
			l.Task = fmt.Sprintf("%02d", a.Task)
		}
		if a.Open {
			l.End = "(running)"
		}
		p.Agents = append(p.Agents, l)
	}
	for _, ph := range r.Phases {
		l := phaseLine{Label: phaseLabel(ph), FixIterations: ph.FixIterations, Escalations: ph.Escalations, Launches: ph.Launches, Tokens: "-"}
		if ph.Tokens.Known+ph.Tokens.Unknown > 0 {
			l.Tokens = ph.Tokens.PhaseText()
		}
		if !ph.Start.IsZero() {
			l.Start, l.End, l.Duration = r.clock(ph.Start), r.clock(ph.End), Duration(ph.Duration())
			if r.phaseOpen(ph) {
				l.End = "(now)"
			}
		}
		p.Phases = append(p.Phases, l)
	}
	for _, d := range r.Denials {
		p.Denials = append(p.Denials, denialLine{Gate: gateName(d.Gate), Count: d.Count, Last: d.Last})
	}
	for _, t := range r.Tokens.Phases {
		c := gates.CompactTokens
		p.TokenPhases = append(p.TokenPhases, tokenPhaseLine{
			Phase: t.Phase, Agents: t.Known, Unknown: t.Unknown, Total: c(t.Tokens.Total()),
			Input: c(t.Tokens.Input), Output: c(t.Tokens.Output), CacheRead: c(t.Tokens.CacheRead), CacheWrite: c(t.Tokens.CacheWrite),
		})
	}
	for _, f := range r.ProjectFiles {
		p.ProjectFiles = append(p.ProjectFiles, fileLine{Path: f.Path, Tasks: tasks(f.Tasks), Implemented: tasks(f.Implemented), Exists: existsText(f)})
	}
	if r.Coordinate != nil {
		p.Coordinate = newCoordPage(r)
		p.AgentSummary = coordAgentSummary(r)
	}
	return p
}

// Gantt is the Markdown report's timeline.
func (p *page) Gantt() string { return Gantt(p.r) }

// Timeline is the HTML report's timeline.
func (p *page) Timeline() htmltemplate.HTML { return htmltemplate.HTML(Timeline(p.r)) }

// Legend names the colours of the agents that appear, the workflow's
// agents first.
func (p *page) Legend() []legendItem {
	seen := map[string]bool{}
	var items []legendItem
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			items = append(items, legendItem{Agent: n, Color: htmltemplate.CSS(agentColor(n))})
		}
	}
	order := orchestrate.WorkflowAgents
	if p.r.Coordinate != nil {
		order = coordinate.Agents
	}
	for _, n := range order {
		for _, a := range p.r.Agents {
			if a.Agent == n {
				add(n)
			}
		}
	}
	for _, a := range p.r.Agents {
		add(a.Agent)
	}
	return items
}

//go:embed report.md.tmpl report.html.tmpl report_coordinate.md.tmpl report_coordinate.html.tmpl
var reportTemplates embed.FS

// line folds s onto one line and clips it to n bytes.
func line(s string, n int) string { return shorten.Bytes(shorten.OneLine(s), n, "…") }

// The templates are parsed on first use, not at package init: this
// package is linked into the binary every hook call starts, and parsing
// them there cost each call about 0.3 ms (GODEBUG=inittrace=1).
var (
	markdownReport = sync.OnceValue(func() *texttemplate.Template {
		return texttemplate.Must(texttemplate.New("report.md.tmpl").
			Funcs(texttemplate.FuncMap{"line": line, "md": mdText, "mdCode": mdCode}).
			ParseFS(reportTemplates, "report.md.tmpl", "report_coordinate.md.tmpl"))
	})
	htmlReport = sync.OnceValue(func() *htmltemplate.Template {
		return htmltemplate.Must(htmltemplate.New("report.html.tmpl").
			Funcs(htmltemplate.FuncMap{"line": line}).
			ParseFS(reportTemplates, "report.html.tmpl", "report_coordinate.html.tmpl"))
	})
)

// Markdown draws the report as GitHub-flavoured Markdown with a Mermaid
// gantt timeline.
func Markdown(r *Report) string {
	var b strings.Builder
	if err := markdownReport().Execute(&b, newPage(r)); err != nil {
		panic(err) // the template is embedded and its data a page: a bug
	}
	return b.String()
}

// HTML draws the report as one self-contained page: inline CSS and an
// inline SVG timeline with one row per agent launch (each a <g> with
// data-row="launch"). It has no script and refers to nothing outside itself.
func HTML(r *Report) string {
	var b strings.Builder
	if err := htmlReport().Execute(&b, newPage(r)); err != nil {
		panic(err) // the template is embedded and its data a page: a bug
	}
	return b.String()
}
