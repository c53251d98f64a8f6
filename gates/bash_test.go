package gates

import (
	"strings"
	"testing"
)

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
		if got := (&Call{Command: cmd}).touchesState(); got != want {
			t.Errorf("touchesState(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestPlanDependencies(t *testing.T) {
	master := "## Phase 1: A\n- [ ] Task 01: a\n- [ ] Task 02: b\n## Phase 2: B\n- [ ] Task 03: c\n"
	for _, tc := range []struct {
		deps map[int]string
		want string
	}{
		{map[int]string{1: "02", 2: "01"}, "depend on each other in a cycle"},
		{map[int]string{1: "01"}, "Task 01 depends on itself"},
		{map[int]string{1: "03"}, "depends on Task 03 of a later phase (2)"},
		{map[int]string{1: "09"}, "task-01.md line 3: \"Depends On: 09\": Task 09 is not a task of MASTER_PLAN.md"},
		{map[int]string{2: "01", 3: "02"}, ""},
	} {
		files := PlanFiles{MasterPlan: []byte(master)}
		for n := 1; n <= 3; n++ {
			body := "Files: f" + string(rune('0'+n)) + ".go\nrequires_ux_dx_review: false\n"
			if d, ok := tc.deps[n]; ok {
				body += "Depends On: " + d + "\n"
			}
			files["task-0"+string(rune('0'+n))+".md"] = []byte(body)
		}
		err := ParsePlan(files).Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.deps, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.deps, err, tc.want)
		}
	}
}
