package orchestrate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

var allStates = []gates.State{S0a, S1, S0b, S2, S3, S4a, S4b, SF1, SF2, S4c, S5a, S5b, S6, S7, Escalated, Complete, Aborted}

var allTriggers = []gates.Trigger{OnStart, OnQuestions, OnClear, OnDiscovery, OnAnswers, OnDiscoveryDone, OnPlanReturned,
	OnApprove, OnRequestChanges, OnTaskReturned, OnPass, OnFail, OnAnalysis, OnPlanUpdated, OnExtraction,
	OnFollowUp, OnLightweight, OnPartial, OnFull, OnRetry, OnSkip, OnAbort, OnPhaseAppended, OnTaskBlockedRetry, OnAgentFailures}

func init() {
	// The agent escalation's guards (failures.go).
	guardFixtures[GuardRetriesUsed] = guardFixture{set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Failures = &gates.Failures{}
		for i := 0; i < ifElse(holds, gates.MaxRetries+1, gates.MaxRetries); i++ {
			w.Failures.Record(w.Current, gates.Attempt{Agent: Implementer, Unit: "Task 01", Class: gates.Transient, Error: "died"})
		}
		return f
	}}
	guardFixtures[GuardAgentPhaseEscalation] = guardFixture{set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		if holds {
			w.Escalation = &Escalation{Kind: EscalationAgent, Phase: 1, From: S4a, Agent: Implementer, Unit: "Task 01"}
		}
		return f
	}}
	for _, s := range AgentStates {
		guardFixtures[GuardAgentEscalationFrom(s)] = guardFixture{set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
			if holds {
				w.Escalation = &Escalation{Kind: EscalationAgent, From: s, Agent: Planner}
			}
			return f
		}}
	}
}

// guardFixture makes a guard hold or fail on a workflow built at a row's
// From state. sibling is the To of the row that fires instead when the
// guard fails ("" when the trigger is refused).
type guardFixture struct {
	set     func(w *Workflow, f PlanFiles, holds bool) PlanFiles
	sibling gates.State
}

