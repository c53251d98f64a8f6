package render

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// ReportInput is what a report is made from; the caller reads it from the
// project (checkpoint, event log, files).
type ReportInput struct {
	Command string // workflow_config.command
	Request string
	State   string // current_state
	Created time.Time
	// Workflow is the orchestrate runtime (launches, plan); nil for another
	// workflow or none.
	Workflow *orchestrate.Workflow
	// Coordinate is the coordinate runtime (launches, supervisors,
	// verified artifacts); nil for another workflow.
	Coordinate *coordinate.Workflow
	// Events is the committed event log, oldest first.
	Events []state.Event
	// Artifacts are the files under .orchestrator/ (the state directory
	// excluded), sorted by path.
	Artifacts []Artifact
	// Exists tells, for each project file the plan's tasks declare (for
	// coordinate, each artifact it verified: CoordinateArtifactPaths),
	// whether it exists now. A missing key counts as not known.
	Exists map[string]bool
	// Now is the clock: the end of the timeline while the workflow runs.
	Now time.Time
}

// Artifact is a file the workflow produced.
type Artifact struct {
	Path string // slash-separated, relative to the project root
	Size int64
}

// Report is a workflow's report, ready to draw.
type Report struct {
	Command  string
	Request  string
	State    string
	Finished bool
	// Limits are the workflow's (its configuration's snapshot).
	Limits gates.Limits
	// Start and End bound the timeline: the workflow's start, and its end
	// (entry into complete or aborted) or Now while it runs.
	Start, End time.Time
	Now        time.Time

	Steps  []Span
	Phases []PhaseRow
	Agents []AgentRow
	// Tokens are what the agents that ended used, in total and by phase
	// (the workflow's TokenUse), read from their transcripts.
	Tokens gates.TokenUse

	// Sequential is the sum of the agents' durations; Parallel the wall time
	// covered by at least one agent (the union of their intervals). Only
	// the orchestrator's launches count: a supervisor's workers run inside
	// its own launch.
	Sequential, Parallel time.Duration
	// FinalFailures counts 5a/5b FAILs (moves to 4a or escalated).
	FinalFailures int

	Denials      []GateDenials
	DenialsTotal int

	Artifacts    []Artifact
	ProjectFiles []ProjectFile
	// PlanKnown: the workflow has a plan snapshot (ProjectFiles is then
	// what its tasks declare).
	PlanKnown bool

	// Coordinate is the coordinate workflow's part; nil for another.
	Coordinate *CoordReport
}

// Saved is the time the parallel launches saved over running them one
// after another.
func (r *Report) Saved() time.Duration { return r.Sequential - r.Parallel }

// Span is one stay in a workflow step.
type Span struct {
	State string
	Phase int // the plan phase, for the steps of the implementation loop
	Start time.Time
	End   time.Time
	Open  bool // the current step of a running workflow (End is Now)
}

// Duration is the span's length.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// PhaseRow is one phase of the plan.
type PhaseRow struct {
	Number int
	Title  string
	// Start and End bound the phase's implementation-loop steps; zero when
	// the phase has not started.
	Start, End time.Time
	// FixIterations counts the phase's quality-gate FAILs (4b -> F1 or
	// escalated); Escalations those that escalated.
	FixIterations int
	Escalations   int
	Launches      int
	// Tokens are the phase's agents' (those of its implementation loop
	// that ended).
	Tokens gates.PhaseTokens
}

// phaseOpen reports whether p is the phase being worked on in a running
// workflow (it lasts until now).
func (r *Report) phaseOpen(p PhaseRow) bool {
	return !r.Finished && !p.Start.IsZero() && p.End.Equal(r.End)
}

// Duration is the phase's length (0 when not started).
func (p PhaseRow) Duration() time.Duration { return p.End.Sub(p.Start) }

