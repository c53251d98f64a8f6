package orchestrate

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Reading the plan strictly and loudly (README, "How the plan is read"):
// MASTER_PLAN.md and the task files accept the spellings models use for
// the same meaning (task lines as "Task 01", "01", "**Task 01**" or a
// link; fields as "Depends On", "depends_on", "Dependencies", a YAML or
// Markdown list; "Files to modify"; a comment in parentheses or after
// " #"), and anything that could be read two ways, or not at all, is a
// PlanProblem that quotes the line: the plan does not validate until it is
// fixed. A gate never works from a value orch-hook guessed.

// PlanProblem is a line of a plan file that orch-hook will not guess at.
type PlanProblem struct {
	File    string // base name in TasksDir
	Line    int    // 1-based; 0 when the problem is the whole file
	Text    string // the line as written, trimmed
	Problem string // what is wrong and how to write it
}

func (p PlanProblem) Error() string {
	if p.File == "" {
		return p.Problem
	}
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Problem)
	}
	return fmt.Sprintf("%s line %d: %q: %s", p.File, p.Line, shorten.Runes(p.Text, 100), p.Problem)
}

// TaskFileNumber reads the task number of a task file's name: task-01.md,
// task-01-parser.md, task_01_parser.md, TASK-01.md, 01-parser.md (case
// does not matter). ok is false for other names.
func TaskFileNumber(name string) (n int, ok bool) {
	lower := strings.ToLower(name)
	stem, isMD := strings.CutSuffix(lower, ".md")
	if !isMD || strings.ContainsAny(stem, "/\\") {
		return 0, false
	}
	rest, named := strings.CutPrefix(stem, "task")
	if named {
		rest = strings.TrimLeft(rest, "-_")
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i > 4 {
		return 0, false
	}
	tail := rest[i:]
	switch {
	case tail == "":
		// task-01.md; a bare "01.md" is not a task file.
		if !named {
			return 0, false
		}
	case tail[0] == '-' || tail[0] == '_' || tail[0] == '.' || tail[0] == ' ':
	default:
		return 0, false
	}
	n, _ = strconv.Atoi(rest[:i])
	return n, true
}

// fieldKind is what a task field means.
type fieldKind int

const (
	fieldNone fieldKind = iota
	fieldDepends
	fieldParallel
	fieldFiles
	fieldUXDX
	// fieldMaybeDepends are keys that state a dependency when their value
	// names tasks ("Requires: Task 01") and something else otherwise
	// ("Requires: Node 20").
	fieldMaybeDepends
)

// fieldKeys are the spellings of each field, as canonicalKey writes them
// (upper case, '_', '-' and '/' as spaces).
var fieldKeys = map[string]fieldKind{
	"DEPENDS ON": fieldDepends, "DEPENDS": fieldDepends, "DEPENDENCIES": fieldDepends,
	"DEPENDENCY": fieldDepends, "DEPENDS ON TASKS": fieldDepends, "DEPENDENT ON": fieldDepends,
	"TASK DEPENDENCIES": fieldDepends, "BLOCKED BY": fieldDepends, "DEPENDS ON TASK": fieldDepends,
	"DEPENDS ON TASKS NN": fieldDepends,

	"REQUIRES": fieldMaybeDepends, "PREREQUISITES": fieldMaybeDepends, "PREREQUISITE": fieldMaybeDepends,
	"AFTER": fieldMaybeDepends, "NEEDS": fieldMaybeDepends, "RUNS AFTER": fieldMaybeDepends, "REQUIRED TASKS": fieldDepends,

	"PARALLEL WITH": fieldParallel, "CAN RUN IN PARALLEL WITH": fieldParallel, "RUNS IN PARALLEL WITH": fieldParallel,

	"FILES": fieldFiles, "FILE": fieldFiles, "FILES TO MODIFY": fieldFiles, "FILES TO CHANGE": fieldFiles,
	"FILES TO CREATE": fieldFiles, "FILES TO CREATE OR MODIFY": fieldFiles, "FILES TO CREATE MODIFY": fieldFiles,
	"FILES TO EDIT": fieldFiles, "FILES TO TOUCH": fieldFiles, "FILES CHANGED": fieldFiles, "FILES MODIFIED": fieldFiles,
	"FILES AFFECTED": fieldFiles, "AFFECTED FILES": fieldFiles, "FILES TOUCHED": fieldFiles, "TARGET FILES": fieldFiles,
	"CHANGED FILES": fieldFiles, "MODIFIED FILES": fieldFiles, "NEW FILES": fieldFiles,
	"TEST FILES": fieldFiles, "FILES TO DELETE": fieldFiles, "FILES TO REMOVE": fieldFiles, "FILES TO UPDATE": fieldFiles,
	"FILES TO ADD": fieldFiles, "DELETED FILES": fieldFiles, "REMOVED FILES": fieldFiles, "FILES TO TEST": fieldFiles,

	"REQUIRES UX DX REVIEW": fieldUXDX, "REQUIRES UXDX REVIEW": fieldUXDX, "UX DX REVIEW": fieldUXDX,
	"UX DX REVIEW REQUIRED": fieldUXDX, "REQUIRES UX REVIEW": fieldUXDX, "NEEDS UX DX REVIEW": fieldUXDX,
	"UX REVIEW REQUIRED": fieldUXDX, "UX REVIEW": fieldUXDX, "DX REVIEW": fieldUXDX, "NEEDS UX REVIEW": fieldUXDX,
	"UX DX": fieldUXDX, "UXDX REVIEW": fieldUXDX, "REQUIRES UX DX": fieldUXDX, "UX DX REVIEW NEEDED": fieldUXDX,
}

// fieldNames are the names refusals use.
var fieldNames = map[fieldKind]string{
	fieldDepends: "Depends On", fieldParallel: "Parallel With", fieldFiles: "Files", fieldUXDX: "requires_ux_dx_review",
}

// fieldLine is one field as written: its value (inline, or the items of a
// list under it), where it is, and its key as written.
type fieldLine struct {
	kind  fieldKind
	key   string // canonical
	value string // inline value, "" when the items are a list
	items []string
	list  bool // a list follows the key (YAML or Markdown)
	line  int  // 1-based
	raw   string
	file  string // set when read into a TaskFile
	stray string // a non-item line right after the list ("- a.go\nb.go")
	end   int    // the last line the field took (1-based)
}

// readFieldKey reads a line as "KEY: value" or a heading "## KEY" whose
// key is a task field. heading is set for the second form.
func readFieldKey(line string) (kind fieldKind, key, value string, heading, ok bool) {
	s := strings.TrimSpace(line)
	if strings.HasPrefix(s, "#") {
		heading = true
	}
	s = gates.TrimLeadDecoration(s)
	k, v, hasColon := strings.Cut(s, ":")
	if !hasColon {
		if !heading {
			// "Depends on Task 01", "**Depends on** Task 01": the key
			// phrase, then task references.
			plain := strings.TrimLeft(strings.ReplaceAll(s, "*", ""), " ")
			for _, phrase := range []string{"depends on ", "dependencies ", "depends upon "} {
				if len(plain) > len(phrase) && strings.EqualFold(plain[:len(phrase)], phrase) && reHasTaskRef.MatchString(plain[len(phrase):]) {
					return fieldDepends, "DEPENDS ON", strings.TrimSpace(plain[len(phrase):]), false, true
				}
			}
			return fieldNone, "", "", false, false
		}
		k, v = s, ""
	}
	if len(k) > 48 {
		return fieldNone, "", "", false, false
	}
	key = gates.CanonicalKey(strings.Trim(k, " \t*_`"))
	kind = fieldKeys[key]
	if kind == fieldNone {
		return fieldNone, "", "", false, false
	}
	return kind, key, strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "*_")), heading, true
}