func ifElse[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

var guardFixtures = map[string]guardFixture{
	GuardRoundsLeft: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Rounds = ifElse(holds, MaxRounds-1, MaxRounds)
		return f
	}},
	GuardRoundsUsed: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Rounds = ifElse(holds, MaxRounds, MaxRounds-1)
		return f
	}},
	GuardDiscoveryReturned: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		// An earlier round's explorer does not count.
		w.Launches = []*Launch{
			{Agent: Explorer, Job: JobDiscovery, Status: gates.Returned},
			{Agent: Analyst, Job: JobClarify, Status: gates.Returned},
			{Agent: Researcher, Job: JobDiscovery, Status: gates.Returned},
			{Agent: Explorer, Job: JobDiscovery, Status: ifElse(holds, gates.Returned, gates.Running)},
		}
		w.DiscoveryFrom = 2
		return f
	}},
	GuardDiscoveryLeft: {sibling: S2, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Discovery = ifElse(holds, MaxDiscovery-1, MaxDiscovery)
		return f
	}},
	GuardDiscoveryUsed: {sibling: S1, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Discovery = ifElse(holds, MaxDiscovery, MaxDiscovery-1)
		return f
	}},
	GuardPlanValid: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		if !holds {
			delete(f, taskFileName(2))
		}
		return f
	}},
	GuardAllTasksReturned: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Tasks = map[int]*TaskRun{1: {Status: TaskComplete}, 2: {Status: gates.Returned, Blocked: 3}, 3: {Status: ifElse(holds, TaskComplete, gates.Running)}}
		return f
	}},
	GuardFixesLeft: {sibling: Escalated, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.FixIterations = ifElse(holds, MaxFixIterations-1, MaxFixIterations)
		return f
	}},
	GuardFixesUsed: {sibling: SF1, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.FixIterations = ifElse(holds, MaxFixIterations, MaxFixIterations-1)
		return f
	}},
	GuardFailingTasksReturned: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.FailingTasks = []int{2, 3}
		w.Tasks = map[int]*TaskRun{1: {Status: TaskComplete}, 2: {Status: TaskComplete}, 3: {Status: ifElse(holds, TaskComplete, TaskBlocked)}}
		return f
	}},
	GuardPhaseCheckedMoreLeft: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Phase = 1
		if holds {
			f[MasterPlan] = []byte(tickText(string(f[MasterPlan]), 1, 2, 3))
		} else {
			f[MasterPlan] = []byte(tickText(string(f[MasterPlan]), 1, 2))
		}
		return f
	}},
	GuardAllPhasesChecked: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Phase = 2
		f[MasterPlan] = []byte(tickText(string(f[MasterPlan]), 1, 2, 3, 4))
		if holds {
			f[MasterPlan] = []byte(tickText(string(f[MasterPlan]), 5))
		}
		return f
	}},
	GuardUXRequired: {sibling: S6, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Plan = ParsePlan(planFiles(twoPhases(holds)...)).Snapshot()
		return f
	}},
	GuardNoUX: {sibling: S5b, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.Plan = ParsePlan(planFiles(twoPhases(!holds)...)).Snapshot()
		return f
	}},
	GuardFinalLeft: {sibling: Escalated, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.FinalFailures = ifElse(holds, MaxFinalFailures-1, MaxFinalFailures)
		return f
	}},
	GuardFinalUsed: {sibling: S4a, set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		w.FinalFailures = ifElse(holds, MaxFinalFailures, MaxFinalFailures-1)
		return f
	}},
	GuardFixEscalation: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		if holds {
			w.Escalation = &Escalation{Kind: EscalationFix, Phase: 1, From: S4b}
		}
		return f
	}},
	GuardFinalEscalation: {set: func(w *Workflow, f PlanFiles, holds bool) PlanFiles {
		if holds {
			w.Escalation = &Escalation{Kind: EscalationFinal, From: S5a}
		}
		return f
	}},
}

// rowFixture is a workflow at tr.From (default plan approved, phase 1)
// with tr's guard holding or not.
func rowFixture(tr gates.Transition, holds bool) (*Workflow, *Env) {
	f := planFiles(twoPhases(false)...)
	w := &Workflow{Current: tr.From, Plan: ParsePlan(f).Snapshot(), Phase: 1}
	if tr.Guard != "" {
		f = guardFixtures[tr.Guard].set(w, f, holds)
	}
	return w, &Env{Root: testRoot, Files: f}
}

// lastGuard is the guard fire reports when no row from state on trigger
// holds: the last one it tried.
func lastGuard(state gates.State, on gates.Trigger) string {
	g := ""
	for _, t := range Transitions {
		if t.From == state && t.On == on && t.Guard != "" {
			g = t.Guard
		}
	}
	return g
}

