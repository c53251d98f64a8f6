package gates

import "testing"

func TestTouchesState(t *testing.T) {
	for cmd, want := range map[string]bool{
		"rm -rf .orchestrator":                         true,
		"cd .orchestrator && rm -rf state":             true,
		"cat .orchestrator//state/checkpoint.json":     true,
		"ls .orchestrator/./state":                     true,
		"cat .orchestrator/tasks/MASTER_PLAN.md":       false,
		"ls .orchestrator":                             false,
		"echo x > .orchestrator/tasks/MASTER_PLAN.md":  true,
		"git checkout -- .orchestrator/tasks":          true,
		"go test ./...":                                false,
		"sed -i s/a/b/ .orchestrator/tasks/task-01.md": true,
		"find .orchestrator -name x -delete":           true,
		"grep -r foo .orchestrator/tasks":              false,
	} {
		if got := touchesState(cmd); got != want {
			t.Errorf("touchesState(%q) = %v, want %v", cmd, got, want)
		}
	}
}
