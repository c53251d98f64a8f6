package coordinate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

func TestPlanScale(t *testing.T) {
	plan := "# Plan\ncomplexity: 12\n\n### Phase 1: API\ndependencies: []\ndomain: Backend\n\n### Phase 2: UI\n- **Domain**: frontend\n\n### Phase 3: more API\ndomain: backend\n\n## Testing\nTests: 24 tests\n**Test types:** unit, integration; e2e\n```\ndomain: ignored-in-a-fence\n```\n"
	s, problems := PlanScale(plan)
	if !slices.Equal(s.Domains, []string{"backend", "frontend"}) || s.Complexity != 12 || s.Tests != 24 || !slices.Equal(s.TestTypes, []string{"unit", "integration", "e2e"}) || len(problems) != 0 {
		t.Errorf("PlanScale = %+v, %q", s, problems)
	}
	if s, _ := PlanScale("### Phase 1: Sync\ndomain: backend and data\n### Phase 2\ndomain: infra / backend\n"); !slices.Equal(s.Domains, []string{"backend", "data", "infra"}) {
		t.Errorf("domains listed on one line: %v", s.Domains)
	}
	// Read one way or refused, quoting the line.
	for text, want := range map[string]string{
		"complexity: high\n":                `"complexity: high" does not give complexity as a number (write ` + "`complexity: N`)",
		"complexity: 6\n\ncomplexity: 12\n": `"complexity: 6" and "complexity: 12" give two values of complexity; keep one line`,
	} {
		if _, problems := PlanScale(text); len(problems) != 1 || !strings.Contains(problems[0], want) {
			t.Errorf("PlanScale(%q) problems %q, want %q", text, problems, want)
		}
	}
	// A tests line in prose is not a count, and is not refused.
	if s, problems := PlanScale("### Phase 1\n- Tests: add unit tests for the limiter\n- Test: the reset path\n"); s.Tests != 0 || len(problems) != 0 {
		t.Errorf("prose read as a test count: %+v, %q", s, problems)
	}
	if _, problems := PlanScale("complexity: 6\nComplexity score: 6\n"); len(problems) != 0 {
		t.Errorf("the same value twice is one reading: %q", problems)
	}
}

// TestScaleThresholds: the wrong kind of launch is refused at each of seed
// 003's thresholds, and both are allowed when the plan declares nothing.
func TestScaleThresholds(t *testing.T) {
	launch := func(state gates.State, scale *Scale, agent string) gates.Outcome {
		c := &Workflow{Scope: ScopeFullImplementation, Current: state, Scale: scale}
		call := &gates.Call{Event: gates.PreToolUse, Tool: "Agent", ToolUseID: "t-1", SubagentType: gates.PluginPrefix + agent, Prompt: "do it"}
		return Decide(c, call, &Env{Now: time.Unix(0, 0)})
	}
	for _, tc := range []struct {
		name    string
		state   gates.State
		scale   *Scale
		allowed string // the one allowed; "" both
		denied  string
		why     string
	}{
		{"undeclared implementation", CImplement, nil, "", "", ""},
		{"2 domains, complexity 9", CImplement, &Scale{Domains: []string{"a", "b"}, Complexity: 9}, ImplementationExec, ImplSupervisor, "implementation is flat (fewer than 3 domains and complexity under 10)"},
		{"3 domains", CImplement, &Scale{Domains: []string{"a", "b", "c"}}, ImplSupervisor, ImplementationExec, "the plan declares 3 domains and complexity 0: implementation is hierarchical"},
		{"complexity 10", CImplement, &Scale{Complexity: 10}, ImplSupervisor, ImplementationExec, "implementation is hierarchical (3 or more domains, or complexity 10 or more)"},
		{"undeclared testing", CTest, &Scale{Domains: []string{"a", "b", "c"}}, "", "", ""},
		{"19 tests, 1 type", CTest, &Scale{Tests: 19, TestTypes: []string{"unit"}}, TestSpecialist, TestSupervisor, "testing is flat (fewer than 20 tests and one test type)"},
		{"20 tests", CTest, &Scale{Tests: 20}, TestSupervisor, TestSpecialist, "testing is hierarchical (20 or more tests, or 2 or more test types)"},
		{"2 test types", CTest, &Scale{TestTypes: []string{"unit", "e2e"}}, TestSupervisor, TestSpecialist, "the plan declares 0 tests and 2 test types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agents := []string{ImplementationExec, ImplSupervisor}
			if tc.state == CTest {
				agents = []string{TestSpecialist, TestSupervisor}
			}
			for _, a := range agents {
				o := launch(tc.state, tc.scale, a)
				if p := refusalProblem(o); p != "" {
					t.Fatal(p)
				}
				switch {
				case a == tc.denied:
					if o.Verdict != gates.Deny || !strings.Contains(o.Reason, tc.why) {
						t.Errorf("%s: verdict %v, reason %q; want a deny saying %q", a, o.Verdict, o.Reason, tc.why)
					}
				case o.Verdict != gates.Allow:
					t.Errorf("%s denied: %s", a, o.Reason)
				}
			}
		})
	}
}