// TestTransitionRows fires every row of the table from its From state:
// with its guard holding it moves to To; with the guard failing the
// trigger is refused with a *TransitionError naming the state and the
// guard, or (for complementary guards) the sibling row fires.
func TestTransitionRows(t *testing.T) {
	for i, tr := range Transitions {
		name := fmt.Sprintf("%02d %s -[%s]-> %s", i, gates.OrText(string(tr.From), "(none)"), tr.On, tr.To)
		t.Run(name, func(t *testing.T) {
			if _, ok := guardFixtures[tr.Guard]; tr.Guard != "" && !ok {
				t.Fatalf("no fixture for guard %q", tr.Guard)
			}
			w, env := rowFixture(tr, true)
			got, err := w.fire(tr.On, env)
			if err != nil {
				t.Fatalf("fire: %v", err)
			}
			if got != tr || w.Current != tr.To {
				t.Fatalf("fired %+v to %q, want %+v", got, w.Current, tr)
			}
			if tr.From != "" && tr.From != tr.To && !contains(w.Completed, tr.From) {
				t.Errorf("completed_states %v lacks %q", w.Completed, tr.From)
			}
			if tr.Guard == "" {
				return
			}
			w, env = rowFixture(tr, false)
			w.StopBlocks = 2
			got, err = w.fire(tr.On, env)
			if sib := guardFixtures[tr.Guard].sibling; sib != "" {
				if err != nil || w.Current != sib || got.Guard == tr.Guard {
					t.Fatalf("guard failing: fired %+v (err %v) to %q, want the sibling row to %q", got, err, w.Current, sib)
				}
				return
			}
			var te *gates.TransitionError
			if !errors.As(err, &te) {
				t.Fatalf("guard failing: err = %v, want *TransitionError", err)
			}
			want := gates.TransitionError{State: tr.From, Trigger: tr.On, Guard: lastGuard(tr.From, tr.On), Valid: ValidTriggers(tr.From)}
			if !reflect.DeepEqual(*te, want) {
				t.Errorf("error = %+v, want %+v", *te, want)
			}
			if !strings.Contains(te.Error(), string(tr.From)) || !strings.Contains(te.Error(), te.Guard) {
				t.Errorf("error text %q does not name state and guard", te.Error())
			}
			if w.Current != tr.From || w.StopBlocks != 2 || len(w.Completed) != 0 {
				t.Errorf("a refused trigger changed the workflow: state %q, stop blocks %d, completed %v", w.Current, w.StopBlocks, w.Completed)
			}
		})
	}
}

// TestTriggersWithoutRowRefused: every (state, trigger) pair without a row
// is refused, naming the state and listing the triggers allowed there.
func TestTriggersWithoutRowRefused(t *testing.T) {
	for _, s := range append([]gates.State{""}, allStates...) {
		for _, on := range allTriggers {
			has := false
			for _, tr := range Transitions {
				if tr.From == s && tr.On == on {
					has = true
				}
			}
			if has {
				continue
			}
			w := &Workflow{Current: s}
			_, err := w.fire(on, &Env{})
			var te *gates.TransitionError
			if !errors.As(err, &te) || !reflect.DeepEqual(*te, gates.TransitionError{State: s, Trigger: on, Valid: ValidTriggers(s)}) {
				t.Errorf("%q on %q: err = %v, want a TransitionError without guard", s, on, err)
				continue
			}
			msg := te.Error()
			if !strings.Contains(msg, string(on)+" is not allowed at state "+string(s)) || !strings.Contains(msg, gates.Join(ValidTriggers(s), "; ")) {
				t.Errorf("%q on %q: message %q", s, on, msg)
			}
			if w.Current != s {
				t.Errorf("%q on %q moved to %q", s, on, w.Current)
			}
		}
	}
}

func TestTableShape(t *testing.T) {
	seen := map[[3]string]bool{}
	rows := map[[4]string]bool{}
	for _, tr := range Transitions {
		k := [3]string{string(tr.From), string(tr.On), string(tr.To)}
		if r := [4]string{k[0], k[1], k[2], tr.Guard}; rows[r] {
			t.Errorf("row %v appears twice", r)
		} else {
			rows[r] = true
		}
		seen[k] = true
		if tr.Guard != "" && guards[tr.Guard] == nil {
			t.Errorf("row %v names unknown guard %q", k, tr.Guard)
		}
	}
	// Every state but complete and aborted can be aborted.
	for _, s := range allStates {
		want := s != Complete && s != Aborted
		if got := seen[[3]string{string(s), OnAbort, Aborted}]; got != want {
			t.Errorf("abort row from %q present = %v, want %v", s, got, want)
		}
	}
	// The seven gates are on the rows of their steps.
	gateOf := map[[2]gates.State]int{
		{S4a, S4b}: 1, {S4b, S4c}: 2, {S4c, S4a}: 2, {S4c, S5a}: 2, {S4b, SF1}: 3, {SF1, SF2}: 3, {SF2, S4b}: 3,
		{S5a, S6}: 4, {S6, Complete}: 4, {S5a, S5b}: 5, {S5a, S4a}: 6, {S5b, S6}: 7, {S5b, S4a}: 7,
	}
	for _, tr := range Transitions {
		if g, ok := gateOf[[2]gates.State{tr.From, tr.To}]; ok && tr.Gate != g {
			t.Errorf("%s -> %s: gate %d, want %d", tr.From, tr.To, tr.Gate, g)
		}
	}
}

