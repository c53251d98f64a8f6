package main

import (
	"fmt"
	"strings"
)

// Result lines of the orchestrate workflow, as models write them: every
// owed line × every decoration models put around it (README, "Result
// lines"), each in the base workflow's launch mode for its agent; and the
// forms that must be refused, answered through the nudge with the plain
// line. A decorated line must be read as the plain one: the base's states
// and checkpoint lines after it must not move. (Final validation's PHASE
// GATE STATUS is read by the same grammar as the quality gate's; its own
// path is covered by the base and the nudges.)

// owedLine is a result line of the base workflow.
type owedLine struct {
	id    string // names the variants
	at    string // the base action whose report ends with it
	key   string // as the agent templates spell it
	value string // the verdict; "" for a token line
}

func (l owedLine) plain() string {
	if l.value == "" {
		return l.key
	}
	return l.key + ": " + l.value
}

var orchestrateOwed = []owedLine{
	{"clear", "ra", "REQUIREMENTS_CLEAR", ""},
	{"impl-complete", "i2", "IMPLEMENTATION STATUS", "COMPLETE"},
	{"gate-fail", "q1", "PHASE GATE STATUS", "FAIL"},
	{"analysis", "fa", "FAILURE_ANALYSIS", "COMPLETE"},
	{"gate-pass", "q2", "PHASE GATE STATUS", "PASS"},
	{"uxdx-pass", "ux", "UX/DX STATUS", "PASS"},
	{"extraction", "se", "SUCCESS_EXTRACTION", "COMPLETE"},
}

// decoration is a way models write a result line; it returns "" where it
// does not apply (no value to bold apart, no verdict to inflect).
type decoration struct {
	name string
	line func(key, value string) string
	crlf bool // the whole report in CRLF line endings
}

func joinLine(key, value string) string {
	if value == "" {
		return key
	}
	return key + ": " + value
}

// onValue applies f to the verdict, or to the whole line of a token.
func onValue(f func(string) string) func(key, value string) string {
	return func(key, value string) string {
		if value == "" {
			return f(key)
		}
		return key + ": " + f(value)
	}
}

var decorations = []decoration{
	{name: "dash list", line: func(k, v string) string { return "- " + joinLine(k, v) }},
	{name: "star list", line: func(k, v string) string { return "* " + joinLine(k, v) }},
	{name: "quoted", line: func(k, v string) string { return "> " + joinLine(k, v) }},
	{name: "numbered list", line: func(k, v string) string { return "1. " + joinLine(k, v) }},
	{name: "bold line", line: func(k, v string) string { return "**" + joinLine(k, v) + "**" }},
	{name: "bold key", line: func(k, v string) string {
		if v == "" {
			return ""
		}
		return "**" + k + ":** " + v
	}},
	{name: "backticks", line: func(k, v string) string { return "`" + joinLine(k, v) + "`" }},
	{name: "heading", line: func(k, v string) string { return "## " + joinLine(k, v) }},
	{name: "equals sign", line: func(k, v string) string {
		if v == "" {
			return ""
		}
		return k + " = " + v
	}},
	{name: "other word joiner", line: func(k, v string) string {
		// PHASE_GATE_STATUS, UX_DX_STATUS; REQUIREMENTS CLEAR.
		if strings.ContainsAny(k, " /") {
			return joinLine(strings.NewReplacer(" ", "_", "/", "_").Replace(k), v)
		}
		return joinLine(strings.ReplaceAll(k, "_", " "), v)
	}},
	{name: "past tense", line: func(k, v string) string {
		past := map[string]string{"PASS": "PASSED", "FAIL": "FAILED", "COMPLETE": "COMPLETED"}[v]
		if past == "" {
			return ""
		}
		return k + ": " + past
	}},
	{name: "full stop", line: onValue(func(s string) string { return s + "." })},
	{name: "emoji", line: onValue(func(s string) string {
		if s == "FAIL" || s == "BLOCKED" {
			return s + " ❌"
		}
		return s + " ✅"
	})},
	{name: "parenthetical", line: onValue(func(s string) string {
		return s + " (" + map[string]string{"PASS": "12/12 tests", "FAIL": "3 of 12 tests red", "COMPLETE": "2 files changed", "BLOCKED": "parser API missing"}[s] + ")"
	})},
	{name: "trailing spaces", line: func(k, v string) string { return joinLine(k, v) + "   " }},
	{name: "CRLF", line: joinLine, crlf: true},
	{name: "lower case", line: func(k, v string) string { return strings.ToLower(joinLine(k, v)) }},
	// A mark that agrees with the verdict (one that says the opposite
	// names both verdicts: refused).
	{name: "leading emoji", line: func(k, v string) string {
		if strings.HasPrefix(v, "FAIL") || strings.HasPrefix(v, "BLOCKED") {
			return "❌ " + joinLine(k, v)
		}
		return "✅ " + joinLine(k, v)
	}},
}