// AgentRow is one agent launch.
type AgentRow struct {
	N int // 1-based, in launch order (of the orchestrator's launches)
	// Sub numbers a supervisor's workers under it (1-based, in launch
	// order; N is then the supervisor's); 0 for the orchestrator's
	// launches.
	Sub        int
	Agent      string
	Job        string
	Task       int
	Phase      int
	State      string
	Background bool
	Status     string
	Result     string
	Output     string // coordinate: the artifact verified for it
	Start, End time.Time
	Open       bool // still running: End is Now
	// Tokens are what the agent used (nil: none recorded).
	Tokens *gates.Tokens
}

// TokensText is the agent's tokens for a table cell: "33.1k", "unknown
// (transcript missing)", "-" while it runs or when none were recorded.
func (a AgentRow) TokensText() string {
	if a.Open {
		return "-"
	}
	if a.Tokens == nil {
		return "unknown"
	}
	return a.Tokens.Short()
}

// ID numbers the launch as the report shows it: "3", or "3.2" for the
// second worker of supervisor launch 3.
func (a AgentRow) ID() string {
	if a.Sub == 0 {
		return strconv.Itoa(a.N)
	}
	return strconv.Itoa(a.N) + "." + strconv.Itoa(a.Sub)
}

// Duration is the launch's length.
func (a AgentRow) Duration() time.Duration { return a.End.Sub(a.Start) }

// Label names the launch: agent, task and job, e.g.
// "code-implementer Task 02 (fix)".
func (a AgentRow) Label() string {
	s := a.Agent
	if a.Task != 0 {
		s += " " + taskName(a.Task)
	}
	if a.Job != "" {
		s += " (" + a.Job + ")"
	}
	return s
}

// GateDenials counts the denials of one gate (0: rules outside the seven
// gates).
type GateDenials struct {
	Gate  int
	Count int
	Last  string // the last denial's reason, on one line
}

// ProjectFile is a project file a task of the plan declares (Files:).
type ProjectFile struct {
	Path string
	// Tasks declaring it, and those of them whose code-implementer returned.
	Tasks       []int
	Implemented []int
	Exists      bool
	Known       bool // whether Exists was checked
}

// phaseSteps are the steps of the implementation loop, which belong to a
// plan phase.
var phaseSteps = map[string]bool{orchestrate.S4a: true, orchestrate.S4b: true, orchestrate.SF1: true, orchestrate.SF2: true, orchestrate.S4c: true}

// BuildReport assembles the report. It is pure: everything comes from in.
func BuildReport(in ReportInput) *Report {
	r := &Report{
		Command: in.Command, Request: in.Request, State: in.State,
		Finished: orchestrate.Finished(gates.State(in.State)), Now: in.Now.UTC(),
		Artifacts: in.Artifacts,
	}
	w := in.Workflow
	r.Limits = gates.DefaultSettings().Limits
	if w != nil {
		r.Limits = w.Settings().Limits
	}
	if w != nil && w.Request != "" {
		r.Request = w.Request
	}
	r.Start = in.Created.UTC()
	if r.Start.IsZero() && len(in.Events) > 0 {
		r.Start = in.Events[0].Time.UTC()
	}
	r.End = r.Now
	if r.Finished {
		// The entry into the final state (steps sets it), else the last
		// record.
		r.End = r.Start
		for _, ev := range in.Events {
			r.End = maxTime(r.End, ev.Time.UTC())
		}
	}
	r.Steps = steps(in.Events, r)
	if w != nil {
		r.Agents = agents(w, r.Now)
		r.Tokens = w.TokenUse()
	}
	if in.Coordinate != nil {
		r.Coordinate = coordinateReport(in.Coordinate, in, r)
		r.Tokens = in.Coordinate.TokenUse()
	}
	r.Sequential, r.Parallel = parallelism(topLevel(r.Agents))
	r.Phases = phases(w, r.Steps, r.Agents)
	for i, s := range r.Steps {
		if (s.State == orchestrate.S5a || s.State == orchestrate.S5b) && i+1 < len(r.Steps) {
			if next := r.Steps[i+1].State; next == orchestrate.S4a || next == orchestrate.Escalated {
				r.FinalFailures++
			}
		}
	}
	r.Denials, r.DenialsTotal = denials(in.Events)
	if w != nil && w.Plan != nil {
		r.PlanKnown = true
		r.ProjectFiles = projectFiles(w, r.Agents, in.Exists)
	}
	return r
}

