package gates

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// mutantEnv names the row a mutant run of this test binary removes from a
// workflow's machine: "orchestrate:N" or "coordinate:N".
const mutantEnv = "ORCH_HOOK_MUTANT_ROW"

// The mutant: the row is removed from the machine that fires, not from the
// exported table the tests read, so a test that drives a workflow through
// Decide notices it only by what the workflow then does.
func init() {
	v := os.Getenv(mutantEnv)
	if v == "" {
		return
	}
	name, n, _ := strings.Cut(v, ":")
	i, err := strconv.Atoi(n)
	switch {
	case err != nil:
		panic("bad " + mutantEnv + "=" + v)
	case name == "orchestrate":
		orchestrate = &Machine[orch]{Rows: without(orchestrate.Rows, i), Guards: orchestrate.Guards}
	case name == "coordinate":
		coordinate = &Machine[*Coord]{Rows: without(coordinate.Rows, i), Guards: coordinate.Guards, Fixed: coordinate.Fixed}
	default:
		panic("bad " + mutantEnv + "=" + v)
	}
}

func without(rows []Transition, i int) []Transition {
	out := append([]Transition(nil), rows[:i]...)
	return append(out, rows[i+1:]...)
}

// TestRowMutants: the table governs. For every row of each workflow's
// table, the behaviour tests (which drive the workflow through Decide with
// realistic hook calls) are run again with that row removed from the
// machine, and must fail: a row no test notices missing would be a rule
// nothing holds the code to.
func TestRowMutants(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	if testing.Short() {
		t.Skip("re-runs the behaviour tests once per row: not in -short")
	}
	tables := []struct {
		name, tests string
		rows        []Transition
	}{
		{"orchestrate", "^(TestRowsThroughDecide|TestAbortFromEveryState)$", orchestrate.Rows},
		{"coordinate", "^(TestCoordFullPaths|TestCoordDebugRetries|TestCoordHierarchicalResearch)$", coordinate.Rows},
	}
	for _, tb := range tables {
		for i, row := range tb.rows {
			t.Run(fmt.Sprintf("%s/%02d %s -[%s]-> %s", tb.name, i, orText(row.From, "(none)"), row.On, row.To), func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(os.Args[0], "-test.run", tb.tests, "-test.count=1", "-test.failfast")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", mutantEnv, tb.name, i))
				out, err := cmd.CombinedOutput()
				if err == nil {
					t.Errorf("with the row %+v removed, every behaviour test (%s) still passes", row, tb.tests)
					return
				}
				if !strings.Contains(string(out), "--- FAIL: ") {
					t.Errorf("the mutant run failed without a failing test (%v):\n%s", err, out)
				}
			})
		}
	}
}