// reTaskRefAll finds every task reference in prose: "Task 01", "Tasks 01
// and 02" (the numbers after the word).
var reTaskRefAll = gates.LazyRegexp(`(?i)\btasks?\s*#?\s*(\d{1,4})((?:\s*(?:,|and|&)\s*#?\d{1,4}\b)*)`)

// refNumbers lists the tasks a line of prose names.
func refNumbers(line string) []int {
	var out []int
	for _, m := range reTaskRefAll.FindAllStringSubmatch(line, -1) {
		n, _ := strconv.Atoi(m[1])
		out = appendNew(out, n)
		for _, more := range reNumberWord.FindAllString(m[2], -1) {
			k, _ := strconv.Atoi(strings.TrimLeft(more, "#"))
			out = appendNew(out, k)
		}
	}
	return out
}

var reNumberWord = gates.LazyRegexp(`#?\d{1,4}`)

// mentionsOnly: every task the line names is one of allowed (prose about
// a dependency the fields already state, or about the task itself).
func mentionsOnly(line string, allowed []int) bool {
	refs := refNumbers(line)
	for _, n := range refs {
		if !contains(allowed, n) {
			return false
		}
	}
	return len(refs) > 0
}

// reHasTaskRef: text naming a task, "Task 01" or "01".
var reHasTaskRef = gates.LazyRegexp(`(?i)(?:\btasks?\s*#?\s*\d{1,4}\b|^\s*#?\d{1,4}\b)`)