// steps turns the log's state changes into spans. Several records of one
// change share its serial; the change counts once. It sets r.End to the
// entry into a final state.
func steps(events []state.Event, r *Report) []Span {
	type change struct {
		to    string
		at    time.Time
		phase int
		idx   int // index of the record in events
	}
	var changes []change
	var lastSerial uint64
	seen := false
	for i, ev := range events {
		if ev.Type == state.EventDeny || ev.Type == state.EventError {
			continue
		}
		if ev.StateAfter == "" || ev.StateAfter == ev.StateBefore {
			continue
		}
		if seen && ev.Serial == lastSerial {
			continue
		}
		seen, lastSerial = true, ev.Serial
		changes = append(changes, change{to: ev.StateAfter, at: ev.Time.UTC(), phase: ev.Phase, idx: i})
	}
	var spans []Span
	for i, c := range changes {
		if orchestrate.Finished(gates.State(c.to)) {
			if r.Finished && i == len(changes)-1 {
				r.End = c.at
			}
			continue
		}
		s := Span{State: c.to, Start: c.at}
		end := len(events)
		if i+1 < len(changes) {
			s.End = changes[i+1].at
			end = changes[i+1].idx
		} else {
			s.End = r.End
			s.Open = !r.Finished
		}
		if s.End.Before(s.Start) {
			s.End = s.Start
		}
		if phaseSteps[s.State] {
			s.Phase = spanPhase(events, c.idx, end, c.phase)
		}
		spans = append(spans, s)
	}
	return spans
}

// spanPhase is the plan phase of a span of the implementation loop: the
// phase of the record that leaves it (it names the phase it ends), else the
// last phase named inside it, else the one of the record that entered it.
func spanPhase(events []state.Event, from, to, entered int) int {
	if to < len(events) && events[to].Phase != 0 {
		return events[to].Phase
	}
	for i := to - 1; i > from; i-- {
		if events[i].Phase != 0 {
			return events[i].Phase
		}
	}
	return entered
}

func agents(w *orchestrate.Workflow, now time.Time) []AgentRow {
	out := make([]AgentRow, 0, len(w.Launches))
	for i, l := range w.Launches {
		a := AgentRow{
			N: i + 1, Agent: l.Agent, Job: l.Job, Task: l.Task, Phase: l.Phase, State: string(l.State),
			Background: l.Background, Status: l.Status, Result: l.Result,
			Start: l.Started.UTC(), End: l.Ended.UTC(), Tokens: l.Tokens,
		}
		if l.Status == gates.Running {
			a.End, a.Open = now, true
		}
		if l.Ended.IsZero() && !a.Open || a.End.Before(a.Start) {
			a.End = a.Start
		}
		out = append(out, a)
	}
	return out
}

// topLevel keeps the orchestrator's launches.
func topLevel(rows []AgentRow) []AgentRow {
	out := make([]AgentRow, 0, len(rows))
	for _, a := range rows {
		if a.Sub == 0 {
			out = append(out, a)
		}
	}
	return out
}

// parallelism returns the sum of the launches' durations and the length of
// the union of their intervals.
func parallelism(rows []AgentRow) (seq, par time.Duration) {
	type iv struct{ a, b time.Time }
	ivs := make([]iv, 0, len(rows))
	for _, r := range rows {
		seq += r.Duration()
		ivs = append(ivs, iv{r.Start, r.End})
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].a.Before(ivs[j].a) })
	var cur *iv
	for i := range ivs {
		v := ivs[i]
		if cur != nil && !v.a.After(cur.b) {
			cur.b = maxTime(cur.b, v.b)
			continue
		}
		if cur != nil {
			par += cur.b.Sub(cur.a)
		}
		cur = &v
	}
	if cur != nil {
		par += cur.b.Sub(cur.a)
	}
	return seq, par
}

