package gates

import (
	"fmt"
	"time"

	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Failure classes (seed 002), for agent failures only: orch-hook's own
// lock waits and internal errors are never counted.
const (
	// Transient: the agent did not finish (its Agent call failed: an API
	// error, an interruption, a crash). Relaunching the same work may
	// succeed.
	Transient = "transient"
	// Permanent: the agent finished, but verification closed its launch:
	// its report still lacked its result line after its one nudge, or the
	// artifact it reported is missing or invalid. The same prompt will
	// likely fail the same way.
	Permanent = "permanent"
)

// MaxRetries is how many times, by default, the same work (one agent, on
// one task, topic or track) is relaunched after a failure in one state
// (seed 002: "max 2 retries per state"; Limits.Retries). Its third
// failure escalates to the user.
const MaxRetries = 2

// Attempt is one failed launch.
type Attempt struct {
	Agent string    `json:"agent"`
	Unit  string    `json:"unit,omitempty"` // "Task 03", a topic, a track
	Class string    `json:"classification"`
	Error string    `json:"error"`
	Time  time.Time `json:"time"`
}

// What names the work an attempt was: "code-implementer (Task 03)".
func (a Attempt) What() string {
	if a.Unit == "" {
		return a.Agent
	}
	return a.Agent + " (" + a.Unit + ")"
}

// Failures are the failed launches of the state the workflow is in: they
// are forgotten when it leaves the state (the state was left
// successfully, or the user resolved an escalation).
type Failures struct {
	State    State     `json:"state"`
	Attempts []Attempt `json:"attempts,omitempty"`
	// Dropped counts, by work (Attempt.What), the attempts the bound on
	// Attempts dropped: they still count.
	Dropped map[string]int `json:"dropped,omitempty"`
}

// maxAttempts bounds what one state keeps (parallel work fails apart).
const maxAttempts = 64

// Record adds a failed launch made in state, forgetting those of an
// earlier state, and returns how many times the same work has failed in
// this state.
func (f *Failures) Record(state State, a Attempt) int {
	if f.State != state {
		f.State, f.Attempts, f.Dropped = state, nil, nil
	}
	a.Error = shorten.Runes(shorten.OneLine(a.Error), 300)
	if len(f.Attempts) >= maxAttempts {
		if f.Dropped == nil {
			f.Dropped = map[string]int{}
		}
		f.Dropped[f.Attempts[0].What()]++
		f.Attempts = f.Attempts[1:]
	}
	f.Attempts = append(f.Attempts, a)
	return f.Count(a.Agent, a.Unit)
}

// Count is how many times one work has failed in the recorded state.
func (f *Failures) Count(agent, unit string) int {
	n := f.Dropped[Attempt{Agent: agent, Unit: unit}.What()]
	for _, a := range f.Attempts {
		if a.Agent == agent && a.Unit == unit {
			n++
		}
	}
	return n
}

// Of lists the failed launches of one work, oldest first.
func (f *Failures) Of(agent, unit string) []Attempt {
	var out []Attempt
	for _, a := range f.Attempts {
		if a.Agent == agent && a.Unit == unit {
			out = append(out, a)
		}
	}
	return out
}

// Last is the latest failure in state (false when none).
func (f *Failures) Last(state State) (Attempt, bool) {
	if f == nil || f.State != state || len(f.Attempts) == 0 {
		return Attempt{}, false
	}
	return f.Attempts[len(f.Attempts)-1], true
}

// Worst is the most failures one work has had in state (0 for another
// state, or none).
func (f *Failures) Worst(state State) int {
	n := 0
	if f == nil || f.State != state {
		return 0
	}
	for _, a := range f.Attempts {
		n = max(n, f.Count(a.Agent, a.Unit))
	}
	for _, d := range f.Dropped {
		n = max(n, d) // a work whose attempts were all dropped
	}
	return n
}

// Exhausted reports whether a work failed in this state more than the
// retries allowed.
func Exhausted(count, retries int) bool { return count > retries }

// RetryLine says what the orchestrator may do after the n-th failure of a
// work that is not exhausted: relaunch it.
func RetryLine(a Attempt, n, retries int) string {
	return fmt.Sprintf("relaunch it (retry %d/%d, a %s failure)", n, retries, a.Class)
}
