package status

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// style colours text on a terminal and is a no-op otherwise.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
func (s style) bold(t string) string   { return s.wrap("1", t) }
func (s style) dim(t string) string    { return s.wrap("2", t) }
func (s style) red(t string) string    { return s.wrap("31", t) }
func (s style) green(t string) string  { return s.wrap("32", t) }
func (s style) yellow(t string) string { return s.wrap("33", t) }
func (s style) cyan(t string) string   { return s.wrap("36", t) }
func (s style) current(t string) string {
	return s.wrap("1;7", t)
}

// flow is the compact phase flow of README, "The orchestrate workflow", extended
// with the implementation loop's steps and escalation. Each {state} marks
// the place where that state is drawn; Text marks the current one.
var flow = []string{
	`{0a} ─┬─ CLEAR ─────────────────────────────────► {2} ──► {3} approval ──► 4a`,
	`      ├─ QUESTIONS ──► 0a (3 rounds in all)`,
	`      └─ DISCOVERY ──► {1} ──► {0b} ─┬─ CLEAR ──────► 2`,
	`                                     ├─ QUESTIONS ──► 0b`,
	`                                     └─ DISCOVERY ──► 1 (2 in all)`,
	`{4a} ──► {4b} ─┬─ PASS ──► {4c} ─┬─► 4a (next phase)`,
	`               │                 └─► 5a (all phases done)`,
	`               └─ FAIL ──► {F1} ──► {F2} ──► 4b   (3rd FAIL ──► {escalated})`,
	`{5a} ─┬─ PASS + UX/DX ──► {5b} ─┬─ PASS ──► {6} ──► {complete}`,
	`      ├─ PASS ──────────────────┘`,
	`      └─ FAIL ──► 4a (fix phase)     5b FAIL ──► 4a (fix phase; 3rd ──► escalated)`,
}

// drawFlow renders the flow with the current state marked "[4a]" (and
// highlighted on a terminal).
func drawFlow(current string, s style) []string {
	out := make([]string, 0, len(flow))
	for _, line := range flow {
		var b strings.Builder
		for {
			i := strings.Index(line, "{")
			if i < 0 {
				b.WriteString(line)
				break
			}
			j := strings.Index(line[i:], "}")
			name := line[i+1 : i+j]
			b.WriteString(line[:i])
			// The braces' two columns are kept, so the drawing stays aligned.
			if name == current {
				b.WriteString(s.current("[" + name + "]"))
			} else {
				b.WriteString(" " + name + " ")
			}
			line = line[i+j+1:]
		}
		out = append(out, b.String())
	}
	return out
}

