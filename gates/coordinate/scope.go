package coordinate

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Workflow scopes of the coordinate workflow (README, "Scopes"). Each ends
// the workflow at its terminal state (ScopeTerminal).
const (
	ScopeResearchOnly       = "research-only"
	ScopeResearchAndPlan    = "research-and-plan"
	ScopeResearchAndRevise  = "research-and-revise"
	ScopeFullImplementation = "full-implementation"
	ScopeDebugOnly          = "debug-only"
)

// Scopes lists the five scopes in the order of the README's table
// (README, "Scopes").
var Scopes = []string{ScopeResearchOnly, ScopeResearchAndPlan, ScopeResearchAndRevise, ScopeFullImplementation, ScopeDebugOnly}

// ScopeTerminal maps each scope to its terminal state (README, "Scopes"):
// research-only ends after research, research-and-plan and
// research-and-revise after plan, debug-only after debug, and
// full-implementation at complete.
var ScopeTerminal = map[string]string{
	ScopeResearchOnly:       "research",
	ScopeResearchAndPlan:    "plan",
	ScopeResearchAndRevise:  "plan",
	ScopeFullImplementation: "complete",
	ScopeDebugOnly:          "debug",
}

// ValidScope reports whether s is one of Scopes.
func ValidScope(s string) bool {
	_, ok := ScopeTerminal[s]
	return ok
}

// Word lists of DetectScope. A verb is recognized only where it starts a
// clause (see DetectScope); inflected forms match their base form
// ("researching", "fixes", "updated", "planning").
var (
	// ScopeReviseVerbs act on an existing plan: with a PlanWords word in the
	// same clause they make the scope research-and-revise.
	ScopeReviseVerbs = []string{"revise", "update", "modify", "amend", "adjust", "rework", "change", "edit", "fix", "correct", "improve", "refine", "rewrite", "extend"}

	// ScopeImplementVerbs make the scope full-implementation.
	ScopeImplementVerbs = []string{"implement", "build", "develop", "add", "create", "write", "code", "refactor", "migrate", "integrate", "update", "modify", "change", "remove", "delete", "rename", "replace", "improve", "optimize", "optimise", "upgrade", "extend", "port", "rewrite", "convert", "enable", "install", "configure", "deploy", "ship", "setup", "introduce", "support"}

	// ScopePlanMakingVerbs are implementation verbs that make a plan, not
	// code, when the clause names a plan ("create implementation plan").
	ScopePlanMakingVerbs = []string{"create", "write", "draft", "make", "produce", "prepare", "develop", "build", "design", "outline", "generate", "compose"}

	// ScopePlanVerbs make the scope research-and-plan.
	ScopePlanVerbs = []string{"plan", "design", "outline", "draft", "propose", "architect", "spec", "specify"}

	// ScopeDebugVerbs make the scope debug-only.
	ScopeDebugVerbs = []string{"debug", "diagnose", "troubleshoot", "bisect"}

	// ScopeFixVerbs make the scope debug-only when the clause names a
	// defect (ScopeDefectWords), full-implementation otherwise.
	ScopeFixVerbs = []string{"fix", "repair", "resolve", "patch", "solve", "hotfix"}

	// ScopeDefectWords name a defect.
	ScopeDefectWords = []string{"bug", "error", "fail", "failure", "crash", "broken", "regression", "flaky", "hang", "leak", "panic", "exception", "issue", "defect", "timeout", "deadlock", "race"}

	// ScopeResearchVerbs make the scope research-only.
	ScopeResearchVerbs = []string{"research", "investigate", "analyze", "analyse", "explore", "study", "survey", "review", "examine", "assess", "evaluate", "compare", "understand", "audit", "look", "learn", "summarize", "summarise", "describe", "explain", "find", "identify", "inspect"}

	// PlanWords name a plan.
	PlanWords = []string{"plan", "plans", "planning"}

	// ScopeClauseFillers are skipped before a clause's verb ("please",
	// "we need to", "let's", "carefully").
	ScopeClauseFillers = []string{"please", "kindly", "carefully", "thoroughly", "quickly", "briefly", "deeply", "first", "then", "also", "now", "just", "next", "finally", "we", "i", "you", "lets", "let", "s", "us", "need", "needs", "want", "wants", "would", "like", "to", "should", "must", "can", "could", "will", "help", "me", "go", "ahead", "and", "try", "trying"}
)

