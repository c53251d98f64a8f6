package gates

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/orch-hook/orch-hook/internal/shorten"
)

// One result-line grammar for both workflows (README, "Result lines"): a
// line is KEY, or KEY then ':' or '=' then VALUE. It is tolerant of how
// models decorate a line and strict about what the line means:
//
//   - list markers (-, *, +, >, 1.), headings, bold, backticks and emoji
//     around the line are decoration;
//   - a key's words may be joined by spaces, '_', '-' or '/', in any case
//     (PHASE_GATE_STATUS is PHASE GATE STATUS);
//   - a verdict may be written PASSED, FAILED, COMPLETED; after it only '.'
//     or '!', emoji and one parenthetical may follow;
//   - a line with both verdicts, a verdict followed by other prose, or a
//     table cell is not a result line: it is quoted back to the agent.
//
// The last line whose key a job owes decides; a refused one is not skipped
// in favour of an earlier line, since it is the agent's last word.

// resultLine is one line read by the grammar.
type resultLine struct {
	key   string // canonical: upper case, words joined by one space
	sep   bool   // a ':' or '=' followed the key
	rest  string // the value after the separator (or the tail of a token line)
	raw   string // the line as written, trimmed, for quoting
	table bool   // the line is a table row
}

// ReadResultLine reads line as KEY[:=]VALUE; ok is false when it does not
// start (after decoration) with a key.
func ReadResultLine(line string) (rl resultLine, ok bool) {
	rl.raw = strings.TrimSpace(line)
	s := rl.raw
	if strings.HasPrefix(s, "|") {
		rl.table = true
		s = strings.TrimLeft(s, "| \t")
	}
	s = TrimLeadDecoration(s)
	// The key: letters (and digits after the first letter), joined by
	// spaces, '_', '-' or '/', with bold or code marks anywhere in it.
	end, letters := 0, 0
	for end < len(s) {
		r, n := utf8.DecodeRuneInString(s[end:])
		switch {
		case r < utf8.RuneSelf && (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'):
			letters++
		case r >= '0' && r <= '9' && letters > 0:
		case r == ' ' || r == '\t' || r == '_' || r == '-' || r == '/' || r == '*' || r == '`':
		default:
			goto done
		}
		end += n
	}
done:
	if letters == 0 {
		return rl, false
	}
	rl.key = CanonicalKey(s[:end])
	if rl.key == "" || len(rl.key) > 48 {
		return rl, false
	}
	rest := s[end:]
	if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "=") {
		rl.sep = true
		rest = rest[1:]
	} else if rl.table && strings.HasPrefix(rest, "|") {
		rl.sep = true
		rest = rest[1:]
	}
	rl.rest = strings.TrimSpace(rest)
	return rl, true
}

// CanonicalKey is "PHASE GATE STATUS" for "**Phase_Gate-Status**".
func CanonicalKey(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '/', '\t':
			return ' '
		case '*', '`':
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
	return shorten.OneLine(s)
}

// keyOf is the canonical key of a result form: "PHASE GATE STATUS" for
// "PHASE GATE STATUS: PASS", "REQUIREMENTS CLEAR" for REQUIREMENTS_CLEAR.
func keyOf(form string) (key, value string) {
	rl, _ := ReadResultLine(form)
	return rl.key, strings.TrimSpace(rl.rest)
}

// TrimLeadDecoration drops what models put before a line: spaces, list
// markers, quote marks, headings, bold, code marks and emoji.
func TrimLeadDecoration(s string) string {
	for {
		t := strings.TrimLeft(s, " \t\r>-+*#_`•·")
		t = trimEmoji(t)
		// A numbered list marker: "1. " or "2) ".
		i := 0
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i > 0 && i < 4 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t') {
			t = t[i+1:]
		}
		if t == s {
			return s
		}
		s = t
	}
}

// IsEmoji: pictographs and symbols (✅, ❌, ✔, 🎉) and what joins or
// varies them.
func IsEmoji(r rune) bool {
	return r >= 0x2190 && (unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r)) || r == 0xFE0F || r == 0xFE0E || r == 0x200D || r == 0x20E3
}

func trimEmoji(s string) string {
	for s != "" {
		r, n := utf8.DecodeRuneInString(s)
		if !IsEmoji(r) && r != ' ' && r != '\t' {
			return s
		}
		s = s[n:]
	}
	return s
}

// verdictWords maps the accepted spellings of a verdict to the form's.
var verdictWords = map[string]string{
	"PASS": "PASS", "PASSED": "PASS",
	"FAIL": "FAIL", "FAILED": "FAIL",
	"COMPLETE": "COMPLETE", "COMPLETED": "COMPLETE",
	"BLOCKED": "BLOCKED",
}