// Text draws the report for people on one screen.
func Text(w io.Writer, r *Report, color bool) {
	s := style{on: color}
	if r.Workflow == nil {
		fmt.Fprintf(w, "No workflow is active in %s.\nStart one in Claude Code with /orch-hook:orchestrate <request> or /orch-hook:coordinate <description>.\n", r.Project)
		writeProtection(w, r, s)
		return
	}
	wf := r.Workflow
	fmt.Fprintf(w, "%s %s workflow: %s\n", s.bold("orch-hook"), wf.Command, s.bold(shorten.Runes(shorten.OneLine(wf.Request), 90)))
	age := Duration(r.Now.Sub(wf.StartedAt))
	owner := ""
	if wf.OwnerSession != "" {
		owner = " · session " + shorten.Runes(wf.OwnerSession, 13)
	}
	fmt.Fprintf(w, "%s\n", s.dim(fmt.Sprintf("started %s ago · updated %s ago%s · serial %d", age, Duration(r.Now.Sub(wf.UpdatedAt)), owner, wf.Serial)))
	writeProtection(w, r, s)
	writeConfig(w, r, s)

	switch wf.State {
	case "complete", "aborted":
		fmt.Fprintf(w, "\nState: %s (finished; nothing is gated)\n", s.bold(wf.State))
	default:
		fmt.Fprintf(w, "\nNow:  %s", s.bold(wf.Where))
		if wf.WaitingOn != "" {
			fmt.Fprintf(w, "  %s", s.yellow("(waiting for the user: "+wf.WaitingOn+")"))
		}
		fmt.Fprintln(w)
		if r.Next != "" {
			fmt.Fprintf(w, "Next: %s\n", s.cyan(r.Next))
		}
	}
	if wf.Command != "orchestrate" {
		fmt.Fprintf(w, "Completed: %s\n", strings.Join(wf.CompletedStates, ", "))
		if c := r.Coordinate; c != nil {
			writeCoordinate(w, r, c, s)
		}
		writeFailures(w, r, s)
		for _, k := range r.KnownIssues {
			fmt.Fprintf(w, "Known issue: %s\n", k)
		}
		writeRecent(w, r, s)
		return
	}
	fmt.Fprintln(w)
	for _, line := range drawFlow(wf.State, s) {
		fmt.Fprintln(w, "  "+line)
	}

	if p := r.Plan; p != nil {
		fmt.Fprintln(w)
		for _, ph := range p.Phases {
			title := fmt.Sprintf("Phase %d of %d: %s", ph.Number, len(p.Phases), ph.Title)
			if ph.Current {
				title = s.bold(title + "  ◀ current")
			}
			fmt.Fprintln(w, title)
			for _, t := range ph.Tasks {
				box := "[ ]"
				if t.Checked {
					box = s.green("[x]")
				}
				status := t.Status
				switch {
				case t.Failing && status != "complete":
					status = s.red("failing")
				case status == "running":
					status = s.cyan("running")
				case status == "complete":
					status = s.green("complete")
				case status == "blocked":
					status = s.yellow("blocked")
				}
				fmt.Fprintf(w, "  %s Task %02d: %-40s %s\n", box, t.Number, shorten.Runes(t.Title, 40), status)
				if wf.State == "3" {
					// Before the approval: what the gates will enforce, as read.
					fmt.Fprintf(w, "        %s\n", s.dim(taskReading(t)))
				}
			}
		}
		if p.Awaiting != "" {
			fmt.Fprintf(w, "  %s\n", s.yellow("waiting for a "+p.Awaiting+" phase to be appended to MASTER_PLAN.md"))
		}
	}

	fmt.Fprintln(w)
	var parts []string
	for _, c := range r.Counters {
		txt := fmt.Sprintf("%s %d/%d", c.Name, c.Value, c.Limit)
		if c.Value >= c.Limit {
			txt = s.red(txt)
		} else if c.Value > 0 {
			txt = s.yellow(txt)
		}
		parts = append(parts, txt)
	}
	fmt.Fprintf(w, "Counters: %s\n", strings.Join(parts, " · "))

	if a := r.Agents; a != nil {
		if len(a.InFlight) == 0 {
			fmt.Fprintln(w, "Agents in flight: none")
		} else {
			fmt.Fprintln(w, "Agents in flight:")
			for _, l := range a.InFlight {
				mode := "foreground"
				if l.Background {
					mode = "background"
				}
				fmt.Fprintf(w, "  %s%s  %s, %s, for %s\n", s.cyan(l.Agent), taskSuffix(l.Task), l.Job, mode, Duration(r.Now.Sub(l.StartedAt)))
			}
		}
		for _, l := range a.Stale {
			fmt.Fprintf(w, "  %s %s%s (%s): launched, never completed\n", s.yellow("stale:"), l.Agent, taskSuffix(l.Task), l.ToolUseID)
		}
	}
	writeTokens(w, r, s)

	if len(r.Permissions) > 0 && wf.State != "complete" && wf.State != "aborted" {
		var allowed, forbidden []string
		for _, p := range r.Permissions {
			if p.Allowed {
				allowed = append(allowed, p.Action)
				continue
			}
			gate := ""
			if p.Gate > 0 {
				gate = fmt.Sprintf("[Gate %d] ", p.Gate)
			}
			forbidden = append(forbidden, fmt.Sprintf("  %s %s%s", s.red("✗"), gate, shorten.Runes(p.Action+": "+p.Why, 110)))
		}
		fmt.Fprintf(w, "Allowed now: %s\n", s.green(orNone(strings.Join(allowed, "; "))))
		if len(forbidden) > 0 {
			fmt.Fprintln(w, "Forbidden now:")
			for _, f := range forbidden {
				fmt.Fprintln(w, f)
			}
		}
	}
	if e := r.Escalation; e != nil {
		options := "retry|skip|abort"
		if e.Kind == orchestrate.EscalationAgent {
			fmt.Fprintf(w, "%s %s failed %d times at step %s\n", s.red("Escalated (agent):"), gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What(), len(e.Attempts), e.From)
			options = strings.TrimPrefix(strings.TrimSuffix(r.Next, " (see .orchestrator/ESCALATION.md)"), "wait for the user: /orch-hook:resolve ")
		}
		fmt.Fprintf(w, "%s see .orchestrator/ESCALATION.md; the user decides with /orch-hook:resolve %s\n", s.red("Escalated ("+e.Kind+"):"), options)
	}
	writeFailures(w, r, s)
	for _, k := range r.KnownIssues {
		fmt.Fprintf(w, "Known issue: %s\n", k)
	}
	writeRecent(w, r, s)

	if h := r.Health; h != nil {
		fmt.Fprintln(w)
		var seen []string
		for _, name := range healthNames(h.LastSeen) {
			seen = append(seen, fmt.Sprintf("%s %s ago", name, Duration(r.Now.Sub(h.LastSeen[name]))))
		}
		fmt.Fprintf(w, "Hook health: %s\n", s.dim(orNone(strings.Join(seen, " · "))))
		for _, warn := range h.Warnings {
			fmt.Fprintf(w, "  %s %s\n    check: %s\n", s.yellow("warning:"), warn.Message, warn.Check)
		}
	}
}