func TestCompiledTable(t *testing.T) {
	a, b := CompiledTable(), CompiledTable()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("CompiledTable is not deterministic")
	}
	want := map[string]string{
		S0a:       "0a,1,2,aborted,escalated",
		S1:        "0b,aborted,escalated",
		S0b:       "0b,1,2,aborted,escalated",
		S2:        "3,aborted,escalated",
		S3:        "2,4a,aborted",
		S4a:       "4a,4b,aborted,escalated",
		S4b:       "4c,F1,aborted,escalated",
		SF1:       "F2,aborted,escalated",
		SF2:       "4b,aborted,escalated",
		S4c:       "4a,5a,aborted",
		S5a:       "4a,5b,6,aborted,escalated",
		S5b:       "4a,6,aborted,escalated",
		S6:        "aborted,complete,escalated",
		S7:        "0a,2,4a,aborted",
		Escalated: "0a,0b,1,2,4a,4b,4c,5a,5b,6,F1,F2,aborted",
		Complete:  "7",
		Aborted:   "",
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("CompiledTable() =\n%v\nwant\n%v", a, want)
	}
	// Every state is reachable from the start.
	reached := map[gates.State]bool{}
	queue := []gates.State{""}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, tr := range Transitions {
			if tr.From == s && !reached[tr.To] {
				reached[tr.To] = true
				queue = append(queue, tr.To)
			}
		}
	}
	for _, s := range allStates {
		if !reached[s] {
			t.Errorf("state %q is unreachable", s)
		}
		if _, ok := a[string(s)]; !ok {
			t.Errorf("state %q missing from CompiledTable", s)
		}
	}
	if len(a) != len(allStates) {
		t.Errorf("CompiledTable has %d states, want %d", len(a), len(allStates))
	}
	if !Finished(Complete) || !Finished(Aborted) || Finished(Escalated) || Finished(S6) {
		t.Error("Finished: only complete and aborted end gating")
	}
}

func TestValidTriggers(t *testing.T) {
	if got, want := ValidTriggers(S4b), []gates.Trigger{OnFail, OnPass, OnAgentFailures, OnAbort}; !reflect.DeepEqual(got, want) {
		t.Errorf("ValidTriggers(4b) = %v, want %v", got, want)
	}
	if got := ValidTriggers(Aborted); len(got) != 0 {
		t.Errorf("ValidTriggers(aborted) = %v, want none", got)
	}
}

// TestDriveTargets: the harness reaches every target through real calls,
// with background and foreground agents.
func TestDriveTargets(t *testing.T) {
	for _, tc := range []struct {
		target string
		plan   []phase
	}{
		{S0a, nil}, {questionsPending, nil}, {S1, nil}, {S0b, nil}, {S2, nil}, {S3, nil}, {S4a, nil}, {S4b, nil},
		{SF1, nil}, {SF2, nil}, {S4c, nil}, {S5a, nil}, {S5b, twoPhases(true)}, {S6, nil}, {S6, twoPhases(true)},
		{Complete, nil}, {Aborted, nil}, {escalatedFix, nil}, {awaitFix5a, nil}, {awaitFix5b, onePhase(true)},
		{escalatedFinal, onePhase(false)},
	} {
		for _, fg := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/foreground=%t", tc.target, fg), func(t *testing.T) {
				h := newHarness(t, tc.plan...)
				h.fg = fg
				h.to(tc.target)
				seen := map[gates.State]bool{}
				for _, s := range h.w.Completed {
					if seen[s] {
						t.Errorf("completed_states %v lists %q twice", h.w.Completed, s)
					}
					seen[s] = true
				}
			})
		}
	}
}
