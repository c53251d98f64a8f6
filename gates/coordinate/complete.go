package coordinate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (c *Workflow) postAgent(call *gates.Call) gates.Outcome {
	l := c.byTool(call.ToolUseID)
	if l == nil {
		return gates.Outcome{}
	}
	o := gates.Outcome{}
	if call.LinkAgentID != "" && (l.AgentID != call.LinkAgentID || !l.Linked) {
		c.link(l, call.LinkAgentID)
		o.Changed = true
	}
	if call.Status == "completed" && call.DurationMs > 0 && l.DurationMs != call.DurationMs {
		l.DurationMs = call.DurationMs
		c.refreshWorker(l)
		o.Changed = true
	}
	if call.Status == "async_launched" && !l.Background {
		l.Background = true
		o.Changed = true
	}
	if l.Notice != "" && call.Status == "completed" {
		o.Context, l.Notice = l.Notice, ""
		o.Changed = true
	}
	return o
}

// link ties a launch to its agent id, as PostToolUse reports it. Parallel
// foreground agents of one kind may have stopped before it, each taken for
// the oldest unlinked launch of its kind: whatever was recorded for the
// agent moves to its true launch, and a guess the launch held moves to
// another unlinked one (its own PostToolUse corrects it in turn).
func (c *Workflow) link(l *Launch, agentID string) {
	touched := []*Launch{l}
	if holder := c.byAgent(agentID); holder != nil && holder != l {
		swapResults(l, holder)
		touched = append(touched, holder)
	} else if l.AgentID != "" && l.AgentID != agentID {
		for _, u := range c.Launches {
			if u != l && !u.Linked && u.AgentID == "" && u.Status == gates.Running && u.Agent == l.Agent {
				swapResults(l, u)
				touched = append(touched, u)
				break
			}
		}
	}
	l.AgentID, l.Linked = agentID, true
	for _, t := range touched {
		c.refreshWorker(t)
	}
}

var reUnitPrefix = gates.LazyRegexp(`(?i)^\s*(?:topic|stage|track\s+\d+)\s*:\s*`)

// unitLabel is a worker's topic, stage or track title without the prefix
// its prompt starts with ("Topic: caching" -> "caching").
func unitLabel(unit string) string {
	if rest := reUnitPrefix.Regexp().FindStringIndex(unit); rest != nil && rest[1] < len(unit) {
		return unit[rest[1]:]
	}
	return unit
}

// swapResults exchanges what was recorded of two launches' agents, keeping
// each launch's own identity (tool use, unit, start, parent).
func swapResults(a, b *Launch) {
	a.AgentID, b.AgentID = b.AgentID, a.AgentID
	a.Status, b.Status = b.Status, a.Status
	a.Ended, b.Ended = b.Ended, a.Ended
	a.Notice, b.Notice = b.Notice, a.Notice
	a.DurationMs, b.DurationMs = b.DurationMs, a.DurationMs
	a.Result, b.Result = b.Result, a.Result
	a.Output, b.Output = b.Output, a.Output
	a.Tokens, b.Tokens = b.Tokens, a.Tokens
}

// deliver hands a background agent's line over with its notification.
func (c *Workflow) deliver(call *gates.Call) gates.Outcome {
	if call.Event != gates.UserPromptSubmit || !gates.IsNotification(call.Prompt) {
		return gates.Outcome{}
	}
	l := c.byAgent(gates.FirstMatch(gates.ReNotifyID, call.Prompt))
	if l == nil {
		l = c.byTool(gates.FirstMatch(gates.ReNotifyTool, call.Prompt))
	}
	if l == nil || l.Notice == "" {
		return gates.Outcome{}
	}
	o := gates.Outcome{Changed: true, Context: l.Notice}
	l.Notice = ""
	return o
}

// notifiedFailure closes a running launch whose task notification says
// it ended otherwise than completed (failed, killed): a transient failure
// (README, "Failures and retries"), counted as a failed Agent call is.
func (c *Workflow) notifiedFailure(call *gates.Call, env *Env) (gates.Outcome, bool) {
	status := gates.FirstMatch(gates.ReNotifyStatus, call.Prompt)
	if status == "" || status == "completed" {
		return gates.Outcome{}, false
	}
	l := c.byAgent(gates.FirstMatch(gates.ReNotifyID, call.Prompt))
	if l == nil {
		l = c.byTool(gates.FirstMatch(gates.ReNotifyTool, call.Prompt))
	}
	if l == nil || (l.Status != gates.Running && l.Status != gates.Stale) {
		return gates.Outcome{}, false
	}
	l.Status, l.Ended = gates.Failed, env.Now
	o := gates.Outcome{Changed: true}
	o.Log(gates.Record{Type: gates.RecComplete, AgentID: l.AgentID, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "ended (transient): " + shorten.Runes(shorten.OneLine(status), 40)})
	if l.Parent == "" {
		o.Context = c.failed(l, gates.Transient, fmt.Sprintf("ended with status %q", shorten.Runes(status, 40)), env, &o)
	}
	return o, true
}