// Clause boundaries: these words separate clauses, as do , ; : ! ? & and a
// full stop followed by a space or the end.
var scopeClauseWords = []string{"and", "then", "but", "afterwards", "finally"}

// Scope rule names, reported first in DetectScope's why.
const (
	ScopeRuleRevise       = "revise-plan"
	ScopeRuleImplement    = "implement"
	ScopeRuleDebug        = "debug"
	ScopeRuleFixDefect    = "fix-defect"
	ScopeRuleFix          = "fix"
	ScopeRulePlan         = "plan"
	ScopeRuleResearch     = "research"
	ScopeRuleMentionsPlan = "mentions-plan"
	ScopeRuleDefault      = "default"
)

// DetectScope picks the workflow scope of a description and says which rule
// fired ("<rule>: <what matched>").
//
// The description is lowercased and cut into clauses at , ; : ! ? &, at a
// full stop followed by a space, at new lines and at the words and, then,
// but, afterwards, finally. A clause's verb is its first word after the
// ScopeClauseFillers ("please carefully research X" has the verb research;
// "Research and plan X" has two clauses, with the verbs research and plan).
// The rules are tried in this order over all clauses; the first that holds
// decides:
//
//  1. revise-plan -> research-and-revise: a ScopeReviseVerbs verb whose
//     clause contains a PlanWords word ("Revise the authentication plan to
//     use OAuth", "update specs/042_auth/plans/001_auth_plan.md").
//  2. implement -> full-implementation: a ScopeImplementVerbs verb, unless
//     the verb is one of ScopePlanMakingVerbs and its clause names a plan
//     ("create implementation plan" is planning).
//  3. debug -> debug-only: a ScopeDebugVerbs verb, the phrase "root cause",
//     or a clause with "why" and a ScopeDefectWords word ("investigate why
//     the login fails").
//  4. fix-defect -> debug-only: a ScopeFixVerbs verb whose clause contains a
//     ScopeDefectWords word ("fix the token refresh bug").
//  5. fix -> full-implementation: a ScopeFixVerbs verb without a defect word
//     ("fix the sidebar layout").
//  6. plan -> research-and-plan: a ScopePlanVerbs verb, or a plan-making
//     clause of rule 2 ("Research and plan authentication system",
//     "Research authentication patterns and create implementation plan").
//  7. research -> research-only: a ScopeResearchVerbs verb ("Research
//     authentication patterns").
//  8. mentions-plan -> research-and-plan: a PlanWords word anywhere.
//  9. default -> research-and-plan: nothing matched; research-and-plan is
//     the conservative choice (it changes no code and ends with a plan the
//     user reviews).
//
// Implementation outranks debugging and planning because full-implementation
// runs research, plan, test and debug too; a mixed request gets the larger
// scope. `--scope` overrides all of this.
func DetectScope(description string) (scope string, why string) {
	clauses := scopeClauses(description)
	type hit struct {
		rule, scope, why string
	}
	var hits []hit
	add := func(rule, scope, format string, args ...any) {
		hits = append(hits, hit{rule, scope, rule + ": " + fmt.Sprintf(format, args...)})
	}
	for _, c := range clauses {
		if c.verb() == "" {
			continue
		}
		word := c.words[c.verbAt]
		text := c.text()
		plan := c.has(PlanWords, c.verbAt+1)
		if inForms(word, ScopeReviseVerbs) && plan != "" {
			add(ScopeRuleRevise, ScopeResearchAndRevise, "%q acts on %q in %q", word, plan, text)
		}
		if inForms(word, ScopeImplementVerbs) {
			if inForms(word, ScopePlanMakingVerbs) && plan != "" {
				add(ScopeRulePlan, ScopeResearchAndPlan, "%q makes %q in %q", word, plan, text)
			} else {
				add(ScopeRuleImplement, ScopeFullImplementation, "%q starts %q", word, text)
			}
		}
		if inForms(word, ScopeDebugVerbs) {
			add(ScopeRuleDebug, ScopeDebugOnly, "%q starts %q", word, text)
		}
		if inForms(word, ScopeFixVerbs) {
			if d := c.has(ScopeDefectWords, c.verbAt+1); d != "" {
				add(ScopeRuleFixDefect, ScopeDebugOnly, "%q with the defect %q in %q", word, d, text)
			} else {
				add(ScopeRuleFix, ScopeFullImplementation, "%q starts %q with no defect named", word, text)
			}
		}
		if inForms(word, ScopePlanVerbs) {
			add(ScopeRulePlan, ScopeResearchAndPlan, "%q starts %q", word, text)
		}
		if inForms(word, ScopeResearchVerbs) {
			add(ScopeRuleResearch, ScopeResearchOnly, "%q starts %q", word, text)
		}
	}
	for _, c := range clauses {
		if c.has([]string{"why"}, 0) != "" {
			if d := c.has(ScopeDefectWords, 0); d != "" {
				add(ScopeRuleDebug, ScopeDebugOnly, "\"why\" with the defect %q in %q", d, c.text())
			}
		}
	}
	all := scopeWords(description)
	for i := 0; i+1 < len(all); i++ {
		if all[i] == "root" && (all[i+1] == "cause" || all[i+1] == "causes") {
			add(ScopeRuleDebug, ScopeDebugOnly, "the phrase \"root cause\"")
			break
		}
	}
	for _, w := range all {
		if inList(w, PlanWords) {
			add(ScopeRuleMentionsPlan, ScopeResearchAndPlan, "%q appears but no clause starts with an action verb", w)
			break
		}
	}
	order := []string{ScopeRuleRevise, ScopeRuleImplement, ScopeRuleDebug, ScopeRuleFixDefect, ScopeRuleFix, ScopeRulePlan, ScopeRuleResearch, ScopeRuleMentionsPlan}
	for _, rule := range order {
		for _, h := range hits {
			if h.rule == rule {
				return h.scope, h.why
			}
		}
	}
	return ScopeResearchAndPlan, ScopeRuleDefault + ": no rule matched; research-and-plan is the conservative default"
}

