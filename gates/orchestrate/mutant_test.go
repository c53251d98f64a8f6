package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/mutant"
)

func init() { orchestrate = mutant.Apply("orchestrate", orchestrate) }

// TestRowMutants: the table governs. For every row of the orchestrate
// table, the behaviour tests (which drive the workflow through Decide with
// realistic hook calls) run again with that row removed, and must fail.
func TestRowMutants(t *testing.T) {
	mutant.Run(t, "orchestrate", orchestrate.Rows, "^(TestRowsThroughDecide|TestAbortFromEveryState)$")
}