// opposite verdicts: a line naming both is read two ways.
var oppositeVerdict = map[string][]string{
	"PASS":     {"FAIL", "FAILED"},
	"FAIL":     {"PASS", "PASSED"},
	"COMPLETE": {"BLOCKED"},
	"BLOCKED":  {"COMPLETE", "COMPLETED"},
}

// readVerdict reads a verdict value ("PASS", "**FAILED** ✅ (3/12)"). It
// returns the canonical verdict, or a problem saying why the value is not
// one.
func readVerdict(value string) (verdict, problem string) {
	s := trimEmoji(strings.TrimLeft(value, " \t*`_"))
	end := 0
	for end < len(s) && (s[end] >= 'A' && s[end] <= 'Z' || s[end] >= 'a' && s[end] <= 'z') {
		end++
	}
	word := strings.ToUpper(s[:end])
	verdict, ok := verdictWords[word]
	if !ok {
		if word == "" {
			return "", "it has no verdict"
		}
		return "", fmt.Sprintf("%q is not a verdict", shorten.Runes(s[:end], 20))
	}
	if verdict == "BLOCKED" {
		// "BLOCKED - waiting on Task 01 to export Bucket": the implementer
		// is told to say what blocks it; any reason that does not say
		// COMPLETE.
		for _, word := range strings.FieldsFunc(s[end:], func(r rune) bool { return !unicode.IsLetter(r) }) {
			if slices.Contains(oppositeVerdict[verdict], strings.ToUpper(word)) {
				return "", "it names both verdicts"
			}
		}
		return verdict, ""
	}
	if p := checkTail(s[end:], oppositeVerdict[verdict]); p != "" {
		return "", p
	}
	return verdict, ""
}

// oppositeMark: a mark anywhere on the line that says the opposite of the
// verdict ("PASS ❌", "❌ ... COMPLETE", "✅ FAIL") names both.
func oppositeMark(verdict, line string) string {
	marks := crossMarks
	if verdict == "FAIL" || verdict == "BLOCKED" {
		marks = checkMarks
	}
	if i := strings.IndexAny(line, marks); i >= 0 {
		r, _ := utf8.DecodeRuneInString(line[i:])
		return "it names both verdicts (the mark " + string(r) + " says the opposite)"
	}
	return ""
}

// Marks models put beside a verdict.
const (
	crossMarks = "❌✖✗✘✕⛌🚫⛔🔴❎👎"
	checkMarks = "✅✔✓☑🟢👍"
)

// checkTail accepts what may follow a verdict or a token: '.', '!', emoji,
// bold or code marks, a heading's closing '#', and one parenthetical that does not name an opposite
// verdict.
func checkTail(tail string, opposite []string) string {
	parens := 0
	for tail != "" {
		r, n := utf8.DecodeRuneInString(tail)
		switch {
		case r == ' ' || r == '\t' || r == '\r' || r == '.' || r == '!' || r == '*' || r == '`' || r == '_' || r == '#' || IsEmoji(r):
			tail = tail[n:]
		case r == '(':
			parens++
			close := strings.IndexByte(tail, ')')
			if parens > 1 || close < 0 {
				return "it has more after the verdict than one parenthetical"
			}
			if p := checkParenthetical(tail[1:close], opposite); p != "" {
				return p
			}
			tail = tail[close+1:]
		case (r == '—' || r == '–' || r == '-') && parens == 0 && opposite != nil && strings.HasPrefix(tail[n:], " "):
			// "PASS — all acceptance criteria met": a dash note, read as the
			// one parenthetical is.
			parens++
			if p := checkParenthetical(strings.TrimLeft(tail[n:], " \t"), opposite); p != "" {
				return p
			}
			return ""
		default:
			for _, word := range strings.FieldsFunc(tail, func(r rune) bool { return !unicode.IsLetter(r) }) {
				if slices.Contains(opposite, strings.ToUpper(word)) {
					return "it names both verdicts"
				}
			}
			return "the verdict is followed by other text"
		}
	}
	return ""
}

// reTestCount is a test count in a verdict's parenthetical: "12 passed",
// "0 failed", "2 failing", "1 error".
var reTestCount = LazyRegexp(`(?i)\b(\d+)\s+(?:tests?\s+)?(passed|passing|passes|pass|failed|failing|failures?|fails?|errors?|errored|skipped)\b`)