// subagentStop verifies what a coordinate agent reports and advances.
func (c *Workflow) subagentStop(call *gates.Call, env *Env) gates.Outcome {
	name, ok := coordAgent(call.AgentType)
	if !ok || call.AgentType == "" {
		return gates.Outcome{}
	}
	l := c.byAgent(call.AgentID)
	if l == nil {
		// Not tied yet (a foreground agent's PostToolUse comes later): the
		// oldest running launch of its kind.
		for _, cand := range c.Launches {
			if cand.Status == gates.Running && cand.Agent == name && cand.AgentID == "" && !cand.Linked {
				l = cand
				break
			}
		}
		if l == nil {
			return gates.Outcome{}
		}
		l.AgentID = call.AgentID
	}
	if l.Status != gates.Running {
		return gates.Outcome{}
	}
	if env.Tokens != nil {
		// Each stop's transcript holds all the agent's responses so far:
		// the last one read counts.
		l.Tokens = env.Tokens.Copy()
	}
	// A nudged agent's earlier report is read with this message, so an
	// answer holding only the result line completes it.
	text := gates.JoinKept(gates.TakeKept(&c.Kept, call.AgentID), call.Text)
	problem, line := c.verify(l, text, env)
	o := gates.Outcome{Changed: true}
	if problem != "" {
		if !slices.Contains(c.Nudged, call.AgentID) {
			c.Nudged = append(c.Nudged, call.AgentID)
			c.Kept = gates.Keep(c.Kept, call.AgentID, text)
			// To the agent, not the orchestrator: no state to name.
			o.Refuse(gates.Block, &gates.Refusal{Rule: problem + " Fix it, then reply with your complete report again, ending with the result line; the orchestrator cannot go on without it."}, gates.Record{AgentID: call.AgentID, AgentType: name})
			return o
		}
		l.Status, l.Ended = gates.Unrecognized, env.Now
		if l.Parent != "" {
			c.recordWorker(l, "", problem, env)
			o.Log(gates.Record{Type: gates.RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "worker failed: " + problem})
			return o
		}
		o.Log(gates.Record{Type: gates.RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "rejected (permanent): " + problem})
		c.notify(l, c.failed(l, gates.Permanent, "returned, but "+strings.TrimSuffix(problem, ".")+": nothing advanced", env, &o), &o)
		return o
	}
	if l.Status == gates.Running {
		l.Status = gates.Returned // a worker's negative result (BLOCKED, a failed stage) keeps Failed
	}
	l.Ended = env.Now
	o.Log(gates.Record{Type: gates.RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "verified"})
	if line != "" {
		if strings.Contains(line, " -> ") {
			o.Log(gates.Record{Type: gates.RecTransition, Reason: line})
		}
		if l.Parent == "" {
			c.notify(l, line, &o)
		}
	}
	return o
}

func (c *Workflow) notify(l *Launch, line string, o *gates.Outcome) {
	if l.Parent != "" {
		return // a supervisor's worker: the supervisor reports
	}
	// A background agent's line goes with its task notification, a
	// foreground agent's with its PostToolUse (which follows SubagentStop):
	// SubagentStop output never reaches the orchestrator.
	l.Notice = line
}

