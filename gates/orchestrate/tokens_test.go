package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// The tokens a SubagentStop read (Env.Tokens) are kept with the agent's
// launch: at once for a background agent, through its pending stop for a
// foreground one; a later stop's (after a nudge) replace them. Nothing is
// decided on them.
func TestTokensKeptWithTheLaunch(t *testing.T) {
	first := &gates.Tokens{Input: 10, Output: 2, CacheRead: 30, CacheWrite: 40, Responses: 1}
	last := &gates.Tokens{Input: 20, Output: 5, CacheRead: 60, CacheWrite: 40, Responses: 2}

	t.Run("background", func(t *testing.T) {
		h := newHarness(t)
		r := h.launch(Analyst, "Analyze the request")
		h.tokens = first
		r.finish("clear.\n\n" + LineClear)
		h.expect(S2)
		if got := h.w.Launches[0].Tokens; got == nil || *got != *first || got == first {
			t.Errorf("launch tokens = %+v, want a copy of %+v", got, first)
		}
	})
	t.Run("foreground: through the pending stop", func(t *testing.T) {
		h := newHarness(t)
		h.fg = true
		r := h.launch(Analyst, "Analyze the request")
		h.tokens = first
		r.stop("clear.\n\n" + LineClear)
		if len(h.w.Pending) != 1 || h.w.Pending[0].Tokens == nil || *h.w.Pending[0].Tokens != *first {
			t.Fatalf("pending stops = %+v, want one holding %+v", h.w.Pending, first)
		}
		h.tokens = nil // PostToolUse reads no transcript
		r.post("clear.\n\n" + LineClear)
		if got := h.w.Launches[0].Tokens; got == nil || *got != *first || len(h.w.Pending) != 0 {
			t.Errorf("launch tokens = %+v (pending %d), want %+v", got, len(h.w.Pending), first)
		}
	})
	t.Run("nudged: the last stop's count", func(t *testing.T) {
		h := newHarness(t)
		r := h.launch(Analyst, "Analyze the request")
		h.tokens = first
		if o := r.stop("no result line"); o.Verdict != gates.Block {
			t.Fatalf("the stop without a result line: %+v, want a block", o)
		}
		h.tokens = last
		r.finish(LineClear)
		if got := h.w.Launches[0].Tokens; got == nil || *got != *last {
			t.Errorf("launch tokens = %+v, want %+v", got, last)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		h := newHarness(t)
		r := h.launch(Analyst, "Analyze the request")
		h.tokens = &gates.Tokens{Unknown: "transcript missing"}
		r.finish(LineClear)
		h.expect(S2) // a missing transcript changes nothing of the decision
		u := h.w.TokenUse()
		if u.Known != 0 || u.Unknown != 1 || u.UnknownText() != "unknown for 1 agent (transcript missing)" {
			t.Errorf("TokenUse = %+v (%q)", u, u.UnknownText())
		}
	})
}

// The same workflow decides the same with tokens and without: they are
// informational.
func TestTokensDecideNothing(t *testing.T) {
	with, without := newHarness(t), newHarness(t)
	with.tokens = &gates.Tokens{Input: 1}
	with.to(S4b)
	without.to(S4b)
	for i, l := range with.w.Launches {
		w := without.w.Launches[i]
		if l.Agent != w.Agent || l.Status != w.Status || l.Result != w.Result || l.Tokens == nil || w.Tokens != nil {
			t.Errorf("launch %d: %+v / %+v", i, l, w)
		}
	}
	if with.w.Current != without.w.Current || len(with.w.Launches) != len(without.w.Launches) {
		t.Errorf("%s / %s", with.w.Current, without.w.Current)
	}
}

// TokenUse counts the agents that ended, by phase: the steps before the
// plan by their step, the implementation loop by its plan phase.
func TestTokenUseByPhase(t *testing.T) {
	h := newHarness(t)
	h.tokens = &gates.Tokens{Input: 100, Output: 10, CacheRead: 1000, CacheWrite: 50, Responses: 2}
	h.to(S4b)
	running := h.launch(Quality, "Phase 1 quality gate") // in flight: not counted
	_ = running
	u := h.w.TokenUse()
	// requirements-analyst (0a), task-planner (2), three implementers.
	if u.Known != 5 || u.Unknown != 0 || u.Total.Total() != 5*1160 || u.Total.Responses != 10 {
		t.Errorf("TokenUse = %+v", u)
	}
	var phases []string
	for _, p := range u.Phases {
		phases = append(phases, p.Phase)
	}
	if got := phases; len(got) != 3 || got[0] != "step 0a" || got[1] != "step 2" || got[2] != "phase 1" || u.Phases[2].Known != 3 || u.Phases[2].Tokens.Input != 300 {
		t.Errorf("phases = %+v", u.Phases)
	}
	if s := u.Summary(); s != "5.8k tokens (input 500, output 50, cache read 5.0k, cache write 250) over 5 agents" {
		t.Errorf("Summary = %q", s)
	}
}
