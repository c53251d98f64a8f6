// Package shorten folds and clips text for one-line messages, reasons and
// reports. It imports nothing of the project, so every package (gates
// included) may use it.
package shorten

import (
	"strings"
	"unicode/utf8"
)

// OneLine folds every run of white space (newlines included) into one space
// and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Runes cuts s to at most n runes (n >= 1), the last of them "…" when it
// cuts.
func Runes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Bytes cuts s to at most n bytes and appends mark when it cuts. A cut in
// the middle of a UTF-8 sequence moves back to its start; bytes that are
// not UTF-8 are cut at n.
func Bytes(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut > n-(utf8.UTFMax-1) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if r, size := utf8.DecodeRuneInString(s[cut:]); cut < n && (r == utf8.RuneError && size <= 1 || cut+size <= n) {
		cut = n // not a rune cut in half: s is not UTF-8 here
	}
	return s[:cut] + mark
}

// Terminal makes text safe to print to a terminal: each control character
// (C0 but tab and newline, DEL, C1, which a terminal reads as commands:
// retitle the window, clear the screen, write the clipboard) becomes "?".
// With keepSGR, the colour sequences orch-hook itself prints (ESC [ digits
// and semicolons m) are kept whole: they only colour text. Text the model
// wrote (a prompt's first line, a plan's title, a report) reaches status,
// log, explain, report and the status lines.
func Terminal(s string, keepSGR bool) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if keepSGR && s[i] == 0x1b {
			if n := sgrLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r) {
			b.WriteByte('?')
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// sgrLen is the length of the colour sequence s begins with (ESC [ digits
// and semicolons m), 0 for anything else.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 32; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || c >= '0' && c <= '9':
		default:
			return 0
		}
	}
	return 0
}
