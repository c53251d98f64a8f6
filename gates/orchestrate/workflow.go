package orchestrate

import (
	"fmt"
	"sort"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// The workflow's agents, by their bare names. Plugin installs call them
// "orch-hook:<name>"; an init install uses the bare name.
const (
	Analyst     = "requirements-analyst"
	Researcher  = "researcher"
	Explorer    = "code-explorer"
	Planner     = "task-planner"
	Implementer = "code-implementer"
	Quality     = "code-quality"
	UXDX        = "ux-dx-quality"
)

// WorkflowAgents lists every agent the workflow gates.
var WorkflowAgents = []string{Analyst, Researcher, Explorer, Planner, Implementer, Quality, UXDX}

// The workflow's limits (README, "The orchestrate workflow" and "The rules
// in detail").
const (
	MaxRounds        = 3 // clarification rounds, 0a and 0b together
	MaxDiscovery     = 2 // entries into phase 1
	MaxFixIterations = 3 // 4b failures per phase
	MaxFinalFailures = 3 // 5a/5b failures per workflow
	MaxBlockedRetry  = 2 // more launches after IMPLEMENTATION STATUS: BLOCKED
)

// limits are the counts this workflow stops at (its configuration).
func (w *Workflow) limits() gates.Limits { return w.Config.Effective().Limits }

// Settings are the rules this workflow runs by.
func (w *Workflow) Settings() gates.Settings { return w.Config.Effective() }

// Jobs a launch does, decided by the state it was launched in.
const (
	JobClarify     = "clarification"
	JobDiscovery   = "discovery"
	JobPlan        = "planning"
	JobPhase       = "phase creation"
	JobAnalysis    = "FAILURE_ANALYSIS"
	JobExtraction  = "SUCCESS_EXTRACTION"
	JobImplement   = "implementation"
	JobFix         = "fix"
	JobGate        = "quality gate"
	JobFinal       = "final validation"
	JobUXDX        = "UX/DX review"
	JobReadOnly    = "read-only"
	JobUnsupported = ""
)

// Workflow is the orchestrate workflow's runtime data, stored in the
// checkpoint's "workflow" section. The state itself (current and completed
// states) lives in the checkpoint's state_machine and is mirrored in
// Current/Completed while a decision is made.
type Workflow struct {
	Kind    string `json:"kind"` // "orchestrate"
	Request string `json:"request"`

	// Owner is the session the workflow belongs to; "" until the first
	// prompt of a session reaches a workflow started from the command line.
	Owner        string `json:"owner_session"`
	OwnerCleared bool   `json:"owner_cleared,omitempty"`

	// WaitingOn is who the workflow waits on besides the orchestrator:
	// "answers" (questions pending), "approval" (3), "resolution"
	// (escalated); "" when the orchestrator owes the next step.
	WaitingOn string `json:"waiting_on,omitempty"`

	Rounds    int `json:"clarification_rounds"`
	Discovery int `json:"discovery"`
	// DiscoveryFrom is the index in Launches where the current discovery
	// round began: earlier launches belong to an earlier round.
	DiscoveryFrom int    `json:"discovery_from,omitempty"`
	Forced        string `json:"forced,omitempty"`
	FixIterations int    `json:"fix_iterations"`
	FinalFailures int    `json:"final_failures"`
	// FinalFrom is the step of the last final-validation failure (5a, 5b).
	FinalFrom  gates.State `json:"final_from,omitempty"`
	StopBlocks int         `json:"stop_blocks"`

	// Phase is the MASTER_PLAN.md phase being worked on (0: none yet).
	Phase int `json:"phase"`
	// Awaiting is set while 4a waits for a phase to be appended:
	// "fix" after a final-validation failure, "lightweight" after a
	// LIGHTWEIGHT follow-up.
	Awaiting string `json:"awaiting_phase,omitempty"`
	// Plan is the snapshot taken when the plan validated and at approval.
	Plan *PlanSnapshot `json:"plan,omitempty"`
	// PlanHashes are the hashes of the files under .orchestrator/tasks after
	// the last change orch-hook allowed.
	PlanHashes map[string]string `json:"plan_hashes,omitempty"`
	// PlanWrites are allowed plan writes waiting for their PostToolUse: the
	// file must then hash as the write produces, or it counts as changed
	// outside orch-hook.
	PlanWrites []PlanWrite `json:"plan_writes,omitempty"`
	// DoneTasks were ticked in a phase orch-hook saw completed (or skipped);
	// a plan that ticks any other task fails validation.
	DoneTasks []int `json:"done_tasks,omitempty"`

	// Tasks is the per-task record of the current step (4a or F2).
	Tasks        map[int]*TaskRun `json:"tasks,omitempty"`
	FailingTasks []int            `json:"failing_tasks,omitempty"`

	Launches []*Launch `json:"launches,omitempty"`
	// Pending holds SubagentStops whose agent_id is not yet tied to a
	// launch (a foreground agent's stop arrives before its PostToolUse).
	Pending []*PendingStop `json:"pending_stops,omitempty"`
	// Nudged are agent ids whose SubagentStop was blocked once for a
	// missing result line.
	Nudged []string `json:"nudged,omitempty"`
	// Kept are the reports of nudged agents, read together with their next
	// message: an answer that adds only the missing line completes them.
	Kept []gates.KeptReport `json:"kept_reports,omitempty"`

	Escalation *Escalation `json:"escalation,omitempty"`
	// Config is the team's configuration as the workflow started with it
	// (nil: started by an orch-hook without one; the defaults).
	Config *gates.ConfigSnapshot `json:"config,omitempty"`
	// Failures are the failed launches of the current step: what retries
	// are counted against (Limits.Retries).
	Failures    *gates.Failures `json:"failures,omitempty"`
	KnownIssues []string        `json:"known_issues,omitempty"`
	// LastAnalysis is the last FAILURE_ANALYSIS text (root cause for
	// ESCALATION.md), clipped.
	LastAnalysis string `json:"last_analysis,omitempty"`
	// Decisions are the prompt ids whose decision was taken (each once).
	Decisions []string `json:"decisions,omitempty"`
	FollowUps []string `json:"follow_ups,omitempty"`
	// UserAsked: the user typed a prompt since the workflow completed, so
	// the orchestrator may triage it into one follow-up (orch-hook:follow-up).
	UserAsked bool `json:"user_asked,omitempty"`

	// Current and Completed mirror state_machine while deciding.
	Current   gates.State   `json:"-"`
	Completed []gates.State `json:"-"`
}

// TaskRun is what the current step knows of one task.
type TaskRun struct {
	Status   string `json:"status"` // running, complete, blocked, returned
	Blocked  int    `json:"blocked,omitempty"`
	Block    string `json:"block,omitempty"` // what the last BLOCKED report said stopped it
	Launches int    `json:"launches"`
}

// Task run statuses.
const (
	TaskComplete = "complete"
	TaskBlocked  = "blocked"
)

// Launch is one workflow subagent launch.
type Launch struct {
	ToolUseID  string      `json:"tool_use_id"`
	AgentID    string      `json:"agent_id,omitempty"`
	Agent      string      `json:"agent"`
	Job        string      `json:"job"`
	Task       int         `json:"task,omitempty"`
	Phase      int         `json:"phase,omitempty"`
	State      gates.State `json:"state"`
	Background bool        `json:"background"`
	Status     string      `json:"status"`
	Result     string      `json:"result,omitempty"`
	Started    time.Time   `json:"started"`
	Ended      time.Time   `json:"ended,omitempty"`
	// Notice is the checkpoint line waiting for this background agent's
	// task-notification.
	Notice string `json:"notice,omitempty"`
	// Tokens are what the agent used, read from its transcript at its
	// SubagentStop (nil: none was recorded). Informational: no rule reads
	// them.
	Tokens *gates.Tokens `json:"tokens,omitempty"`
}

// TokenPhase is the phase a launch's tokens count in: "phase N" for the
// implementation loop of plan phase N (4a, 4b, F1, F2, 4c), else "step S".
func (l *Launch) TokenPhase() string {
	switch l.State {
	case S4a, S4b, SF1, SF2, S4c:
		if l.Phase > 0 {
			return fmt.Sprintf("phase %d", l.Phase)
		}
	}
	return "step " + string(l.State)
}

// TokenUse sums the tokens of the launches that ended, in total and by
// phase (TokenPhase).
func (w *Workflow) TokenUse() gates.TokenUse {
	var u gates.TokenUse
	for _, l := range w.Launches {
		u.Count(l.TokenPhase(), l.Tokens, l.Status != gates.Running)
	}
	return u
}

// PendingStop is a completion waiting for its launch to be known.
type PendingStop struct {
	AgentID   string    `json:"agent_id"`
	AgentType string    `json:"agent_type"`
	Text      string    `json:"text"`
	Time      time.Time `json:"time"`
	// Unrecognized: the report still lacked its result line after the
	// one block; the launch closes without advancing.
	Unrecognized bool `json:"unrecognized,omitempty"`
	// Prior is the report the agent gave before it was asked for its
	// result line (Text holds it joined with the answer).
	Prior string `json:"prior,omitempty"`
	// Tokens are what the agent used, for its launch once tied to it.
	Tokens *gates.Tokens `json:"tokens,omitempty"`
}

// Escalation is an open escalation to the user.
type Escalation struct {
	Kind  string      `json:"kind"` // "fix" (4b), "final" (5a/5b) or "agent"
	Phase int         `json:"phase,omitempty"`
	From  gates.State `json:"from"`
	// An agent escalation's work and its failures in the step, oldest
	// first (README, "Failures and retries").
	Agent    string          `json:"agent,omitempty"`
	Unit     string          `json:"unit,omitempty"`
	Attempts []gates.Attempt `json:"attempts,omitempty"`
}

// Escalation kinds.
const (
	EscalationFix   = "fix"
	EscalationFinal = "final"
	EscalationAgent = "agent" // a work failed 3 times in one step
)

// DecodeWorkflow reads the workflow section; empty input gives a fresh one.
func DecodeWorkflow(raw []byte) (*Workflow, error) { return gates.DecodeSection[Workflow](raw) }

// Encode writes the workflow section.
func (w *Workflow) Encode() ([]byte, error) { return jsonenc.Marshal(w) }

// launchByTool finds a launch by its tool_use_id.
func (w *Workflow) launchByTool(id string) *Launch {
	return gates.Find(w.Launches, func(l *Launch) bool { return l.ToolUseID == id })
}

// launchByAgent finds a launch by its agent_id ("" finds none).
func (w *Workflow) launchByAgent(id string) *Launch {
	return gates.Find(w.Launches, func(l *Launch) bool { return id != "" && l.AgentID == id })
}

// InFlight lists the launches still running, oldest first.
func (w *Workflow) InFlight() []*Launch {
	var out []*Launch
	for _, l := range w.Launches {
		if l.Status == gates.Running {
			out = append(out, l)
		}
	}
	return out
}

func (w *Workflow) inFlightOf(agent string) []*Launch {
	var out []*Launch
	for _, l := range w.InFlight() {
		if l.Agent == agent {
			out = append(out, l)
		}
	}
	return out
}

func (w *Workflow) task(n int) *TaskRun {
	if w.Tasks == nil {
		w.Tasks = map[int]*TaskRun{}
	}
	t := w.Tasks[n]
	if t == nil {
		t = &TaskRun{}
		w.Tasks[n] = t
	}
	return t
}

// taskDone reports whether a task counts as returned in this step.
func (t *TaskRun) done() bool {
	return t != nil && (t.Status == TaskComplete || t.Status == gates.Returned)
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func sortedKeys(m map[int]*TaskRun) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// fire applies the first row of the table that matches the current state
// and trigger and whose guard holds. It returns the row, or a
// *TransitionError naming the state and the failed guard.
func (w *Workflow) fire(on gates.Trigger, env *Env) (gates.Transition, error) {
	t, err := orchestrate.Fire(orch{w, env}, w.Current, on)
	if err != nil {
		return gates.Transition{}, err
	}
	w.moveTo(t.To)
	return t, nil
}

// moveTo changes the state, recording the state left in completed_states
// once, and resets what a transition resets.
func (w *Workflow) moveTo(to gates.State) {
	if w.Current != "" && w.Current != to && !contains(w.Completed, w.Current) {
		w.Completed = append(w.Completed, w.Current)
	}
	if w.Current != to {
		w.Failures = nil // the step is left: its failures no longer count
	}
	w.Current = to
	w.StopBlocks = 0
}

// guards are the named conditions of the table. They read the counters as
// they stand when the trigger arrives (see Decide for what each trigger
// counts first).
// orch is what the orchestrate table's guards read: the workflow and the
// hook call's environment (the plan on disk).
type orch struct {
	w   *Workflow
	env *Env
}

// orchestrate is the orchestrate workflow's machine.
var orchestrate = &gates.Machine[orch]{Rows: Transitions, Guards: guards}

var guards = withAgentGuards(map[string]func(orch) bool{
	GuardRoundsLeft:        func(o orch) bool { return o.w.Rounds < o.w.limits().ClarificationRounds },
	GuardRoundsUsed:        func(o orch) bool { return o.w.Rounds >= o.w.limits().ClarificationRounds },
	GuardDiscoveryReturned: func(o orch) bool { return o.w.discoveryReturned() },
	GuardDiscoveryLeft:     func(o orch) bool { return o.w.Discovery < o.w.limits().DiscoveryLoops },
	GuardDiscoveryUsed:     func(o orch) bool { return o.w.Discovery >= o.w.limits().DiscoveryLoops },
	GuardPlanValid: func(o orch) bool {
		_, err := o.env.plan()
		return err == nil
	},
	GuardAllTasksReturned:     func(o orch) bool { return o.w.allTasksReturned(o.env) },
	GuardFixesLeft:            func(o orch) bool { return o.w.FixIterations < o.w.limits().FixIterations },
	GuardFixesUsed:            func(o orch) bool { return o.w.FixIterations >= o.w.limits().FixIterations },
	GuardFailingTasksReturned: func(o orch) bool { return o.w.failingReturned() },
	GuardPhaseCheckedMoreLeft: func(o orch) bool {
		p, err := o.env.plan()
		return err == nil && p.PhaseChecked(o.w.Phase) && p.NextOpenPhase(o.w.Phase) != 0
	},
	GuardAllPhasesChecked: func(o orch) bool {
		p, err := o.env.plan()
		return err == nil && p.PhaseChecked(o.w.Phase) && p.NextOpenPhase(o.w.Phase) == 0
	},
	GuardUXRequired:      func(o orch) bool { return o.w.uxRequired() },
	GuardNoUX:            func(o orch) bool { return !o.w.uxRequired() },
	GuardFinalLeft:       func(o orch) bool { return o.w.FinalFailures < o.w.limits().FinalValidationFailures },
	GuardFinalUsed:       func(o orch) bool { return o.w.FinalFailures >= o.w.limits().FinalValidationFailures },
	GuardFixEscalation:   func(o orch) bool { return o.w.Escalation != nil && o.w.Escalation.Kind == EscalationFix },
	GuardFinalEscalation: func(o orch) bool { return o.w.Escalation != nil && o.w.Escalation.Kind == EscalationFinal },
})

func (w *Workflow) discoveryReturned() bool {
	var r, e bool
	for _, l := range w.Launches[min(w.DiscoveryFrom, len(w.Launches)):] {
		if l.Job != JobDiscovery || l.Status != gates.Returned {
			continue
		}
		switch l.Agent {
		case Researcher:
			r = true
		case Explorer:
			e = true
		}
	}
	return r && e
}

// allTasksReturned reads the phase from the plan snapshot, not the live
// files: what the phase holds was fixed when it was taken.
func (w *Workflow) allTasksReturned(env *Env) bool {
	ph := w.Plan.Phase(w.Phase)
	if ph == nil || len(ph.Tasks) == 0 {
		return false
	}
	for _, t := range ph.Tasks {
		if !w.Tasks[t.Number].done() {
			return false
		}
	}
	return true
}

func (w *Workflow) failingReturned() bool {
	if len(w.FailingTasks) == 0 {
		return false
	}
	for _, n := range w.FailingTasks {
		if !w.Tasks[n].done() {
			return false
		}
	}
	return true
}

func (w *Workflow) uxRequired() bool {
	if w.Plan == nil || !w.Settings().Steps.UXDXReview {
		return false
	}
	for _, ph := range w.Plan.Phases {
		for _, t := range ph.Tasks {
			if t.UXDX {
				return true
			}
		}
	}
	return false
}

// ErrorState is the checkpoint's error_state while an escalation is open
// (seed 000): what failed, at which step, and how many tries it had; ok is
// false when none is open (error_state is then cleared).
func (w *Workflow) ErrorState() (lastError string, failed gates.State, retries int, class string, ok bool) {
	e := w.Escalation
	if e == nil {
		if a, ok := w.Failures.Last(w.Current); ok {
			return a.What() + ": " + a.Error, w.Current, w.Failures.Count(a.Agent, a.Unit), a.Class, true
		}
		return "", "", 0, "", false
	}
	if e.Kind == EscalationAgent && len(e.Attempts) > 0 {
		a := e.Attempts[len(e.Attempts)-1]
		return a.What() + ": " + a.Error, e.From, len(e.Attempts), a.Class, true
	}
	if e.Kind == EscalationFinal {
		return fmt.Sprintf("final validation failed %d times (limit %d)", w.FinalFailures, w.limits().FinalValidationFailures), e.From, w.FinalFailures, "", true
	}
	return fmt.Sprintf("the quality gate of phase %d failed %d times (limit %d fix iterations)", e.Phase, w.FixIterations, w.limits().FixIterations), e.From, w.FixIterations, "", true
}
