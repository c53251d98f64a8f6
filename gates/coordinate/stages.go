package coordinate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// The testing supervisor's stages (README, "Supervisors", "Test stages";
// seed 003): generation -> execution -> validation, one after another,
// each run by one or more test-specialist workers in parallel. A worker
// is told its stage by its prompt's `Stage:` line; orch-hook refuses its
// launch while the stage before has not completed, reads the result line
// its stage owes, and records the stages from the workers' own lines and
// tool events, never from what the supervisor says of them.

// Stage ids, in the order the stages run.
const (
	StageGeneration = "generation"
	StageExecution  = "execution"
	StageValidation = "validation"
)

// TestStage is one stage of the testing supervisor.
type TestStage struct {
	ID, Name string
	// Words name the stage in a worker's `Stage:` line.
	Words []string
}

// TestStages are the testing supervisor's stages, in the order they run.
var TestStages = []TestStage{
	{StageGeneration, "Test Generation", []string{"generation", "generate", "generating", "gen"}},
	{StageExecution, "Test Execution", []string{"execution", "execute", "executing", "exec"}},
	{StageValidation, "Test Validation", []string{"validation", "validate", "validating", "verification", "verify"}},
}

// stageRunWords name the execution stage only in a line that names no
// stage otherwise ("Stage: run the tests"; "Stage: validation run" is
// validation).
var stageRunWords = []string{"run", "runs", "running"}

// Bounds of what a stage's line may name.
const (
	// MaxTestFiles bounds the test files one generation line names.
	MaxTestFiles = 64
	// maxCount bounds a count read from a line (a larger one is a typo).
	maxCount = 10_000_000
)

func stageIndex(id string) int {
	return slices.IndexFunc(TestStages, func(s TestStage) bool { return s.ID == id })
}

func stageOrder() string {
	ids := make([]string, len(TestStages))
	for i, s := range TestStages {
		ids[i] = s.ID
	}
	return strings.Join(ids, " -> ")
}

var (
	// reStagePrompt is a prompt line naming a stage, decoration removed:
	// "Stage: execution", "Stage 2 - Execution", "test stage = validation".
	reStagePrompt = gates.LazyRegexp(`(?i)^(?:test\s*)?stage(?:\s*#?\s*(\d+))?\s*(?:[:=]|[-—–](?:\s|$)|$)\s*(.*)$`)
	// reStageNote is where a note after the stage's name starts
	// ("generation — unit tests", "execution (go test ./...)").
	reStageNote = gates.LazyRegexp(`\s-\s|\s-$|[—–(;:]`)
)

// ReadStage reads a testing-sub-supervisor's worker's stage from its
// prompt: every line (outside fenced blocks) that starts, after list
// marks, headings, bold and code marks, with `Stage` (or `Test stage`), an
// optional number, then ':', '=' or a dash, and the stage's name. The name
// is read up to a note (a dash, '(', ';' or ':'), in any case: a
// stage's id, its name ("Test Generation"), a verb ("validate"), or its
// number in the order (1, 2, 3). Tolerant of how models write it, strict
// about what it means: a line naming two stages, or naming none, or two
// lines naming different ones, is a problem quoting the line; so is a
// prompt without one.
func ReadStage(prompt string) (stage, problem string) {
	found, foundLine := "", ""
	fence := false
	for _, raw := range strings.Split(prompt, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		s := strings.NewReplacer("*", "", "`", "").Replace(gates.TrimLeadDecoration(line))
		m := reStagePrompt.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		quoted := shorten.Runes(line, 100)
		id, why := stageOfLine(m[1], m[2])
		if why != "" {
			return "", fmt.Sprintf("%q %s", quoted, why)
		}
		if found != "" && id != found {
			return "", fmt.Sprintf("%q and %q name two stages (%s and %s); one worker runs one stage", foundLine, quoted, found, id)
		}
		found, foundLine = id, quoted
	}
	if found == "" {
		return "", "the prompt has no `Stage: <stage>` line"
	}
	return found, ""
}

