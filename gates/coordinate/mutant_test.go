package coordinate

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/mutant"
)

func init() { coordinate = mutant.Apply("coordinate", coordinate) }

// TestRowMutants: the table governs. For every row of the coordinate
// table, the behaviour tests run again with that row removed, and must
// fail.
func TestRowMutants(t *testing.T) {
	mutant.Run(t, "coordinate", coordinate.Rows, "^(TestCoordFullPaths|TestCoordDebugRetries|TestCoordHierarchicalResearch|TestCoordEscalation|TestCoordEscalationSkips)$")
}