// scopeClause is one clause of a description: its lowercased words.
type scopeClause struct {
	words  []string
	verbAt int // index of the verb, -1 when the clause has only fillers
}

func (c scopeClause) verb() string {
	if c.verbAt < 0 {
		return ""
	}
	return c.words[c.verbAt]
}

// has returns the first word at or after from whose base form is in list.
func (c scopeClause) has(list []string, from int) string {
	for _, w := range c.words[min(from, len(c.words)):] {
		if inForms(w, list) {
			return w
		}
	}
	return ""
}

func (c scopeClause) text() string {
	return shorten.Runes(strings.Join(c.words[max(c.verbAt, 0):], " "), 60)
}

// scopeClauses cuts a description into clauses (see DetectScope).
func scopeClauses(description string) []scopeClause {
	var pieces []string
	var cur strings.Builder
	rs := []rune(strings.ToLower(description))
	for i, r := range rs {
		boundary := strings.ContainsRune(",;:!?&\n", r)
		if r == '.' && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			boundary = true
		}
		if boundary {
			pieces = append(pieces, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	pieces = append(pieces, cur.String())
	var out []scopeClause
	for _, p := range pieces {
		var words []string
		flush := func() {
			if len(words) > 0 {
				out = append(out, newScopeClause(words))
			}
			words = nil
		}
		for _, w := range scopeWords(p) {
			if inList(w, scopeClauseWords) {
				flush()
				continue
			}
			words = append(words, w)
		}
		flush()
	}
	return out
}

func newScopeClause(words []string) scopeClause {
	c := scopeClause{words: words, verbAt: -1}
	for i, w := range words {
		if !inList(w, ScopeClauseFillers) {
			c.verbAt = i
			break
		}
	}
	return c
}

// scopeWords lowercases s and splits it into runs of letters and digits.
func scopeWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func inList(w string, list []string) bool {
	for _, x := range list {
		if w == x {
			return true
		}
	}
	return false
}

// inForms reports whether w or one of its base forms (w without a plural,
// -ing or -ed ending) is in list: "fixes", "fixed", "fixing" -> "fix";
// "updating" -> "update"; "planning" -> "plan"; "modified" -> "modify".
func inForms(w string, list []string) bool {
	for _, f := range baseForms(w) {
		if inList(f, list) {
			return true
		}
	}
	return false
}

func baseForms(w string) []string {
	forms := []string{w}
	for _, suf := range []string{"s", "es", "ed", "d", "ing"} {
		stem, ok := strings.CutSuffix(w, suf)
		if !ok || len(stem) < 2 {
			continue
		}
		forms = append(forms, stem)
		if suf == "ing" || suf == "ed" {
			forms = append(forms, stem+"e")
			if n := len(stem); n >= 2 && stem[n-1] == stem[n-2] {
				forms = append(forms, stem[:n-1]) // planning, debugged
			}
		}
		if (suf == "es" || suf == "ed") && strings.HasSuffix(stem, "i") {
			forms = append(forms, strings.TrimSuffix(stem, "i")+"y") // studies, modified
		}
	}
	return forms
}

// Research complexity (README, "Research complexity").
const (
	// ComplexityBase is the number of research topics before adjustments.
	ComplexityBase = 2
	// MinResearchTopics and MaxResearchTopics clamp Complexity: research
	// launches at least one research-specialist, and at most four report
	// paths are pre-calculated.
	MinResearchTopics = 1
	MaxResearchTopics = 4
	// HierarchicalThreshold is the topic count from which research goes
	// through research-sub-supervisor (README, "Research complexity").
	HierarchicalThreshold = 4
)

// Complexity patterns (see Complexity); each counts once, whatever the
// number of matches.
var (
	complexityPlusOne  = gates.LazyRegexp(`(?i)\b(integrat\w*|migrat\w*|refactor\w*|architect\w*)`)
	complexityPlusTwo  = gates.LazyRegexp(`(?i)\b(multi[- ]?systems?|multiple systems|cross[- ]?platform\w*|distributed|micro[- ]?services?)\b`)
	complexityMinusOne = gates.LazyRegexp(`(?is)\b(fix|fixes|fixing|update|updates|updating|modify|modifies|modifying)\b.*\b(one|single|small)\b`)
)

// Complexity estimates the number of research topics for a description
// (README, "Research complexity"). Matching is case-insensitive
// and each adjustment counts once:
//
//   - base ComplexityBase (2);
//   - +1 for integrate, migration, refactor, architecture, and their
//     inflections (a word starting integrat, migrat, refactor or architect:
//     integration, migrate, refactoring, architectural);
//   - +2 for multi-system, cross-platform, distributed, microservices
//     (with or without the hyphen or a space: "multi system",
//     "multisystem", "multiple systems", "cross platform",
//     "micro-services", singular or plural);
//   - -1 for fix/update/modify (fixes, fixing, updates, ...) followed
//     later by the word one, single or small ("fix one typo", "update a
//     single field"; "a small fix" does not count);
//
// and the sum is clamped to MinResearchTopics..MaxResearchTopics. why
// lists the terms, e.g. "base 2; +1 (migrate); +2 (distributed) = 5,
// clamped to 4".
func Complexity(description string) (topics int, why string) {
	n := ComplexityBase
	parts := []string{fmt.Sprintf("base %d", ComplexityBase)}
	if m := complexityPlusOne.Regexp().FindString(description); m != "" {
		n++
		parts = append(parts, fmt.Sprintf("+1 (%s)", strings.ToLower(m)))
	}
	if m := complexityPlusTwo.Regexp().FindString(description); m != "" {
		n += 2
		parts = append(parts, fmt.Sprintf("+2 (%s)", strings.ToLower(m)))
	}
	if m := complexityMinusOne.Regexp().FindStringSubmatch(description); m != nil {
		n--
		parts = append(parts, fmt.Sprintf("-1 (%s ... %s)", strings.ToLower(m[1]), strings.ToLower(m[2])))
	}
	why = strings.Join(parts, "; ")
	clamped := min(max(n, MinResearchTopics), MaxResearchTopics)
	if len(parts) > 1 {
		why += fmt.Sprintf(" = %d", n)
	}
	if clamped != n {
		why += fmt.Sprintf(", clamped to %d", clamped)
	}
	return clamped, why
}

// Hierarchical reports whether research with this many topics goes through
// research-sub-supervisor (topics >= HierarchicalThreshold) rather than
// research-specialists launched directly.
func Hierarchical(topics int) bool { return topics >= HierarchicalThreshold }
