package orchestrate

import "testing"

// TestLaunchRulesCoverTheTable: every state a workflow can wait in has its
// launch rules, and every guard a rule names exists.
func TestLaunchRulesCoverTheTable(t *testing.T) {
	known := map[string]bool{}
	for _, g := range launchGuards {
		known[g.name] = true
	}
	for _, s := range allStates {
		if Finished(s) || s == S7 {
			continue
		}
		rule, ok := launchRules[s]
		if !ok {
			t.Errorf("state %s has no launch rules", s)
			continue
		}
		for _, g := range rule.guards {
			if !known[g] {
				t.Errorf("state %s names the launch guard %q, which does not exist", s, g)
			}
		}
		if rule.decide == nil && len(rule.jobs) == 0 && rule.refuseOthers.why == "" {
			t.Errorf("state %s allows no agent and says nothing to the others", s)
		}
	}
}
