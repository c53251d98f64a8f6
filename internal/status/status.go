// Package status builds what `orch-hook status` shows: the workflow, where
// it stands on the phase flow, the plan, counters against their limits,
// agents in flight, what is allowed and forbidden now, recent denials and
// transitions, and hook health. Report is the stable --json schema; Text
// draws it for people.
package status

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/state"
)

// Schema names the JSON schema; it changes only when a field's meaning does.
const Schema = "orch-hook.status/1"

// StaleAfter: no hook event for this long while agents are in flight is a
// health warning.
const StaleAfter = 10 * time.Minute

// Report is `orch-hook status --json`.
type Report struct {
	Schema   string    `json:"schema"`
	Now      time.Time `json:"now"`
	Active   bool      `json:"active"`
	Project  string    `json:"project"`
	StateDir string    `json:"state_dir"`

	Workflow *WorkflowInfo `json:"workflow,omitempty"`
	Plan     *PlanInfo     `json:"plan,omitempty"`
	Counters []Counter     `json:"counters,omitempty"`
	Agents   *AgentsInfo   `json:"agents,omitempty"`
	// Tokens: what the agents that ended used, read from their
	// transcripts (informational: nothing is gated on them).
	Tokens *TokensInfo `json:"tokens,omitempty"`
	Next   string      `json:"next,omitempty"`
	// Permissions: each workflow agent's launch and Stop, allowed or not.
	Permissions []orchestrate.Permission `json:"permissions,omitempty"`
	Recent      *RecentInfo              `json:"recent,omitempty"`
	Health      *HealthInfo              `json:"health,omitempty"`
	Escalation  *orchestrate.Escalation  `json:"escalation,omitempty"`
	// Failures are the failed launches of the current state, counted
	// against the retry limit (README, "Failures and retries").
	Failures    []gates.Attempt `json:"failures,omitempty"`
	Coordinate  *CoordinateInfo `json:"coordinate,omitempty"`
	KnownIssues []string        `json:"known_issues,omitempty"`
	// Protection: whether Claude Code's sandbox keeps the model's Bash off
	// the state (set by the caller, which knows the environment).
	Protection *install.Protection `json:"protection,omitempty"`
	// Config is the configuration the workflow runs by (README, "Team
	// configuration").
	Config *ConfigInfo `json:"config,omitempty"`
}

// ConfigInfo is the workflow's configuration: every value with its
// source, the file it was read from, and whether that file changed since.
type ConfigInfo struct {
	File   string            `json:"file,omitempty"` // "": the defaults
	Git    string            `json:"git,omitempty"`
	SHA256 string            `json:"sha256,omitempty"`
	Values []app.ConfigValue `json:"values"`
	// Changed: the file differs now from what the workflow started with
	// (the change applies to the next workflow).
	Changed bool `json:"changed"`
	// limits are the values as the workflow runs by them.
	limits gates.Limits
}

// ApplyStopCapEnv shows $ORCH_HOOK_STOP_CAP (n > 0), which the hooks apply
// over the configuration's stop cap, where the report shows the cap.
func (r *Report) ApplyStopCapEnv(n int) {
	if n <= 0 {
		return
	}
	for i := range r.Counters {
		if r.Counters[i].Name == "consecutive Stop blocks" {
			r.Counters[i].Limit = n
		}
	}
	if r.Config != nil {
		for i := range r.Config.Values {
			if r.Config.Values[i].Key == "limits.stop_cap" {
				r.Config.Values[i].Value, r.Config.Values[i].Source = strconv.Itoa(n), "$ORCH_HOOK_STOP_CAP"
			}
		}
	}
}

func configInfo(root string, c *gates.ConfigSnapshot) *ConfigInfo {
	info := &ConfigInfo{Values: app.EffectiveValues(c, 0), limits: c.Effective().Limits}
	if c != nil {
		info.File, info.Git, info.SHA256 = c.File, c.Git, c.Hash
		info.Changed = app.ConfigHash(root) != c.Hash
	}
	return info
}

