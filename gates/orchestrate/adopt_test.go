package orchestrate

import (
	"slices"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// Each v1.3 phase resumes where README, "Continuing a v1.3 checkpoint",
// says: past planning at 3 with the plan as it stands (its ticks taken as
// done), or at 2 when the plan does not validate.
func TestAdopt(t *testing.T) {
	ticked := planFiles(twoPhases(false)...)
	ticked[MasterPlan] = []byte(tickText(string(ticked[MasterPlan]), 1, 2, 3))
	broken := planFiles(twoPhases(false)...)
	delete(broken, taskFileName(4))
	tests := []struct {
		phase     gates.State
		files     PlanFiles
		want      gates.State
		completed []gates.State
		where     string
	}{
		{"initialize", nil, S0a, nil, "step 0a"},
		{"research", nil, S1, []gates.State{S0a}, "step 1 (discovery)"},
		{"plan", nil, S2, []gates.State{S0a}, "step 2 (planning)"},
		{"implement", ticked, S3, []gates.State{S0a, S2}, "step 3 (approval): the v1.3 workflow was at implement; present the plan (2 phases; 3 ticked tasks are taken as done)"},
		{"document", planFiles(twoPhases(false)...), S3, []gates.State{S0a, S2}, "present the plan (2 phases)"},
		{"test", broken, S2, []gates.State{S0a}, "resumes at step 2 (planning): the v1.3 workflow was at test, but the plan under .orchestrator/tasks does not validate"},
		{"test", PlanFiles{}, S2, []gates.State{S0a}, "does not validate"},
		{"complete", nil, Complete, []gates.State{S0a}, "is complete"},
	}
	for _, tt := range tests {
		t.Run(string(tt.phase), func(t *testing.T) {
			w, where, err := Adopt("Add a login page", "s1", tt.phase, &Env{Files: tt.files})
			if err != nil {
				t.Fatal(err)
			}
			if w.Current != tt.want || !slices.Equal(w.Completed, tt.completed) {
				t.Errorf("state %s completed %v, want %s %v", w.Current, w.Completed, tt.want, tt.completed)
			}
			if !strings.Contains(where, tt.where) {
				t.Errorf("where %q, want %q", where, tt.where)
			}
			if w.Owner != "s1" || w.Request != "Add a login page" {
				t.Errorf("owner %q request %q", w.Owner, w.Request)
			}
			if tt.want == S3 {
				if w.WaitingOn != "approval" || w.Plan == nil || len(w.PlanHashes) == 0 {
					t.Errorf("at 3 without the plan recorded: waiting %q plan %v hashes %d", w.WaitingOn, w.Plan != nil, len(w.PlanHashes))
				}
				// The approval goes on from the plan as it stands.
				o := Decide(w, &gates.Call{Event: gates.UserPromptSubmit, Prompt: "/orch-hook:approve", Session: "s1", PromptID: "p1"}, &Env{Files: tt.files})
				if w.Current != S4a || o.Verdict == gates.Block {
					t.Errorf("approve: state %s, %+v", w.Current, o)
				}
			}
		})
	}
	if _, _, err := Adopt("x", "", "sideways", &Env{}); err == nil {
		t.Error("an unknown phase was adopted")
	}
}
