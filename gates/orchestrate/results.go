package orchestrate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Result lines the agents end with (README, "Result lines", and the agents'
// templates under templates/agents).
const (
	LineClear        = "REQUIREMENTS_CLEAR"
	LineQuestions    = "QUESTIONS_NEEDED"
	LineDiscovery    = "DISCOVERY_NEEDED"
	LineGatePass     = "PHASE GATE STATUS: PASS"
	LineGateFail     = "PHASE GATE STATUS: FAIL"
	LineFailingTasks = "FAILING TASKS:"
	// LineFixTasks is FAILURE_ANALYSIS's list of the tasks to fix, read
	// only when the gate named none.
	LineFixTasks   = "FIX TASKS:"
	LineUXPass     = "UX/DX STATUS: PASS"
	LineUXFail     = "UX/DX STATUS: FAIL"
	LineAnalysis   = "FAILURE_ANALYSIS: COMPLETE"
	LineExtraction = "SUCCESS_EXTRACTION: COMPLETE"
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
		return []string{gates.LineImplComplete, gates.LineImplBlocked}
	case JobAnalysis:
		return []string{LineAnalysis}
	case JobExtraction:
		return []string{LineExtraction}
	}
	return nil
}

var (
	// "Task 03", "task_03", "task03", "task-03-cli.md", "TASK #3".
	reTaskRef = gates.LazyRegexp(`(?i)(?:^|[^a-z0-9])(tasks?)[ \t_#-]*(\d{1,4})\b`)
	// A task reference followed by more numbers: "task 01, 03 and 02",
	// "Task 01 then Task 03", "Task 01; Task 03".
	reTaskRun = gates.LazyRegexp(`(?i)tasks?[ \t_#-]*\d{1,4}\b(?:\s*(?:,|;|&|\+|/|\band\b|\bor\b|\bthen\b|\bplus\b|\bas well as\b)\s*(?:tasks?[ \t_#-]*)?#?\s*\d{1,4}\b)+`)
)

// TaskOfPrompt reads the task a code-implementer prompt is for: see
// TaskOfLaunch. 0 when it names none or is read two ways.
func TaskOfPrompt(prompt string) int {
	n, _ := TaskOfLaunch(prompt, "")
	return n
}

// TaskOfLaunch reads which task a code-implementer launch is for: the one
// the prompt's task header introduces ("Task 01: Parser"), else the one
// named on the prompt's first line that names a task, else the one the
// Agent description names. Both may name it, but then the same
// one. A line or description naming two tasks is refused (one task per
// implementer), unless it starts with "Task NN" (the form the orchestrate
// command gives), which names that task whatever follows. Later lines may
// mention other tasks as context. problem says why no task was read.
func TaskOfLaunch(prompt, description string) (n int, problem string) {
	pn, pLine := 0, ""
	lines := strings.Split(prompt, "\n")
	// A task header ("Task 01: Parser", "## Task 01") decides; mentions
	// before it are context ("Context: Task 02 formats this"). Two headers
	// for two tasks are two tasks.
	var listed []int // tasks list items introduce ("- Task 01: ...")
	for _, line := range lines {
		n := taskHeader(line)
		if _, isItem := listItem(line); n != 0 && isItem {
			listed = appendNew(listed, n) // context beside a header; without one, see below
			continue
		}
		if n == 0 {
			continue
		}
		if ns, _ := tasksOfLine(line); len(ns) != 1 {
			return 0, fmt.Sprintf("the prompt's line %q names more than one task; one code-implementer implements one task: start the prompt with a `Task NN: <title>` line naming it (other tasks may be mentioned after it).", shorten.Runes(strings.TrimSpace(line), 80))
		}
		if pn != 0 && n != pn {
			return 0, fmt.Sprintf("the prompt has a header for Task %02d (%q) and one for Task %02d (%q); one code-implementer implements one task: keep one `Task NN:` header, and mention other tasks in prose or list items.", pn, shorten.Runes(pLine, 60), n, shorten.Runes(strings.TrimSpace(line), 60))
		}
		pn, pLine = n, strings.TrimSpace(line)
	}
	if pn == 0 && len(listed) > 1 {
		// "- Task 01: Parser\n- Task 02: Formatter" and no header: a list
		// of tasks to do, or context? Read two ways.
		return 0, fmt.Sprintf("the prompt lists %s and no `Task NN: <title>` line; one code-implementer implements one task: start the prompt with that task's line.", taskList(listed))
	}
	// Without a header, the first line that names a task decides.
	for _, line := range lines {
		if pn != 0 {
			break
		}
		ns, named := tasksOfLine(line)
		if !named {
			continue
		}
		if len(ns) != 1 {
			return 0, fmt.Sprintf("the prompt's line %q names more than one task; one code-implementer implements one task: start the prompt with a `Task NN: <title>` line naming it (other tasks may be mentioned after it).", shorten.Runes(strings.TrimSpace(line), 80))
		}
		pn, pLine = ns[0], strings.TrimSpace(line)
	}
	dn := 0
	if ns, named := tasksOfLine(description); named {
		if len(ns) != 1 {
			return 0, fmt.Sprintf("the Agent description %q names more than one task; one code-implementer implements one task: name only its task there.", shorten.Runes(description, 80))
		}
		dn = ns[0]
	}
	switch {
	case pn > 0 && dn > 0 && pn != dn:
		return 0, fmt.Sprintf("the prompt names Task %02d (%q) but the Agent description names Task %02d; name the same one task in both.", pn, shorten.Runes(pLine, 60), dn)
	case pn > 0:
		return pn, ""
	case dn > 0:
		return dn, ""
	}
	return 0, "the prompt names no task; start it with \"Task NN\" naming the one task to implement."
}

