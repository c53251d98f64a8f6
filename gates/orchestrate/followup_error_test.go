package orchestrate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// FollowUp's refusal off complete names the triggers valid there, as every
// TransitionError did before Valid was always filled by Fire (an error with
// Valid unset printed "allowed there: " with nothing after it).
func TestFollowUpRefusalNamesTheValidTriggers(t *testing.T) {
	w := &Workflow{Kind: "orchestrate", Current: S4b}
	_, err := FollowUp(w, "lightweight", "more", &Env{})
	if err == nil {
		t.Fatal("a follow-up at 4b was not refused")
	}
	if want := "(allowed there: " + gates.Join(ValidTriggers(S4b), "; ") + ")"; !strings.Contains(err.Error(), want) {
		t.Errorf("refusal %q does not contain %q", err, want)
	}
}