// verify checks an agent's result; it returns a problem (the step does not
// advance) or the checkpoint line.
func (c *Workflow) verify(l *Launch, text string, env *Env) (problem, line string) {
	switch l.Agent {
	case ResearchSpecialist, DebugAnalyst, DocWriter:
		dir := map[string]string{ResearchSpecialist: c.Paths.ReportsDir, DebugAnalyst: c.Paths.DebugDir, DocWriter: c.Paths.SummariesDir}[l.Agent]
		paths := ParseReportCreated(text)
		if len(paths) == 0 {
			return fmt.Sprintf("your report must end with `%s <path>` naming the file you wrote under %s.", LineReportCreated, dir), ""
		}
		// One launch owes one file: the last REPORT_CREATED line counts, so
		// one agent cannot answer for every topic.
		paths = paths[len(paths)-1:]
		var rels []string
		for _, p := range paths {
			rel, why := c.checkArtifact(p, dir, l, env)
			if why != "" {
				return why, ""
			}
			rels = append(rels, rel)
		}
		switch {
		case l.Parent != "":
			l.Output = rels[0]
			c.recordWorker(l, rels[0], "", env)
			return "", ""
		case l.Agent == ResearchSpecialist:
			l.Output = rels[0]
			for _, r := range rels {
				c.noteReport(r)
			}
			if len(c.Reports) < c.Topics {
				return "", fmt.Sprintf("[coordinate research] report verified: %s (%d/%d) | waiting for the other topics", strings.Join(rels, ", "), len(c.Reports), c.Topics)
			}
			t, err := c.fire(OnResearchVerified)
			if err != nil {
				return err.Error(), ""
			}
			c.ended(t)
			return "", fmt.Sprintf("[coordinate research] %d/%d reports verified -> %s | next: %s", len(c.Reports), c.Topics, t.To, c.Next())
		case l.Agent == DebugAnalyst:
			if _, err := c.fire(OnDebugVerified); err != nil {
				return err.Error(), ""
			}
			l.Output = rels[0]
			round := "first debug round (debug-only)"
			if c.Retries > 0 {
				round = fmt.Sprintf("retry %d/%d", c.Retries, MaxDebugRetries)
			}
			return "", fmt.Sprintf("[coordinate debug] report %s verified -> test | %s: %s", rels[0], round, c.Next())
		default:
			if _, err := c.fire(OnSummaryVerified); err != nil {
				return err.Error(), ""
			}
			l.Output = rels[0]
			c.Outcome = "completed"
			return "", fmt.Sprintf("[coordinate document] summary %s verified -> complete | the workflow is complete", rels[0])
		}
	case PlanArchitect:
		p := planCreated(text)
		if p == "" {
			return fmt.Sprintf("your report must end with `%s <path>` naming the plan (%s).", LinePlanCreated, c.Paths.PlanPath), ""
		}
		rel, why := c.checkArtifact(p, c.Paths.PlansDir, l, env)
		if why != "" {
			return why, ""
		}
		if rel != c.Paths.PlanPath {
			return fmt.Sprintf("the plan is expected at %s; found %s.", c.Paths.PlanPath, rel), ""
		}
		if c.Scope == ScopeFullImplementation && env.Read != nil {
			text := string(env.Read(rel))
			scale, problems := PlanScale(text)
			if len(problems) > 0 {
				return "the plan's size declarations do not read one way: " + strings.Join(problems, "; ") + ".", ""
			}
			deps := TrackDependencies(text)
			if problems := CheckTrackDependencies(deps); len(problems) > 0 {
				return "the plan's phase dependencies cannot all be met: " + strings.Join(problems, " ") + " Fix the `dependencies: [N]` lines.", ""
			}
			c.Scale, c.TrackDeps, c.PhaseTitles = &scale, deps, PhaseTitles(text)
		}
		t, err := c.fire(OnPlanVerified)
		if err != nil {
			return err.Error(), ""
		}
		l.Output = rel
		if t.To == CComplete {
			c.Outcome = "completed at plan (" + c.Scope + ")"
		}
		return "", fmt.Sprintf("[coordinate plan] %s verified -> %s | next: %s", rel, t.To, c.Next())
	case ImplementationExec:
		if l.Parent != "" {
			switch gates.FindResult(text, []string{gates.LineImplComplete, gates.LineImplBlocked}) {
			case gates.LineImplComplete:
				l.Result = "COMPLETE"
				c.recordWorker(l, "", "", env)
			case gates.LineImplBlocked:
				l.Status, l.Result = gates.Failed, "BLOCKED"
				c.recordWorker(l, "", blockedPrefix+shorten.Runes(gates.SummaryOf(text, gates.LineImplComplete, gates.LineImplBlocked), 120), env)
			default:
				return gates.MissingLineProblem(text, []string{gates.LineImplComplete, gates.LineImplBlocked}), ""
			}
			return "", ""
		}
		switch gates.FindResult(text, []string{gates.LineImplComplete, gates.LineImplBlocked}) {
		case gates.LineImplComplete:
			l.Result = "COMPLETE"
			if _, err := c.fire(OnImplemented); err != nil {
				return "", "[coordinate implement] IMPLEMENTATION STATUS: COMPLETE refused: " + err.Error()
			}
			return "", "[coordinate implement] IMPLEMENTATION STATUS: COMPLETE -> test | next: " + c.Next()
		case gates.LineImplBlocked:
			l.Result = "BLOCKED"
			return "", "[coordinate implement] IMPLEMENTATION STATUS: BLOCKED | relaunch implementation-executor once the blocker is cleared"
		}
		return gates.MissingLineProblem(text, []string{gates.LineImplComplete, gates.LineImplBlocked}), ""
	case TestSpecialist:
		if l.Parent != "" {
			return c.stageReturned(l, text, env), "" // a test stage (stages.go)
		}
		pass, ok := ParseTests(text)
		if !ok {
			return gates.MissingLineProblem(text, []string{LineTestsPass, LineTestsFail}), ""
		}
		l.Result = map[bool]string{true: "PASS", false: "FAIL"}[pass]
		return "", c.tested(pass, shorten.Runes(gates.SummaryOf(text, LineTestsPass, LineTestsFail), 120))
	case ResearchSupervisor, ImplSupervisor, TestSupervisor:
		return c.supervised(l, text, env)
	}
	return "", ""
}

