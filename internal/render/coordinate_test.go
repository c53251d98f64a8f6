package render

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/state"
)

// The coordinate fixture (coord_report.txtar): a research supervisor with
// four workers (one failed), a rejected and relaunched plan-architect, an
// implementation supervisor with two parallel tracks, a failed test run, a
// debug round, the summary.
func TestCoordinateReport(t *testing.T) {
	in := loadFixture(t, "coordinate")
	r := BuildReport(in)
	if !r.Finished || r.Coordinate == nil {
		t.Fatalf("finished %v, coordinate part %v", r.Finished, r.Coordinate != nil)
	}
	var ids []string
	for _, a := range r.Agents {
		ids = append(ids, a.ID())
	}
	// Every launch once, each supervisor's workers right after it.
	if got, want := strings.Join(ids, " "), "1 1.1 1.2 1.3 1.4 2 3 4 4.1 4.2 5 6 7 8"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	if len(r.Agents) != len(in.Coordinate.Launches) {
		t.Errorf("%d rows for %d launches", len(r.Agents), len(in.Coordinate.Launches))
	}
	// The orchestrator's launches only: the workers ran inside their
	// supervisors' launches, which ran one after another.
	if r.Sequential != 13*time.Minute+30*time.Second || r.Saved() != 0 {
		t.Errorf("sequential %s, saved %s; want 13m30s, 0s", r.Sequential, r.Saved())
	}
	c := r.Coordinate
	if len(c.Supervisors) != 2 || c.Workers != 6 {
		t.Fatalf("%d supervisors, %d workers", len(c.Supervisors), c.Workers)
	}
	res, impl := c.Supervisors[0], c.Supervisors[1]
	if res.Row.Agent != coordinate.ResearchSupervisor || len(res.Workers) != 4 || res.Record == nil || res.Record.AggregatedMetadata == nil {
		t.Fatalf("research supervisor %+v", res)
	}
	if w := res.Workers[3]; w.Record == nil || w.Record.Status != coordinate.WorkerFailed || !strings.Contains(w.Record.Error, "004_invalidation.md") {
		t.Errorf("the failed worker %+v", w)
	}
	// Workers from 10:00:20 to 10:02:00, :02:30, :03:00 and :03:20.
	if res.Sequential != 9*time.Minute+30*time.Second || res.Parallel != 3*time.Minute || res.SavedPercent != 68 {
		t.Errorf("research workers: sequential %s, parallel %s, %d%%", res.Sequential, res.Parallel, res.SavedPercent)
	}
	if impl.Row.ID() != "4" || len(impl.Workers) != 2 || impl.Sequential != 5*time.Minute || impl.Parallel != 3*time.Minute || impl.SavedPercent != 40 {
		t.Errorf("implementation supervisor %s: %d workers, sequential %s, parallel %s, %d%%", impl.Row.ID(), len(impl.Workers), impl.Sequential, impl.Parallel, impl.SavedPercent)
	}
	if c.TimeSavings != "sequential 300000ms vs parallel 180000ms (40% saved)" || !strings.HasPrefix(c.ContextReduction, "context reduction 26%") {
		t.Errorf("recorded: %q, %q", c.TimeSavings, c.ContextReduction)
	}
	var arts []string
	for _, a := range c.Artifacts {
		arts = append(arts, a.Kind+"@"+a.ByID())
		if !a.Known || !a.Exists {
			t.Errorf("%s: known %v, exists %v", a.Path, a.Known, a.Exists)
		}
	}
	want := "research report@1.1 research report@1.2 research report@1.3 plan@3 debug report@6 summary@8"
	if got := strings.Join(arts, " "); got != want {
		t.Errorf("artifacts %q, want %q", got, want)
	}
	if len(c.Relaunches) != 1 || c.Relaunches[0].Row.ID() != "3" || c.Relaunches[0].Of.ID() != "2" {
		t.Errorf("relaunches %+v", c.Relaunches)
	}
	if c.Retries != 1 || c.MaxRetries != coordinate.MaxDebugRetries {
		t.Errorf("retries %d/%d", c.Retries, c.MaxRetries)
	}
	if len(c.Denials) != 2 || c.Denials[0].Step != "research" || c.Denials[1].Step != "plan" {
		t.Errorf("denials %+v", c.Denials)
	}

	// Nesting as drawn: in Markdown each worker's row follows its
	// supervisor's, marked ↳; in HTML it names its supervisor.
	md := Markdown(r)
	sup := strings.Index(md, "| 4 | implementation-sub-supervisor |")
	w1 := strings.Index(md, "| 4.1 | ↳ implementation-executor | Track 1: Cache client |")
	w2 := strings.Index(md, "| 4.2 | ↳ implementation-executor | Track 2: Invalidation bus |")
	next := strings.Index(md, "| 5 | test-specialist |")
	if sup < 0 || !(sup < w1 && w1 < w2 && w2 < next) {
		t.Errorf("workers not listed under their supervisor (%d %d %d %d)", sup, w1, w2, next)
	}
	page := HTML(r)
	if n := strings.Count(page, `<tr class="worker" data-parent="1">`); n != 4 {
		t.Errorf("%d rows nested under supervisor 1, want 4", n)
	}
	if n := strings.Count(page, `data-row="launch" data-agent="implementation-executor" data-status="returned" data-parent="4">`); n != 2 {
		t.Errorf("%d timeline rows nested under supervisor 4, want 2", n)
	}
	// The orchestrate-only sections are not drawn.
	for _, s := range []string{"Fix iterations per phase", "Project files", "Denials by gate"} {
		if strings.Contains(md, s) || strings.Contains(page, s) {
			t.Errorf("coordinate report has %q", s)
		}
	}
}

