package orchestrate

import "github.com/orch-hook/orch-hook/gates"

// States of the orchestrate workflow (README, "The orchestrate workflow"). current_state is
// always the step the workflow waits for next.
const (
	S0a       = "0a" // initial clarification (requirements-analyst)
	S1        = "1"  // discovery (researcher + code-explorer)
	S0b       = "0b" // post-discovery clarification
	S2        = "2"  // planning (task-planner)
	S3        = "3"  // user approval
	S4a       = "4a" // implementation (code-implementer per task)
	S4b       = "4b" // quality gate (code-quality)
	SF1       = "F1" // failure analysis (task-planner FAILURE_ANALYSIS)
	SF2       = "F2" // fixes (code-implementer, failing tasks only)
	S4c       = "4c" // plan update (orchestrator)
	S5a       = "5a" // final objective validation (code-quality)
	S5b       = "5b" // final subjective validation (ux-dx-quality)
	S6        = "6"  // completion (task-planner SUCCESS_EXTRACTION)
	S7        = "7"  // follow-up triage (/orch-hook:follow-up)
	Escalated = "escalated"
	Complete  = "complete"
	Aborted   = "aborted"
)

// TableVersion stamps the compiled table stored in checkpoints. Bump it
// whenever Transitions changes.
const TableVersion = 4

// Triggers: what makes a transition fire.
const (
	OnStart            = "start"
	OnQuestions        = "QUESTIONS_NEEDED"
	OnClear            = "REQUIREMENTS_CLEAR"
	OnDiscovery        = "DISCOVERY_NEEDED"
	OnAnswers          = "user answers"
	OnDiscoveryDone    = "a discovery agent returned"
	OnPlanReturned     = "task-planner returned"
	OnApprove          = "/orch-hook:approve"
	OnRequestChanges   = "/orch-hook:request-changes"
	OnTaskReturned     = "code-implementer returned"
	OnPass             = "PASS"
	OnFail             = "FAIL"
	OnAnalysis         = "FAILURE_ANALYSIS: COMPLETE"
	OnPlanUpdated      = "MASTER_PLAN.md updated"
	OnExtraction       = "SUCCESS_EXTRACTION: COMPLETE"
	OnFollowUp         = "/orch-hook:follow-up"
	OnLightweight      = "LIGHTWEIGHT"
	OnPartial          = "PARTIAL"
	OnFull             = "FULL"
	OnRetry            = "/orch-hook:resolve retry"
	OnSkip             = "/orch-hook:resolve skip"
	OnAbort            = "abort"
	OnPhaseAppended    = "phase appended"
	OnTaskBlockedRetry = "code-implementer BLOCKED"
)

// Transitions is the orchestrate workflow's state machine (README, "The
// orchestrate workflow"), with the open questions decided as README, "The
// rules in detail" says.
var Transitions = withAbort(withAgentEscalation([]gates.Transition{
	{From: "", To: S0a, On: OnStart},

	{From: S0a, To: S0a, On: OnQuestions, Guard: GuardRoundsLeft},
	{From: S0a, To: S2, On: OnClear},
	{From: S0a, To: S2, On: OnAnswers, Guard: GuardRoundsUsed},
	{From: S0a, To: S1, On: OnDiscovery},

	{From: S1, To: S0b, On: OnDiscoveryDone, Guard: GuardDiscoveryReturned},

	{From: S0b, To: S0b, On: OnQuestions, Guard: GuardRoundsLeft},
	{From: S0b, To: S2, On: OnClear},
	{From: S0b, To: S2, On: OnAnswers, Guard: GuardRoundsUsed},
	{From: S0b, To: S1, On: OnDiscovery, Guard: GuardDiscoveryLeft},
	{From: S0b, To: S2, On: OnDiscovery, Guard: GuardDiscoveryUsed},

	{From: S2, To: S3, On: OnPlanReturned, Guard: GuardPlanValid},
	{From: S3, To: S4a, On: OnApprove},
	{From: S3, To: S2, On: OnRequestChanges},

	{From: S4a, To: S4a, On: OnPhaseAppended, Guard: GuardPlanValid},
	{From: S4a, To: S4b, On: OnTaskReturned, Guard: GuardAllTasksReturned, Gate: 1},
	{From: S4b, To: S4c, On: OnPass, Gate: 2},
	{From: S4b, To: SF1, On: OnFail, Guard: GuardFixesLeft, Gate: 3},
	{From: S4b, To: Escalated, On: OnFail, Guard: GuardFixesUsed, Gate: 3},
	{From: SF1, To: SF2, On: OnAnalysis, Gate: 3},
	{From: SF2, To: S4b, On: OnTaskReturned, Guard: GuardFailingTasksReturned, Gate: 3},
	{From: S4c, To: S4a, On: OnPlanUpdated, Guard: GuardPhaseCheckedMoreLeft, Gate: 2},
	{From: S4c, To: S5a, On: OnPlanUpdated, Guard: GuardAllPhasesChecked, Gate: 2},

	{From: S5a, To: S5b, On: OnPass, Guard: GuardUXRequired, Gate: 5},
	{From: S5a, To: S6, On: OnPass, Guard: GuardNoUX, Gate: 4},
	{From: S5a, To: S4a, On: OnFail, Guard: GuardFinalLeft, Gate: 6},
	{From: S5a, To: Escalated, On: OnFail, Guard: GuardFinalUsed, Gate: 6},
	{From: S5b, To: S6, On: OnPass, Gate: 7},
	{From: S5b, To: S4a, On: OnFail, Guard: GuardFinalLeft, Gate: 7},
	{From: S5b, To: Escalated, On: OnFail, Guard: GuardFinalUsed, Gate: 7},

	{From: S6, To: Complete, On: OnExtraction, Gate: 4},
	{From: Complete, To: S7, On: OnFollowUp},
	{From: S7, To: S4a, On: OnLightweight},
	{From: S7, To: S2, On: OnPartial},
	{From: S7, To: S0a, On: OnFull},

	{From: Escalated, To: SF1, On: OnRetry, Guard: GuardFixEscalation},
	{From: Escalated, To: S4c, On: OnSkip, Guard: GuardFixEscalation},
	{From: Escalated, To: S4a, On: OnRetry, Guard: GuardFinalEscalation},
	{From: Escalated, To: S6, On: OnSkip, Guard: GuardFinalEscalation},
}))