// stageOfLine reads one `Stage` line: its number (after the word Stage)
// and its value.
func stageOfLine(number, value string) (string, string) {
	named := map[int]bool{}
	if number != "" {
		n, err := strconv.Atoi(number)
		if err != nil || n < 1 || n > len(TestStages) {
			return "", fmt.Sprintf("names stage %s; the stages are 1 to %d (%s)", number, len(TestStages), stageOrder())
		}
		named[n-1] = true
	}
	head := value
	if loc := reStageNote.Regexp().FindStringIndex(head); loc != nil {
		head = head[:loc[0]]
	}
	head = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(head), ".!"))
	if n, err := strconv.Atoi(head); err == nil {
		if n < 1 || n > len(TestStages) {
			return "", fmt.Sprintf("names stage %d; the stages are 1 to %d (%s)", n, len(TestStages), stageOrder())
		}
		named[n-1] = true
		head = ""
	}
	words := strings.FieldsFunc(strings.ToLower(head), func(r rune) bool { return !unicode.IsLetter(r) })
	explicit := false
	for i, s := range TestStages {
		for _, w := range words {
			if slices.Contains(s.Words, w) {
				named[i], explicit = true, true
			}
		}
	}
	if !explicit {
		for _, w := range words {
			if slices.Contains(stageRunWords, w) {
				named[stageIndex(StageExecution)] = true
			}
		}
	}
	var ids []string
	for i, s := range TestStages {
		if named[i] {
			ids = append(ids, s.ID)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Sprintf("names no stage (the stages: %s)", stageOrder())
	case 1:
		return ids[0], ""
	}
	return "", fmt.Sprintf("names %d stages (%s); one worker runs one stage", len(ids), strings.Join(ids, " and "))
}

// stageRun is what a supervisor's launches of one stage show.
type stageRun struct {
	launches, running, failed int
}

// status is the stage's status as seed 003 spells it; "" when it has not
// started. A failed worker fails its stage at once.
func (r stageRun) status() string {
	switch {
	case r.launches == 0:
		return ""
	case r.failed > 0:
		return WorkerFailed
	case r.running > 0:
		return WorkerInProgress
	}
	return WorkerCompleted
}

// resultFail is a stage worker's negative result (Launch.Result).
const resultFail = "FAIL"

// stageFailed: a stage's worker that did not succeed (failed to launch,
// no readable line, or a negative result).
func stageFailed(l *Launch) bool {
	return l.Status != gates.Running && (l.Status != gates.Returned || l.Result == resultFail)
}

// stageRuns are the stages of the supervisor whose agent id is parent, as
// its workers' launches show them.
func (c *Workflow) stageRuns(parent string) []stageRun {
	runs := make([]stageRun, len(TestStages))
	for _, l := range c.Launches {
		i := stageIndex(l.Stage)
		if parent == "" || l.Parent != parent || i < 0 {
			continue
		}
		runs[i].launches++
		switch {
		case l.Status == gates.Running:
			runs[i].running++
		case stageFailed(l):
			runs[i].failed++
		}
	}
	return runs
}

// stageErrors are the errors of a stage's failed workers, as recorded.
func (c *Workflow) stageErrors(parent, stage string) string {
	var errs []string
	if st := c.Supervisors[SupervisorKeyTesting]; st != nil && st.AgentID == parent {
		for _, s := range st.Stages {
			if s.StageID != stage {
				continue
			}
			for _, w := range s.Workers {
				if w.Status == WorkerFailed {
					errs = append(errs, w.WorkerID+": "+gates.OrText(w.Error, "no error recorded"))
				}
			}
		}
	}
	return shorten.Runes(gates.OrText(strings.Join(errs, "; "), "a worker failed"), 300)
}

// stageNowNext says where a supervisor's stages stand and what it does
// next, for its refusals.
func (c *Workflow) stageNowNext(parent string, runs []stageRun) (now, next string) {
	last := -1
	for i, r := range runs {
		if r.status() != "" {
			last = i
		}
	}
	if last < 0 {
		return "no stage has started", fmt.Sprintf("stage %s (a worker prompt starting `Stage: %s`)", TestStages[0].ID, TestStages[0].ID)
	}
	s, r := TestStages[last], runs[last]
	following := "end with SUPERVISOR_COMPLETE"
	if last+1 < len(TestStages) {
		following = fmt.Sprintf("stage %s (`Stage: %s`)", TestStages[last+1].ID, TestStages[last+1].ID)
	}
	switch r.status() {
	case WorkerFailed:
		return fmt.Sprintf("stage %s failed (%s)", s.ID, c.stageErrors(parent, s.ID)),
			"end with SUPERVISOR_FAILED naming the failed stage (orch-hook reports the tests as failing)"
	case WorkerInProgress:
		return fmt.Sprintf("stage %s is running (%s of %d still running)", s.ID, gates.Plural(r.running, "worker"), r.launches),
			fmt.Sprintf("wait for every %s worker to return, then %s", s.ID, following)
	}
	return fmt.Sprintf("stage %s completed (%s)", s.ID, gates.Plural(r.launches, "worker")), following
}