// checkParenthetical reads the one parenthetical after a verdict: test
// counts are fine ("12 passed, 0 failed" after PASS; "10 passed, 2
// failed" after FAIL), but failures after PASS, or the opposite verdict
// in words ("FAIL on rerun"), name both verdicts.
func checkParenthetical(inner string, opposite []string) string {
	passing := slices.Contains(opposite, "FAIL") // the verdict is PASS
	for _, m := range reTestCount.FindAllStringSubmatch(inner, -1) {
		word := strings.ToLower(m[2])
		failed := strings.HasPrefix(word, "fail") || strings.HasPrefix(word, "error")
		if passing && failed && strings.Trim(m[1], "0") != "" {
			return "it names both verdicts"
		}
	}
	if passing {
		// "11/12 tests": not all passed.
		for _, m := range reFraction.FindAllStringSubmatch(inner, -1) {
			if strings.TrimLeft(m[1], "0") != strings.TrimLeft(m[2], "0") {
				return "it names both verdicts (" + m[0] + " is not all)"
			}
		}
	}
	inner = reTestCount.ReplaceAllString(inner, "")
	inner = reNoFailures.ReplaceAllString(inner, "")
	for _, word := range strings.FieldsFunc(inner, func(r rune) bool { return !unicode.IsLetter(r) }) {
		w := strings.ToUpper(word)
		if slices.Contains(opposite, w) {
			return "it names both verdicts"
		}
		// After PASS, words that say something failed: "failing", "fails
		// on CI", "did not pass", "3 tests broken".
		if passing && passNegative(w) {
			return "it names both verdicts (" + strings.ToLower(word) + ")"
		}
	}
	return ""
}

// reNoFailures is "no failures", "zero errors": a PASS's note.
var reNoFailures = LazyRegexp(`(?i)\b(?:no|zero|without)\s+(?:test\s+)?(?:failures?|failing\s+tests?|errors?|regressions?|flaky\s+tests?)\b`)

// reFraction is "11/12" in a verdict's parenthetical.
var reFraction = LazyRegexp(`(\d+)\s*/\s*(\d+)`)