// ended records how a research-only workflow ended.
func (c *Workflow) ended(t gates.Transition) {
	if t.To == CComplete {
		c.Outcome = "completed at research (" + c.Scope + ")"
	}
}

// tested applies a test result.
func (c *Workflow) tested(pass bool, why string) string {
	if pass {
		c.LastError, c.FailedState = "", "" // the failure the tests showed is fixed
		t, err := c.fire(OnTestsPass)
		if err != nil {
			return "[coordinate test] TESTS: PASS refused: " + err.Error()
		}
		if t.To == CComplete {
			c.Outcome = "completed (debug-only: tests pass)"
		}
		return fmt.Sprintf("[coordinate test] TESTS: PASS -> %s | next: %s", t.To, c.Next())
	}
	c.LastError, c.FailedState = gates.OrText(why, "tests failed"), CTest
	t, err := c.fire(OnTestsFail)
	if err != nil {
		return "[coordinate test] TESTS: FAIL refused: " + err.Error()
	}
	if t.To == CDebug {
		c.Retries++ // a retry starts: debug, then test again
	}
	if t.To == CComplete {
		c.Outcome = fmt.Sprintf("completed with failing tests after %d debug retries: %s", c.Retries, c.LastError)
		return fmt.Sprintf("[coordinate test] TESTS: FAIL -> complete | debug retries %d/%d used; the failure is recorded: %s", c.Retries, MaxDebugRetries, c.LastError)
	}
	return fmt.Sprintf("[coordinate test] TESTS: FAIL -> debug | %s; next: %s", c.LastError, c.Next())
}

func planCreated(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := gates.Marker(lines[i], LinePlanCreated); ok {
			return artifactPath(rest)
		}
	}
	return ""
}

// checkArtifact confines a path that l reports to the project and to dir,
// and checks that it exists, is not empty, and was written by l's agent
// (or a supervisor's worker) with its write tool, unchanged since
// (checkWriter); the problem says what was expected, what was found, and
// what to do.
func (c *Workflow) checkArtifact(path, dir string, l *Launch, env *Env) (string, string) {
	dir = strings.TrimSuffix(dir, "/")
	fc := env.Inspect(path)
	if !fc.Inside {
		return "", fmt.Sprintf("%s is outside the project (a `..` or a symlink leaving it); artifacts go under %s.", path, dir)
	}
	if !gates.Under(fc.Rel, dir) {
		return "", fmt.Sprintf("%s is not under %s, where this step's artifacts go.", fc.Rel, dir)
	}
	if !fc.Exists || fc.Size == 0 {
		found := env.List(dir)
		what := "does not exist"
		if fc.Exists {
			what = "is empty"
		}
		return "", fmt.Sprintf("expected the file %s, but it %s; %s holds: %s. Check that the file was written where the prompt said.", fc.Rel, what, dir, gates.OrText(strings.Join(found, ", "), "nothing"))
	}
	if why := c.checkWriter(fc.Rel, l, env); why != "" {
		return "", why
	}
	return fc.Rel, ""
}

// noteReport records a verified research report. A report at another name
// than the pre-calculated one (in the reports directory: checkArtifact
// saw to it) takes that path's place in Paths.ReportPaths, the one with
// its number (NNN_) else the first not yet verified, so report_paths
// names the files that exist (seed 002's discovery fallback).
func (c *Workflow) noteReport(rel string) {
	if slices.Contains(c.Reports, rel) {
		return
	}
	c.Reports = append(c.Reports, rel)
	paths := c.Paths.ReportPaths
	if slices.Contains(paths, rel) {
		return
	}
	open := func(p string) bool { return !slices.Contains(c.Reports, p) }
	if n, ok := ReportNumber(path.Base(rel)); ok {
		for i, p := range paths {
			if m, ok := ReportNumber(path.Base(p)); ok && m == n && open(p) {
				paths[i] = rel
				return
			}
		}
	}
	for i, p := range paths {
		if open(p) {
			paths[i] = rel
			return
		}
	}
	c.Paths.ReportPaths = append(paths, rel)
}