// stageRefusal says why the supervisor whose agent id is parent may not
// launch a worker of stage now ("" when it may): the stages run in order,
// each once, and each after the one before completed; a failed stage ends
// the run.
func (c *Workflow) stageRefusal(parent, stage string) string {
	runs := c.stageRuns(parent)
	at := stageIndex(stage)
	now, next := c.stageNowNext(parent, runs)
	tail := fmt.Sprintf(" Now: %s; next: %s.", now, next)
	for i, r := range runs {
		if r.status() == WorkerFailed {
			return fmt.Sprintf("stage %s failed: a failed stage ends the testing run, and no worker is launched after it.", TestStages[i].ID) + tail
		}
	}
	for j := at + 1; j < len(runs); j++ {
		if runs[j].status() != "" {
			return fmt.Sprintf("stage %s is over: stage %s has started, and the stages run once each, in order (%s).", stage, TestStages[j].ID, stageOrder()) + tail
		}
	}
	if at > 0 {
		prev := TestStages[at-1].ID
		switch r := runs[at-1]; r.status() {
		case "":
			return fmt.Sprintf("stage %s runs after stage %s, which has not run (the stages run in order: %s).", stage, prev, stageOrder()) + tail
		case WorkerInProgress:
			return fmt.Sprintf("stage %s waits for stage %s, which has not completed (%s of %d still running).", stage, prev, gates.Plural(r.running, "worker"), r.launches) + tail
		}
	}
	return ""
}

// preStage checks a testing supervisor's worker launch: its stage, read
// from the prompt, and the stage order. It returns the stage, or why the
// launch is refused.
func (c *Workflow) preStage(call *gates.Call) (stage, why string) {
	stage, problem := ReadStage(call.Prompt)
	if problem != "" {
		return "", fmt.Sprintf("a testing-sub-supervisor's worker is told its one stage in its prompt, as `Stage: generation`, `Stage: execution` or `Stage: validation`: %s.", problem)
	}
	return stage, c.stageRefusal(call.AgentID, stage)
}

// TestCounts are the counts an execution or validation line gives.
type TestCounts struct {
	Passed, Failed int
	// Coverage is the coverage percentage the line reports (nil: none).
	Coverage *float64
}

