package gates

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// State is a state of a workflow's table ("4a", "research"); Trigger is
// what moves it ("PHASE GATE STATUS: PASS", "approve"). Both are stored as
// their strings (state_machine in the checkpoint, the log's records).
type (
	State   string
	Trigger string
)

// Machine is a workflow's state machine as data: rows (Transition) whose
// named guards read a subject S, the workflow's data as a trigger finds it.
// Both workflows use it, so there is one Fire, one trigger list and one
// compiler of the stored table (README, "State").
type Machine[S any] struct {
	Rows   []Transition
	Guards map[string]func(S) bool
	// Fixed names the guards that hold or fail for a workflow's whole life
	// (the coordinate workflow's scope): a row whose fixed guard fails is
	// not on that workflow's table at all, so its trigger is not listed
	// as valid and its edge is not stored.
	Fixed func(guard string) bool
}

// Fire finds the first row from state on trigger whose guard holds for s.
// It changes nothing: the caller moves to the row's To. A trigger no row
// allows is a *TransitionError naming the state, the trigger, the last
// guard that failed (if a row matched) and the triggers valid there.
func (m *Machine[S]) Fire(s S, from State, on Trigger) (Transition, error) {
	var failed string
	for _, t := range m.Rows {
		if t.From != from || t.On != on {
			continue
		}
		if t.Guard != "" && !m.Guards[t.Guard](s) {
			failed = t.Guard
			continue
		}
		return t, nil
	}
	return Transition{}, &TransitionError{State: from, Trigger: on, Guard: failed, Valid: m.Triggers(s, from)}
}

// onTable reports whether row t is on s's table: its guard is not a fixed
// one that fails for s.
func (m *Machine[S]) onTable(s S, t Transition) bool {
	return t.Guard == "" || m.Fixed == nil || !m.Fixed(t.Guard) || m.Guards[t.Guard](s)
}

// Triggers lists the triggers with a row from state on s's table, sorted.
func (m *Machine[S]) Triggers(s S, from State) []Trigger {
	seen := map[Trigger]bool{}
	var out []Trigger
	for _, t := range m.Rows {
		if t.From != from || seen[t.On] || !m.onTable(s, t) {
			continue
		}
		seen[t.On] = true
		out = append(out, t.On)
	}
	slices.Sort(out)
	return out
}

// Compile is the table stored in a checkpoint for s: each state mapped to
// its successors, sorted and comma-separated ("" for none). With start
// "", every state of every row on s's table; else only the states s's
// table reaches from start.
func (m *Machine[S]) Compile(s S, start State) map[string]string {
	edges := map[State][]State{}
	states := map[State]bool{}
	for _, t := range m.Rows {
		if !m.onTable(s, t) {
			continue
		}
		if t.From != "" {
			edges[t.From] = append(edges[t.From], t.To)
			states[t.From] = true
		}
		states[t.To] = true
	}
	succ := map[State]map[State]bool{}
	if start == "" {
		for st := range states {
			succ[st] = map[State]bool{}
		}
		for from, tos := range edges {
			for _, to := range tos {
				succ[from][to] = true
			}
		}
	} else {
		succ[start] = map[State]bool{}
		queue := []State{start}
		for len(queue) > 0 {
			from := queue[0]
			queue = queue[1:]
			for _, to := range edges[from] {
				succ[from][to] = true
				if succ[to] == nil {
					succ[to] = map[State]bool{}
					queue = append(queue, to)
				}
			}
		}
	}
	out := make(map[string]string, len(succ))
	for from, tos := range succ {
		list := make([]string, 0, len(tos))
		for to := range tos {
			list = append(list, string(to))
		}
		sort.Strings(list)
		out[string(from)] = strings.Join(list, ",")
	}
	return out
}

// Path is the rows of s's table whose From the table reaches from start
// ("" start: every row on s's table), in table order: what a graph draws.
func (m *Machine[S]) Path(s S, start State) []Transition {
	reached := m.Compile(s, start)
	var out []Transition
	for _, t := range m.Rows {
		if !m.onTable(s, t) {
			continue
		}
		if _, ok := reached[string(t.From)]; ok || start == "" {
			out = append(out, t)
		}
	}
	return out
}

// Transition is one row of the workflow's table: From moves to To when On
// happens and the named Guard holds. Gate is the gate that governs the
// step (0: none; README, "The seven gates").
type Transition struct {
	From, To State
	On       Trigger
	Guard    string
	Gate     int
}

// TransitionError is a refused trigger: no row of the table fires from State
// on Trigger (or its guard failed). It is the table's refusal as a value.
type TransitionError struct {
	State   State
	Trigger Trigger
	Guard   string    // the guard that failed, when a row matched
	Valid   []Trigger // the triggers valid at State
}

func (e *TransitionError) Error() string {
	if e.Guard != "" {
		return fmt.Sprintf("%s is not allowed at state %s: guard %q does not hold", e.Trigger, e.State, e.Guard)
	}
	return fmt.Sprintf("%s is not allowed at state %s (allowed there: %s)", e.Trigger, e.State, Join(e.Valid, "; "))
}

// Join joins states or triggers (or any strings) with sep.
func Join[T ~string](list []T, sep string) string { return strings.Join(Strings(list), sep) }

// States reads stored state names (state_machine.completed_states) as
// States.
func States(list []string) []State {
	out := make([]State, len(list))
	for i, s := range list {
		out[i] = State(s)
	}
	return out
}

// Strings is States the other way, for storing.
func Strings[T ~string](list []T) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}