// WorkflowInfo is the workflow's identity and step.
type WorkflowInfo struct {
	Command         string    `json:"command"`
	Request         string    `json:"request"`
	State           string    `json:"state"`
	CompletedStates []string  `json:"completed_states"`
	WaitingOn       string    `json:"waiting_on,omitempty"`
	Forced          string    `json:"forced,omitempty"`
	OwnerSession    string    `json:"owner_session,omitempty"`
	Where           string    `json:"where"`
	StartedAt       time.Time `json:"started_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	Serial          uint64    `json:"serial"`
	Lineage         string    `json:"lineage"`
}

// CoordinateInfo is the coordinate workflow's scope, topic, paths,
// verified reports, debug retries, supervisors and measured effects.
type CoordinateInfo struct {
	Scope          string           `json:"scope"`
	ScopeWhy       string           `json:"scope_why,omitempty"`
	TerminalState  string           `json:"terminal_state"`
	Topic          string           `json:"topic"`
	Paths          coordinate.Paths `json:"paths"`
	ResearchTopics int              `json:"research_topics"`
	Hierarchical   bool             `json:"hierarchical"`
	// Implementation and Testing: flat, supervised or either, and why
	// (from the verified plan's declarations; empty before).
	Implementation   string                                 `json:"implementation,omitempty"`
	Testing          string                                 `json:"testing,omitempty"`
	ReportsVerified  []string                               `json:"reports_verified"`
	DebugRetries     int                                    `json:"debug_retries"`
	MaxDebugRetries  int                                    `json:"max_debug_retries"`
	LastError        string                                 `json:"last_error,omitempty"`
	FailedState      string                                 `json:"failed_state,omitempty"`
	Outcome          string                                 `json:"outcome,omitempty"`
	ContextReduction string                                 `json:"context_reduction,omitempty"`
	TimeSavings      string                                 `json:"time_savings,omitempty"`
	Supervisors      map[string]*coordinate.SupervisorState `json:"supervisors,omitempty"`
	Escalation       *coordinate.Escalation                 `json:"escalation,omitempty"`
}

// PlanInfo is the plan as snapshotted, with each task's state.
type PlanInfo struct {
	Phase    int         `json:"phase"`
	Awaiting string      `json:"awaiting_phase,omitempty"`
	Phases   []PhaseInfo `json:"phases"`
}

// PhaseInfo is one phase.
type PhaseInfo struct {
	Number  int        `json:"number"`
	Title   string     `json:"title"`
	Current bool       `json:"current"`
	Tasks   []TaskInfo `json:"tasks"`
}

// TaskInfo is one task: checked in MASTER_PLAN.md, and its run in the
// current step (running, complete, blocked, returned; "" when not started).
type TaskInfo struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	Checked bool   `json:"checked"`
	Status  string `json:"status,omitempty"`
	Failing bool   `json:"failing,omitempty"`
	// What orch-hook read of the task's file when the plan was last
	// snapshotted (validation, approval): the gates work from this.
	DependsOn []int    `json:"depends_on"`
	Files     []string `json:"files"`
	UXDX      bool     `json:"requires_ux_dx_review"`
}

// Counter is a counter against its limit.
type Counter struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
	Limit int    `json:"limit"`
}

// AgentsInfo lists launches in flight and stale ones.
type AgentsInfo struct {
	InFlight []AgentInfo `json:"in_flight"`
	Stale    []AgentInfo `json:"stale"`
}

// AgentInfo is one launch.
type AgentInfo struct {
	Agent      string    `json:"agent"`
	Job        string    `json:"job"`
	Task       int       `json:"task,omitempty"`
	ToolUseID  string    `json:"tool_use_id"`
	AgentID    string    `json:"agent_id,omitempty"`
	Background bool      `json:"background"`
	StartedAt  time.Time `json:"started_at"`
	Seconds    int64     `json:"seconds"`
}

// TokensInfo is what the agents used, as their transcripts said at their
// SubagentStop: in total, by phase, and for each agent that ended.
type TokensInfo struct {
	gates.TokenUse
	Agents []AgentTokens `json:"agents"`
}

// AgentTokens is one ended launch's tokens (null: none recorded).
type AgentTokens struct {
	Agent     string        `json:"agent"`
	Job       string        `json:"job"`
	Task      int           `json:"task,omitempty"`
	State     string        `json:"state"`
	Phase     string        `json:"phase"`
	ToolUseID string        `json:"tool_use_id"`
	AgentID   string        `json:"agent_id,omitempty"`
	Status    string        `json:"status"`
	Seconds   int64         `json:"seconds"`
	Tokens    *gates.Tokens `json:"tokens"`
}

// RecentInfo is the last denials and transitions, newest last.
type RecentInfo struct {
	Denials     []state.Event `json:"denials"`
	Transitions []state.Event `json:"transitions"`
}

// HealthInfo is when each hook event was last seen, and what looks wrong.
type HealthInfo struct {
	LastSeen map[string]time.Time `json:"last_seen"`
	Warnings []Warning            `json:"warnings"`
}

// Warning is a hook health problem and what to check.
type Warning struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Check   string `json:"check"`
}

// recentN is how many denials and transitions status shows.
const recentN = 5

// tailEvents bounds how much of the log status reads (from the end).
const tailEvents = 400

// Build reads the project's state and assembles the report.
func Build(store *state.Store, now time.Time) (*Report, error) {
	r := &Report{Schema: Schema, Now: now.UTC(), Project: store.Root, StateDir: store.Dir}
	cp, err := store.Load()
	if errors.Is(err, state.ErrNoState) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r.Active = !cp.Finished()
	sm := cp.StateMachine
	r.Workflow = &WorkflowInfo{
		Command: sm.WorkflowConfig.Command, Request: sm.WorkflowConfig.Description,
		State: sm.CurrentState, CompletedStates: sm.CompletedStates,
		StartedAt: cp.Metadata.CreatedAt, UpdatedAt: cp.Metadata.UpdatedAt,
		Serial: cp.Serial, Lineage: cp.Lineage, Where: "step " + sm.CurrentState,
	}
	events, err := store.Tail(tailEvents)
	if err != nil {
		return nil, err
	}
	r.Recent = recent(events)
	if len(r.Recent.Transitions) < recentN && len(events) == tailEvents {
		// Many denials since the last transitions: look further back for
		// those only.
		older, err := store.TailOf(recentN, state.EventTransition, state.EventStart, state.EventUserDecision)
		if err != nil {
			return nil, err
		}
		r.Recent.Transitions = recent(older).Transitions
	}
	if sm.WorkflowConfig.Command == "coordinate" {
		c, err := app.LoadCoord(cp)
		if err != nil {
			return nil, err
		}
		coordinateInfo(r, c, now)
		r.Config = configInfo(store.Root, c.Config)
		r.Health = health(store, events, r, now)
		return r, nil
	}
	if sm.WorkflowConfig.Command != "orchestrate" {
		return r, nil
	}
	w, err := app.LoadWorkflow(cp)
	if err != nil {
		return nil, err
	}
	files, _ := state.ReadDirFiles(store.Root, orchestrate.TasksDir)
	env := &orchestrate.Env{Root: store.Root, Files: files, Now: now}
	r.Workflow.Request = w.Request
	r.Workflow.WaitingOn = w.WaitingOn
	r.Workflow.Forced = w.Forced
	r.Workflow.OwnerSession = w.Owner
	r.Workflow.Where = w.Where()
	r.Next = w.Next(env)
	r.Plan = planInfo(w, files)
	r.Config = configInfo(store.Root, w.Config)
	limits := w.Settings().Limits
	r.Counters = []Counter{
		{"clarification rounds", w.Rounds, limits.ClarificationRounds},
		{"discovery", w.Discovery, limits.DiscoveryLoops},
		{"fix iterations", w.FixIterations, limits.FixIterations},
		{"final-validation failures", w.FinalFailures, limits.FinalValidationFailures},
		{"consecutive Stop blocks", w.StopBlocks, limits.StopCap},
	}
	r.Agents = &AgentsInfo{InFlight: []AgentInfo{}, Stale: []AgentInfo{}}
	for _, l := range w.Launches {
		a := AgentInfo{Agent: l.Agent, Job: l.Job, Task: l.Task, ToolUseID: l.ToolUseID, AgentID: l.AgentID, Background: l.Background, StartedAt: l.Started, Seconds: int64(now.Sub(l.Started).Seconds())}
		switch l.Status {
		case gates.Running:
			r.Agents.InFlight = append(r.Agents.InFlight, a)
		case gates.Stale:
			a.Seconds = int64(l.Ended.Sub(l.Started).Seconds())
			r.Agents.Stale = append(r.Agents.Stale, a)
		}
	}
	r.Tokens = tokensInfo(w.TokenUse())
	for _, l := range w.Launches {
		if l.Status != gates.Running {
			r.Tokens.Agents = append(r.Tokens.Agents, AgentTokens{Agent: l.Agent, Job: l.Job, Task: l.Task, State: string(l.State), Phase: l.TokenPhase(), ToolUseID: l.ToolUseID, AgentID: l.AgentID, Status: l.Status, Seconds: seconds(l.Started, l.Ended), Tokens: l.Tokens})
		}
	}
	r.Permissions = w.Permissions(env)
	r.Escalation = w.Escalation
	r.KnownIssues = w.KnownIssues
	if w.Failures != nil && w.Failures.State == w.Current {
		r.Failures = w.Failures.Attempts
	}
	r.Health = health(store, events, r, now)
	return r, nil
}

// coordinate fills the report for a coordinate workflow.
func coordinateInfo(r *Report, c *coordinate.Workflow, now time.Time) {
	mode := "flat"
	if c.Hierarchical {
		mode = "hierarchical"
	}
	r.Workflow.Request = c.Description
	r.Workflow.OwnerSession = c.Owner
	r.Workflow.Where = fmt.Sprintf("scope %s, state %s (terminal %s), research topics %d (%s)", c.Scope, c.Current, coordinate.ScopeTerminal[c.Scope], c.Topics, mode)
	if c.Current != coordinate.CComplete {
		r.Next = c.Next()
	}
	r.Coordinate = &CoordinateInfo{
		Scope: c.Scope, ScopeWhy: c.ScopeWhy, TerminalState: coordinate.ScopeTerminal[c.Scope],
		Topic: c.Topic, Paths: c.Paths, ResearchTopics: c.Topics, Hierarchical: c.Hierarchical,
		ReportsVerified: append([]string{}, c.Reports...),
		DebugRetries:    c.Retries, MaxDebugRetries: coordinate.MaxDebugRetries,
		LastError: c.LastError, FailedState: string(c.FailedState), Outcome: c.Outcome,
		ContextReduction: c.ContextReduction, TimeSavings: c.TimeSavings, Supervisors: c.Supervisors,
		Escalation: c.Escalation,
	}
	r.KnownIssues = c.KnownIssues
	if c.Failures != nil && c.Failures.State == c.Current {
		r.Failures = c.Failures.Attempts
	}
	r.Coordinate.Implementation, r.Coordinate.Testing = c.ScaleDecision()
	r.Counters = []Counter{
		{"research reports", len(c.Reports), c.Topics},
		{"debug retries", c.Retries, coordinate.MaxDebugRetries},
		{"consecutive Stop blocks", c.StopBlocks, c.Settings().Limits.StopCap},
	}
	r.Agents = &AgentsInfo{InFlight: []AgentInfo{}, Stale: []AgentInfo{}}
	r.Tokens = tokensInfo(c.TokenUse())
	for _, l := range c.Launches {
		job := l.Unit
		if l.Parent != "" {
			job = "worker of " + l.Parent + ": " + l.Unit
		}
		a := AgentInfo{Agent: l.Agent, Job: job, ToolUseID: l.ToolUseID, AgentID: l.AgentID, Background: l.Background, StartedAt: l.Started, Seconds: int64(now.Sub(l.Started).Seconds())}
		switch l.Status {
		case gates.Running:
			r.Agents.InFlight = append(r.Agents.InFlight, a)
			continue
		case gates.Stale:
			a.Seconds = int64(l.Ended.Sub(l.Started).Seconds())
			r.Agents.Stale = append(r.Agents.Stale, a)
		}
		r.Tokens.Agents = append(r.Tokens.Agents, AgentTokens{Agent: l.Agent, Job: job, State: string(l.State), Phase: string(l.State), ToolUseID: l.ToolUseID, AgentID: l.AgentID, Status: l.Status, Seconds: seconds(l.Started, l.Ended), Tokens: l.Tokens})
	}
}

// tokensInfo is u with its lists empty rather than null, for --json.
func tokensInfo(u gates.TokenUse) *TokensInfo {
	if u.Why == nil {
		u.Why = []gates.UnknownCount{}
	}
	if u.Phases == nil {
		u.Phases = []gates.PhaseTokens{}
	}
	return &TokensInfo{TokenUse: u, Agents: []AgentTokens{}}
}

// seconds is how long a launch ran (0 when its end is unknown).
func seconds(start, end time.Time) int64 {
	if end.IsZero() || end.Before(start) {
		return 0
	}
	return int64(end.Sub(start).Seconds())
}

func recent(events []state.Event) *RecentInfo {
	ri := &RecentInfo{Denials: []state.Event{}, Transitions: []state.Event{}}
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		ev.Checkpoint, ev.Prev, ev.Call, ev.Reads = nil, "", nil, nil // the log's own bookkeeping (the record keeps them)
		switch ev.Type {
		case state.EventDeny:
			if len(ri.Denials) < recentN {
				ri.Denials = append([]state.Event{ev}, ri.Denials...)
			}
		case state.EventTransition, state.EventStart, state.EventUserDecision:
			if len(ri.Transitions) < recentN {
				ri.Transitions = append([]state.Event{ev}, ri.Transitions...)
			}
		}
	}
	return ri
}

func planInfo(w *orchestrate.Workflow, files orchestrate.PlanFiles) *PlanInfo {
	if w.Plan == nil {
		return nil
	}
	checked := map[int]bool{}
	p := orchestrate.ParsePlan(files)
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			checked[t.Number] = t.Checked
		}
	}
	pi := &PlanInfo{Phase: w.Phase, Awaiting: w.Awaiting}
	for _, ph := range w.Plan.Phases {
		info := PhaseInfo{Number: ph.Number, Title: ph.Title, Current: ph.Number == w.Phase, Tasks: []TaskInfo{}}
		for _, t := range ph.Tasks {
			ti := TaskInfo{Number: t.Number, Title: t.Title, Checked: checked[t.Number], DependsOn: t.DependsOn, Files: t.Files, UXDX: t.UXDX}
			if ti.DependsOn == nil {
				ti.DependsOn = []int{}
			}
			if ti.Files == nil {
				ti.Files = []string{}
			}
			if tr := w.Tasks[t.Number]; tr != nil && info.Current {
				ti.Status = tr.Status
			}
			// The tasks to fix, of any phase (a regression is fixed in an
			// earlier phase's task), while the fix cycle runs.
			for _, f := range w.FailingTasks {
				ti.Failing = ti.Failing || f == t.Number && (w.Current == orchestrate.SF1 || w.Current == orchestrate.SF2)
			}
			info.Tasks = append(info.Tasks, ti)
		}
		pi.Phases = append(pi.Phases, info)
	}
	return pi
}

// health turns the timestamps and the log into warnings.
func health(store *state.Store, events []state.Event, r *Report, now time.Time) *HealthInfo {
	h := &HealthInfo{LastSeen: store.Health(), Warnings: []Warning{}}
	for _, ev := range events {
		if ev.Type == state.EventError && strings.HasPrefix(ev.Reason, orchestrate.HealthPrefix) {
			h.Warnings = append(h.Warnings, Warning{
				Kind:    "completion-without-launch",
				Message: strings.TrimPrefix(ev.Reason, orchestrate.HealthPrefix),
				Check:   "the PreToolUse hook must match Agent|Task (hooks/hooks.json or .claude/settings.json); run `orch-hook doctor`",
			})
		}
	}
	for _, a := range r.Agents.Stale {
		h.Warnings = append(h.Warnings, Warning{
			Kind:    "stale-launch",
			Message: fmt.Sprintf("%s%s (%s) was no longer running at a Stop and never completed", a.Agent, taskSuffix(a.Task), a.ToolUseID),
			Check:   "its SubagentStop hook did not run, or the agent was killed; relaunch it if needed, and /orch-hook:resolve clear-stale to forget it",
		})
	}
	if len(r.Agents.InFlight) > 0 {
		var last time.Time
		for _, t := range h.LastSeen {
			if t.After(last) {
				last = t
			}
		}
		if last.IsZero() || now.Sub(last) > StaleAfter {
			since := "ever"
			if !last.IsZero() {
				since = "for " + Duration(now.Sub(last))
			}
			h.Warnings = append(h.Warnings, Warning{
				Kind:    "hooks-silent",
				Message: fmt.Sprintf("no hook event seen %s while %d agent(s) are in flight", since, len(r.Agents.InFlight)),
				Check:   "are the hooks installed and running? `orch-hook doctor`; a session started with hooks disabled, or another Claude Code project directory, gates nothing",
			})
		}
	}
	return h
}

func taskSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (Task %02d)", n)
}

// Duration prints a duration for people: 45s, 3m12s, 2h05m.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// healthNames sorts health keys: main-thread events first.
func healthNames(m map[string]time.Time) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