// listItem reports whether line is a Markdown list item, and its text.
func listItem(line string) (string, bool) {
	s := strings.TrimLeft(line, " \t")
	switch {
	case strings.HasPrefix(s, "- "), strings.HasPrefix(s, "* "), strings.HasPrefix(s, "+ "):
		return strings.TrimSpace(s[2:]), true
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < 4 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return strings.TrimSpace(s[i+2:]), true
	}
	return "", false
}

func isHeading(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "#") }

func indentOf(line string) int {
	n := 0
	for _, r := range line {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// readFields reads the task fields of lines (a task file, or the lines
// under a task of MASTER_PLAN.md), with the lists that follow a key with
// no value. Lines inside fenced code blocks are read too: models copy the
// template's fenced example.
func readFields(lines []string, first int) []fieldLine {
	var out []fieldLine
	for i := 0; i < len(lines); i++ {
		kind, key, value, heading, ok := readFieldKey(lines[i])
		if !ok {
			continue
		}
		f := fieldLine{kind: kind, key: key, value: value, line: first + i, raw: strings.TrimSpace(lines[i])}
		if value == "" {
			// A list follows (YAML "- x", Markdown "- x"), or, under a
			// heading, one line of prose or a value.
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			for ; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "" {
					// A blank line ends the list unless another item follows.
					k := j + 1
					for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
						k++
					}
					if k < len(lines) {
						if _, more := listItem(lines[k]); more && !isHeading(lines[k]) {
							j = k - 1
							continue
						}
					}
					break
				}
				item, isItem := listItem(lines[j])
				if !isItem {
					if _, _, _, _, isField := readFieldKey(lines[j]); heading && isField && !f.list && f.value == "" {
						// "## Dependencies\nDepends On: none": the heading is
						// a section title; the field line is read itself.
						break
					}
					if heading && !isHeading(lines[j]) && !f.list && f.value == "" {
						// "## Dependencies\nNone": the section's one line.
						f.value = headingSentence(strings.TrimSpace(lines[j]))
						f.raw += " / " + strings.TrimSpace(lines[j])
						continue
					}
					if f.list && !isHeading(lines[j]) {
						if _, _, _, _, isField := readFieldKey(lines[j]); !isField {
							f.stray = strings.TrimSpace(lines[j])
						}
					}
					break
				}
				f.list = true
				f.items = append(f.items, item)
			}
			if f.list && f.value != "" {
				// Prose and a list under one heading: read two ways.
				f.items = append([]string{f.value}, f.items...)
				f.value = ""
			}
			f.end = first + j - 1
			i = j - 1
			if heading && !f.list && f.value == "" {
				continue // a section title over fields, or over nothing
			}
		}
		if f.end < f.line {
			f.end = f.line
		}
		out = append(out, f)
	}
	return out
}

// reHeadingSentence is a dependency said as a sentence under a
// "## Dependencies" heading: "This task depends on Task 01 and Task 02.".
var reHeadingSentence = gates.LazyRegexp(`(?i)^(?:this task\s+)?(?:depends on|depends upon|requires|needs)\s+(.*?)\.?$`)

