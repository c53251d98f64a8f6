package gates

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		max        int
		want       string
		complete   bool
	}{
		{"equal", "x\n", "x\n", 20, "", true},
		{"one line", "a\nb\nc\n", "a\nB\nc\n", 20, "--- r\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c", true},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n", "0\n2\n3\n4\n5\n6\n7\n9\n", 20,
			"--- r\n+++ n\n@@ -1,2 +1,2 @@\n-1\n+0\n 2\n@@ -7,2 +7,2 @@\n 7\n-8\n+9", true},
		{"newline at the end", "a\nb\n", "a\nb", 20, "--- r\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file", true},
		{"CRLF", "a\n", "a\r\n", 20, "--- r\n+++ n\n@@ -1 +1 @@\n-a\n+a\\r", false},
		{"added to an empty file", "", "a\n", 20, "--- r\n+++ n\n@@ -0,0 +1 @@\n+a", true},
		{"cut", "1\n2\n3\n4\n", "a\nb\nc\nd\n", 3, "--- r\n+++ n\n@@ -1,3 +0,0 @@\n-1\n-2\n-3\n... 5 more changed lines not shown", false},
	} {
		got, _, complete := UnifiedDiff("r", "n", tc.a, tc.b, tc.max)
		if got != tc.want || complete != tc.complete {
			t.Errorf("%s: got (complete %v)\n%s\nwant (complete %v)\n%s", tc.name, complete, got, tc.complete, tc.want)
		}
	}
	// A long line is cut; a large middle falls back to removed and added
	// whole, and stays bounded.
	long := strings.Repeat("x", 500)
	got, _, complete := UnifiedDiff("r", "n", long+"\n", "y\n", 20)
	if complete || !strings.Contains(got, "-"+strings.Repeat("x", diffLineMax-1)+"… (line cut)") {
		t.Errorf("long line: %q", got)
	}
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "line %d \n", i)
	}
	got, shown, complete := UnifiedDiff("r", "n", a.String(), b.String(), 20)
	if complete || shown != 20 || strings.Count(got, "\n") > 30 || !strings.HasSuffix(got, "... 5980 more changed lines not shown") {
		t.Errorf("large: shown %d complete %v\n%s", shown, complete, got)
	}
}

// FuzzUnifiedDiff: no input panics, the edit script the diff shows
// rebuilds both texts, and Patch's diff applies.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x")
	f.Add("x\r\ny\n", "x\ny\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		out, shown, complete := UnifiedDiff("r", "n", a, b, 1000)
		if a == b && out != "" || a != b && out == "" || shown < 0 {
			t.Fatalf("a %q b %q: %q", a, b, out)
		}
		if complete && strings.Contains(out, "more changed") {
			t.Fatalf("complete, but cut: %q", out)
		}
		ops := diffLines(splitLines(a), splitLines(b))
		var ra, rb strings.Builder
		for _, op := range ops {
			if op.kind != '+' {
				ra.WriteString(op.text)
			}
			if op.kind != '-' {
				rb.WriteString(op.text)
			}
		}
		if ra.String() != a || rb.String() != b {
			t.Fatalf("edit script does not rebuild the texts: %q %q", a, b)
		}
		// The whole patch (init --dry-run's) applies and gives b.
		if got, err := applyPatch(a, Patch("r", "n", a, b)); err != nil || got != b {
			t.Fatalf("a %q b %q: the patch does not apply (%v): %q", a, b, err, got)
		}
	})
}