var (
	reCountFraction = gates.LazyRegexp(`(?i)(\d+)\s*/\s*(\d+)(?:\s+(?:tests?\s+)?(?:passed|passing|pass(?:es)?))?`)
	reCountPassed   = gates.LazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:passed|passing|pass(?:es)?|succeeded|ok)\b`)
	reCountFailed   = gates.LazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:failed|failing|failures?|fails?)\b`)
	// reCountErrors: errors are not passes ("38 passed, 2 failed, 1
	// error" is 3 not passing, as pytest counts them).
	reCountErrors = gates.LazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(?:errors?|errored)\b`)
	reCountTotal  = gates.LazyRegexp(`(?i)\b(\d+)\s+tests?\b`)
	reCoverage    = gates.LazyRegexp(`(?i)\bcoverage\b[^0-9%()]{0,16}?(\d+(?:\.\d+)?)\s*%|(\d+(?:\.\d+)?)\s*%\s*(?:[a-z]+\s+)?coverage\b`)
)

// lineOf is the last line of text that reads, alone, as form by the
// result-line grammar: the line ReadResult decided on.
func lineOf(text string, forms []string, form string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if gates.FindResult(lines[i], forms) == form {
			return strings.TrimSpace(lines[i])
		}
	}
	return ""
}

// valueOf is what follows a result line's key and separator.
func valueOf(line string) string {
	if i := strings.IndexAny(line, ":="); i >= 0 {
		return line[i+1:]
	}
	return ""
}

// distinctInts reads every match's first group as one number; ok is false
// when two matches say different numbers, or one is not a count.
func distinctInts(ms [][]string) (n int, found, ok bool) {
	for _, m := range ms {
		v, err := strconv.Atoi(m[1])
		if err != nil || v > maxCount {
			return 0, false, false
		}
		if found && v != n {
			return 0, true, false
		}
		n, found = v, true
	}
	return n, found, true
}

// readCoverage reads the coverage a line reports ("coverage 85%", "85%
// line coverage"): nil when none; a problem when it gives two values or
// one above 100.
func readCoverage(value string) (*float64, string) {
	var out *float64
	for _, m := range reCoverage.FindAllStringSubmatch(value, -1) {
		v, err := strconv.ParseFloat(gates.OrText(m[1], m[2]), 64)
		if err != nil || v < 0 || v > 100 {
			return nil, fmt.Sprintf("gives a coverage of %s%%, which is not a percentage", gates.OrText(m[1], m[2]))
		}
		if out != nil && math.Abs(*out-v) > 1e-9 {
			return nil, "gives two coverage values"
		}
		out = &v
	}
	return out, ""
}

// ParseExecution reads the execution stage's result line: `TESTS: PASS`
// or `TESTS: FAIL` by the result-line grammar (ParseTests), with the
// counts the stage owes in its note: "(42 passed, 0 failed)", "(38/40
// passed)", "(40 tests, 2 failed)", in any order (errors count as
// failures: "38 passed, 1 failed, 1 error" is 2 failed), and optionally
// the coverage ("coverage 85%"). Strict about meaning: a count given twice
// with two values, a FAIL with no failure but passing tests, or counts
// that cannot be told apart are problems quoting the line, as is a line
// without counts. line is the line read.
func ParseExecution(text string) (pass bool, counts TestCounts, line, problem string) {
	forms := []string{LineTestsPass, LineTestsFail}
	found := gates.ReadResult(text, forms)
	if found.Form == "" {
		return false, counts, "", gates.MissingLineProblem(text, forms)
	}
	pass = found.Form == LineTestsPass
	line = lineOf(text, forms, found.Form)
	how := fmt.Sprintf("end with the counts in parentheses: `%s (42 passed, 0 failed)` or `%s (40 passed, 2 failed)`", LineTestsPass, LineTestsFail)
	refuse := func(why string) (bool, TestCounts, string, string) {
		return pass, TestCounts{}, line, fmt.Sprintf("your result line %q %s; %s.", shorten.Runes(line, 120), why, how)
	}
	rest := valueOf(line)
	cov, why := readCoverage(rest)
	if why != "" {
		return refuse(why)
	}
	counts.Coverage = cov
	rest = reCoverage.ReplaceAllString(rest, " ")
	var p, f, e, t int
	var hasP, hasF, hasE, hasT bool
	if ms := reCountFraction.FindAllStringSubmatch(rest, -1); len(ms) > 0 {
		if len(ms) > 1 {
			return refuse("gives two fractions")
		}
		a, err1 := strconv.Atoi(ms[0][1])
		b, err2 := strconv.Atoi(ms[0][2])
		if err1 != nil || err2 != nil || a > b || b > maxCount {
			return refuse(fmt.Sprintf("gives %s/%s, which is not passed/total", ms[0][1], ms[0][2]))
		}
		p, t, hasP, hasT = a, b, true, true
		rest = reCountFraction.ReplaceAllString(rest, " ")
	}
	for _, c := range []struct {
		re   *gates.LazyRE
		n    *int
		has  *bool
		what string
	}{{reCountPassed, &p, &hasP, "passed"}, {reCountFailed, &f, &hasF, "failed"}, {reCountErrors, &e, &hasE, "error"}, {reCountTotal, &t, &hasT, "total"}} {
		ms := c.re.FindAllStringSubmatch(rest, -1)
		n, found, ok := distinctInts(ms)
		switch {
		case !ok:
			return refuse(fmt.Sprintf("gives two %s counts", c.what))
		case found && *c.has && n != *c.n:
			return refuse(fmt.Sprintf("gives two %s counts", c.what))
		case found:
			*c.n, *c.has = n, true
		}
		rest = c.re.ReplaceAllString(rest, " ")
	}
	if hasE {
		f, hasF = f+e, true
	}
	switch {
	case hasP && hasF:
		if hasT && p+f > t {
			return refuse(fmt.Sprintf("counts %d passed and %d failed, more than its %d tests", p, f, t))
		}
	case pass && (hasP || hasT):
		// A pass that gives no failed count failed none.
		if !hasP {
			p = t - f
		}
	case hasF && hasT && f <= t:
		p = t - f
	case hasP && hasT && p <= t:
		f = t - p
	default:
		return refuse("does not give both the passed and the failed counts")
	}
	switch {
	case pass && f > 0:
		return refuse(fmt.Sprintf("says PASS but counts %d failed", f))
	case !pass && f == 0 && p > 0:
		return refuse(fmt.Sprintf("says FAIL but counts no failure among %d passed; give the failed count, or 0 passed when the suite did not run", p))
	}
	counts.Passed, counts.Failed = p, f
	return pass, counts, line, ""
}

// ParseValidation reads the validation stage's result line, `VALIDATION:
// PASS` or `VALIDATION: FAIL` by the result-line grammar (one
// parenthetical may follow: the coverage, or why it fails), and the
// coverage it reports. line is the line read.
func ParseValidation(text string) (pass bool, coverage *float64, line, problem string) {
	forms := []string{LineValidationPass, LineValidationFail}
	found := gates.ReadResult(text, forms)
	if found.Form == "" {
		return false, nil, "", gates.MissingLineProblem(text, forms)
	}
	line = lineOf(text, forms, found.Form)
	cov, why := readCoverage(valueOf(line))
	if why != "" {
		return false, nil, line, fmt.Sprintf("your result line %q %s; give one coverage percentage, or none.", shorten.Runes(line, 120), why)
	}
	return found.Form == LineValidationPass, cov, line, ""
}

