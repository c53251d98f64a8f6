package coordinate

import (
	"slices"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// TestLaunchRulesAreData: every launch rule names a coordinate agent and a
// guard that exists, for a state of the table; each state the table
// reaches but complete and initialize has someone to launch.
func TestLaunchRulesAreData(t *testing.T) {
	states := map[gates.State]bool{}
	for _, r := range Transitions {
		states[r.From], states[r.To] = true, true
	}
	for st, rules := range LaunchRules {
		if !states[st] {
			t.Errorf("launch rules for %q, which is not a state of the table", st)
		}
		for _, r := range rules {
			if !slices.Contains(Agents, r.Agent) {
				t.Errorf("%s: %q is not a coordinate agent", st, r.Agent)
			}
			if _, ok := launchGuards[r.Guard]; r.Guard != "" && !ok {
				t.Errorf("%s: %s's guard %q is not defined", st, r.Agent, r.Guard)
			}
		}
	}
	for st := range states {
		if st != "" && st != CInitialize && st != CComplete && len(LaunchRules[st]) == 0 {
			t.Errorf("state %s launches no agent", st)
		}
	}
	flat, hier := &Workflow{Current: CResearch}, &Workflow{Current: CResearch, Hierarchical: true}
	if got := flat.allowedHere(); !slices.Equal(got, []string{ResearchSpecialist}) {
		t.Errorf("flat research allows %v", got)
	}
	if got := hier.allowedHere(); !slices.Equal(got, []string{ResearchSupervisor}) {
		t.Errorf("hierarchical research allows %v", got)
	}
}
