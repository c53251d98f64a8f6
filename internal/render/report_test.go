package render

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/state"
)

func TestReportGolden(t *testing.T) {
	for _, name := range []string{"complete", "running", "coordinate"} {
		t.Run(name, func(t *testing.T) {
			r := BuildReport(loadFixture(t, name))
			golden(t, "report_"+name+".md", Markdown(r))
			golden(t, "report_"+name+".html", HTML(r))
		})
	}
}

func TestReportComplete(t *testing.T) {
	in := loadFixture(t, "complete")
	r := BuildReport(in)
	if !r.Finished || r.State != "complete" {
		t.Fatalf("state %s finished %v", r.State, r.Finished)
	}
	at := func(hms string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05", "2026-11-22 "+hms)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	if !r.Start.Equal(at("10:00:00")) || !r.End.Equal(at("11:13:00")) {
		t.Errorf("bounds %s .. %s", r.Start, r.End)
	}
	if len(r.Agents) != 14 || len(r.Agents) != len(in.Workflow.Launches) {
		t.Fatalf("%d agent rows for %d launches", len(r.Agents), len(in.Workflow.Launches))
	}
	// Tasks 01 and 02 ran together from 10:15:30 to 10:24:10 (8m40s).
	if r.Saved() != 8*time.Minute+40*time.Second {
		t.Errorf("saved %s, want 8m40s (sequential %s, parallel %s)", r.Saved(), r.Sequential, r.Parallel)
	}
	var states []string
	for _, s := range r.Steps {
		states = append(states, s.State)
	}
	if got, want := strings.Join(states, " "), "0a 2 3 4a 4b F1 F2 4b 4c 4a 4b 4c 5a 5b 6"; got != want {
		t.Errorf("steps %q, want %q", got, want)
	}
	if len(r.Phases) != 2 || r.Phases[0].FixIterations != 1 || r.Phases[1].FixIterations != 0 || r.Phases[0].Title != "Core" {
		t.Errorf("phases %+v", r.Phases)
	}
	if r.DenialsTotal != 3 || len(r.Denials) != 2 || r.Denials[0].Gate != 3 || r.Denials[0].Count != 1 || r.Denials[1].Gate != 0 || r.Denials[1].Count != 2 {
		t.Errorf("denials %d %+v", r.DenialsTotal, r.Denials)
	}
	if len(r.Artifacts) != 5 || r.Artifacts[0].Path != ".orchestrator/tasks/MASTER_PLAN.md" {
		t.Errorf("artifacts %+v", r.Artifacts)
	}
	var exist []string
	for _, f := range r.ProjectFiles {
		if f.Exists {
			exist = append(exist, f.Path)
		}
	}
	if strings.Join(exist, " ") != "src/format.py src/parser.py" {
		t.Errorf("existing project files %v", exist)
	}
}

// The HTML page is self-contained: no script, no external reference, and
// one timeline row per agent launch.
func TestHTMLSelfContained(t *testing.T) {
	for _, name := range []string{"complete", "running", "coordinate"} {
		in := loadFixture(t, name)
		page := HTML(BuildReport(in))
		launches := 0
		if in.Workflow != nil {
			launches = len(in.Workflow.Launches)
		} else {
			launches = len(in.Coordinate.Launches)
		}
		if n := strings.Count(page, `data-row="launch"`); n != launches || n == 0 {
			t.Errorf("%s: %d timeline rows for %d launches", name, n, launches)
		}
		forbidden := regexp.MustCompile(`(?i)<script|\bsrc\s*=|\bhref\s*=|url\(|@import|https?:|//[a-z0-9.-]+\.[a-z]{2,}|<link|<iframe|<object|<embed|<img`)
		if m := forbidden.FindString(page); m != "" {
			t.Errorf("%s: the page refers outside itself or runs a script: %q", name, m)
		}
	}
}

// Untrusted text (the request, reasons, results) is escaped.
func TestReportEscapes(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &orchestrate.Workflow{Request: `<script>alert(1)</script> | a: b; #c`}
	w.Launches = []*orchestrate.Launch{{Agent: "code-quality", Job: "quality gate", Status: gates.Failed, Result: "x <b>|</b>", Started: now.Add(-time.Minute), Ended: now}}
	in := ReportInput{Command: "orchestrate", State: "4b", Created: now.Add(-2 * time.Minute), Workflow: w, Now: now,
		Events: []state.Event{
			{Time: now.Add(-2 * time.Minute), Serial: 1, Type: state.EventStart, StateAfter: "0a"},
			{Time: now.Add(-time.Minute), Serial: 2, Type: state.EventDeny, Gate: 2, StateBefore: "0a", Reason: "orch-hook: [Gate 2] <no> | way"},
		}}
	r := BuildReport(in)
	page := HTML(r)
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>") || strings.Contains(page, "<no>") {
		t.Errorf("HTML not escaped:\n%s", page)
	}
	md := Markdown(r)
	if strings.Contains(md, "<script") || strings.Contains(md, "<no>") {
		t.Errorf("Markdown not escaped:\n%s", md)
	}
	if !strings.Contains(md, `| Gate 2 | 1 | &lt;no&gt; \| way |`) {
		t.Errorf("deny reason not escaped in a cell:\n%s", md)
	}
	for _, l := range strings.Split(Gantt(r), "\n") {
		if i := strings.Index(l, " :"); i >= 0 && strings.ContainsAny(l[:i], "#;") {
			t.Errorf("gantt task name breaks the grammar: %q", l)
		}
		if strings.HasPrefix(l, "    title ") && strings.ContainsAny(l, "#;") {
			t.Errorf("gantt title breaks the grammar: %q", l)
		}
	}
	if !strings.Contains(Gantt(r), "1. code-quality (quality gate) :crit, ag1,") {
		t.Errorf("failed launch not marked crit:\n%s", Gantt(r))
	}
}

