package coordinate

import (
	"strings"
	"testing"
)

func TestDetectScope(t *testing.T) {
	cases := []struct {
		desc  string
		scope string
		rule  string // the rule named first in why
		in    string // a fragment of why ("" = unchecked)
	}{
		// The README's examples ("Scope detection").
		{"Research authentication patterns", ScopeResearchOnly, ScopeRuleResearch, `"research" starts "research authentication patterns"`},
		{"Research and plan authentication system", ScopeResearchAndPlan, ScopeRulePlan, `"plan" starts "plan authentication system"`},
		// A plan-making verb: research-and-plan.
		{"Research authentication patterns and create implementation plan", ScopeResearchAndPlan, ScopeRulePlan, `"create" makes "plan"`},
		// The README's topic examples ("Topic names").
		{"fix the token refresh bug", ScopeDebugOnly, ScopeRuleFixDefect, `"fix" with the defect "bug"`},
		{"Research the /home/user/nvim/docs directory", ScopeResearchOnly, ScopeRuleResearch, ""},
		// research-and-revise: revises an existing plan (README, "Scopes").
		{"Revise the authentication plan to accommodate OAuth", ScopeResearchAndRevise, ScopeRuleRevise, `"revise" acts on "plan"`},
		{"Research OAuth providers and revise specs/042_auth/plans/001_auth_plan.md", ScopeResearchAndRevise, ScopeRuleRevise, ""},
		{"Update the implementation plan based on the new API", ScopeResearchAndRevise, ScopeRuleRevise, `"update" acts on "plan"`},
		{"fix the plan", ScopeResearchAndRevise, ScopeRuleRevise, ""},
		{"Modified planning: swap phases", ScopeResearchAndRevise, ScopeRuleRevise, ""},
		// full-implementation.
		{"Implement OAuth login", ScopeFullImplementation, ScopeRuleImplement, `"implement" starts "implement oauth login"`},
		{"Research and implement rate limiting", ScopeFullImplementation, ScopeRuleImplement, ""},
		{"Plan and build the billing service", ScopeFullImplementation, ScopeRuleImplement, `"build" starts`},
		{"I want to refactor the auth module", ScopeFullImplementation, ScopeRuleImplement, `"refactor"`},
		{"Update the README", ScopeFullImplementation, ScopeRuleImplement, ""},
		{"Fix the sidebar layout", ScopeFullImplementation, ScopeRuleFix, "no defect named"},
		{"Research JWT; then implement refresh tokens and fix the logout bug", ScopeFullImplementation, ScopeRuleImplement, ""},
		{"Implement the approved plan", ScopeFullImplementation, ScopeRuleImplement, ""},
		{"Adding retries to the HTTP client", ScopeFullImplementation, ScopeRuleImplement, `"adding"`},
		// debug-only.
		{"Debug the login timeout", ScopeDebugOnly, ScopeRuleDebug, `"debug" starts`},
		{"Let's troubleshoot flaky CI", ScopeDebugOnly, ScopeRuleDebug, `"troubleshoot"`},
		{"Investigate why the login fails", ScopeDebugOnly, ScopeRuleDebug, `"why" with the defect "fails"`},
		{"Find the root cause of the memory leak", ScopeDebugOnly, ScopeRuleDebug, `"root cause"`},
		{"Fixing crashes in the importer", ScopeDebugOnly, ScopeRuleFixDefect, ""},
		{"please resolve the failing build", ScopeDebugOnly, ScopeRuleFixDefect, `"failing"`},
		// research-and-plan.
		{"Design the event bus", ScopeResearchAndPlan, ScopeRulePlan, ""},
		{"Build a migration plan for the database", ScopeResearchAndPlan, ScopeRulePlan, `"build" makes "plan"`},
		{"a plan for the rollout", ScopeResearchAndPlan, ScopeRuleMentionsPlan, ""},
		{"authentication system", ScopeResearchAndPlan, ScopeRuleDefault, "conservative"},
		{"", ScopeResearchAndPlan, ScopeRuleDefault, ""},
		{"!!! ??? ...", ScopeResearchAndPlan, ScopeRuleDefault, ""},
		// research-only.
		{"Please carefully research how we could add caching", ScopeResearchOnly, ScopeRuleResearch, ""},
		{"Researching caching strategies", ScopeResearchOnly, ScopeRuleResearch, ""},
		{"Compare the research tools. Summarize the trade-offs", ScopeResearchOnly, ScopeRuleResearch, `"compare"`},
		{"Research the planning process", ScopeResearchOnly, ScopeRuleResearch, ""},
		{"RESEARCH AUTHENTICATION PATTERNS", ScopeResearchOnly, ScopeRuleResearch, ""},
		{"Analysez le café: research café APIs", ScopeResearchOnly, ScopeRuleResearch, ""},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			scope, why := DetectScope(tc.desc)
			if scope != tc.scope {
				t.Errorf("scope = %s, want %s (why: %s)", scope, tc.scope, why)
			}
			if !strings.HasPrefix(why, tc.rule+": ") {
				t.Errorf("why = %q, want rule %s", why, tc.rule)
			}
			if !strings.Contains(why, tc.in) {
				t.Errorf("why = %q, want it to contain %q", why, tc.in)
			}
			if !ValidScope(scope) {
				t.Errorf("%q is not a valid scope", scope)
			}
		})
	}
}

