package orchestrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// taskRefs reads a list of task references: "02, 05", "Task 02 and Task
// 05", "#2; #5", "01-03", "none". Text in parentheses is a comment. ok is
// false, and bad quotes the item, when an item is not a task reference.
func taskRefs(value string) (nums []int, none, ok bool, bad string) {
	if p, found := conjoinedParen(value); found {
		return nil, false, false, p
	}
	// "03 — the CLI bypasses the encoder", "02 ❌, 04 ❌": a dash note and
	// marks are not task references.
	value, _ = cutDashNote(value)
	value = strings.Map(func(r rune) rune {
		if gates.IsEmoji(r) {
			return -1
		}
		return r
	}, value)
	value = stripParens(value)
	value = strings.Trim(value, " \t*`_.")
	if value == "" {
		return nil, false, false, ""
	}
	items := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '&' })
	for i := 0; i < len(items); i++ {
		item := strings.Trim(items[i], "*`_.#[]")
		switch strings.ToLower(item) {
		case "", "and", "task", "tasks":
			continue
		case "none", "n/a", "-":
			none = true
			continue
		}
		if lo, hi, isRange := strings.Cut(item, "-"); isRange {
			a, errA := refNumber(lo)
			b, errB := refNumber(hi)
			if errA != nil || errB != nil || b < a || b-a > 50 {
				return nil, false, false, items[i]
			}
			for n := a; n <= b; n++ {
				nums = appendNew(nums, n)
			}
			continue
		}
		n, err := refNumber(item)
		if err != nil {
			return nil, false, false, items[i]
		}
		nums = appendNew(nums, n)
	}
	if none && len(nums) > 0 {
		return nil, false, false, value
	}
	return nums, none, true, ""
}

// reConjoined is a parenthetical that adds a task: "(and 02)", "(also
// breaks Task 02)", "(+ 03)". It is not a comment.
var reConjoined = gates.LazyRegexp(`(?i)\(\s*(?:and|&|\+|also|plus|as well as|,)\b?[^)]*?\b(?:task\s*#?\s*)?\d{1,4}\b[^)]*\)`)

// conjoinedParen finds a parenthetical that names another task.
func conjoinedParen(s string) (string, bool) {
	if strings.IndexByte(s, '(') < 0 {
		return "", false // reConjoined starts with one; no need to compile it
	}
	m := reConjoined.FindString(s)
	return m, m != ""
}

// refNumber reads "02", "Task02" or "#2".
func refNumber(s string) (int, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(s), "task"), "#")
	if s == "" || len(s) > 4 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a task number")
	}
	return strconv.Atoi(s)
}

func appendNew(list []int, n int) []int {
	if slices.Contains(list, n) {
		return list
	}
	return append(list, n)
}

// stripParens drops parenthesized comments: "02 (regression)" is "02 ".
func stripParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FailingTasks reads the last "FAILING TASKS: 02, 05" line.
func FailingTasks(text string) []int {
	v, _, found := gates.KeyLine(text, gates.KeyFailingTasks)
	if !found {
		return nil
	}
	nums, _, _, _ := taskRefs(v)
	return nums
}

// cutDashNote splits "01 — needs the parser API" at an em or en dash.
func cutDashNote(s string) (value, note string) {
	for _, sep := range []string{" — ", " – ", " —", " –"} {
		if i := strings.Index(s, sep); i > 0 {
			note = strings.TrimSpace(s[i+len(sep):])
			if reRangeEnd.MatchString(note) {
				return s, "" // "01 – 03": a range, not a note
			}
			return s[:i], note
		}
	}
	return s, ""
}

// reRangeEnd is what follows a dash in a range: "03", "Task 03".
var reRangeEnd = gates.LazyRegexp(`(?i)^(?:task\s*)?#?\d{1,4}\b`)
