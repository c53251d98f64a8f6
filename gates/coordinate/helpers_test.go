package coordinate

import (
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// hasRecord reports whether o logged a record of type typ whose reason
// contains reasonPart.
func hasRecord(o gates.Outcome, typ, reasonPart string) bool {
	for _, r := range o.Records {
		if r.Type == typ && strings.Contains(r.Reason, reasonPart) {
			return true
		}
	}
	return false
}

// must returns v, panicking on err (a fixture that cannot be built).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// refusalProblem is gates.RefusalProblem.
func refusalProblem(o gates.Outcome) string { return gates.RefusalProblem(o) }