func phases(w *orchestrate.Workflow, spans []Span, rows []AgentRow) []PhaseRow {
	byNum := map[int]*PhaseRow{}
	var order []int
	get := func(n int) *PhaseRow {
		p := byNum[n]
		if p == nil {
			p = &PhaseRow{Number: n}
			byNum[n] = p
			order = append(order, n)
		}
		return p
	}
	if w != nil && w.Plan != nil {
		for _, ph := range w.Plan.Phases {
			get(ph.Number).Title = ph.Title
		}
	}
	for i, s := range spans {
		if s.Phase == 0 {
			continue
		}
		p := get(s.Phase)
		if p.Start.IsZero() || s.Start.Before(p.Start) {
			p.Start = s.Start
		}
		p.End = maxTime(p.End, s.End)
		if s.State == orchestrate.S4b && i+1 < len(spans) {
			switch spans[i+1].State {
			case orchestrate.SF1:
				p.FixIterations++
			case orchestrate.Escalated:
				p.FixIterations++
				p.Escalations++
			}
		}
	}
	for _, a := range rows {
		if a.Phase != 0 && phaseSteps[a.State] {
			p := get(a.Phase)
			p.Launches++
			if !a.Open {
				p.Tokens.Count(a.Tokens)
			}
		}
	}
	sort.Ints(order)
	out := make([]PhaseRow, 0, len(order))
	for _, n := range order {
		out = append(out, *byNum[n])
	}
	return out
}

func denials(events []state.Event) ([]GateDenials, int) {
	by := map[int]*GateDenials{}
	total := 0
	for _, ev := range events {
		if ev.Type != state.EventDeny {
			continue
		}
		total++
		d := by[ev.Gate]
		if d == nil {
			d = &GateDenials{Gate: ev.Gate}
			by[ev.Gate] = d
		}
		d.Count++
		d.Last = denyReason(ev.Reason)
	}
	out := make([]GateDenials, 0, len(by))
	for _, d := range by {
		out = append(out, *d)
	}
	// Gates in order; the rules outside the gates (0) last.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Gate, out[j].Gate
		if (a == 0) != (b == 0) {
			return b == 0
		}
		return a < b
	})
	return out, total
}

// denyReason is a denial's reason on one line, without the "orch-hook: "
// and "[Gate N] " prefixes the table already shows.
func denyReason(s string) string {
	s = shorten.OneLine(s)
	s = strings.TrimPrefix(s, "orch-hook: ")
	if strings.HasPrefix(s, "[Gate ") {
		if i := strings.Index(s, "] "); i > 0 {
			s = s[i+2:]
		}
	}
	return s
}

func projectFiles(w *orchestrate.Workflow, rows []AgentRow, exists map[string]bool) []ProjectFile {
	returned := map[int]bool{}
	for _, a := range rows {
		if a.Agent == orchestrate.Implementer && a.Task != 0 && a.Status == gates.Returned {
			returned[a.Task] = true
		}
	}
	by := map[string]*ProjectFile{}
	for _, ph := range w.Plan.Phases {
		for _, t := range ph.Tasks {
			for _, f := range t.Files {
				pf := by[f]
				if pf == nil {
					pf = &ProjectFile{Path: f}
					pf.Exists, pf.Known = exists[f]
					by[f] = pf
				}
				pf.Tasks = append(pf.Tasks, t.Number)
				if returned[t.Number] {
					pf.Implemented = append(pf.Implemented, t.Number)
				}
			}
		}
	}
	out := make([]ProjectFile, 0, len(by))
	for _, pf := range by {
		out = append(out, *pf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