// unescapedPipes counts the cell separators of a Markdown table row.
var unescapedPipe = regexp.MustCompile(`(^|[^\\])\|`)

// Agent-provided text (prompts, the supervisor's summary and findings,
// errors, paths) is escaped in HTML and cannot break the Markdown.
func TestCoordinateEscapes(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	evil := "<img src=x onerror=alert(1)> | *a* `b` [c](http://x)"
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	c := &coordinate.Workflow{
		Kind: "coordinate", Description: "Research " + evil, Scope: coordinate.ScopeResearchOnly, Topics: 4, Hierarchical: true,
		Paths:   coordinate.Paths{TopicPath: "specs/001_x"},
		Outcome: "completed " + evil, LastError: "failed " + evil, FailedState: "research",
		Reports: []string{"specs/001_x/reports/001_a|b`.md"},
		Launches: []*coordinate.Launch{
			{ToolUseID: "t-s", AgentID: "sup", Agent: coordinate.ResearchSupervisor, Unit: "Go " + evil, State: "research", Status: gates.Returned, Started: at(0), Ended: at(9)},
			{ToolUseID: "w-1", AgentID: "w1", Parent: "sup", Agent: coordinate.ResearchSpecialist, Unit: "Topic: " + evil, State: "research", Status: gates.Returned, Output: "specs/001_x/reports/001_a|b`.md", Started: at(1), Ended: at(5)},
			{ToolUseID: "w-2", AgentID: "w2", Parent: "sup", Agent: coordinate.ResearchSpecialist, Unit: "Topic: two", State: "research", Status: gates.Unrecognized, Started: at(1), Ended: at(6)},
		},
		Supervisors: map[string]*coordinate.SupervisorState{coordinate.SupervisorKeyResearch: {
			SupervisorID: "research_sub_supervisor_x", AgentID: "sup", SupervisorName: coordinate.ResearchSupervisor,
			Workers: []coordinate.WorkerRecord{
				{WorkerID: "a", AgentID: "w1", Topic: evil, Status: coordinate.WorkerCompleted, OutputPath: "specs/001_x/reports/001_a|b`.md"},
				{WorkerID: "b", AgentID: "w2", Topic: "two", Status: coordinate.WorkerFailed, Error: "no file " + evil},
			},
			AggregatedMetadata: &coordinate.SupervisorResult{Summary: "Sum " + evil, KeyFindings: []string{"find " + evil}, PartialFailures: []string{"Failed: two (" + evil + ")"}},
		}},
		Current: "complete", Completed: []gates.State{"initialize", "research"},
	}
	in := ReportInput{Command: "coordinate", Request: c.Description, State: "complete", Created: t0, Coordinate: c, Now: at(20),
		Events: []state.Event{
			{Time: t0, Serial: 1, Type: state.EventStart, StateAfter: "research"},
			{Time: at(3), Serial: 2, Type: state.EventDeny, StateBefore: "research", Reason: "orch-hook: " + evil},
			{Time: at(9), Serial: 3, Type: state.EventTransition, StateBefore: "research", StateAfter: "complete"},
		}}
	r := BuildReport(in)
	page := HTML(r)
	if strings.Contains(page, "<img") || strings.Contains(page, "<a ") {
		t.Errorf("HTML not escaped:\n%s", page)
	}
	if !strings.Contains(page, "<li>aggregated summary: Sum &lt;img src=x onerror=alert(1)&gt; | *a*") {
		t.Errorf("the supervisor's summary is not shown escaped:\n%s", page)
	}
	md := Markdown(r)
	if strings.Contains(md, "<img") {
		t.Errorf("Markdown not escaped:\n%s", md)
	}
	// Every table row keeps its columns, whatever the text in its cells.
	inTable, cols := false, 0
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			inTable = false
			continue
		}
		n := len(unescapedPipe.FindAllString(l, -1))
		if !inTable {
			inTable, cols = true, n
		}
		if n != cols {
			t.Errorf("row with %d separators in a table of %d: %s", n, cols, l)
		}
	}
	for _, want := range []string{
		"| 1.1 | ↳ research-specialist | Topic: &lt;img src=x onerror=alert(1)&gt; \\| \\*a\\* \\`b\\` \\[c\\](http://x) |",
		"- aggregated summary: Sum &lt;img src=x onerror=alert(1)&gt; \\| \\*a\\*",
		"| research report | specs/001\\_x/reports/001\\_a\\|b\\`.md | 1.1 research-specialist | unknown |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// A relaunch is the same agent launched again by the same launcher in the
// same stay in a step, after the earlier one ended; per topic for
// research-specialists and workers.
func TestRelaunches(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	row := func(n, sub int, agent, job string, from, to int, status string) AgentRow {
		return AgentRow{N: n, Sub: sub, Agent: agent, Job: job, Status: status, Start: t0.Add(time.Duration(from) * time.Minute), End: t0.Add(time.Duration(to) * time.Minute)}
	}
	span := func(state string, from, to int) Span {
		return Span{State: state, Start: t0.Add(time.Duration(from) * time.Minute), End: t0.Add(time.Duration(to) * time.Minute)}
	}
	spans := []Span{span("research", 0, 20), span("implement", 20, 40), span("test", 40, 50), span("debug", 50, 60), span("test", 60, 70)}
	rows := []AgentRow{
		row(1, 0, coordinate.ResearchSpecialist, "Topic 1", 1, 3, gates.Unrecognized),
		row(2, 0, coordinate.ResearchSpecialist, "Topic 2", 4, 6, gates.Returned),    // another topic
		row(3, 0, coordinate.ResearchSpecialist, "Topic 1", 7, 9, gates.Returned),    // Topic 1 again: relaunch of 1
		row(4, 0, coordinate.ImplSupervisor, "Tracks", 21, 30, gates.Returned),       // SUPERVISOR_FAILED
		row(4, 1, coordinate.ImplementationExec, "Track 1: a", 22, 25, gates.Failed), // blocked
		row(4, 2, coordinate.ImplementationExec, "Track 2: b", 22, 26, gates.Returned),
		row(4, 3, coordinate.ImplementationExec, "Track 1: a", 26, 28, gates.Returned), // relaunch of 4.1
		row(5, 0, coordinate.ImplSupervisor, "Tracks again", 31, 39, gates.Returned),   // relaunch of 4
		row(5, 1, coordinate.ImplementationExec, "Track 1: a", 32, 33, gates.Returned), // another supervisor's: no
		row(6, 0, coordinate.TestSpecialist, "Run", 41, 45, gates.Returned),
		row(7, 0, coordinate.TestSpecialist, "Run", 61, 65, gates.Returned), // after a debug round: a retry, not a relaunch
		row(8, 0, coordinate.TestSpecialist, "Run", 62, 66, gates.Returned), // started before 7 ended: no
	}
	var got []string
	for _, l := range relaunches(rows, spans) {
		got = append(got, l.Row.ID()+"<"+l.Of.ID())
	}
	if strings.Join(got, " ") != "3<1 4.3<4.1 5<4" {
		t.Errorf("relaunches %v, want [3<1 4.3<4.1 5<4]", got)
	}
}

// A coordinate workflow that has just started still renders.
func TestCoordinateReportEmpty(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	c := &coordinate.Workflow{Kind: "coordinate", Description: "Research x", Scope: coordinate.ScopeResearchOnly, Topics: 2, Current: "research"}
	r := BuildReport(ReportInput{Command: "coordinate", State: "research", Created: t0, Coordinate: c, Now: t0.Add(time.Minute)})
	md, page := Markdown(r), HTML(r)
	for _, want := range []string{"No agent was launched.", "No supervisor was launched", "None yet.", "No call was denied.", "none recorded"} {
		if !strings.Contains(md, want) || !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
}