// taskHeader is the task a line introduces: "Task 01: Parser", "## Task
// 01", "**Task 01** - Parser", "Task 01" (matchTaskHeader).
func taskHeader(line string) int {
	n, _ := matchTaskHeader(gates.TrimLeadDecoration(strings.TrimSpace(line)))
	return n
}

// matchTaskHeader is reTaskHeader.FindStringSubmatch(s) read by hand (the
// test checks they agree), so that a launch does not compile the regexp
// in every hook process: "task" in any case (RE2's (?i) also folds "ſ"
// and the Kelvin sign into s and k), [ \t_#-]*, one to four digits,
// [*_`]*, ASCII white space, then the end or one of : . – — -.
func matchTaskHeader(s string) (int, bool) {
	i := 0
	for _, want := range "task" {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 0 || !foldsTo(r, want) {
			return 0, false
		}
		i += size
	}
	for i < len(s) && strings.IndexByte(" \t_#-", s[i]) >= 0 {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := s[start:i]
	if len(digits) == 0 || len(digits) > 4 {
		return 0, false
	}
	for i < len(s) && strings.IndexByte("*_`", s[i]) >= 0 {
		i++
	}
	for i < len(s) && strings.IndexByte(" \t\n\f\r", s[i]) >= 0 {
		i++
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		if !strings.ContainsRune(":.\u2013\u2014-", r) {
			return 0, false
		}
	}
	n, _ := strconv.Atoi(digits)
	return n, true
}

// hasTA reports whether s has "ta" in any case.
func hasTA(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i]|0x20 == 't' && s[i+1]|0x20 == 'a' {
			return true
		}
	}
	return false
}

// foldsTo reports whether r is want or one of its case forms (Unicode
// simple folding, as RE2's (?i) matches).
func foldsTo(r, want rune) bool {
	for f := unicode.SimpleFold(want); f != want; f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return r == want
}

// tasksOfLine lists the distinct tasks a line names ("Task 03",
// "task-03-cli.md", "TASK #3"); "Tasks 01 and 02" names several.
func tasksOfLine(line string) (nums []int, named bool) {
	s := gates.TrimLeadDecoration(strings.TrimSpace(line))
	if n := taskHeader(s); n != 0 {
		// "Task 01: the parser (see Task 02)" names Task 01; what follows
		// the header is its title and context.
		return []int{n}, true
	}
	// Elsewhere every task on the line counts: "Task 01 (Parser) and 03",
	// "Task 01 (and 02)".
	if _, found := conjoinedParen(s); found {
		return []int{-1, -2}, true
	}
	flat := strings.NewReplacer("*", "", "`", "").Replace(stripParens(s))
	if !hasTA(flat) {
		// reTaskRun and reTaskRef both need "ta" in some case (neither
		// letter has another case form): most lines, and most Agent
		// descriptions, are read without compiling them.
		return nil, false
	}
	if reTaskRun.MatchString(flat) {
		return []int{-1, -2}, true // several
	}
	for _, m := range reTaskRef.FindAllStringSubmatch(flat, -1) {
		n, _ := strconv.Atoi(m[2])
		if strings.EqualFold(m[1], "tasks") {
			return []int{n, -1}, true // a plural names several
		}
		nums = appendNew(nums, n)
	}
	return nums, len(nums) > 0
}