// writeFailures lists the failed launches of the current state, which
// retries are counted against.
func writeFailures(w io.Writer, r *Report, s style) {
	if len(r.Failures) == 0 {
		return
	}
	retries := gates.MaxRetries
	if r.Config != nil {
		retries = r.Config.limits.Retries
	}
	fmt.Fprintf(w, "Failures in this state (a work's failure %d escalates: limits.retries %d):\n", retries+1, retries)
	for _, a := range r.Failures {
		fmt.Fprintf(w, "  %s %s (%s): %s\n", s.yellow("✗"), a.What(), a.Class, shorten.Runes(a.Error, 100))
	}
}

// writeCoordinate draws the coordinate workflow's scope, paths, reports,
// retries, supervisors and agents.
func writeCoordinate(w io.Writer, r *Report, c *CoordinateInfo, s style) {
	fmt.Fprintf(w, "Scope: %s (%s) · terminal state %s\n", s.bold(c.Scope), orDash(c.ScopeWhy), c.TerminalState)
	fmt.Fprintf(w, "Topic: %s (%s)\n", c.Topic, c.Paths.TopicPath)
	fmt.Fprintf(w, "Reports verified: %d/%d %s\n", len(c.ReportsVerified), c.ResearchTopics, s.dim(strings.Join(c.ReportsVerified, ", ")))
	if c.Implementation != "" {
		fmt.Fprintf(w, "Implementation: %s\nTesting: %s\n", c.Implementation, c.Testing)
	}
	fmt.Fprintf(w, "Plan: %s\n", c.Paths.PlanPath)
	retries := fmt.Sprintf("%d/%d", c.DebugRetries, c.MaxDebugRetries)
	if c.DebugRetries >= c.MaxDebugRetries {
		retries = s.red(retries)
	}
	fmt.Fprintf(w, "Debug retries: %s\n", retries)
	if c.LastError != "" {
		fmt.Fprintf(w, "Last error (%s): %s\n", c.FailedState, s.yellow(shorten.Runes(shorten.OneLine(c.LastError), 110)))
	}
	if e := c.Escalation; e != nil {
		fmt.Fprintf(w, "%s %s failed %d times in %s: see .orchestrator/ESCALATION.md; %s\n", s.red("Escalated:"), e.Agent, len(e.Attempts), e.From, r.Next)
	}
	keys := make([]string, 0, len(c.Supervisors))
	for k := range c.Supervisors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := c.Supervisors[k]
		done := 0
		all := append(append([]coordinate.WorkerRecord{}, st.Workers...), st.Tracks...)
		for _, stage := range st.Stages {
			all = append(all, stage.Workers...)
		}
		for _, wr := range all {
			if wr.Status == coordinate.WorkerCompleted {
				done++
			}
		}
		fmt.Fprintf(w, "Supervisor %s: %d workers, %d completed\n", st.SupervisorName, st.WorkerCount, done)
		if st.SupervisorName == coordinate.TestSupervisor {
			writeStages(w, st, s)
		}
	}
	if c.ContextReduction != "" {
		fmt.Fprintf(w, "Context reduction: %s\n", c.ContextReduction)
	}
	if c.TimeSavings != "" {
		fmt.Fprintf(w, "Time savings: %s\n", c.TimeSavings)
	}
	if c.Outcome != "" {
		fmt.Fprintf(w, "Outcome: %s\n", c.Outcome)
	}
	if a := r.Agents; a != nil {
		if len(a.InFlight) > 0 {
			fmt.Fprintln(w, "Agents in flight:")
		}
		for _, l := range a.InFlight {
			fmt.Fprintf(w, "  %s  %s, for %s\n", s.cyan(l.Agent), shorten.Runes(l.Job, 80), Duration(r.Now.Sub(l.StartedAt)))
		}
		for _, l := range a.Stale {
			fmt.Fprintf(w, "  %s %s (%s): launched, never ran or returned\n", s.yellow("stale:"), l.Agent, l.ToolUseID)
		}
	}
	writeTokens(w, r, s)
}