// headingSentence reads the one line under a field heading: the task
// references of "This task depends on Task 01 (tokens) and Task 02.", or
// the line as it is.
func headingSentence(line string) string {
	if m := reHeadingSentence.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return strings.TrimSuffix(line, ".")
}

// reParens is one parenthetical.
var reParens = gates.LazyRegexp(`\([^()]*\)`)

// cutComment drops what models add after a value: a parenthetical ("03
// (see section 1.2)") and a YAML-style comment ("true  # user-facing").
func cutComment(s string) string {
	s = stripParens(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\t') {
			s = s[:i]
			break
		}
	}
	return strings.TrimSpace(s)
}

// unlink turns "[Task 02](task-02.md)" into "Task 02".
func unlink(s string) string {
	for {
		open := strings.IndexByte(s, '[')
		if open < 0 {
			return s
		}
		mid := strings.Index(s[open:], "](")
		if mid < 0 {
			return s
		}
		end := strings.IndexByte(s[open+mid:], ')')
		if end < 0 {
			return s
		}
		s = s[:open] + s[open+1:open+mid] + s[open+mid+end+1:]
	}
}

// noneWords are the spellings of "no value".
var noneWords = map[string]bool{"none": true, "n/a": true, "na": true, "nil": true, "null": true, "-": true, "—": true, "–": true, "nothing": true, "[]": true, "no": true}

func isNone(s string) bool {
	return noneWords[strings.ToLower(strings.Trim(strings.TrimSpace(s), "*`_.'\""))]
}

// taskNumbers reads a field's value as task references ("03", "Task 03",
// "[03, 04]", a list of items, "none"). problem is set when it does not
// read.
func taskNumbers(f fieldLine) (nums []int, problem string) {
	parts := f.items
	if !f.list {
		parts = []string{f.value}
	}
	var vals []string
	for _, p := range parts {
		if paren, found := conjoinedParen(p); found {
			return nil, fmt.Sprintf("the note %q names another task; list every task in the value (`01, 02`)", paren)
		}
		for _, paren := range reParens.FindAllString(p, -1) {
			if reMentions.MatchString(paren) {
				return nil, fmt.Sprintf("the note %q states a dependency; list every task in the value (`01, 02`)", paren)
			}
		}
		if f.list {
			p = itemHead(p)
		}
		p, note := cutDashNote(p)
		if note != "" && !noteNamesOnly(note, p) {
			return nil, fmt.Sprintf("the note %q names another task; list every task in the value (`01, 02`)", note)
		}
		p = cutComment(unlink(p))
		p = strings.NewReplacer("[", " ", "]", " ", "\"", " ", "'", " ").Replace(p)
		if strings.TrimSpace(p) == "" || isNone(p) {
			continue
		}
		vals = append(vals, p)
	}
	if len(vals) == 0 {
		if !f.list && strings.TrimSpace(f.value) == "" {
			return nil, "the value is empty; write `none` or the task numbers (`03, 04`)"
		}
		return nil, ""
	}
	got, none, ok, bad := taskRefs(strings.Join(vals, ", "))
	switch {
	case !ok && bad == strings.Join(vals, ", ") && reNoneWord.MatchString(bad):
		return nil, "it says both `none` and task numbers"
	case !ok:
		return nil, fmt.Sprintf("%q is not a task number; write the task numbers (`03, 04`) or `none`, with any comment in parentheses", shorten.Runes(strings.TrimSpace(bad), 40))
	case none && len(got) > 0:
		return nil, "it says both `none` and task numbers"
	}
	return got, ""
}

var reNoneWord = gates.LazyRegexp(`(?i)\b(?:none|n/a|nil|null|nothing)\b`)

// noteNamesOnly: a note names no task, or only the tasks of the value it
// follows ("01 — needs Task 01's parser API").
func noteNamesOnly(note, value string) bool {
	refs := refNumbers(note)
	if len(refs) == 0 {
		return true
	}
	valueRefs, _, _, _ := taskRefs(stripParens(value))
	for _, n := range refs {
		if !contains(valueRefs, n) {
			return false
		}
	}
	return true
}

