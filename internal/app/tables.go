package app

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
)

// Workflows are the workflows this binary runs, by their command names.
var Workflows = []string{"orchestrate", "coordinate"}

// ScopeError: a coordinate scope that does not exist.
type ScopeError struct{ Scope string }

func (e *ScopeError) Error() string {
	return fmt.Sprintf("unknown scope %q (%s)", e.Scope, strings.Join(coordinate.Scopes, ", "))
}

// CheckScope refuses a coordinate scope that does not exist ("" is none).
func CheckScope(scope string) error {
	if scope != "" && !coordinate.ValidScope(scope) {
		return &ScopeError{Scope: scope}
	}
	return nil
}

// Rows is a workflow's table as `orch-hook graph` draws it: every row of
// orchestrate's, or the rows of the coordinate scope's path (every scope's
// with scope "").
func Rows(workflow, scope string) []gates.Transition {
	if workflow == "coordinate" {
		return coordinate.Path(scope)
	}
	return orchestrate.Transitions
}

// Gate is gate n of the orchestrate workflow (README, "The seven gates").
func Gate(n int) (orchestrate.GateRule, bool) {
	g, ok := orchestrate.Gates[n]
	return g, ok
}