// withResultLine is the change that makes action at end its report with
// line in place of the plain one (and CRLF endings if crlf).
func withResultLine(at, plain, line string, crlf bool) func(s *script) {
	return func(s *script) {
		a := s.at(at)
		if !strings.Contains(a.report, plain) {
			panic(fmt.Sprintf("%s's report has no %q", at, plain))
		}
		a.report = strings.Replace(a.report, plain, line, 1)
		if crlf {
			a.report = strings.ReplaceAll(a.report, "\n", "\r\n")
		}
	}
}

// refusedForm is a line that must not be read as a verdict: the agent is
// nudged once, quoted, and answers with the plain line.
type refusedForm struct {
	name    string
	problem string // what the nudge says
	line    func(l owedLine) string
}

var oppositeOf = map[string]string{"PASS": "FAIL", "FAIL": "PASS", "COMPLETE": "BLOCKED"}

var refusedForms = []refusedForm{
	{"both verdicts", "it names both verdicts", func(l owedLine) string { return l.key + ": " + l.value + "/" + oppositeOf[l.value] }},
	{"verdict then prose", "the verdict is followed by other text", func(l owedLine) string { return l.key + ": " + l.value + " but the linter complains" }},
	{"table cell", "a table cell is not a result line", func(l owedLine) string { return "| " + l.key + " | " + l.value + " |" }},
	{"key run into its value", "the key is not followed by ':' and a verdict", func(l owedLine) string { return l.key + " " + l.value }},
}

// toldPrior is how the checkpoint line brings a nudged agent's earlier
// report to the orchestrator.
const toldPrior = "The agent's report before orch-hook asked for its result line:\n"