// itemHead is the part of a list item that is its value: "Task 01: the
// parser" is "Task 01", "`src/a.go` — new" is "src/a.go".
func itemHead(item string) string {
	s := strings.TrimSpace(unlink(item))
	if strings.HasPrefix(s, "`") {
		if end := strings.IndexByte(s[1:], '`'); end >= 0 {
			return s[1 : end+1]
		}
	}
	s = strings.Trim(s, "*_")
	for _, sep := range []string{": ", " — ", " – ", " - ", " (", "\t"} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return strings.TrimSpace(s)
}

// filePaths reads a Files value: comma-separated paths, paths separated by
// spaces (each of which looks like a path), a YAML list, or a Markdown
// list. A parenthetical after a path is a comment ("src/a.go (new)"), one
// inside it is part of the path ("app/(auth)/page.tsx").
func filePaths(f fieldLine) (paths []string, problem string) {
	var items []string
	if f.list {
		for _, it := range f.items {
			// "- c.go, b.go" is two files, as "Files: c.go, b.go" is.
			items = append(items, splitPaths(it)...)
		}
	} else {
		v := strings.TrimSpace(f.value)
		if strings.HasPrefix(v, "|") {
			return nil, "a table is not read; list the files as `- path` items, or `Files: src/a.go, src/b.go`"
		}
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1]
		}
		if strings.ContainsAny(cutFileComments(v), ",;") {
			items = splitPaths(v)
		} else if fields := strings.Fields(cutFileComments(v)); len(fields) > 1 {
			for _, w := range fields {
				if !looksLikePath(cleanPath(w)) {
					return nil, "separate the files with commas (`Files: src/a.go, src/b.go`); some of these words are not file paths"
				}
			}
			items = fields
		} else {
			items = []string{v}
		}
	}
	if f.stray != "" && looksLikePath(cleanPath(f.stray)) {
		return nil, fmt.Sprintf("the line %q after the list is not a list item; write every file as `- path`", shorten.Runes(f.stray, 60))
	}
	for _, it := range items {
		p, problem := filePath(it)
		if problem != "" {
			return nil, problem
		}
		if p == "" || isNone(p) {
			continue
		}
		if !containsString(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, ""
}

// splitPaths splits a Files value or list item at commas and semicolons
// outside parentheses and backticks.
func splitPaths(s string) []string {
	var out []string
	depth, code, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			code = !code
		case c == '(' && !code:
			depth++
		case c == ')' && !code && depth > 0:
			depth--
		case (c == ',' || c == ';') && depth == 0 && !code:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// filePath reads one file of a Files value: "`src/a.go`", "src/a.go
// (new)", "src/a.go — the parser", "Modify: src/a.go". What could name
// another file, or is not one path, is a problem.
func filePath(item string) (string, string) {
	s := strings.TrimSpace(unlink(item))
	if strings.HasPrefix(s, "|") {
		return "", "a table is not read; list the files as `- path` items, or `Files: src/a.go, src/b.go`"
	}
	// One code span holding a path is the path ("`src/a.go` (new)",
	// "Create `src/tokens.css` — the palettes"); the rest is a note, which
	// must not name another file.
	if spans := reCodeSpan.FindAllStringSubmatch(s, -1); len(spans) > 0 {
		var paths []string
		for _, m := range spans {
			if looksLikePath(m[1]) && !strings.ContainsAny(strings.TrimSpace(m[1]), " \t") {
				paths = append(paths, m[1])
			}
		}
		if len(paths) > 1 {
			return "", fmt.Sprintf("%q names more than one file; write one path per item", shorten.Runes(strings.TrimSpace(item), 60))
		}
		if len(paths) == 1 {
			// The rest is a note, which must not name another file:
			// "`c.go` (and b.go)".
			rest := reCodeSpan.ReplaceAllString(s, " ")
			for _, w := range strings.Fields(rest) {
				if w = strings.Trim(w, "()[],;:'\""); reFileWord.MatchString(w) {
					return "", fmt.Sprintf("%q names another file (%s) beside its path; write one path per item", shorten.Runes(strings.TrimSpace(item), 60), w)
				}
			}
			return normalPath(paths[0]), ""
		}
	}
	for _, paren := range reParens.FindAllString(s, -1) {
		if strings.HasPrefix(strings.TrimSpace(s), paren) {
			continue
		}
		for _, w := range strings.Fields(strings.Trim(paren, "()")) {
			if looksLikePath(cleanPath(w)) && strings.ContainsAny(w, "/.") && !strings.HasSuffix(w, ".") {
				return "", fmt.Sprintf("the note %q names another file; list every file the task changes (`Files: src/a.go, src/b.go`)", paren)
			}
		}
	}
	s = cutFileComments(s)
	// "Create: src/new.go" (a verb, then the path) and "src/api.ts: add
	// the /export route" (the path, then a note).
	if before, after, ok := strings.Cut(s, ": "); ok {
		b := looksLikePath(cleanPath(before)) && !strings.ContainsAny(strings.TrimSpace(before), " \t")
		a := looksLikePath(cleanPath(after)) && !strings.ContainsAny(strings.TrimSpace(after), " \t")
		switch {
		case a && !b:
			s = after
		case b:
			s = before
		default:
			return "", fmt.Sprintf("%q is not one file path; write one path per item", shorten.Runes(strings.TrimSpace(item), 60))
		}
	}
	for _, sep := range []string{" — ", " – ", " - ", "\t"} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	p := cleanPath(s)
	if strings.ContainsAny(p, " \t") {
		return "", fmt.Sprintf("%q is not one file path; write one path per item (`- src/a.go`), with any note in parentheses", shorten.Runes(strings.TrimSpace(item), 60))
	}
	return normalPath(p), ""
}

// reFileWord is a word of a note that reads as a file: a directory or an
// extension ("b.go", "src/x"), not "e.g." or "v1.2".
var reFileWord = gates.LazyRegexp(`^[\w.-]*(?:/[\w.-]+)+$|^[\w-]+\.[A-Za-z]{1,5}$`)

// reCodeSpan is one `code span`.
var reCodeSpan = gates.LazyRegexp("`([^`]+)`")

// normalPath is the one spelling of a project path: "./src/b.go" and
// "src//b.go" are "src/b.go", so the overlap rule compares like with like.
func normalPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" || isNone(p) {
		return p
	}
	return path.Clean(strings.ReplaceAll(p, "\\", "/"))
}

