package gates

import (
	"fmt"
	"testing"
)

// A work's third failure in a state escalates however many other works
// failed in that state in between: the bound on what a state keeps must
// not forget a work's count (else failing many other works, twice each,
// would buy it more retries).
func TestFailuresCountOutlivesTheBound(t *testing.T) {
	var f Failures
	a := Attempt{Agent: "code-implementer", Unit: "Task 01", Class: Transient, Error: "killed"}
	f.Record("4a", a)
	f.Record("4a", a)
	for i := 2; i <= 40; i++ {
		other := Attempt{Agent: "code-implementer", Unit: fmt.Sprintf("Task %02d", i), Class: Transient, Error: "killed"}
		f.Record("4a", other)
		f.Record("4a", other)
	}
	if len(f.Attempts) > maxAttempts {
		t.Errorf("%d attempts kept, the bound is %d", len(f.Attempts), maxAttempts)
	}
	if n := f.Count(a.Agent, a.Unit); n != 2 {
		t.Errorf("Task 01 counted %d failures, want 2", n)
	}
	if w := f.Worst("4a"); w != 2 {
		t.Errorf("worst %d, want 2", w)
	}
	if n := f.Record("4a", a); !Exhausted(n, MaxRetries) {
		t.Errorf("Task 01's third failure counted %d: not exhausted", n)
	}
	// Another state starts again from nothing.
	if n := f.Record("4b", a); n != 1 {
		t.Errorf("in a new state: %d", n)
	}
}
