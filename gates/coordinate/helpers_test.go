package coordinate

import (
	"fmt"
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

// refusalProblem checks that a refusal is a value (gates.Refusal): a Deny
// or Block carries its Refusal, whose rendering is the reason the model
// is told; its deny record keeps the same parts and the rendering without
// the detail. "" when it holds.
func refusalProblem(o gates.Outcome) string {
	if o.Verdict == gates.Allow {
		if o.Refusal != nil {
			return fmt.Sprintf("an allow carries a refusal %+v", o.Refusal)
		}
		return ""
	}
	r := o.Refusal
	switch {
	case r == nil:
		return fmt.Sprintf("refused without a gates.Refusal: %q", o.Reason)
	case o.Reason != r.Told():
		return fmt.Sprintf("reason %q is not the refusal's rendering %q", o.Reason, r.Told())
	case o.Gate != r.Gate:
		return fmt.Sprintf("outcome gate %d, refusal gate %d", o.Gate, r.Gate)
	}
	logged := false
	for _, rec := range o.Records {
		if rec.Refusal != r {
			continue
		}
		logged = true
		if rec.Type != gates.RecDeny || rec.Reason != r.Text() || rec.Gate != r.Gate || r.Task > 0 && rec.Task != r.Task {
			return fmt.Sprintf("record %+v does not keep the refusal %+v", rec, r)
		}
	}
	if !logged && len(o.Records) > 0 {
		return fmt.Sprintf("the refusal %+v is not among the records %+v", r, o.Records)
	}
	return ""
}
