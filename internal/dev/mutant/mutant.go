// Package mutant runs a workflow's behaviour tests once per transition row
// with that row removed from the machine that fires: the table governs only
// if some test fails for every row (README, "The rules in detail"). Test
// machinery: only the workflow packages' tests import it.
package mutant

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// Env names the row a mutant run of a test binary removes from a
// workflow's machine: "orchestrate:N" or "coordinate:N".
const Env = "ORCH_HOOK_MUTANT_ROW"

// Apply returns m without the row Env names for machine name, or m itself
// when this is not a mutant run of that machine. The row is removed from
// the machine that fires, not from the exported table the tests read, so a
// test notices it only by what the workflow then does.
func Apply[S any](name string, m *gates.Machine[S]) *gates.Machine[S] {
	v := os.Getenv(Env)
	if v == "" {
		return m
	}
	table, n, _ := strings.Cut(v, ":")
	if table != name {
		return m
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(m.Rows) {
		panic("bad " + Env + "=" + v)
	}
	rows := append([]gates.Transition(nil), m.Rows[:i]...)
	rows = append(rows, m.Rows[i+1:]...)
	return &gates.Machine[S]{Rows: rows, Guards: m.Guards, Fixed: m.Fixed}
}

// Run re-runs this test binary's tests matching the regexp tests once per
// row of rows (machine name's), each with that row removed, and fails for
// every row whose removal no test notices.
func Run(t *testing.T, name string, rows []gates.Transition, tests string) {
	t.Helper()
	if os.Getenv(Env) != "" {
		t.Skip("inside a mutant run")
	}
	if testing.Short() {
		t.Skip("re-runs the behaviour tests once per row: not in -short")
	}
	for i, row := range rows {
		t.Run(fmt.Sprintf("%s/%02d %s -[%s]-> %s", name, i, gates.OrText(string(row.From), "(none)"), row.On, row.To), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run", tests, "-test.count=1", "-test.failfast")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", Env, name, i))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("with the row %+v removed, every behaviour test (%s) still passes", row, tests)
				return
			}
			if !strings.Contains(string(out), "--- FAIL: ") {
				t.Errorf("the mutant run failed without a failing test (%v):\n%s", err, out)
			}
		})
	}
}
