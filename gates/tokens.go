package gates

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Tokens is what one agent's API responses used, as Claude Code's
// transcript of the agent records them (the usage of each response,
// counted once). It is read at the agent's SubagentStop and kept with its
// launch. It is informational: no rule reads it, and the agent, running as
// the same OS user, could write its own transcript.
type Tokens struct {
	Input      int64 `json:"input,omitempty"`
	Output     int64 `json:"output,omitempty"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
	// Responses is how many API responses were counted.
	Responses int `json:"responses,omitempty"`
	// Unread says what of the transcript was not counted (records too
	// long, cut short or malformed, or the part past the read cap): the
	// counts are then a lower bound.
	Unread string `json:"unread,omitempty"`
	// Unknown says why the agent's tokens are not known (its transcript
	// missing or unreadable): the counts are then unknown, not zero.
	Unknown string `json:"unknown,omitempty"`
}

// Known reports whether t holds counts (nil: nothing was recorded).
func (t *Tokens) Known() bool { return t != nil && t.Unknown == "" }

// Total is the four counts summed, as Claude Code's totalTokens sums them.
func (t Tokens) Total() int64 {
	return addTokens(addTokens(t.Input, t.Output), addTokens(t.CacheRead, t.CacheWrite))
}

// Copy returns a copy of t (nil for nil): a launch keeps its own.
func (t *Tokens) Copy() *Tokens {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// add sums u's counts into t.
func (t *Tokens) add(u Tokens) {
	t.Input = addTokens(t.Input, u.Input)
	t.Output = addTokens(t.Output, u.Output)
	t.CacheRead = addTokens(t.CacheRead, u.CacheRead)
	t.CacheWrite = addTokens(t.CacheWrite, u.CacheWrite)
	t.Responses += u.Responses
}

// addTokens adds two counts, saturating: a forged transcript must not
// wrap a total around.
func addTokens(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0) // a count is never negative
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Problem says why t is not what reading a transcript gives ("" when it
// is): a count below zero, or a reason that is not one line of text.
// A record's replay refuses such a read.
func (t *Tokens) Problem() string {
	if t == nil {
		return ""
	}
	switch {
	case t.Input < 0 || t.Output < 0 || t.CacheRead < 0 || t.CacheWrite < 0 || t.Responses < 0:
		return "a token count below zero"
	case !reasonText(t.Unread) || !reasonText(t.Unknown):
		return "a reason that is not one line of text"
	}
	return ""
}

// reasonText: at most 500 bytes, no control characters.
func reasonText(s string) bool {
	if len(s) > 500 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return false
		}
	}
	return true
}

// TokenUse is what a workflow's agents used, in total and by phase. Only
// agents that ended are counted: a running agent's tokens are read when
// it stops.
type TokenUse struct {
	// Total sums the agents whose tokens are known.
	Total Tokens `json:"total"`
	// Known is how many agents Total counts; Partial how many of them
	// had part of their transcript unread (Total is then a lower bound).
	Known   int `json:"agents_known"`
	Partial int `json:"agents_partial"`
	// Unknown is how many agents ended with their tokens unknown, and
	// Why says why, most common first.
	Unknown int            `json:"agents_unknown"`
	Why     []UnknownCount `json:"unknown_why"`
	// Phases are the workflow's phases in the order their first agent
	// was launched.
	Phases []PhaseTokens `json:"phases"`
}

// UnknownCount is one reason tokens are unknown and how many agents it
// concerns.
type UnknownCount struct {
	Why    string `json:"why"`
	Agents int    `json:"agents"`
}

// PhaseTokens is one phase's agents' tokens.
type PhaseTokens struct {
	Phase   string `json:"phase"`
	Tokens  Tokens `json:"tokens"`
	Known   int    `json:"agents_known"`
	Unknown int    `json:"agents_unknown"`
}

// NotRecorded is why an agent that ended has no tokens: its completion
// came without a SubagentStop (a failed launch, a stale one, a workflow
// older than token counting).
const NotRecorded = "no SubagentStop recorded them"

// Count adds one launch's tokens (t nil: none recorded) to u under phase.
// ended is false for a launch still running, which is not counted.
func (u *TokenUse) Count(phase string, t *Tokens, ended bool) {
	if !ended {
		return
	}
	i := 0
	for i < len(u.Phases) && u.Phases[i].Phase != phase {
		i++
	}
	if i == len(u.Phases) {
		u.Phases = append(u.Phases, PhaseTokens{Phase: phase})
	}
	u.Phases[i].Count(t)
	if !t.Known() {
		why := NotRecorded
		if t != nil {
			why = t.Unknown
		}
		u.Unknown++
		j := 0
		for j < len(u.Why) && u.Why[j].Why != why {
			j++
		}
		if j == len(u.Why) {
			u.Why = append(u.Why, UnknownCount{Why: why})
		}
		u.Why[j].Agents++
		for j > 0 && u.Why[j].Agents > u.Why[j-1].Agents {
			u.Why[j], u.Why[j-1] = u.Why[j-1], u.Why[j]
			j--
		}
		return
	}
	u.Known++
	if t.Unread != "" {
		u.Partial++
	}
	u.Total.add(*t)
}

// Count adds one ended launch's tokens (nil: none recorded) to p.
func (p *PhaseTokens) Count(t *Tokens) {
	if !t.Known() {
		p.Unknown++
		return
	}
	p.Known++
	p.Tokens.add(*t)
}

// UnknownText says for how many agents tokens are unknown and why:
// "unknown for 2 agents (transcript missing)"; "" when none.
func (u TokenUse) UnknownText() string {
	if u.Unknown == 0 {
		return ""
	}
	whys := make([]string, 0, len(u.Why))
	for _, w := range u.Why {
		if len(u.Why) == 1 {
			whys = append(whys, w.Why)
		} else {
			whys = append(whys, fmt.Sprintf("%d: %s", w.Agents, w.Why))
		}
	}
	return fmt.Sprintf("unknown for %s (%s)", Plural(u.Unknown, "agent"), strings.Join(whys, "; "))
}

// Summary is the totals on one line: "41.2k tokens (input 2.1k, output
// 103, cache read 30.8k, cache write 8.2k) over 3 agents; tokens unknown
// for 1 agent (transcript missing)". "" when no agent has ended.
func (u TokenUse) Summary() string {
	if u.Known == 0 && u.Unknown == 0 {
		return ""
	}
	var parts []string
	if u.Known > 0 {
		at := ""
		if u.Partial > 0 {
			at = "at least "
		}
		parts = append(parts, fmt.Sprintf("%s%s tokens (%s) over %s", at, CompactTokens(u.Total.Total()), u.Total.Breakdown(), Plural(u.Known, "agent")))
	}
	if t := u.UnknownText(); t != "" {
		parts = append(parts, "tokens "+t)
	}
	return strings.Join(parts, "; ")
}

// PhaseText is one phase's tokens, short: "12.3k", "12.3k + 2 unknown",
// "unknown" when none of its agents' is known.
func (p PhaseTokens) PhaseText() string {
	switch {
	case p.Known == 0:
		return "unknown"
	case p.Unknown > 0:
		return fmt.Sprintf("%s + %d unknown", CompactTokens(p.Tokens.Total()), p.Unknown)
	}
	return CompactTokens(p.Tokens.Total())
}

// Breakdown names the four counts: "input 2.1k, output 103, cache read
// 30.8k, cache write 8.2k".
func (t Tokens) Breakdown() string {
	return fmt.Sprintf("input %s, output %s, cache read %s, cache write %s", CompactTokens(t.Input), CompactTokens(t.Output), CompactTokens(t.CacheRead), CompactTokens(t.CacheWrite))
}

// Short is one agent's tokens for a table cell or a status row: "16.6k",
// "≥16.6k" when part of its transcript was unread, "unknown" with why,
// "-" when none were recorded and it never stopped.
func (t *Tokens) Short() string {
	switch {
	case t == nil:
		return "-"
	case t.Unknown != "":
		return "unknown (" + t.Unknown + ")"
	case t.Unread != "":
		return "≥" + CompactTokens(t.Total())
	}
	return CompactTokens(t.Total())
}

// CompactTokens writes a count for people: 950, 12.3k, 4.56M.
func CompactTokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 999_950: // not "1000.0k"
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	case n < 999_995_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	}
	return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + "G"
}
