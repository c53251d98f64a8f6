package shorten

import "testing"

func TestOneLine(t *testing.T) {
	if got := OneLine("  a\n\tb  c \r\n"); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
}

func TestRunes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"héllo wörld", 5, "héll…"},
		{"héllo", 5, "héllo"},
		{"", 3, ""},
	} {
		if got := Runes(c.in, c.n); got != c.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		mark string
		want string
	}{
		{"hello world", 5, "...", "hello..."},
		{"hello", 5, "...", "hello"},
		{"héllo", 2, "…", "h…"},                          // é is 2 bytes: not cut in half
		{"aé", 2, "...", "a..."},                         // the cut falls inside é
		{"a\x80\x80\x80\x80b", 3, "...", "a\x80\x80..."}, // not UTF-8: cut at n
		{"日本語", 4, "…", "日…"},
	} {
		if got := Bytes(c.in, c.n, c.mark); got != c.want {
			t.Errorf("Bytes(%q, %d, %q) = %q, want %q", c.in, c.n, c.mark, got, c.want)
		}
	}
}

func FuzzBytes(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 64 {
			return
		}
		got := Bytes(s, n, "")
		if len(got) > n || len(s) > n && len(got) < n-3 || s[:len(got)] != got {
			t.Fatalf("Bytes(%q, %d) = %q", s, n, got)
		}
	})
}

func TestTerminal(t *testing.T) {
	for _, tc := range []struct {
		in      string
		keepSGR bool
		want    string
	}{
		{"plain text\twith tab\n", false, "plain text\twith tab\n"},
		{"\x1b]0;pwned\x07\x1b[2J\u009b31mTopic 1", false, "?]0;pwned??[2J?31mTopic 1"},
		{"\x1b[1mbold\x1b[0m", true, "\x1b[1mbold\x1b[0m"},
		{"\x1b[1mbold\x1b[0m", false, "?[1mbold?[0m"},
		{"\x1b[2Jclear\x1b]8;;x\x07", true, "?[2Jclear?]8;;x?"},
		{"del\x7f é ünïcode", false, "del? é ünïcode"},
		{"\x1b[", true, "?["},
	} {
		if got := Terminal(tc.in, tc.keepSGR); got != tc.want {
			t.Errorf("Terminal(%q, %v) = %q, want %q", tc.in, tc.keepSGR, got, tc.want)
		}
	}
}