// withAbort adds the abort rows: every state that is neither complete nor
// aborted can be aborted.
func withAbort(rows []gates.Transition) []gates.Transition {
	for _, s := range []gates.State{S0a, S1, S0b, S2, S3, S4a, S4b, SF1, SF2, S4c, S5a, S5b, S6, S7, Escalated} {
		rows = append(rows, gates.Transition{From: s, To: Aborted, On: OnAbort})
	}
	return rows
}

// Guard names: each is a condition on the workflow's counters or plan.
const (
	GuardRoundsLeft           = "clarification rounds < limits.clarification_rounds"
	GuardRoundsUsed           = "clarification rounds >= limits.clarification_rounds (forced: defaults)"
	GuardDiscoveryReturned    = "researcher and code-explorer both returned"
	GuardDiscoveryLeft        = "discovery < limits.discovery_loops"
	GuardDiscoveryUsed        = "discovery >= limits.discovery_loops (forced)"
	GuardPlanValid            = "plan validates"
	GuardAllTasksReturned     = "every task of the phase returned"
	GuardFixesLeft            = "fix iterations < limits.fix_iterations"
	GuardFixesUsed            = "fix iterations >= limits.fix_iterations"
	GuardFailingTasksReturned = "every failing task returned"
	GuardPhaseCheckedMoreLeft = "phase checked, a phase remains"
	GuardAllPhasesChecked     = "every phase checked"
	GuardUXRequired           = "a task requires UX/DX review and step 5b is on"
	GuardNoUX                 = "no task requires UX/DX review, or step 5b is off"
	GuardFinalLeft            = "final-validation failures < limits.final_validation_failures"
	GuardFinalUsed            = "final-validation failures >= limits.final_validation_failures"
	GuardFixEscalation        = "escalated from 4b"
	GuardFinalEscalation      = "escalated from final validation"
)

// ValidTriggers lists the triggers with a row from state, sorted.
func ValidTriggers(state gates.State) []gates.Trigger { return orchestrate.Triggers(orch{}, state) }

// CompiledTable is the transition table stored in checkpoints: each state
// mapped to its successors, sorted and comma-separated ("" for none), as
// checkpoint v2.0's transition_table (README, "State").
func CompiledTable() map[string]string { return orchestrate.Compile(orch{}, "") }

// Finished reports whether state ends gating (nothing is blocked there).
func Finished(state gates.State) bool { return state == Complete || state == Aborted }

// GateRule is one of the orchestrate workflow's seven gates (README, "The
// seven gates").
type GateRule struct {
	After     string   `json:"after"`
	Allowed   []string `json:"allowed"`
	Forbidden []string `json:"forbidden"`
}

// Gates are the seven gates, by number: after which step each applies,
// what it allows and what it forbids (README, "The seven gates").
var Gates = map[int]GateRule{
	1: {After: "4a (code-implementer returns)", Allowed: []string{"invoke code-quality for 4b"}, Forbidden: []string{"another phase", "fix (no failure yet)", "update plan", "skip to 4c"}},
	2: {After: "4b PASS", Allowed: []string{"update MASTER_PLAN.md", "proceed to next phase or phase 5"}, Forbidden: []string{"SUCCESS_EXTRACTION (moved to phase 6)", "skip plan update"}},
	3: {After: "4b FAIL", Allowed: []string{"task-planner FAILURE_ANALYSIS", "code-implementer fix (only failing tasks)", "loop back to 4b"}, Forbidden: []string{"fix without FAILURE_ANALYSIS", "proceed to 4c", "fix all tasks"}},
	4: {After: "phase 5 PASS", Allowed: []string{"proceed to phase 6"}, Forbidden: []string{"skip phase 6", "skip SUCCESS_EXTRACTION"}},
	5: {After: "5a PASS", Allowed: []string{"5b if any task has requires_ux_dx_review: true", "else phase 6"}, Forbidden: []string{"skip 5b if required"}},
	6: {After: "5a FAIL", Allowed: []string{"create fix tasks", "return to phase 4"}, Forbidden: []string{"proceed to 5b", "proceed to phase 6"}},
	7: {After: "5b", Allowed: []string{"phase 6 if PASS", "fix tasks and phase 4 if FAIL"}, Forbidden: []string{"skip fixes if 5b fails"}},
}
