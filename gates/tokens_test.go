package gates

import (
	"math"
	"testing"
)

func TestCompactTokens(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 999: "999", 1000: "1.0k", 12345: "12.3k", 999_949: "999.9k", 999_950: "1.00M", 4_560_000: "4.56M", 999_995_000: "1.00G", math.MaxInt64: "9223372036.85G"} {
		if got := CompactTokens(n); got != want {
			t.Errorf("CompactTokens(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTokenUse(t *testing.T) {
	var u TokenUse
	if u.Summary() != "" || u.UnknownText() != "" {
		t.Errorf("empty: %q %q", u.Summary(), u.UnknownText())
	}
	u.Count("research", &Tokens{Input: 1000, Output: 200, CacheRead: 30000, CacheWrite: 4000, Responses: 2}, true)
	u.Count("research", &Tokens{Input: 7}, false) // running: not counted
	u.Count("plan", &Tokens{Input: 1, Unread: "1 record cut"}, true)
	u.Count("plan", &Tokens{Unknown: "transcript missing"}, true)
	u.Count("test", nil, true)
	u.Count("test", &Tokens{Unknown: "transcript missing"}, true)
	if u.Known != 2 || u.Partial != 1 || u.Unknown != 3 || u.Total.Total() != 35201 || u.Total.Responses != 2 {
		t.Errorf("TokenUse = %+v", u)
	}
	if len(u.Phases) != 3 || u.Phases[0] != (PhaseTokens{Phase: "research", Tokens: Tokens{Input: 1000, Output: 200, CacheRead: 30000, CacheWrite: 4000, Responses: 2}, Known: 1}) || u.Phases[2].Unknown != 2 {
		t.Errorf("phases = %+v", u.Phases)
	}
	want := "at least 35.2k tokens (input 1.0k, output 200, cache read 30.0k, cache write 4.0k) over 2 agents; tokens unknown for 3 agents (2: transcript missing; 1: " + NotRecorded + ")"
	if got := u.Summary(); got != want {
		t.Errorf("Summary =\n %q\nwant\n %q", got, want)
	}
	for tok, want := range map[*Tokens]string{nil: "-", {Unknown: "transcript missing"}: "unknown (transcript missing)", {Input: 1500, Unread: "x"}: "≥1.5k", {Output: 12}: "12"} {
		if got := tok.Short(); got != want {
			t.Errorf("Short(%+v) = %q, want %q", tok, got, want)
		}
	}
	big := Tokens{Input: math.MaxInt64}
	big.add(Tokens{Input: 5, Output: math.MaxInt64})
	if big.Input != math.MaxInt64 || big.Total() != math.MaxInt64 {
		t.Errorf("saturating: %+v total %d", big, big.Total())
	}
}