// tokenRows is how many ended agents status lists with their tokens, the
// latest (the report lists them all).
const tokenRows = 12

// writeTokens draws what the agents that ended used: in total, by phase,
// and the latest agents one a line.
func writeTokens(w io.Writer, r *Report, s style) {
	t := r.Tokens
	if t == nil || len(t.Agents) == 0 {
		return
	}
	if t.Known == 0 {
		fmt.Fprintf(w, "Tokens: %s\n", s.yellow(t.UnknownText()))
	} else {
		fmt.Fprintf(w, "Tokens: %s\n", t.Summary())
	}
	if len(t.Phases) > 0 {
		var parts []string
		for _, p := range t.Phases {
			parts = append(parts, p.Phase+" "+p.PhaseText())
		}
		fmt.Fprintf(w, "  by phase: %s\n", strings.Join(parts, " · "))
	}
	rows := t.Agents
	if len(rows) > tokenRows {
		fmt.Fprintf(w, "  %s\n", s.dim(fmt.Sprintf("(%d earlier agents: `orch-hook report` lists them all)", len(rows)-tokenRows)))
		rows = rows[len(rows)-tokenRows:]
	}
	for _, a := range rows {
		tok := a.Tokens.Short()
		if !a.Tokens.Known() {
			tok = s.yellow(tok)
		}
		fmt.Fprintf(w, "  %-26s %-24s %-9s %6s  %s\n", shorten.Runes(a.Agent+taskSuffix(a.Task), 26), shorten.Runes(shorten.OneLine(a.Job), 24), a.State, Duration(time.Duration(a.Seconds)*time.Second), tok)
	}
}

func writeRecent(w io.Writer, r *Report, s style) {
	if r.Recent == nil {
		return
	}
	if len(r.Recent.Transitions) > 0 {
		fmt.Fprintln(w, "\nRecent transitions:")
		for _, ev := range r.Recent.Transitions {
			fmt.Fprintf(w, "  %s %s -> %s  %s\n", ev.Time.Local().Format("15:04:05"), orDash(ev.StateBefore), ev.StateAfter, shorten.Runes(shorten.OneLine(ev.Reason), 100))
		}
	}
	if len(r.Recent.Denials) > 0 {
		fmt.Fprintln(w, "Recent denials:")
		for i, ev := range r.Recent.Denials {
			fmt.Fprintf(w, "  %s %s  %s\n", ev.Time.Local().Format("15:04:05"), s.red(orDash(ev.ToolUseID)), shorten.Runes(DeniedRule(ev), 110))
			if i == len(r.Recent.Denials)-1 && ev.Next != "" {
				fmt.Fprintf(w, "    the model was told next: %s\n", shorten.Runes(shorten.OneLine(ev.Next), 110))
			}
		}
	}
}