func init() {
	var vs []variant
	for _, l := range orchestrateOwed {
		for _, d := range decorations {
			line := d.line(l.key, l.value)
			if line == "" {
				continue
			}
			vs = append(vs, variant{name: l.id + " " + d.name, change: withResultLine(l.at, l.plain(), line, d.crlf)})
		}
	}
	// BLOCKED, decorated: Task 03 is blocked once, then relaunched. A few
	// decorations only: the grammar is the one COMPLETE goes through.
	blocked := owedLine{"impl-blocked", "i3", "IMPLEMENTATION STATUS", "BLOCKED"}
	for _, d := range decorations {
		line := d.line(blocked.key, blocked.value)
		switch d.name {
		case "dash list", "bold key", "emoji", "parenthetical", "other word joiner", "CRLF":
		default:
			continue
		}
		vs = append(vs, variant{name: blocked.id + " " + d.name, change: func(s *script) {
			i3 := s.at("i3")
			again := copyAction(i3, "i3-again")
			i3.report = "Waiting on the parser's exported API.\n" + line
			if d.crlf {
				i3.report = strings.ReplaceAll(i3.report, "\n", "\r\n")
			}
			i3.want = want{state: "4a", context: []string{"4a Task 03 BLOCKED (relaunch allowed, 1 of 2 retries used) -> 4a | still open: Task 03"}}
			s.insertAfter("i3", again)
		}})
	}
	// Refused forms, each answered by the plain line alone; the
	// checkpoint line then carries the report the agent gave first.
	for _, l := range orchestrateOwed {
		switch l.id {
		case "gate-pass", "gate-fail", "uxdx-pass", "impl-complete", "extraction":
		default:
			continue
		}
		for _, f := range refusedForms {
			vs = append(vs, variant{
				name:   l.id + " refused: " + f.name,
				change: withResultLine(l.at, l.plain(), f.line(l), false),
				fixes:  []fix{{match: "was not read: " + f.problem, reply: l.plain()}},
				expect: []point{{after: l.at, want: want{context: []string{toldPrior}}}},
			})
		}
	}
	// More spellings of one line, the quality gate's PASS.
	for _, f := range []struct{ name, line string }{
		{"bold value", "PHASE GATE STATUS: **PASS**"},
		{"no space after the colon", "PHASE GATE STATUS:PASS"},
		{"space before the colon", "PHASE GATE STATUS : PASS"},
		{"title case", "Phase Gate Status: Pass"},
		{"tab after the colon", "PHASE GATE STATUS:\tPASS"},
		{"everything at once", "### ✅ **Phase_Gate_Status:** `PASSED` (12/12 tests) ✅"},
		{"bold key without the colon", "**PHASE GATE STATUS**: PASS"},
		{"hyphenated key", "PHASE-GATE-STATUS: PASS"},
	} {
		vs = append(vs, variant{name: "gate-pass " + f.name, change: withResultLine("q2", "PHASE GATE STATUS: PASS", f.line, false)})
	}
	for _, f := range []struct{ name, line, problem string }{
		{"em dash for the colon", "PHASE GATE STATUS — PASS", "the key is not followed by ':' and a verdict"},
		{"a verdict in another word", "PHASE GATE STATUS: GREEN", "\"GREEN\" is not a verdict"},
		{"a verdict of another step", "PHASE GATE STATUS: COMPLETE", "COMPLETE is not one of this step's verdicts"},
	} {
		vs = append(vs, variant{
			name:   "gate-pass refused: " + f.name,
			change: withResultLine("q2", "PHASE GATE STATUS: PASS", f.line, false),
			fixes:  []fix{{match: "was not read: " + f.problem, reply: "PHASE GATE STATUS: PASS"}},
		})
	}
	clear := orchestrateOwed[0]
	vs = append(vs,
		variant{name: "clear refused: a value after a token",
			change: withResultLine("ra", clear.plain(), "REQUIREMENTS_CLEAR: yes", false),
			fixes:  []fix{{match: "this line takes no value", reply: "REQUIREMENTS_CLEAR"}},
			expect: []point{{after: "ra", want: want{context: []string{toldPrior + "The request is clear"}}}}},
		variant{name: "clear refused: prose after a token",
			change: withResultLine("ra", clear.plain(), "REQUIREMENTS_CLEAR except for the output format", false),
			fixes:  []fix{{match: "your result line \"REQUIREMENTS_CLEAR except for the output format\" was not read: the line is followed by other text", reply: "REQUIREMENTS_CLEAR"}}},
		variant{name: "clear then prose naming another token",
			change: func(s *script) {
				s.at("ra").report = "The request is clear.\nREQUIREMENTS_CLEAR\n\nSo no QUESTIONS_NEEDED this time."
			}},
		variant{name: "clear refused: another token with a value after it",
			change: func(s *script) {
				s.at("ra").report = "The request is clear.\nREQUIREMENTS_CLEAR\nQUESTIONS_NEEDED: none"
			},
			fixes: []fix{{match: "was not read: this line takes no value", reply: "REQUIREMENTS_CLEAR"}}},
		variant{name: "impl-blocked three times counts as returned",
			change: func(s *script) {
				i3 := s.at("i3")
				i3.report = "Blocked on the parser's API.\nIMPLEMENTATION STATUS: BLOCKED"
				i3.want = want{state: "4a", context: []string{"Task 03 BLOCKED (relaunch allowed, 1 of 2 retries used)"}}
				b2, b3 := copyAction(i3, "i3-b2"), copyAction(i3, "i3-b3")
				b2.want = want{state: "4a", context: []string{"Task 03 BLOCKED (relaunch allowed, 2 of 2 retries used)"}}
				b3.want = want{state: "4b", context: []string{toldPhase1Imp + " | 3 tasks implemented; Task 03 BLOCKED 3 times (Blocked on the parser's API.); launch code-quality and report the block in its prompt"}}
				s.insertAfter("i3", b2, b3)
				// Every gate's prompt in the phase must report the block
				// (GuardBlocksReported).
				s.at("q1").prompt = "Quality gate, phase 1. Task 03 is BLOCKED: on the parser's API."
				s.at("q2").prompt = "Quality gate, phase 1 again. Task 03 is still blocked."
			}},
		variant{name: "impl-blocked three times: a gate prompt that does not report it is refused",
			change: func(s *script) {
				i3 := s.at("i3")
				i3.report = "IMPLEMENTATION STATUS: BLOCKED (no parser API yet)"
				i3.want = want{state: "4a", context: []string{"Task 03 BLOCKED (relaunch allowed, 1 of 2 retries used)"}}
				b2, b3 := copyAction(i3, "i3-b2"), copyAction(i3, "i3-b3")
				b2.want = want{state: "4a", context: []string{"Task 03 BLOCKED (relaunch allowed, 2 of 2 retries used)"}}
				b3.want = want{state: "4b", context: []string{"Task 03 BLOCKED 3 times (no parser API yet)"}}
				s.insertAfter("i3", b2, b3)
				s.at("q2").prompt = "Quality gate, phase 1 again; task 3 remains blocked."
			},
			fixes: []fix{{match: "Task 03 BLOCKED 3 times (no parser API yet) and counts as returned; the quality gate judges it: say so in code-quality's prompt", redo: func(s *script) []*action {
				a := copyAction(s.at("q1"), "q1-again")
				a.prompt = "Quality gate, phase 1. Task 03 was blocked: no parser API yet."
				return []*action{a}
			}}}},
		// The last line carrying the key decides.
		variant{name: "gate-pass after an earlier FAIL line",
			change: func(s *script) {
				s.at("q2").report = "First run:\nPHASE GATE STATUS: FAIL\nAfter the rerun all tests pass.\nPHASE GATE STATUS: PASS"
			}},
		variant{name: "gate-pass then a closing sentence",
			change: func(s *script) {
				s.at("q2").report = "All green.\nPHASE GATE STATUS: PASS\n\nLet me know if you need anything else."
			}},
		variant{name: "gate-pass in a code block",
			change: func(s *script) { s.at("q2").report = "All green.\n```\nPHASE GATE STATUS: PASS\n```" }},
		variant{name: "gate-pass refused last line does not fall back",
			change: func(s *script) {
				s.at("q2").report = "PHASE GATE STATUS: PASS\nOn second thought:\nPHASE GATE STATUS: PASS but one test is flaky"
			},
			fixes: []fix{{match: "was not read: the verdict is followed by other text", reply: "PHASE GATE STATUS: PASS"}}},
		variant{name: "gate-fail with FAILING TASKS before the verdict",
			change: func(s *script) {
				s.at("q1").report = "Formatter test fails: trailing space.\nFAILING TASKS: 02\nPHASE GATE STATUS: FAIL"
			}},
	)
	registerVariants("result lines", vs...)
}