// passNegative: a word that contradicts a PASS ("failing", "did not",
// "broken", "flaky", "except").
func passNegative(w string) bool {
	for _, prefix := range []string{"FAIL", "ERROR", "ERRO", "BROKE", "CRASH", "REGRESS", "FLAK", "TIMEOUT", "SKIPP"} {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	switch w {
	case "NOT", "DIDN", "DIDNT", "CANNOT", "CANT", "WONT", "RED", "TIMED", "PARTIAL", "PARTIALLY", "EXCEPT", "BUT", "UNLESS",
		// hedges: "PASS - mostly"
		"MOSTLY", "ALMOST", "NEARLY", "PARTLY", "LARGELY", "BASICALLY", "SOMEWHAT", "APPARENTLY", "PROBABLY", "LIKELY", "MAYBE", "PENDING", "TODO", "REMAINING", "WIP":
		return true
	}
	return false
}

// resultForm is an owed result line split into its key and verdict.
type resultForm struct {
	form, key, verdict string
}

func splitForms(forms []string) []resultForm {
	out := make([]resultForm, len(forms))
	for i, f := range forms {
		k, v := keyOf(f)
		out[i] = resultForm{form: f, key: k, verdict: v}
	}
	return out
}

// ResultFound is what readResult found: the form, or the refused line
// that stood in its place and why.
type ResultFound struct {
	Form    string // one of the forms, or ""
	Near    string // the line refused, as written
	Problem string // why it was refused
	index   int    // the line's index in the text (-1: none)
	inside  bool   // refused: the key is inside the line (keyInside)
}

// ReadResult finds the last line of text whose key is one of the forms'.
// It is the result when it reads as exactly one form; otherwise nothing is
// found and near quotes the line.
func ReadResult(text string, forms []string) ResultFound {
	fs := splitForms(forms)
	lines := strings.Split(text, "\n")
	fenced := fencedLines(lines)
	var last *ResultFound // the last line carrying an owed key, when it needs an earlier one
	for i := len(lines) - 1; i >= 0; i-- {
		found, ok := readResultAt(lines[i], i, fs)
		switch {
		case !ok:
			continue
		case last == nil && found.Form != "" && fenced[i]:
			// A fenced example (the template, pasted) decides only if no
			// verdict outside the fence before it says otherwise.
			last = &found
		case last == nil && found.inside:
			// "*Recap: PHASE GATE STATUS: PASS*" after the line itself: a
			// recap that agrees with the verdict before it leaves that
			// verdict standing.
			last = &found
		case last == nil:
			return found
		case last.Form != "": // the fenced form
			if fenced[i] {
				continue
			}
			if found.Form != "" && found.Form != last.Form {
				return ResultFound{Near: shorten.Runes(strings.TrimSpace(lines[last.index]), 120), index: last.index, Problem: fmt.Sprintf("this line is in a fenced block after your verdict %q, which says otherwise", found.Form)}
			}
			return *last
		case found.inside && agrees(lines[found.index], lines[last.index]):
			continue // recaps one after another
		case found.Form != "" && agreesWith(lines[last.index], found.Form):
			return found
		default:
			return *last
		}
	}
	if last != nil {
		return *last
	}
	return ResultFound{index: -1}
}

// readResultAt reads one line: ok is false when the line carries none of
// the forms' keys.
func readResultAt(line string, i int, fs []resultForm) (ResultFound, bool) {
	rl, ok := ReadResultLine(line)
	var candidates []resultForm
	glued := false // "PHASE GATE STATUS FAIL": the key runs into its value
	prose := false // "REQUIREMENTS_CLEAR except for the format": a token, then words
	for _, f := range fs {
		switch {
		case !ok:
		case f.key == rl.key:
			candidates = append(candidates, f)
		case f.verdict != "" && !rl.sep && strings.HasPrefix(rl.key, f.key+" "):
			candidates, glued = append(candidates, f), true
		case f.verdict == "" && strings.HasPrefix(rl.key, f.key+" "):
			candidates, prose = append(candidates, f), true
		}
	}
	if len(candidates) == 0 {
		if keyInside(line, fs) {
			// "FINAL PHASE GATE STATUS: FAIL", "Correction: PHASE GATE
			// STATUS: FAIL", "PHASE 1 GATE STATUS: FAIL": the agent's last
			// verdict, not in the form orch-hook reads; an earlier line
			// does not stand in for it.
			return ResultFound{Near: shorten.Runes(strings.TrimSpace(line), 120), index: i, Problem: "the key does not start the line, or other words are mixed into it", inside: true}, true
		}
		return ResultFound{}, false
	}
	found := ResultFound{Near: shorten.Runes(rl.raw, 120), index: i}
	switch {
	case glued:
		found.Problem = "the key is not followed by ':' and a verdict"
		return found, true
	case prose:
		found.Problem = "the line is followed by other text"
		return found, true
	case rl.table:
		found.Problem = "a table cell is not a result line"
		return found, true
	}
	if candidates[0].verdict == "" { // a token line: REQUIREMENTS_CLEAR
		switch {
		case rl.sep:
			found.Problem = "this line takes no value"
		case strings.ContainsAny(rl.raw, crossMarks):
			found.Problem = "its mark says no"
		default:
			if p := checkTail(rl.rest, nil); p != "" {
				found.Problem = strings.Replace(p, "the verdict", "the line", 1)
			} else {
				return ResultFound{Form: candidates[0].form, index: i}, true
			}
		}
		return found, true
	}
	if !rl.sep {
		found.Problem = "the key is not followed by ':' and a verdict"
		return found, true
	}
	verdict, problem := readVerdict(rl.rest)
	if problem == "" {
		problem = oppositeMark(verdict, rl.raw)
	}
	if problem != "" {
		found.Problem = problem
		return found, true
	}
	for _, f := range candidates {
		if f.verdict == verdict {
			return ResultFound{Form: f.form, index: i}, true
		}
	}
	found.Problem = fmt.Sprintf("%s is not one of this step's verdicts", verdict)
	return found, true
}

// agreesWith: a recap line says form's verdict, read as a verdict is (the
// same tail checks: "PASS (except the parser fails)" does not agree).
func agreesWith(line, form string) bool {
	_, want := keyOf(form)
	for i := strings.LastIndexAny(line, ":="); i >= 0; i = strings.LastIndexAny(line[:i], ":=") {
		if v, problem := readVerdict(strings.TrimRight(line[i+1:], " \t*_`")); problem == "" {
			return v == want && oppositeMark(v, line) == ""
		}
	}
	return false
}

// agrees: two recap lines say the same verdict.
func agrees(a, b string) bool {
	for _, form := range []string{"X: PASS", "X: FAIL", "X: COMPLETE", "X: BLOCKED"} {
		if agreesWith(a, form) {
			return agreesWith(b, form)
		}
	}
	return false
}

// fencedLines marks the lines inside fenced code blocks (``` or ~~~),
// the fences included.
func fencedLines(lines []string) []bool {
	out := make([]bool, len(lines))
	in := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			out[i] = true
			in = !in
			continue
		}
		out[i] = in
	}
	return out
}

