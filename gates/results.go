package gates

import (
	"strconv"
	"strings"
)

// Result lines the agents end with (seed 004, and the agents' templates).
const (
	LineClear        = "REQUIREMENTS_CLEAR"
	LineQuestions    = "QUESTIONS_NEEDED"
	LineDiscovery    = "DISCOVERY_NEEDED"
	LineGatePass     = "PHASE GATE STATUS: PASS"
	LineGateFail     = "PHASE GATE STATUS: FAIL"
	LineFailingTasks = "FAILING TASKS:"
	LineUXPass       = "UX/DX STATUS: PASS"
	LineUXFail       = "UX/DX STATUS: FAIL"
	LineImplComplete = "IMPLEMENTATION STATUS: COMPLETE"
	LineImplBlocked  = "IMPLEMENTATION STATUS: BLOCKED"
	LineAnalysis     = "FAILURE_ANALYSIS: COMPLETE"
	LineExtraction   = "SUCCESS_EXTRACTION: COMPLETE"
)

// OwedLines lists the result lines a job must end with (one of them); nil
// when any text will do.
func OwedLines(job string) []string {
	switch job {
	case JobClarify:
		return []string{LineClear, LineQuestions, LineDiscovery}
	case JobGate, JobFinal:
		return []string{LineGatePass, LineGateFail}
	case JobUXDX:
		return []string{LineUXPass, LineUXFail}
	case JobImplement, JobFix:
		return []string{LineImplComplete, LineImplBlocked}
	case JobAnalysis:
		return []string{LineAnalysis}
	case JobExtraction:
		return []string{LineExtraction}
	}
	return nil
}

// normalizeLine makes "**PHASE GATE STATUS:** `PASS`" and "## phase gate
// status: pass" compare equal to "PHASE GATE STATUS: PASS".
func normalizeLine(line string) string {
	line = strings.NewReplacer("*", "", "`", "").Replace(line)
	line = strings.Trim(line, " \t\r#")
	return strings.ToUpper(strings.Join(strings.Fields(line), " "))
}

// FindResult returns the last line of text equal to one of forms (after
// normalizing), or "".
func FindResult(text string, forms []string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		n := normalizeLine(lines[i])
		for _, f := range forms {
			if n == f {
				return f
			}
		}
	}
	return ""
}

// FailingTasks reads the last "FAILING TASKS: 02, 05" line.
func FailingTasks(text string) []int {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		n := normalizeLine(lines[i])
		if rest, ok := strings.CutPrefix(n, LineFailingTasks); ok {
			return numbers(rest)
		}
	}
	return nil
}

var reTaskPrompt = lazyRegexp(`(?i)^task\s*#?\s*(\d+)`)

// TaskOfPrompt reads the task number a code-implementer prompt starts with
// ("Task 03: ..."); 0 when it does not start with one. Later mentions of
// other tasks are ignored.
func TaskOfPrompt(prompt string) int {
	p := strings.TrimLeft(prompt, " \t\r\n*#`>")
	m := reTaskPrompt.FindStringSubmatch(p)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// summaryOf is a short extract of an agent's text for checkpoint lines: the
// first non-empty line that is not a result line, clipped.
func summaryOf(text string, skip ...string) string {
	for _, line := range strings.Split(text, "\n") {
		n := normalizeLine(line)
		if n == "" || strings.HasPrefix(n, LineFailingTasks) {
			continue
		}
		isResult := false
		for _, s := range skip {
			if n == s {
				isResult = true
			}
		}
		if isResult {
			continue
		}
		return clip(strings.Join(strings.Fields(strings.Trim(line, " #*")), " "), 80)
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// withoutLines drops the lines of text that are one of the result forms.
func withoutLines(text string, forms ...string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if !contains(forms, normalizeLine(line)) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
