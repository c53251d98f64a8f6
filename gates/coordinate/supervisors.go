package coordinate

import (
	"fmt"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// supervisorKey is where a supervisor's state goes in supervisor_state.
func supervisorKey(agent string) string {
	switch agent {
	case ResearchSupervisor:
		return SupervisorKeyResearch
	case ImplSupervisor:
		return SupervisorKeyImplementation
	}
	return SupervisorKeyTesting
}

// recordWorker notes a supervisor's worker as orch-hook observed it.
func (c *Workflow) recordWorker(l *Launch, output, failure string, env *Env) {
	var sup *Launch
	for _, s := range c.Launches {
		if s.AgentID == l.Parent {
			sup = s
		}
	}
	if sup == nil {
		return
	}
	if sup.Agent == TestSupervisor {
		c.recordStageWorker(l, WorkerRecord{}, failure, env)
		return
	}
	st := c.supervisor(sup)
	rec := WorkerRecord{WorkerID: fmt.Sprintf("%s_%d", strings.ReplaceAll(l.Agent, "-", "_"), len(st.Workers)+len(st.Tracks)+1), AgentID: l.AgentID, Status: WorkerCompleted, OutputPath: output, DurationMs: l.duration()}
	if rec.DurationMs <= 0 {
		rec.DurationMs = env.Now.Sub(l.Started).Milliseconds() // recorded before the launch is marked ended
	}
	if failure != "" {
		rec.Status, rec.Error = WorkerFailed, failure
	}
	switch sup.Agent {
	case ImplSupervisor:
		c.fillTrack(&rec, l, env.Now)
		st.Tracks = append(st.Tracks, rec)
	default:
		rec.Topic = unitLabel(l.Unit)
		if sup.Agent == ResearchSupervisor && output != "" && failure == "" && env.Read != nil {
			if b, err := jsonenc.Marshal(reportMetadata(string(env.Read(output)))); err == nil {
				rec.Metadata = b
			}
		}
		st.Workers = append(st.Workers, rec)
	}
	st.WorkerCount = len(st.Workers) + len(st.Tracks)
	st.WorkerStatus = append(st.WorkerStatus, rec.Status)
}

// TrackMetadata is an implementation track's tracks[].metadata (seed 003:
// "track-specific", required of a completed track), from observed facts
// only (README, "Supervisors"): the plan's phase (its number, its
// heading's title, its dependencies), the worker's own result line and,
// when blocked, the first line of its report, and the launch and return
// on the hooks' clock. The track's duration is its duration_ms.
type TrackMetadata struct {
	Phase        int       `json:"phase"`
	Title        string    `json:"title,omitempty"`
	Dependencies []int     `json:"dependencies"`
	Result       string    `json:"result,omitempty"` // COMPLETE or BLOCKED; none when its line did not read
	Blocker      string    `json:"blocker,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
}

// blockedPrefix starts a blocked track's error (complete.go).
const blockedPrefix = "track blocked: "

// fillTrack sets a track's record from the launch it belongs to and the
// writes of its agent: track id and name, files_modified (its project
// files, in the order first written) and metadata. ended is the return's
// time when the launch is not marked ended yet.
func (c *Workflow) fillTrack(r *WorkerRecord, l *Launch, ended time.Time) {
	r.TrackName, r.TrackID = unitLabel(l.Unit), ""
	if l.Track > 0 {
		r.TrackID = fmt.Sprintf("track_%d", l.Track)
	}
	r.FilesModified = c.projectFiles(r.AgentID)
	md := TrackMetadata{Phase: l.Track, Title: c.PhaseTitles[l.Track], Dependencies: append([]int{}, c.TrackDeps[l.Track]...), StartedAt: l.Started, EndedAt: l.Ended}
	if md.EndedAt.IsZero() {
		md.EndedAt = ended
	}
	if l.Result == "COMPLETE" || l.Result == "BLOCKED" {
		md.Result = l.Result
	}
	if md.Result == "BLOCKED" {
		md.Blocker = strings.TrimPrefix(r.Error, blockedPrefix)
	}
	if b, err := jsonenc.Marshal(md); err == nil {
		r.Metadata = b
	}
}

// refreshWorker rewrites a supervisor's record of the worker l now holds
// with l's unit, track and duration, after link moved it: what the agent
// reported (its result, error, writes) stays with the agent.
func (c *Workflow) refreshWorker(l *Launch) {
	if l.Parent == "" || l.AgentID == "" {
		return
	}
	for _, st := range c.Supervisors {
		for i := range st.Workers {
			if r := &st.Workers[i]; r.AgentID == l.AgentID {
				r.Topic = unitLabel(l.Unit)
				if d := l.duration(); d > 0 {
					r.DurationMs = d
				}
			}
		}
		for i := range st.Tracks {
			if r := &st.Tracks[i]; r.AgentID == l.AgentID {
				c.fillTrack(r, l, time.Time{})
				if d := l.duration(); d > 0 {
					r.DurationMs = d
				}
			}
		}
		if st.AgentID == l.Parent && len(st.Stages) > 0 {
			c.syncStages(st)
		}
	}
}

// tracksNotRun lists the plan's tracks that no supervisor's worker ran
// (returned, blocked or rejected) although every track they depend on
// completed: a supervisor may skip a track only when a dependency failed.
func (c *Workflow) tracksNotRun() []int {
	ran := map[int]bool{}
	for _, l := range c.Launches {
		if l.Parent != "" && l.Track > 0 && l.Status != gates.Running {
			ran[l.Track] = true
		}
	}
	done := c.tracksDone()
	var out []int
	for _, t := range trackNumbers(c.TrackDeps) {
		if !ran[t] && len(TrackBlockedBy(t, c.TrackDeps, done)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// workerSpan is the observed wall-clock time of a supervisor's workers:
// from the first launch to the last return.
func (c *Workflow) workerSpan(parent string) time.Duration {
	var first, last time.Time
	for _, l := range c.Launches {
		if l.Parent != parent || parent == "" || l.Ended.IsZero() {
			continue
		}
		if first.IsZero() || l.Started.Before(first) {
			first = l.Started
		}
		if l.Ended.After(last) {
			last = l.Ended
		}
	}
	return last.Sub(first)
}

func (c *Workflow) supervisor(sup *Launch) *SupervisorState {
	if c.Supervisors == nil {
		c.Supervisors = map[string]*SupervisorState{}
	}
	key := supervisorKey(sup.Agent)
	st := c.Supervisors[key]
	if st == nil || (sup.AgentID != "" && st.AgentID != sup.AgentID) {
		// A relaunched supervisor is judged by its own workers only.
		id := strings.ReplaceAll(sup.Agent, "-", "_") + "_" + sup.Started.UTC().Format("20060102_150405")
		st = &SupervisorState{SupervisorName: sup.Agent, SupervisorID: id, AgentID: sup.AgentID}
		c.Supervisors[key] = st
	}
	return st
}

// supervised checks a supervisor's SUPERVISOR_COMPLETE against what
// orch-hook observed of its workers, and advances.
func (c *Workflow) supervised(l *Launch, text string, env *Env) (string, string) {
	res, failed, err := ParseSupervisor(text)
	if err != nil {
		return fmt.Sprintf("your report must end with `%s {json}` (or `%s {json}`): %v.", LineSupervisorComplete, LineSupervisorFailed, err), ""
	}
	st := c.supervisor(l)
	if l.Agent == TestSupervisor {
		return c.supervisedTesting(l, st, res, failed) // its stages (stages.go)
	}
	workers := append(append([]WorkerRecord(nil), st.Workers...), st.Tracks...)
	if failed {
		c.LastError, c.FailedState = "supervisor failed: "+strings.Join(res.Errors, "; "), c.Current
		return "", fmt.Sprintf("[coordinate %s] %s failed: %s | nothing advanced; relaunch it", c.Current, l.Agent, gates.OrText(strings.Join(res.Errors, "; "), "no errors given"))
	}
	for _, w := range c.Launches {
		if w.Parent == l.AgentID && w.Status == gates.Running {
			return fmt.Sprintf("your worker %s (%s) has not returned; wait for every worker before you aggregate.", w.Agent, gates.OrText(unitLabel(w.Unit), w.ToolUseID)), ""
		}
	}
	if l.Agent == ImplSupervisor {
		if missing := c.tracksNotRun(); len(missing) > 0 {
			return fmt.Sprintf("the plan's track(s) %s were not run, and nothing they depend on failed; launch them (each prompt starting `Track N: <title>`) before you aggregate.", joinInts(missing)), ""
		}
	}
	proceed, failures := PartialFailure(workers)
	if !proceed {
		return fmt.Sprintf("fewer than %d of your workers succeeded (%s): report SUPERVISOR_FAILED with their errors (your instructions: do not relaunch failed workers).", MinSuccessfulWorkers, strings.Join(failures, "; ")), ""
	}
	// Paths compare in one form: relative to the project, as the workers'
	// REPORT_CREATED lines were recorded.
	sizes := map[string]int{}
	checked := *res
	checked.ReportsCreated = nil
	var rels []string
	for _, p := range res.ReportsCreated {
		rel, why := c.checkArtifact(p, c.Paths.ReportsDir, l, env)
		if why != "" {
			return why, ""
		}
		sizes[rel] = int(env.Inspect(p).Size)
		checked.ReportsCreated = append(checked.ReportsCreated, rel)
		rels = append(rels, rel)
	}
	if vio := CheckAggregation(&checked, workers, sizes); len(vio) > 0 {
		return "the aggregated metadata breaks the rules: " + strings.Join(vio, " "), ""
	}
	for _, rel := range rels {
		c.noteReport(rel)
	}
	// What failed is what orch-hook observed, whatever the supervisor
	// said (seed 003 keeps it in the aggregated metadata); so are the
	// files the tracks modified (CheckAggregation held the supervisor's
	// count to it).
	res.PartialFailures = FailureList(failures)
	if l.Agent == ImplSupervisor {
		res.FilesModified = len(distinctFiles(st.Tracks))
	}
	st.AggregatedMetadata = res
	note := ""
	if l.Agent == ResearchSupervisor {
		if len(c.Reports) < MinSuccessfulWorkers {
			return fmt.Sprintf("only %d report(s) verified; research needs at least %d.", len(c.Reports), MinSuccessfulWorkers), ""
		}
		total := 0
		for _, s := range sizes {
			total += s
		}
		red := ContextReduction(sizes, res.AggregatedChars())
		note = fmt.Sprintf(contextReductionNote, red, total, res.AggregatedChars())
		if red < ContextReductionTarget {
			note += fmt.Sprintf(" (below the %.0f%% target: a warning only)", ContextReductionTarget)
		}
		c.ContextReduction = note
		if len(failures) > 0 {
			note += "; partial failures: " + strings.Join(failures, "; ")
		}
		t, err := c.fire(OnResearchVerified)
		if err != nil {
			return err.Error(), ""
		}
		c.ended(t)
		return "", fmt.Sprintf("[coordinate research] %s: %d reports verified, %s -> %s | next: %s", l.Agent, len(res.ReportsCreated), note, t.To, c.Next())
	}
	// The implementation supervisor; one clock for both sides: the hooks' own
	// launch and return times.
	var ds []int64
	for _, w := range c.Launches {
		if w.Parent == l.AgentID && !w.Ended.IsZero() {
			ds = append(ds, w.Ended.Sub(w.Started).Milliseconds())
		}
	}
	seq, par, pct := TimeSavings(ds, c.workerSpan(l.AgentID).Milliseconds())
	c.TimeSavings = fmt.Sprintf(timeSavingsNote, seq, par, pct)
	if len(failures) > 0 {
		note = "; partial failures: " + strings.Join(failures, "; ")
	}
	if _, err := c.fire(OnImplemented); err != nil {
		return "", fmt.Sprintf("[coordinate implement] %s refused: %v", l.Agent, err)
	}
	return "", fmt.Sprintf("[coordinate implement] %s: %d tracks, %s%s -> test | next: %s", l.Agent, len(workers), c.TimeSavings, note, c.Next())
}

// ReportMetadata is a research worker's workers[].metadata (seed 003),
// read from the report it wrote, not from what its supervisor says: the
// first heading, the first paragraph (clipped to about 50 words) and the
// list items under a heading that names findings (at most 12).
type ReportMetadata struct {
	Title       string   `json:"title"`
	Summary     string   `json:"summary"`
	KeyFindings []string `json:"key_findings"`
}

// maxKeyFindings bounds the findings kept per report (seed 003: 8-12
// merged across workers).
const maxKeyFindings = 12

// reportMetadata reads a report's metadata (fenced code blocks skipped).
func reportMetadata(text string) ReportMetadata {
	md := ReportMetadata{KeyFindings: []string{}}
	var para []string
	inFindings, fence, paraDone := false, false, false
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if strings.HasPrefix(line, "#") {
			heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
			if md.Title == "" {
				md.Title = shorten.Runes(heading, 120)
			}
			inFindings = strings.Contains(strings.ToLower(heading), "finding")
			if len(para) > 0 {
				paraDone = true
			}
			continue
		}
		if inFindings && (strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ")) && len(md.KeyFindings) < maxKeyFindings {
			md.KeyFindings = append(md.KeyFindings, shorten.Runes(strings.TrimSpace(line[2:]), 200))
			continue
		}
		switch {
		case paraDone:
		case line == "":
			if len(para) > 0 {
				paraDone = true
			}
		case !strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "* "):
			para = append(para, line)
		}
	}
	words := strings.Fields(strings.Join(para, " "))
	if len(words) > 50 {
		words = append(words[:50], "…")
	}
	md.Summary = shorten.Runes(strings.Join(words, " "), 400)
	return md
}