func TestDetectScopeDeterministic(t *testing.T) {
	d := "Research OAuth, plan the rollout and revise the auth plan"
	s1, w1 := DetectScope(d)
	for range 20 {
		if s, w := DetectScope(d); s != s1 || w != w1 {
			t.Fatalf("DetectScope is not deterministic: %s/%s vs %s/%s", s, w, s1, w1)
		}
	}
	if s1 != ScopeResearchAndRevise {
		t.Errorf("scope = %s, want research-and-revise (revise outranks plan)", s1)
	}
}

func TestScopeTerminal(t *testing.T) {
	want := map[string]string{
		ScopeResearchOnly:       "research",
		ScopeResearchAndPlan:    "plan",
		ScopeResearchAndRevise:  "plan",
		ScopeFullImplementation: "complete",
		ScopeDebugOnly:          "debug",
	}
	if len(Scopes) != 5 || len(ScopeTerminal) != 5 {
		t.Fatalf("scopes %v terminal %v", Scopes, ScopeTerminal)
	}
	for _, s := range Scopes {
		if ScopeTerminal[s] != want[s] {
			t.Errorf("terminal of %s = %q, want %q", s, ScopeTerminal[s], want[s])
		}
	}
	for _, bad := range []string{"", "full", "research", "Research-Only"} {
		if ValidScope(bad) {
			t.Errorf("ValidScope(%q) = true", bad)
		}
	}
}

func TestBaseForms(t *testing.T) {
	cases := map[string]string{
		"fixes": "fix", "fixed": "fix", "fixing": "fix", "updating": "update", "updated": "update",
		"planning": "plan", "planned": "plan", "debugging": "debug", "studies": "study", "builds": "build",
		"researching": "research", "implements": "implement", "crashes": "crash", "fails": "fail",
		"modified": "modify", "modifies": "modify", "applied": "apply",
	}
	for w, base := range cases {
		if !inForms(w, []string{base}) {
			t.Errorf("%q does not reduce to %q (forms %v)", w, base, baseForms(w))
		}
	}
	for w, not := range map[string]string{"address": "add", "us": "use", "planner": "plan", "plant": "plan", "fixture": "fix"} {
		if inForms(w, []string{not}) {
			t.Errorf("%q wrongly reduces to %q", w, not)
		}
	}
}

func TestComplexity(t *testing.T) {
	cases := []struct {
		desc   string
		topics int
		why    string
	}{
		{"Research authentication patterns", 2, "base 2"},
		{"Integrate Stripe billing", 3, "base 2; +1 (integrate) = 3"},
		{"Plan the database migration", 3, "+1 (migration)"},
		{"Refactoring the parser", 3, "+1 (refactoring)"},
		{"Review the architecture", 3, "+1 (architecture)"},
		{"Integrate and migrate the refactored architecture", 3, "base 2; +1 (integrate) = 3"}, // counted once
		{"Research distributed tracing", 4, "base 2; +2 (distributed) = 4"},
		{"Design a multi-system sync", 4, "+2 (multi-system)"},
		{"Cross-platform build tooling", 4, "+2 (cross-platform)"},
		{"cross platform packaging", 4, "+2 (cross platform)"},
		{"Research multisystem auth", 4, "+2 (multisystem)"},
		{"Sync across multiple systems", 4, "+2 (multiple systems)"},
		{"Split the monolith into microservices", 4, "+2 (microservices)"},
		{"Research micro-services messaging", 4, "+2 (micro-services)"},
		{"Migrate the distributed cache", 4, "base 2; +1 (migrate); +2 (distributed) = 5, clamped to 4"},
		{"fix one typo in the README", 1, "base 2; -1 (fix ... one) = 1"},
		{"Update a single config value", 1, "-1 (update ... single)"},
		{"Modify the small helper", 1, "-1 (modify ... small)"},
		{"fix someone's login", 2, "base 2"}, // "one" inside a word does not count
		{"A small fix", 2, "base 2"},         // one/single/small must follow the verb
		{"Refactor one small module", 3, "base 2; +1 (refactor) = 3"},
		{"Fix one bug in the distributed scheduler", 3, "base 2; +2 (distributed); -1 (fix ... one) = 3"},
		{"Update the single sign-on migration", 2, "base 2; +1 (migration); -1 (update ... single) = 2"},
		{"", 2, "base 2"},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			n, why := Complexity(tc.desc)
			if n != tc.topics {
				t.Errorf("topics = %d, want %d (%s)", n, tc.topics, why)
			}
			if !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q in it", why, tc.why)
			}
			if n < MinResearchTopics || n > MaxResearchTopics {
				t.Errorf("topics %d outside %d..%d", n, MinResearchTopics, MaxResearchTopics)
			}
		})
	}
}

func TestHierarchical(t *testing.T) {
	for topics, want := range map[int]bool{0: false, 1: false, 2: false, 3: false, 4: true, 5: true, 16: true} {
		if got := Hierarchical(topics); got != want {
			t.Errorf("Hierarchical(%d) = %v, want %v", topics, got, want)
		}
	}
	// Only the +2 patterns reach the threshold from the base.
	n, _ := Complexity("Research microservices observability")
	if !Hierarchical(n) {
		t.Errorf("microservices research (%d topics) should be hierarchical", n)
	}
	n, _ = Complexity("Research authentication patterns")
	if Hierarchical(n) {
		t.Errorf("plain research (%d topics) should be flat", n)
	}
}
