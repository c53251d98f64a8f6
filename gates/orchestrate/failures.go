package orchestrate

import (
	"fmt"

	"github.com/orch-hook/orch-hook/gates"
)

// AgentStates are the steps whose agents can fail: a work (one agent, on
// one task) that fails a third time in one of them escalates to the user
// (README, "Failures and retries").
var AgentStates = []gates.State{S0a, S1, S0b, S2, S4a, S4b, SF1, SF2, S5a, S5b, S6}

// phaseWork are the steps of a phase's work: an agent escalation there can
// be skipped as the fix escalation is (the phase marked skipped, a known
// issue).
var phaseWork = []gates.State{S4a, S4b, SF1, SF2}

// Trigger and guards of agent escalations.
const (
	OnAgentFailures            = "a work failed 3 times"
	GuardRetriesUsed           = "the work failed more than limits.retries times in this step"
	GuardAgentPhaseEscalation  = "escalated by agent failures in a phase's work (4a, 4b, F1, F2)"
	guardAgentEscalationPrefix = "escalated by agent failures at "
)

// GuardAgentEscalationFrom names the guard of the retry row back to s.
func GuardAgentEscalationFrom(s gates.State) string { return guardAgentEscalationPrefix + string(s) }

// withAgentEscalation adds the agent-failure rows: every agent step
// escalates on a work's third failure; a retry returns to the step it
// escalated from; a skip of a phase's work goes to 4c as the fix
// escalation's does.
func withAgentEscalation(rows []gates.Transition) []gates.Transition {
	for _, s := range AgentStates {
		rows = append(rows, gates.Transition{From: s, To: Escalated, On: OnAgentFailures, Guard: GuardRetriesUsed})
	}
	for _, s := range AgentStates {
		rows = append(rows, gates.Transition{From: Escalated, To: s, On: OnRetry, Guard: GuardAgentEscalationFrom(s)})
	}
	return append(rows, gates.Transition{From: Escalated, To: S4c, On: OnSkip, Guard: GuardAgentPhaseEscalation})
}

// withAgentGuards adds the guards of withAgentEscalation's rows.
func withAgentGuards(g map[string]func(orch) bool) map[string]func(orch) bool {
	g[GuardRetriesUsed] = func(o orch) bool { return o.w.Failures.Worst(o.w.Current) > o.w.limits().Retries }
	g[GuardAgentPhaseEscalation] = func(o orch) bool {
		e := o.w.Escalation
		return e != nil && e.Kind == EscalationAgent && contains(phaseWork, e.From)
	}
	for _, s := range AgentStates {
		g[GuardAgentEscalationFrom(s)] = func(o orch) bool {
			e := o.w.Escalation
			return e != nil && e.Kind == EscalationAgent && e.From == s
		}
	}
	return g
}

// failed records that a launch failed (class: gates.Transient or
// gates.Permanent) and says what comes next: a relaunch, or, at the
// work's third failure in this step, the escalation. A launch made in a
// step the workflow has left is logged only: that step's count is gone.
func (w *Workflow) failed(l *Launch, class, why string, env *Env, o *gates.Outcome) string {
	a := gates.Attempt{Agent: l.Agent, Class: class, Error: why, Time: env.Now}
	if l.Task > 0 {
		a.Unit = fmt.Sprintf("Task %02d", l.Task)
	}
	if l.State != w.Current {
		return fmt.Sprintf("%s %s launch of %s ended (%s: %s) after the workflow left step %s; nothing changes.", w.stepTag(), w.Current, a.What(), class, why, l.State)
	}
	if w.Failures == nil {
		w.Failures = &gates.Failures{}
	}
	n := w.Failures.Record(w.Current, a)
	if !gates.Exhausted(n, w.limits().Retries) {
		return fmt.Sprintf("%s %s %s %s; %s.", w.stepTag(), w.Current, a.What(), why, gates.RetryLine(a, n, w.limits().Retries))
	}
	from, tag, history := w.Current, w.stepTag(), w.Failures.Of(a.Agent, a.Unit)
	if _, err := w.fire(OnAgentFailures, env); err != nil {
		return fmt.Sprintf("%s %s %s failed %d times, but the escalation is refused: %v", tag, from, a.What(), n, err)
	}
	w.escalate(EscalationAgent, from, o)
	w.Escalation.Agent, w.Escalation.Unit, w.Escalation.Attempts = a.Agent, a.Unit, history
	return fmt.Sprintf("%s %s -> escalated | %s failed %d times in step %s (last: %s, a %s failure); do not relaunch it: tell the user to see %s and decide with /orch-hook:resolve retry|%sabort", tag, from, a.What(), n, from, a.Error, class, EscalationFile, skipOption(from))
}

// skipOption is "skip|" where a skip exists for an escalation from s.
func skipOption(s gates.State) string {
	if contains(phaseWork, s) {
		return "skip|"
	}
	return ""
}
