package orchestrate

import (
	"strings"
	"testing"
)

// TestBashReadsThePlan: during a workflow, Bash reads the plan with its
// output to /dev/null or a descriptor, and git's reads; the paired writes
// are refused with the way to read it.
func TestBashReadsThePlan(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range []string{
		"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null",
		"ls .orchestrator 2>&1",
		"git diff -- .orchestrator",
		"git log -p -- .orchestrator/tasks 2>&1 | head -50",
	} {
		wantAllow(t, h.do(bashCall(cmd)))
	}
	for _, cmd := range []string{
		"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null > .orchestrator/tasks/task-01.md",
		"git diff --output=.orchestrator/tasks/MASTER_PLAN.md",
		"GIT_EXTERNAL_DIFF=./x git diff .orchestrator",
		"git -c diff.external=sh diff -- .orchestrator",
	} {
		wantDeny(t, h.do(bashCall(cmd)), 0, "change or remove anything under .orchestrator, are not allowed", "To read the plan from Bash", "2>/dev/null, 2>&1", "-c, --config-env, a VAR=value assignment")
	}
	h.expect(S4a)
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
