package coordinate

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// adoptEnv is a project of the given files (path -> content).
func adoptEnv(files map[string]string) *Env {
	return &Env{
		List: func(rel string) []string {
			var out []string
			for p := range files {
				if path.Dir(p)+"/" == rel {
					out = append(out, path.Base(p))
				}
			}
			return out
		},
		Read: func(rel string) []byte {
			if s, ok := files[rel]; ok {
				return []byte(s)
			}
			return nil
		},
	}
}

func TestAdopt(t *testing.T) {
	const topic = "specs/042_rate_limiting"
	plan := topic + "/plans/001_rate_limiting_plan.md"
	done := map[string]string{
		topic + "/reports/002_windows.md": "# w",
		topic + "/reports/001_buckets.md": "# b",
		topic + "/reports/notes.txt":      "not a report",
		plan:                              "# Plan\n\ndomain: api, storage, cli\n",
	}
	full := AdoptFrom{Description: "Add rate limiting", Scope: ScopeFullImplementation, ScopeWhy: "recorded", TopicDir: topic, Plan: plan}
	at := func(f AdoptFrom, phase gates.State) AdoptFrom { f.Phase = phase; return f }

	t.Run("implement, with its plan and reports", func(t *testing.T) {
		c, where, err := Adopt(at(full, CImplement), adoptEnv(done))
		if err != nil {
			t.Fatal(err)
		}
		if c.Current != CImplement || !slices.Equal(c.Completed, []gates.State{CInitialize, CResearch, CPlan}) {
			t.Errorf("state %s completed %v", c.Current, c.Completed)
		}
		if want := []string{topic + "/reports/001_buckets.md", topic + "/reports/002_windows.md"}; !slices.Equal(c.Reports, want) || !slices.Equal(c.Paths.ReportPaths, want) || c.Topics != 2 {
			t.Errorf("reports %v paths %v topics %d", c.Reports, c.Paths.ReportPaths, c.Topics)
		}
		if c.Paths.PlanPath != plan || c.Scale == nil || len(c.Scale.Domains) != 3 || c.ScopeWhy != "recorded" || c.Topic != "rate_limiting" {
			t.Errorf("plan %q scale %+v why %q topic %q", c.Paths.PlanPath, c.Scale, c.ScopeWhy, c.Topic)
		}
		if !strings.HasPrefix(where, "resumes at implement; scope full-implementation, 2 research reports found; next: launch implementation-sub-supervisor") {
			t.Errorf("where %q", where)
		}
		// The scale the plan declares governs: 3 domains take the supervisor.
		o := Decide(c, &gates.Call{Event: gates.PreToolUse, Tool: "Agent", ToolUseID: "t1", SubagentType: ImplementationExec, Prompt: "implement"}, &Env{})
		if o.Verdict != gates.Deny {
			t.Errorf("a flat implementation of a 3-domain plan was allowed: %+v", o)
		}
	})
	t.Run("no plan: resumes at plan", func(t *testing.T) {
		f := at(full, CTest)
		f.Plan = ""
		c, where, err := Adopt(f, adoptEnv(done))
		if err != nil {
			t.Fatal(err)
		}
		if c.Current != CPlan || !strings.Contains(where, "resumes at plan (it was at test, but there is no plan under "+topic+"/plans/)") {
			t.Errorf("state %s where %q", c.Current, where)
		}
	})
	t.Run("a plan that reads two ways: resumes at plan", func(t *testing.T) {
		files := map[string]string{plan: "# Plan\n\nComplexity: high\n"}
		c, where, err := Adopt(at(full, CDebug), adoptEnv(files))
		if err != nil {
			t.Fatal(err)
		}
		if c.Current != CPlan || !strings.Contains(where, "size declarations do not read one way") {
			t.Errorf("state %s where %q", c.Current, where)
		}
	})
	t.Run("the scope is not guessed", func(t *testing.T) {
		f := at(full, CPlan)
		f.Scope, f.Description = "", "Auth things"
		_, _, err := Adopt(f, adoptEnv(nil))
		var unknown *ScopeUnknownError
		if !errors.As(err, &unknown) || !strings.Contains(unknown.Hint(), "--scope SCOPE") {
			t.Fatalf("error %v", err)
		}
		f.Description = "Research the auth options and write a plan"
		c, _, err := Adopt(f, adoptEnv(nil))
		if err != nil || c.Scope != ScopeResearchAndPlan || !strings.HasPrefix(c.ScopeWhy, ScopeRulePlan) {
			t.Errorf("detected: %v scope %q why %q", err, c.Scope, c.ScopeWhy)
		}
	})
	t.Run("a state the scope does not have", func(t *testing.T) {
		f := at(full, CImplement)
		f.Scope = ScopeResearchOnly
		if _, _, err := Adopt(f, adoptEnv(done)); err == nil || !strings.Contains(err.Error(), "which scope research-only does not have (its states: complete, initialize, research)") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("revise needs its plan", func(t *testing.T) {
		f := at(full, CResearch)
		f.Scope, f.Plan = ScopeResearchAndRevise, ""
		if _, _, err := Adopt(f, adoptEnv(nil)); err == nil || !strings.Contains(err.Error(), "revises a plan") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("debug-only at test", func(t *testing.T) {
		f := at(full, CTest)
		f.Scope = ScopeDebugOnly
		c, _, err := Adopt(f, adoptEnv(done))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Completed, []gates.State{CInitialize, CResearch, CDebug}) {
			t.Errorf("completed %v", c.Completed)
		}
	})
}
