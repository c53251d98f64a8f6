package gates

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// applyPatch applies a unified diff of one file to a as patch(1) would,
// strictly: every context and removed line must match, every hunk header
// must count its body.
func applyPatch(a, patch string) (string, error) {
	if patch == "" {
		return a, nil
	}
	old := splitLines(a)
	lines := splitLines(patch)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no header")
	}
	var out strings.Builder
	next := 0 // the next line of a not yet copied
	for i := 2; i < len(lines); {
		var as, ac, bc int
		h := strings.TrimSuffix(lines[i], "\n")
		if _, err := fmt.Sscanf(h, "@@ -%s +%s @@", new(string), new(string)); err != nil {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i, h)
		}
		f := strings.Fields(h)
		parse := func(r string) (int, int) {
			s, c, ok := strings.Cut(r[1:], ",")
			start, _ := strconv.Atoi(s)
			count := 1
			if ok {
				count, _ = strconv.Atoi(c)
			}
			return start, count
		}
		as, ac = parse(f[1])
		_, bc = parse(f[2])
		first := as - 1 // 0-based first line of the hunk in a
		if ac == 0 {
			first = as
		}
		if first < next || first > len(old) {
			return "", fmt.Errorf("hunk %q out of order", h)
		}
		for ; next < first; next++ {
			out.WriteString(old[next])
		}
		i++
		gotA, gotB := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(old) || old[next] != text {
					return "", fmt.Errorf("hunk %q: line %d does not match", h, next+1)
				}
				next++
				gotA++
				if l[0] == ' ' {
					out.WriteString(text)
					gotB++
				}
			case '+':
				out.WriteString(text)
				gotB++
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
		}
		if gotA != ac || gotB != bc {
			return "", fmt.Errorf("hunk %q counts -%d +%d lines", h, gotA, gotB)
		}
	}
	for ; next < len(old); next++ {
		out.WriteString(old[next])
	}
	return out.String(), nil
}

func TestPatch(t *testing.T) {
	var long, longer strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&long, "%d\n", i)
		if i == 2 {
			longer.WriteString("two\n")
		} else if i == 19 {
			longer.WriteString("nineteen\n")
		} else {
			fmt.Fprintf(&longer, "%d\n", i)
		}
	}
	for _, tc := range []struct{ name, a, b, want string }{
		{"equal", "x\n", "x\n", ""},
		{"new file", "", "a\nb\n", "--- r\n+++ n\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"new file without a last newline", "", "a\nb", "--- r\n+++ n\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", "--- r\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"newline added at the end", "a\nb", "a\nb\n", "--- r\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"two hunks, three lines of context", long.String(), longer.String(),
			"--- r\n+++ n\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"},
		{"all removed", "a\n", "", "--- r\n+++ n\n@@ -1 +0,0 @@\n-a\n"},
		{"CR kept as it is", "a\r\n", "a\n", "--- r\n+++ n\n@@ -1 +1 @@\n-a\r\n+a\n"},
	} {
		got := Patch("r", "n", tc.a, tc.b)
		if got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		if applied, err := applyPatch(tc.a, got); err != nil || applied != tc.b {
			t.Errorf("%s: the patch does not apply: %v, %q", tc.name, err, applied)
		}
	}
	// Changes 6 unchanged lines apart share a hunk; 7 apart do not.
	six := Patch("r", "n", "x\n1\n2\n3\n4\n5\n6\ny\n", "X\n1\n2\n3\n4\n5\n6\nY\n")
	seven := Patch("r", "n", "x\n1\n2\n3\n4\n5\n6\n7\ny\n", "X\n1\n2\n3\n4\n5\n6\n7\nY\n")
	if strings.Count(six, "@@ -") != 1 || strings.Count(seven, "@@ -") != 2 {
		t.Errorf("hunks merged wrong:\n%s\n%s", six, seven)
	}
	// A large middle that does not fit the LCS table still applies.
	var a, b strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "line %d\n", i*7%1000)
	}
	if applied, err := applyPatch(a.String(), Patch("r", "n", a.String(), b.String())); err != nil || applied != b.String() {
		t.Errorf("large: %v", err)
	}
}
