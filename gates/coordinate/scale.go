package coordinate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Seed 003's decision matrix: implementation goes through
// implementation-sub-supervisor at 3 or more domains or a complexity of 10
// or more; testing through testing-sub-supervisor at 20 or more tests or 2
// or more test types. Below both, flat.
const (
	HierarchicalDomains    = 3
	HierarchicalComplexity = 10
	HierarchicalTests      = 20
	HierarchicalTestTypes  = 2
)

// Scale is what a plan declares about its size (plan-architect's
// template asks for it): each phase's `domain:` line, a `complexity:`
// score, and its testing section's `tests:` count and `test types:`. A
// plan that declares nothing for a kind leaves both launches allowed.
type Scale struct {
	Domains    []string `json:"domains,omitempty"`
	Complexity int      `json:"complexity,omitempty"`
	Tests      int      `json:"tests,omitempty"`
	TestTypes  []string `json:"test_types,omitempty"`
}

var reScaleLine = gates.LazyRegexp("(?i)^\\s*(?:[-*]\\s+)?(?:\\*\\*)?(domain|complexity(?: score)?|tests(?: count)?|test types)(?:\\*\\*)?\\s*:\\s*(?:\\*\\*)?\\s*(.*?)\\s*$")

// PlanScale reads a plan's declarations (fenced code blocks skipped).
// Tolerant of decoration (`- **Complexity:** 12`, `tests: 24 tests`,
// `complexity: 12/20`), strict about meaning: a count that is not a number,
// or a count declared twice with different values, is a problem quoting
// the line, and the plan is refused until it reads one way.
func PlanScale(planText string) (Scale, []string) {
	var s Scale
	var problems []string
	seen := map[string]string{} // count key -> the line that set it
	fence := false
	for _, line := range strings.Split(planText, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		m := reScaleLine.FindStringSubmatch(line)
		if fence || m == nil {
			continue
		}
		key, value := strings.ToLower(m[1]), strings.Trim(m[2], "*`_ ")
		switch {
		case key == "domain":
			for _, d := range splitList(value) {
				if !slices.Contains(s.Domains, d) {
					s.Domains = append(s.Domains, d)
				}
			}
		case key == "test types":
			for _, t := range splitList(value) {
				if !slices.Contains(s.TestTypes, t) {
					s.TestTypes = append(s.TestTypes, t)
				}
			}
		default: // complexity, tests
			count := "tests"
			dst := &s.Tests
			if strings.HasPrefix(key, "complexity") {
				count, dst = "complexity", &s.Complexity
			}
			raw := strings.TrimSpace(line)
			n := leadingNumber(value)
			if count == "tests" && n <= 0 {
				// "Tests: add unit tests for the limiter" is a plan's
				// prose, not a count: only a number declares one.
				continue
			}
			switch prev, twice := seen[count]; {
			case n <= 0:
				problems = append(problems, fmt.Sprintf("%q does not give %s as a number (write `%s: N`)", shorten.Runes(raw, 80), count, count))
			case twice && n != *dst:
				problems = append(problems, fmt.Sprintf("%q and %q give two values of %s; keep one line", shorten.Runes(prev, 60), shorten.Runes(raw, 60), count))
			default:
				*dst, seen[count] = n, raw
			}
		}
	}
	return s, problems
}

// splitList reads "unit, integration; e2e" or "backend and data" as its
// lower-case items.
func splitList(value string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(strings.ToLower(value), func(r rune) bool { return r == ',' || r == ';' || r == '/' || r == '+' }) {
		for _, item := range strings.Split(part, " and ") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// leadingNumber reads "12", "12/20", "24 tests" as 12 or 24; 0 otherwise.
func leadingNumber(s string) int {
	end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(s)
	}
	n, err := strconv.Atoi(s[:end])
	if err != nil {
		return 0
	}
	return n
}

// implementation says whether the plan declares the implementation's
// size and whether it calls for a supervisor, and why.
func (s *Scale) implementation() (declared, hierarchical bool, why string) {
	if s == nil || len(s.Domains) == 0 && s.Complexity == 0 {
		return false, false, "the plan declares no domains or complexity"
	}
	hierarchical = len(s.Domains) >= HierarchicalDomains || s.Complexity >= HierarchicalComplexity
	why = fmt.Sprintf("the plan declares %s and complexity %d", gates.Plural(len(s.Domains), "domain"), s.Complexity)
	return true, hierarchical, why
}

// testing is implementation for the tests.
func (s *Scale) testing() (declared, hierarchical bool, why string) {
	if s == nil || s.Tests == 0 && len(s.TestTypes) == 0 {
		return false, false, "the plan declares no test count or test types"
	}
	hierarchical = s.Tests >= HierarchicalTests || len(s.TestTypes) >= HierarchicalTestTypes
	why = fmt.Sprintf("the plan declares %s and %s", gates.Plural(s.Tests, "test"), gates.Plural(len(s.TestTypes), "test type"))
	return true, hierarchical, why
}

// scaleRefusal says why name may not run at the current state's scale
// ("" when it may).
func (c *Workflow) scaleRefusal(name string) string {
	switch name {
	case ImplementationExec, ImplSupervisor:
		declared, hier, why := c.Scale.implementation()
		switch {
		case !declared:
		case hier && name == ImplementationExec:
			return fmt.Sprintf("%s: implementation is hierarchical (%d or more domains, or complexity %d or more): launch %s, which runs the tracks.", why, HierarchicalDomains, HierarchicalComplexity, ImplSupervisor)
		case !hier && name == ImplSupervisor:
			return fmt.Sprintf("%s: implementation is flat (fewer than %d domains and complexity under %d): launch %s directly, not %s.", why, HierarchicalDomains, HierarchicalComplexity, ImplementationExec, ImplSupervisor)
		}
	case TestSpecialist, TestSupervisor:
		declared, hier, why := c.Scale.testing()
		switch {
		case !declared:
		case hier && name == TestSpecialist:
			return fmt.Sprintf("%s: testing is hierarchical (%d or more tests, or %d or more test types): launch %s, which runs the stages.", why, HierarchicalTests, HierarchicalTestTypes, TestSupervisor)
		case !hier && name == TestSupervisor:
			return fmt.Sprintf("%s: testing is flat (fewer than %d tests and one test type): launch %s directly, not %s.", why, HierarchicalTests, TestSpecialist, TestSupervisor)
		}
	}
	return ""
}

// ScaleDecision says, once the plan is verified, how implementation and
// testing run: "supervised", "flat" or "either", and why ("" before).
func (c *Workflow) ScaleDecision() (implementation, testing string) {
	if c.Scale == nil {
		return "", ""
	}
	say := func(declared, hier bool, why string) string {
		switch {
		case !declared:
			return "either (flat or supervised): " + why
		case hier:
			return "supervised: " + why
		}
		return "flat: " + why
	}
	return say(c.Scale.implementation()), say(c.Scale.testing())
}