// keyInside: a line carries a verdict form's key (its words in order, at
// most one other word among them) somewhere other than at its start, and
// then a ':' or '=' and a verdict: "RESULT: PHASE GATE STATUS: FAIL",
// "INTEGRATION TESTS: FAIL".
func keyInside(line string, fs []resultForm) bool {
	words := verdictTokens(line)
	for _, f := range fs {
		if f.verdict == "" {
			continue
		}
		kw := strings.Fields(f.key)
		for start := range words {
			if words[start] != kw[0] {
				continue
			}
			j, k, extra := start+1, 1, 0
			for j < len(words) && k < len(kw) {
				switch {
				case words[j] == kw[k]:
					k++
				case extra == 0 && words[j] != ":":
					extra++
				default:
					j = len(words)
					continue
				}
				j++
			}
			if k < len(kw) {
				continue
			}
			for ; j+1 < len(words); j++ {
				if words[j] == ":" {
					if _, isVerdict := verdictWords[words[j+1]]; isVerdict {
						return true
					}
				}
			}
		}
	}
	return false
}

// verdictTokens splits a line into upper-case words and ':' (for '=' too).
func verdictTokens(line string) []string {
	var out []string
	word := strings.Builder{}
	flush := func() {
		if word.Len() > 0 {
			out = append(out, strings.ToUpper(word.String()))
			word.Reset()
		}
	}
	for _, r := range line {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			word.WriteRune(r)
		case r == ':' || r == '=':
			flush()
			out = append(out, ":")
		default:
			flush()
		}
	}
	flush()
	return out
}

// MissingLineProblem says, for both workflows' nudges, why text has none of
// the owed result lines: the refused line quoted with its problem, or the
// lines to add.
func MissingLineProblem(text string, owed []string) string {
	if found := ReadResult(text, owed); found.Near != "" {
		return fmt.Sprintf("your result line %q was not read: %s. End your report with exactly `%s`, alone on its line.", found.Near, found.Problem, strings.Join(owed, "` or `"))
	}
	return fmt.Sprintf("your report must end with the result line `%s`, alone on its line.", strings.Join(owed, "` or `"))
}

// FindResult returns the result form the text ends with (the last line
// with one of the forms' keys, read by the grammar), or "".
func FindResult(text string, forms []string) string {
	return ReadResult(text, forms).Form
}

// KeyLine finds the last line of text with the given key and a separator;
// it returns the value and the line as written.
func KeyLine(text, key string) (value, raw string, found bool) {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rl, ok := ReadResultLine(lines[i])
		if ok && rl.sep && rl.key == key && !rl.table {
			return rl.rest, rl.raw, true
		}
	}
	return "", "", false
}

// isResultKey reports whether line is a result line of one of the forms'
// keys (or a task-list line), for summaries that skip them.
func isResultKey(line string, keys []string) bool {
	rl, ok := ReadResultLine(line)
	if !ok {
		return false
	}
	return slices.Contains(keys, rl.key) || rl.key == KeyFailingTasks || rl.key == KeyFixTasks
}

func formKeys(forms []string) []string {
	out := make([]string, 0, len(forms))
	for _, f := range forms {
		k, _ := keyOf(f)
		out = appendNewString(out, k)
	}
	return out
}

func appendNewString(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// Marker matches a result marker at the start of a line, read by the
// result-line grammar (resultline.go): "REPORT_CREATED: x", "- **REPORT
// CREATED:** `x`", "> report_created = x". It returns the rest of the line
// after the separator. A table row is not a marker.
func Marker(line, marker string) (rest string, ok bool) {
	rl, found := ReadResultLine(line)
	if !found || !rl.sep || rl.table || rl.key != CanonicalKey(strings.TrimSuffix(marker, ":")) {
		return "", false
	}
	return strings.TrimLeft(rl.rest, "*`_ \t"), true
}

// SummaryOf is a short extract of an agent's text for checkpoint lines: the
// first non-empty line that is not a result line, clipped.
func SummaryOf(text string, skip ...string) string {
	keys := formKeys(skip)
	for _, line := range strings.Split(text, "\n") {
		if strings.Trim(line, " \t\r#*`>-_") == "" || isResultKey(line, keys) {
			continue
		}
		return shorten.Runes(shorten.OneLine(strings.Trim(line, " #*")), 80)
	}
	return ""
}

// WithoutLines drops the lines of text that are result lines of the forms'
// keys.
func WithoutLines(text string, forms ...string) string {
	keys := formKeys(forms)
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		if !isResultKey(line, keys) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// Keys of the task-list lines.
const (
	KeyFailingTasks = "FAILING TASKS"
	KeyFixTasks     = "FIX TASKS"
)