func TestParallelism(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	row := func(from, to int) AgentRow {
		return AgentRow{Start: t0.Add(time.Duration(from) * time.Minute), End: t0.Add(time.Duration(to) * time.Minute)}
	}
	for _, c := range []struct {
		rows     []AgentRow
		seq, par int
	}{
		{nil, 0, 0},
		{[]AgentRow{row(0, 10)}, 10, 10},
		{[]AgentRow{row(0, 10), row(0, 10)}, 20, 10},
		{[]AgentRow{row(0, 10), row(5, 15)}, 20, 15},
		{[]AgentRow{row(20, 30), row(0, 10)}, 20, 20},
		{[]AgentRow{row(0, 30), row(5, 10), row(12, 14)}, 37, 30},
		{[]AgentRow{row(0, 10), row(10, 20)}, 20, 20},
	} {
		seq, par := parallelism(c.rows)
		if seq != time.Duration(c.seq)*time.Minute || par != time.Duration(c.par)*time.Minute {
			t.Errorf("%v: seq %s par %s, want %dm %dm", c.rows, seq, par, c.seq, c.par)
		}
	}
}

// A state change logged as several records (agent_complete and transition
// share a serial) is one step.
func TestStepsOnePerChange(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	ev := func(min int, serial uint64, typ, from, to string, phase int) state.Event {
		return state.Event{Time: t0.Add(time.Duration(min) * time.Minute), Serial: serial, Type: typ, StateBefore: from, StateAfter: to, Phase: phase}
	}
	events := []state.Event{
		ev(0, 1, state.EventStart, "", "0a", 0),
		ev(2, 2, state.EventAgentDone, "0a", "2", 0),
		ev(2, 2, state.EventTransition, "0a", "2", 0),
		ev(3, 3, state.EventDeny, "2", "", 0),
		ev(5, 4, state.EventTransition, "2", "3", 0),
		ev(6, 5, state.EventUserDecision, "3", "4a", 1),
		ev(9, 6, state.EventTransition, "4a", "4b", 1),
		ev(10, 7, state.EventTransition, "4b", "escalated", 1),
	}
	r := BuildReport(ReportInput{Command: "orchestrate", State: "escalated", Created: t0, Events: events, Now: t0.Add(20 * time.Minute)})
	var got []string
	for _, s := range r.Steps {
		got = append(got, s.State+"@"+Duration(s.Duration()))
	}
	if strings.Join(got, " ") != "0a@2m00s 2@3m00s 3@1m00s 4a@3m00s 4b@1m00s escalated@10m00s" {
		t.Errorf("steps %v", got)
	}
	if !r.Steps[len(r.Steps)-1].Open {
		t.Error("the current step of a running workflow is open")
	}
	if len(r.Phases) != 1 || r.Phases[0].FixIterations != 1 || r.Phases[0].Escalations != 1 {
		t.Errorf("phases %+v", r.Phases)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", -time.Second: "0s", 45 * time.Second: "45s", 125 * time.Second: "2m05s",
		time.Hour + 2*time.Minute + 5*time.Second: "1h02m05s", 1500 * time.Millisecond: "2s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}

// An empty workflow (started, nothing else) still renders.
func TestReportEmpty(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	r := BuildReport(ReportInput{Command: "orchestrate", State: "0a", Created: t0, Workflow: &orchestrate.Workflow{Request: "x"}, Now: t0})
	md, page := Markdown(r), HTML(r)
	for _, want := range []string{"No agent was launched.", "No call was denied.", "No plan yet."} {
		if !strings.Contains(md, want) || !strings.Contains(page, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// The fixtures are what the real hooks produce today: the testscripts that
// produced them drive the hooks again and keep the same Markdown golden. When
// the hooks change what they record, those goldens change (UPDATE_SCRIPTS=1)
// and this test asks for the fixtures to be produced again.
func TestFixturesMatchScripts(t *testing.T) {
	for name, script := range map[string]string{"complete": "report_golden.txtar", "running": "report_running.txtar", "coordinate": "coord_report.txtar"} {
		ar, err := txtar.ParseFile(filepath.Join("..", "..", "cmd", "orch-hook", "testdata", "script", script))
		if err != nil {
			t.Fatal(err)
		}
		var fromScript string
		for _, f := range ar.Files {
			if f.Name == "golden/report.md" {
				fromScript = string(f.Data)
			}
		}
		if got := Markdown(BuildReport(loadFixture(t, name))); got != fromScript {
			t.Errorf("testdata/%s no longer matches %s (see testdata/README.md to produce it again):\n%s", name, script, firstDiff(fromScript, got))
		}
	}
}