// DeniedRule is a deny record's rule on one line, with its gate (and the
// MCP tool a write came through), read from the refusal's parts; a record
// without them (older, or not a rule's) shows its reason. Status and
// `orch-hook explain` show a refusal's rule with it.
func DeniedRule(ev state.Event) string {
	if ev.Rule == "" {
		return strings.TrimPrefix(shorten.OneLine(ev.Reason), "orch-hook: ")
	}
	var b strings.Builder
	if ev.Via != "" {
		b.WriteString("(MCP tool " + ev.Via + ") ")
	}
	if ev.Gate > 0 {
		fmt.Fprintf(&b, "[Gate %d] ", ev.Gate)
	}
	b.WriteString(shorten.OneLine(ev.Rule))
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeConfig shows the configuration the workflow runs by: the file (or
// the defaults), then every value, those not the defaults' marked with *.
func writeConfig(w io.Writer, r *Report, s style) {
	c := r.Config
	if c == nil {
		return
	}
	head := "Config: defaults (no " + gates.ConfigFile + " when the workflow started)"
	if c.File != "" {
		head = fmt.Sprintf("Config: %s (%s, sha256 %s)", c.File, c.Git, shorten.Bytes(c.SHA256, 12, ""))
	}
	if c.Changed {
		head += s.yellow(" · changed since the start: applies to the next workflow")
	}
	fmt.Fprintln(w, head)
	groups := map[string][]string{}
	var order []string
	for _, v := range c.Values {
		group, key, _ := strings.Cut(v.Key, ".")
		if _, ok := groups[group]; !ok {
			order = append(order, group)
		}
		item := key + " " + v.Value
		if group == "agents" {
			item = key + " -> " + v.Value
		}
		if v.Source != "default" {
			item += "*"
		}
		groups[group] = append(groups[group], item)
	}
	var parts []string
	for _, g := range order {
		parts = append(parts, g+": "+strings.Join(groups[g], ", "))
	}
	line := "  " + strings.Join(parts, " · ")
	if strings.Contains(line, "*") {
		line += " (* from " + c.File + ")"
	}
	fmt.Fprintln(w, s.dim(line))
}

// writeProtection says whether Claude Code's sandbox keeps the model's
// shell off the state.
func writeProtection(w io.Writer, r *Report, s style) {
	if p := r.Protection; p != nil {
		line := "Protection: " + p.Summary()
		if !p.Protected {
			line = s.yellow(line)
		}
		fmt.Fprintln(w, line)
	}
}

// taskReading is what orch-hook read of a task's file: its dependencies,
// files and UX/DX flag.
func taskReading(t TaskInfo) string {
	var parts []string
	if len(t.DependsOn) > 0 {
		deps := make([]string, len(t.DependsOn))
		for i, d := range t.DependsOn {
			deps[i] = fmt.Sprintf("Task %02d", d)
		}
		parts = append(parts, "after "+strings.Join(deps, ", "))
	}
	parts = append(parts, "files: "+strings.Join(t.Files, ", "))
	if t.UXDX {
		parts = append(parts, "UX/DX review")
	}
	return strings.Join(parts, " · ")
}

// writeStages draws a testing supervisor's stages in their order, with
// what their workers' lines gave; a stage not started says so.
func writeStages(w io.Writer, st *coordinate.SupervisorState, s style) {
	for _, def := range coordinate.TestStages {
		i := slices.IndexFunc(st.Stages, func(x coordinate.SupervisorStage) bool { return x.StageID == def.ID })
		if i < 0 {
			fmt.Fprintf(w, "  Stage %s: %s\n", def.ID, s.dim("not run"))
			continue
		}
		stage := st.Stages[i]
		status := stage.Status
		switch status {
		case coordinate.WorkerFailed:
			status = s.red(status)
		case coordinate.WorkerCompleted:
			status = s.green(status)
		}
		var facts []string
		created, passed, failed := 0, 0, 0
		var files []string
		counted := false
		for _, wr := range stage.Workers {
			if wr.TestsCreated != nil {
				created += *wr.TestsCreated
				files = append(files, wr.TestFiles...)
			}
			if wr.TestsPassed != nil && wr.TestsFailed != nil {
				passed, failed, counted = passed+*wr.TestsPassed, failed+*wr.TestsFailed, true
			}
			if wr.CoveragePercent != nil {
				facts = append(facts, fmt.Sprintf("coverage %g%%", *wr.CoveragePercent))
			}
			if wr.Status == coordinate.WorkerFailed && wr.Error != "" {
				facts = append(facts, shorten.Runes(shorten.OneLine(wr.Error), 80))
			}
		}
		if def.ID == coordinate.StageGeneration {
			facts = append([]string{fmt.Sprintf("%d tests created in %s", created, gates.Plural(len(files), "file"))}, facts...)
		}
		if counted {
			facts = append([]string{fmt.Sprintf("%d passed, %d failed", passed, failed)}, facts...)
		}
		if stage.Status != coordinate.WorkerInProgress {
			facts = append(facts, Duration(time.Duration(stage.DurationMs)*time.Millisecond))
		}
		fmt.Fprintf(w, "  Stage %s: %s (%s)%s\n", def.ID, status, gates.Plural(len(stage.Workers), "worker"), joinFacts(facts))
	}
}

func joinFacts(facts []string) string {
	if len(facts) == 0 {
		return ""
	}
	return ": " + strings.Join(facts, ", ")
}