// testsCreatedKeys are the keys a generation line may carry (the stage's
// two names for the same thing).
var testsCreatedKeys = []string{"TESTS CREATED", "TESTS GENERATED"}

var (
	reLeadCount     = gates.LazyRegexp(`^(\d+)\b(.*)$`)
	reFileCountTail = gates.LazyRegexp(`(?i)\(\s*(\d+)\s+(?:test\s+)?files?\s*\)\s*$`)
	reFileName      = gates.LazyRegexp(`^[\w.@+-]*[A-Za-z][\w.@+-]*\.[A-Za-z0-9]{1,10}$`)
)

// isPathToken: a token of a generation line that names a file: it has a
// '/' or a file name's extension, and is not a URL.
func isPathToken(tok string) bool {
	return tok != "" && !strings.Contains(tok, "://") && strings.IndexFunc(tok, unicode.IsLetter) >= 0 &&
		(strings.Contains(tok, "/") || reFileName.MatchString(tok))
}

// ParseTestsCreated reads the generation stage's result line,
// `TESTS_CREATED: <count> in <file>, <file>`: the number of tests the
// worker wrote and the test files, relative to the project root or
// absolute. The key reads by the result-line grammar (bold, case, spaces
// or '_' between its words; TESTS_GENERATED is the same line); the value
// is tolerant of prose before the list ("15 unit tests in 2 files:",
// "15 new tests across"), of "and", code marks, quotes and brackets around
// the paths, a trailing "(2 files)" and trailing punctuation. Strict about
// meaning: the count must be a number, a file count must match the list,
// no other words may be mixed into the list, a positive count needs at
// least one file, and 0 names none. The last such line decides.
func ParseTestsCreated(text string) (count int, files []string, problem string) {
	how := fmt.Sprintf("end with `%s <number of tests> in <file>, <file>`, naming every test file you wrote", LineTestsCreated)
	lines := strings.Split(text, "\n")
	value, raw := "", ""
	for i := len(lines) - 1; i >= 0 && raw == ""; i-- {
		for _, key := range testsCreatedKeys {
			if v, r, ok := gates.KeyLine(lines[i], key); ok {
				value, raw = v, r
				break
			}
		}
	}
	if raw == "" {
		return 0, nil, fmt.Sprintf("your report must %s.", how)
	}
	refuse := func(why string) (int, []string, string) {
		return 0, nil, fmt.Sprintf("your result line %q %s; %s.", shorten.Runes(raw, 120), why, how)
	}
	v := strings.TrimRight(strings.TrimLeft(value, " \t*_`"), " \t.!*_`")
	m := reLeadCount.FindStringSubmatch(v)
	if m == nil {
		return refuse("does not start with the number of tests you wrote")
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n > maxCount {
		return refuse(fmt.Sprintf("gives %s tests, which is not a count", m[1]))
	}
	rest, declared := m[2], -1
	if fc := reFileCountTail.Regexp().FindStringSubmatchIndex(rest); fc != nil {
		declared, _ = strconv.Atoi(rest[fc[2]:fc[3]])
		rest = rest[:fc[0]]
	}
	toks := strings.Fields(rest)
	inList := false
	for i := 0; i < len(toks); i++ {
		tok := strings.Trim(toks[i], "`'\"<>[](){},;:*")
		low := strings.ToLower(tok)
		if t := strings.TrimRight(tok, "."); isPathToken(t) {
			if len(files) >= MaxTestFiles {
				return refuse(fmt.Sprintf("names more than %d files", MaxTestFiles))
			}
			if !slices.Contains(files, t) {
				files = append(files, t)
			}
			inList = true
			continue
		}
		switch {
		case inList && (low == "" || low == "and" || low == "&"):
		case inList:
			return refuse(fmt.Sprintf("has %q among its file paths", toks[i]))
		default:
			// Prose before the list; "2 files" or "2 test files" there is
			// the file count.
			k, err := strconv.Atoi(tok)
			if err != nil || i+1 >= len(toks) {
				continue
			}
			next := strings.ToLower(strings.Trim(toks[i+1], "`'\"<>[](){},;:*."))
			if next == "test" && i+2 < len(toks) {
				next = strings.ToLower(strings.Trim(toks[i+2], "`'\"<>[](){},;:*."))
			}
			if next != "file" && next != "files" {
				continue
			}
			if declared >= 0 && declared != k {
				return refuse(fmt.Sprintf("gives two file counts (%d and %d)", declared, k))
			}
			declared = k
		}
	}
	switch {
	case declared >= 0 && declared != len(files):
		return refuse(fmt.Sprintf("says %s but lists %d", gates.Plural(declared, "file"), len(files)))
	case n > 0 && len(files) == 0:
		return refuse(fmt.Sprintf("gives %s but names no test file", gates.Plural(n, "test")))
	case n == 0 && len(files) > 0:
		return refuse("gives 0 tests but names files")
	}
	return n, files, ""
}

// stageReturned checks what a testing supervisor's worker reports for its
// stage and records it; it returns the problem that blocks the worker
// once (a line that does not read one way, a test file it did not write).
// A negative result (no tests created, TESTS: FAIL, VALIDATION: FAIL) is
// no problem: it fails the stage.
func (c *Workflow) stageReturned(l *Launch, text string, env *Env) string {
	var rec WorkerRecord
	failure := ""
	switch l.Stage {
	case StageGeneration:
		n, files, problem := ParseTestsCreated(text)
		if problem != "" {
			return problem
		}
		rels := []string{}
		for _, f := range files {
			fc := env.Inspect(f)
			switch {
			case !fc.Inside:
				return fmt.Sprintf("your %s line names %s, which is outside the project (a `..` or a symlink leaving it); test files are written inside it.", LineTestsCreated, f)
			case !fc.Exists || fc.Size == 0:
				return fmt.Sprintf("your %s line names %s, which does not exist or is empty; name the test files you wrote, as written.", LineTestsCreated, gates.OrText(fc.Rel, f))
			}
			if why := c.checkWriter(fc.Rel, l, env); why != "" {
				return why
			}
			if !slices.Contains(rels, fc.Rel) {
				rels = append(rels, fc.Rel)
			}
		}
		rec.TestsCreated, rec.TestFiles = &n, rels
		if n == 0 {
			failure = "created no tests: " + gates.OrText(shorten.Runes(gates.SummaryOf(text, LineTestsCreated), 120), "no reason given")
		}
	case StageExecution:
		pass, counts, line, problem := ParseExecution(text)
		if problem != "" {
			return problem
		}
		rec.TestsPassed, rec.TestsFailed, rec.CoveragePercent = &counts.Passed, &counts.Failed, counts.Coverage
		switch {
		case pass:
		case counts.Failed == 0:
			failure = "the tests did not run: " + shorten.Runes(gates.OrText(gates.SummaryOf(text, LineTestsPass, LineTestsFail), line), 120)
		default:
			failure = fmt.Sprintf("%d of %d tests failed", counts.Failed, counts.Passed+counts.Failed)
		}
	case StageValidation:
		pass, cov, line, problem := ParseValidation(text)
		if problem != "" {
			return problem
		}
		rec.CoveragePercent = cov
		if !pass {
			failure = "validation failed: " + shorten.Runes(line, 120)
			if sum := gates.SummaryOf(text, LineValidationPass, LineValidationFail); sum != "" {
				failure += " — " + shorten.Runes(sum, 120)
			}
		}
	default:
		return "" // a launch from before stages were recorded
	}
	l.Result = "PASS"
	if failure != "" {
		l.Status, l.Result = gates.Failed, resultFail
	}
	c.recordStageWorker(l, rec, failure, env)
	return ""
}

// recordStageWorker records a testing supervisor's worker that returned
// (rec holds what its line gave; failure why it failed) under its stage.
func (c *Workflow) recordStageWorker(l *Launch, rec WorkerRecord, failure string, env *Env) {
	sup := c.byAgent(l.Parent)
	if sup == nil {
		return
	}
	st := c.supervisor(sup)
	rec.AgentID, rec.Status, rec.DurationMs = l.AgentID, WorkerCompleted, l.duration()
	if rec.DurationMs <= 0 {
		rec.DurationMs = env.Now.Sub(l.Started).Milliseconds() // recorded before the launch is marked ended
	}
	if failure != "" {
		rec.Status, rec.Error = WorkerFailed, failure
	}
	st.WorkerStatus = append(st.WorkerStatus, rec.Status)
	c.syncStages(st, rec)
}

// syncStages rebuilds a testing supervisor's stages[] from its workers'
// launches (a stage is listed once one of its workers was launched), with
// the records of the workers that returned (by agent id: what a worker
// reported stays with it when PostToolUse corrects which launch it was)
// and add. A stage is failed when one of its workers failed, in_progress
// while one runs, completed otherwise; its duration, once it ended, is its
// wall-clock time on the hooks' clock (first launch to last return), or
// its longest worker's own duration when that is longer (its workers run
// in parallel).
func (c *Workflow) syncStages(st *SupervisorState, add ...WorkerRecord) {
	if st == nil || st.AgentID == "" {
		return
	}
	records := map[string]WorkerRecord{}
	for _, s := range st.Stages {
		for _, w := range s.Workers {
			if w.AgentID != "" && w.Status != WorkerInProgress {
				records[w.AgentID] = w
			}
		}
	}
	for _, w := range add {
		records[w.AgentID] = w
	}
	number := map[*Launch]int{}
	for _, l := range c.Launches {
		if l.Parent == st.AgentID && l.Stage != "" {
			number[l] = len(number) + 1
		}
	}
	var stages []SupervisorStage
	count := 0
	for _, def := range TestStages {
		s := SupervisorStage{StageID: def.ID, StageName: def.Name, Workers: []WorkerRecord{}, Status: WorkerCompleted}
		var first, last time.Time
		var longest int64
		running, ended := false, false
		for _, l := range c.Launches {
			if l.Parent != st.AgentID || l.Stage != def.ID {
				continue
			}
			rec, ok := records[l.AgentID]
			switch {
			case ok && l.AgentID != "":
				// Returned: its SubagentStop recorded it (before the launch
				// is marked ended).
			case l.Status == gates.Running:
				rec = WorkerRecord{AgentID: l.AgentID, Status: WorkerInProgress}
			default:
				rec = WorkerRecord{AgentID: l.AgentID, Status: WorkerFailed, Error: "its launch failed", DurationMs: l.duration()}
			}
			rec.WorkerID = fmt.Sprintf("%s_%d", strings.ReplaceAll(TestSpecialist, "-", "_"), number[l])
			if d := l.duration(); d > 0 && rec.Status != WorkerInProgress {
				rec.DurationMs = d
			}
			switch rec.Status {
			case WorkerFailed:
				s.Status = WorkerFailed
			case WorkerInProgress:
				running = true
			}
			if rec.Status != WorkerInProgress {
				end := l.Ended
				if end.IsZero() {
					end = l.Started.Add(time.Duration(rec.DurationMs) * time.Millisecond)
				}
				if first.IsZero() || l.Started.Before(first) {
					first = l.Started
				}
				if end.After(last) {
					last = end
				}
				longest, ended = max(longest, rec.DurationMs), true
			}
			s.Workers = append(s.Workers, rec)
		}
		if len(s.Workers) == 0 {
			continue
		}
		if running && s.Status != WorkerFailed {
			s.Status = WorkerInProgress
		}
		if ended && !running {
			s.DurationMs = max(last.Sub(first).Milliseconds(), longest)
		}
		count += len(s.Workers)
		stages = append(stages, s)
	}
	st.Stages, st.WorkerCount = stages, count
}

// testTotals are a testing run's totals as its workers' lines gave them.
type testTotals struct {
	Tests, Passed, Failed int
	Coverage              *float64
	DurationMs            int64
}

// observedTests sums a testing supervisor's stages: the counts of the
// execution stage's TESTS lines, the coverage a validation line reported
// (else an execution line; none when its workers gave two values), and
// the stages' durations (the stages run one after another).
func observedTests(st *SupervisorState) testTotals {
	var t testTotals
	coverage := map[string][]float64{}
	for _, s := range st.Stages {
		t.DurationMs += s.DurationMs
		for _, w := range s.Workers {
			if s.StageID == StageExecution && w.TestsPassed != nil && w.TestsFailed != nil {
				t.Passed += *w.TestsPassed
				t.Failed += *w.TestsFailed
			}
			if w.CoveragePercent != nil && !slices.Contains(coverage[s.StageID], *w.CoveragePercent) {
				coverage[s.StageID] = append(coverage[s.StageID], *w.CoveragePercent)
			}
		}
	}
	t.Tests = t.Passed + t.Failed
	for _, id := range []string{StageValidation, StageExecution} {
		if len(coverage[id]) == 1 {
			t.Coverage = &coverage[id][0]
			break
		}
	}
	return t
}

// checkTestTotals compares a testing supervisor's totals with what its
// stages' lines gave.
func checkTestTotals(res *SupervisorResult, t testTotals) []string {
	var v []string
	for _, c := range []struct {
		name      string
		got, want int
	}{{"total_tests", res.TotalTests, t.Tests}, {"tests_passed", res.TestsPassed, t.Passed}, {"tests_failed", res.TestsFailed, t.Failed}} {
		if c.got != c.want {
			v = append(v, fmt.Sprintf("%s is %d, but your execution stage's %s lines count %d (%d passed, %d failed).", c.name, c.got, "TESTS", c.want, t.Passed, t.Failed))
		}
	}
	if t.Coverage != nil && res.CoveragePercent != 0 && math.Abs(res.CoveragePercent-*t.Coverage) > 0.5 {
		v = append(v, fmt.Sprintf("coverage_percent is %g, but your workers' lines report %g.", res.CoveragePercent, *t.Coverage))
	}
	return v
}

// stageRecords are a testing supervisor's stages as the units the
// aggregation rules measure (CheckAggregation): each stage's duration,
// so total_duration_ms is checked against their sum.
func stageRecords(st *SupervisorState) []WorkerRecord {
	out := make([]WorkerRecord, 0, len(st.Stages))
	for _, s := range st.Stages {
		out = append(out, WorkerRecord{WorkerID: s.StageID, Topic: s.StageID, Status: s.Status, DurationMs: s.DurationMs})
	}
	return out
}

// supervisedTesting checks a testing supervisor's SUPERVISOR_COMPLETE or
// SUPERVISOR_FAILED against its stages and gives the orchestrator the
// testing result: TESTS: PASS when all three stages completed, TESTS: FAIL
// with the failed stage's reason when one failed (whichever line the
// supervisor ended with). The aggregated metadata keeps the totals
// orch-hook observed, not the supervisor's.
func (c *Workflow) supervisedTesting(l *Launch, st *SupervisorState, res *SupervisorResult, failed bool) (string, string) {
	for _, w := range c.Launches {
		if w.Parent == l.AgentID && w.Status == gates.Running {
			return fmt.Sprintf("your worker %s (%s) has not returned; wait for every worker before you aggregate.", w.Agent, gates.OrText(unitLabel(w.Unit), w.ToolUseID)), ""
		}
	}
	c.syncStages(st)
	obs := observedTests(st)
	failedStage := ""
	var notRun []string
	for i, r := range c.stageRuns(l.AgentID) {
		switch r.status() {
		case WorkerFailed:
			if failedStage == "" {
				failedStage = TestStages[i].ID
			}
		case "":
			notRun = append(notRun, TestStages[i].ID)
		}
	}
	if failedStage == "" && failed {
		c.LastError, c.FailedState = "supervisor failed: "+strings.Join(res.Errors, "; "), c.Current
		return "", fmt.Sprintf("[coordinate %s] %s failed: %s | no stage failed that orch-hook saw; nothing advanced; relaunch it", c.Current, l.Agent, gates.OrText(strings.Join(res.Errors, "; "), "no errors given"))
	}
	if failedStage == "" && len(notRun) > 0 {
		return fmt.Sprintf("stage(s) %s were not run: the stages run in order (%s), each after the one before completed; launch the next one (a worker prompt starting `Stage: %s`) before you aggregate.", strings.Join(notRun, ", "), stageOrder(), notRun[0]), ""
	}
	agg := SupervisorResult{}
	if !failed {
		vio := CheckAggregation(res, stageRecords(st), nil)
		vio = append(vio, checkTestTotals(res, obs)...)
		if len(vio) > 0 {
			return "the aggregated metadata breaks the rules: " + strings.Join(vio, " "), ""
		}
		agg = *res
	}
	agg.TotalTests, agg.TestsPassed, agg.TestsFailed, agg.TotalDurationMs, agg.CoveragePercent = obs.Tests, obs.Passed, obs.Failed, obs.DurationMs, 0
	if obs.Coverage != nil {
		agg.CoveragePercent = *obs.Coverage
	}
	if failedStage == "" {
		st.AggregatedMetadata = &agg
		return "", c.tested(true, "")
	}
	why := fmt.Sprintf("stage %s failed: %s", failedStage, c.stageErrors(l.AgentID, failedStage))
	if failed {
		agg.Summary = why
	}
	st.AggregatedMetadata = &agg
	return "", c.tested(false, why)
}
