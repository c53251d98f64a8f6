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
