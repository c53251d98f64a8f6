package gates

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/orch-hook/orch-hook/internal/shorten"
)

// A short unified diff, for the refusal of a plan changed outside orch-hook:
// it shows the model what to undo. It is bounded on every side: the lines
// compared by the LCS table (beyond it, the differing middle is shown as
// removed and added whole), the changed lines shown, and each line's length.

const (
	// diffContext is the number of unchanged lines shown around a change.
	diffContext = 1
	// diffLineMax is the longest line shown, in characters.
	diffLineMax = 200
	// diffCells bounds the LCS table (rows x columns) of the part of the
	// files between their common first and last lines.
	diffCells = 1 << 18
)

// diffOp is one line of an edit script: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	text string // the line with its "\n", if it has one
	a, b int    // 0-based line numbers in a and b (the next line, for an add or remove)
}

// splitLines cuts text into lines, each with its "\n"; the last one lacks
// it when the text does not end in a newline (so that a newline added or
// removed at the end is a change, as it is to the hash).
func splitLines(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// diffLines computes an edit script from a to b: common first and last
// lines are matched directly, the middle by a longest common subsequence
// when it fits diffCells, else as removed and added whole.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{' ', a[i], i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if n > 0 && m > 0 && (n+1)*(m+1) <= diffCells {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		w := m + 1
		lcs := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
				} else {
					lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n && j < m {
			switch {
			case ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i], pre + i, pre + j})
				i++
				j++
			case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
				ops = append(ops, diffOp{'-', ma[i], pre + i, pre + j})
				i++
			default:
				ops = append(ops, diffOp{'+', mb[j], pre + i, pre + j})
				j++
			}
		}
		for ; i < n; i++ {
			ops = append(ops, diffOp{'-', ma[i], pre + i, pre + m})
		}
		for ; j < m; j++ {
			ops = append(ops, diffOp{'+', mb[j], pre + n, pre + j})
		}
	} else {
		for i := range ma {
			ops = append(ops, diffOp{'-', ma[i], pre + i, pre})
		}
		for j := range mb {
			ops = append(ops, diffOp{'+', mb[j], pre + n, pre + j})
		}
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, diffOp{' ', a[len(a)-suf+k], len(a) - suf + k, len(b) - suf + k})
	}
	return ops
}

// UnifiedDiff renders a -> b as a unified diff (one line of context) of at
// most maxChanged removed or added lines, each cut at diffLineMax
// characters. shown counts the changed lines shown; complete is false
// when anything was left out or cut, or when a line does not read as
// plain text; "" means the texts are equal.
func UnifiedDiff(fromName, toName, a, b string, maxChanged int) (out string, shown int, complete bool) {
	ops := diffLines(splitLines(a), splitLines(b))
	complete = true
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", fromName, toName)
	total := 0
	for _, op := range ops {
		if op.kind != ' ' {
			total++
		}
	}
	if total == 0 {
		return "", 0, true
	}
	for k := 0; k < len(ops) && shown < maxChanged; {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from diffContext lines before this change to
		// diffContext lines after the last change that follows the one
		// before it within 2*diffContext unchanged lines.
		start := max(0, k-diffContext)
		end, run := k, 0
		for j := k; j < len(ops) && run <= 2*diffContext; j++ {
			if ops[j].kind == ' ' {
				run++
				continue
			}
			run, end = 0, j
		}
		stop := min(len(ops), end+1+diffContext)
		var body strings.Builder
		aLines, bLines := 0, 0
		for j := start; j < stop; j++ {
			op := ops[j]
			if op.kind != ' ' {
				if shown >= maxChanged {
					break // the budget ends the hunk
				}
				shown++
			}
			line, whole := showLine(op.text)
			complete = complete && whole
			body.WriteByte(op.kind)
			body.WriteString(line)
			body.WriteByte('\n')
			if !strings.HasSuffix(op.text, "\n") {
				body.WriteString("\\ No newline at end of file\n")
			}
			if op.kind != '+' {
				aLines++
			}
			if op.kind != '-' {
				bLines++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(ops[start].a, aLines), hunkRange(ops[start].b, bLines))
		sb.WriteString(body.String())
		k = stop
	}
	if shown < total {
		complete = false
		fmt.Fprintf(&sb, "... %d more changed %s not shown\n", total-shown, Pick(total-shown, "line", "lines"))
	}
	return strings.TrimSuffix(sb.String(), "\n"), shown, complete
}

// hunkRange is a unified diff's "start,count" (1-based; the line before
// an empty range).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// showLine is a line as the diff shows it: without its newline, a
// carriage return spelled \r (a formatter's CRLF would be invisible
// otherwise), cut at diffLineMax characters. whole is false when it was
// cut or is not valid UTF-8.
func showLine(text string) (string, bool) {
	text = strings.TrimSuffix(text, "\n")
	whole := utf8.ValidString(text)
	text = strings.ToValidUTF8(text, "\uFFFD")
	if strings.Contains(text, "\r") {
		text, whole = strings.ReplaceAll(text, "\r", `\r`), false
	}
	if utf8.RuneCountInString(text) > diffLineMax {
		return shorten.Runes(text, diffLineMax) + " (line cut)", false
	}
	return text, whole
}

// patchContext is the unchanged lines a Patch shows around a change, as
// diff -u and git do.
const patchContext = 3

// Patch renders a -> b as a complete unified diff that git apply and
// patch(1) accept: every changed line exactly as it is (unlike
// unifiedDiff, which is cut to fit a refusal), three lines of context,
// and "\ No newline at end of file" after a last line without one. A
// fromName of /dev/null makes it the creation of toName. "" when the
// texts are equal. The middle of two large files may come out as removed
// and added whole (diffLines): a longer diff, never a wrong one.
func Patch(fromName, toName, a, b string) string {
	ops := diffLines(splitLines(a), splitLines(b))
	var sb strings.Builder
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk runs from patchContext lines before this change to
		// patchContext lines after the last change that follows the one
		// before it within 2*patchContext unchanged lines.
		start, end := max(0, k-patchContext), k
		for j := k + 1; j < len(ops) && j-end-1 <= 2*patchContext; j++ {
			if ops[j].kind != ' ' {
				end = j
			}
		}
		stop := min(len(ops), end+1+patchContext)
		aLines, bLines := 0, 0
		for _, op := range ops[start:stop] {
			if op.kind != '+' {
				aLines++
			}
			if op.kind != '-' {
				bLines++
			}
		}
		if sb.Len() == 0 {
			fmt.Fprintf(&sb, "--- %s\n+++ %s\n", fromName, toName)
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(ops[start].a, aLines), hunkRange(ops[start].b, bLines))
		for _, op := range ops[start:stop] {
			sb.WriteByte(op.kind)
			sb.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		k = stop
	}
	return sb.String()
}
