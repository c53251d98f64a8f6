package coordinate

import (
	"fmt"
	"testing"
)

// The readers give back the numbers the notes were written with, below the
// target's warning too, and nothing from a note of another form.
func TestMeasuresReadBack(t *testing.T) {
	note := fmt.Sprintf(contextReductionNote, ContextReduction(map[string]int{"a": 4000, "b": 6000}, 500), 10000, 500)
	if r, a, ok := ContextReductionOf(note); !ok || r != 10000 || a != 500 {
		t.Errorf("ContextReductionOf(%q) = %d, %d, %v", note, r, a, ok)
	}
	low := fmt.Sprintf(contextReductionNote, -25.0, 400, 500) + " (below the 90% target: a warning only)"
	if r, a, ok := ContextReductionOf(low); !ok || r != 400 || a != 500 {
		t.Errorf("ContextReductionOf(%q) = %d, %d, %v", low, r, a, ok)
	}
	seq, par, pct := TimeSavings([]int64{30000, 40000}, 30000)
	ts := fmt.Sprintf(timeSavingsNote, seq, par, pct)
	if s, p, n, ok := TimeSavingsOf(ts); !ok || s != 70000 || p != 30000 || n != 57 {
		t.Errorf("TimeSavingsOf(%q) = %d, %d, %d, %v", ts, s, p, n, ok)
	}
	for _, bad := range []string{"", "context reduction high", "sequential 5s vs parallel 3s", "x context reduction 90% (1 report bytes -> 1 characters of metadata)"} {
		if _, _, ok := ContextReductionOf(bad); ok {
			t.Errorf("ContextReductionOf(%q) read", bad)
		}
		if _, _, _, ok := TimeSavingsOf(bad); ok {
			t.Errorf("TimeSavingsOf(%q) read", bad)
		}
	}
}

// An escalation's record is told from other transitions' records, and an
// aborted workflow from one that completed.
func TestEscalationRecordAndAborted(t *testing.T) {
	c := &Workflow{Current: CTest, Scope: ScopeFullImplementation}
	c.abort()
	if !c.Aborted() || c.Current != CComplete {
		t.Errorf("aborted: Aborted() = %v at %s", c.Aborted(), c.Current)
	}
	if (&Workflow{Outcome: "completed"}).Aborted() {
		t.Error("a completed workflow reads as aborted")
	}
	reason := fmt.Sprintf("%s"+escalatedMark+"%s failed %d times (%s)", CTest, "test-specialist", 3, "permanent")
	if !EscalationRecord(reason) || EscalationRecord("test -> debug: TESTS: FAIL") {
		t.Errorf("EscalationRecord misreads %q", reason)
	}
}