// cutFileComments drops " (comment)" and " # comment" after paths, in
// one pass (a parenthesis inside a path, "app/(auth)/x.tsx", stays).
func cutFileComments(s string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth > 0:
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			}
			continue
		case c == '(' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			depth = 1
			continue
		case c == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

func cleanPath(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(unlink(s)), "`*\"'_"))
}

// looksLikePath: a path has a directory or an extension.
func looksLikePath(s string) bool {
	return strings.ContainsAny(s, "/.\\")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// uxdxValue reads requires_ux_dx_review's value: true/yes or false/no,
// after dropping a comment.
func uxdxValue(f fieldLine) (value bool, problem string) {
	v := f.value
	if f.list && len(f.items) == 1 {
		v = f.items[0]
	}
	v, _ = cutDashNote(v)
	v = strings.ToLower(strings.Trim(cutComment(v), " \t*`_\"'."))
	switch v {
	case "true", "yes":
		return true, ""
	case "false", "no":
		return false, ""
	}
	return false, "the value is not one of true, yes, false, no (write `requires_ux_dx_review: true` when users or developers see the change, else `false`)"
}

// parseTaskFile reads a task file's fields; what does not read becomes a
// problem quoting the line.
func parseTaskFile(n int, name, text string) *TaskFile {
	t := &TaskFile{Number: n, Name: name}
	lines := strings.Split(text, "\n")
	t.apply(name, readFields(lines, 1))
	// A dependency in prose ("must run after Task 01") is not read: it
	// could be read two ways, so it is refused, quoted.
	for i, line := range lines {
		if _, _, _, _, isField := readFieldKey(line); isField || t.consumed[i+1] || !reMentions.MatchString(line) {
			continue
		}
		if mentionsOnly(line, append(append([]int(nil), t.DependsOn...), n)) {
			continue // "needs the config loader of Task 01", with Depends On: 01
		}
		t.Problems = append(t.Problems, PlanProblem{File: name, Line: i + 1, Text: strings.TrimSpace(line), Problem: "it states a dependency orch-hook does not read; write it as `Depends On: NN` (in the file of the task that waits), or name only tasks this file's `Depends On:` lists"})
	}
	return t
}

// apply reads fields into t. Two lines of one field must agree (read two
// ways otherwise); "Files to create" and "Files to modify" add up.
func (t *TaskFile) apply(file string, fields []fieldLine) {
	byKey := map[string]fieldLine{}
	if t.consumed == nil {
		t.consumed = map[int]bool{}
	}
	for _, f := range fields {
		f.file = file
		if file == t.Name {
			for l := f.line; l <= f.end; l++ {
				t.consumed[l] = true
			}
		}
		switch f.kind {
		case fieldFiles:
			t.triedFiles = true
		case fieldUXDX:
			t.triedUXDX = true
		}
		bad := func(problem string) {
			t.Problems = append(t.Problems, PlanProblem{File: file, Line: f.line, Text: f.raw, Problem: problem})
		}
		switch f.kind {
		case fieldMaybeDepends:
			// "Requires: Task 01" is a dependency; "Requires: Node 20" is
			// not; "Requires: the parser from Task 01" could be read both
			// ways.
			nums, problem := taskNumbers(f)
			switch {
			case problem == "" && len(nums) > 0:
				f.kind = fieldDepends
			case reHasTaskRef.MatchString(f.value) || anyItemNamesTask(f.items):
				bad("it names a task, but not as a dependency orch-hook reads; write `Depends On: NN` (the task numbers)")
				continue
			default:
				continue
			}
			fallthrough
		case fieldDepends, fieldParallel:
			nums, problem := taskNumbers(f)
			if problem != "" {
				if f.kind == fieldDepends {
					bad(problem)
				}
				continue
			}
			if f.kind == fieldParallel {
				t.ParallelWith = nums
				continue
			}
			if prev, twice := t.depSource, t.hasDeps; twice && !sameIntSet(t.DependsOn, nums) {
				bad(fmt.Sprintf("it says other dependencies than line %d (%q); keep one `Depends On:` line", prev.line, shorten.Runes(prev.raw, 60)))
				continue
			}
			t.DependsOn, t.hasDeps, t.depSource = nums, true, f
		case fieldFiles:
			paths, problem := filePaths(f)
			if problem != "" {
				bad(problem)
				continue
			}
			if prev, twice := byKey[f.key]; twice {
				prevPaths, _ := filePaths(prev)
				if !sameStrings(prevPaths, paths) {
					bad(fmt.Sprintf("it lists other files than line %d (%q); keep one %s line", prev.line, shorten.Runes(prev.raw, 60), f.key))
					continue
				}
			}
			byKey[f.key] = f
			t.hasFiles = true
			for _, p := range paths {
				if !containsString(t.Files, p) {
					t.Files = append(t.Files, p)
				}
			}
		case fieldUXDX:
			v, problem := uxdxValue(f)
			if problem != "" {
				bad(problem)
				continue
			}
			if t.hasUXDX && v != t.UXDX {
				bad(fmt.Sprintf("it says %t, line %d says %t; keep one requires_ux_dx_review line", v, t.uxdxLine, t.UXDX))
				continue
			}
			t.UXDX, t.hasUXDX, t.uxdxLine = v, true, f.line
		}
	}
}

func anyItemNamesTask(items []string) bool {
	for _, it := range items {
		if reHasTaskRef.MatchString(it) {
			return true
		}
	}
	return false
}

func sameIntSet(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[int]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range b {
		if !containsString(a, x) {
			return false
		}
	}
	return true
}

// uxdxState is how a task's requires_ux_dx_review reads: "true", "false",
// "missing" or "unclear" (a line that does not read), for the rule that
// the flag does not change after approval.
func uxdxState(tf *TaskFile) string {
	if tf == nil {
		return "missing"
	}
	for _, p := range tf.Problems {
		if kind, _, _, _, ok := readFieldKey(p.Text); ok && kind == fieldUXDX {
			return "unclear"
		}
	}
	if !tf.hasUXDX {
		return "missing"
	}
	return strconv.FormatBool(tf.UXDX)
}
