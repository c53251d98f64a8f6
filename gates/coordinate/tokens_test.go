package coordinate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// The tokens a SubagentStop read (Env.Tokens) are kept with the agent's
// launch, and move with what was recorded of the agent when a foreground
// agent's stop was first taken for another launch of its kind.
func TestCoordTokensFollowTheAgent(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeResearchOnly)
	r1, r2 := ceReports+"001_sessions.md", ceReports+"002_tokens.md"
	h.files[r1], h.files[r2] = 900, 700
	for _, tu := range []string{"toolu_A", "toolu_B"} {
		if o := h.launch(ResearchSpecialist, tu, "Topic"); o.Verdict != gates.Allow {
			t.Fatalf("launch %s: %v %q", tu, o.Verdict, o.Reason)
		}
	}
	h.write(ResearchSpecialist, "agent-A", r1)
	h.write(ResearchSpecialist, "agent-B", r2)
	tokA := &gates.Tokens{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1}
	tokB := &gates.Tokens{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Responses: 3}
	// B (launched second) returns first: its stop is taken for toolu_A
	// until B's PostToolUse ties it to toolu_B.
	h.env.Tokens = tokB
	h.stop(ResearchSpecialist, "agent-B", "REPORT_CREATED: "+r2)
	if l := h.c.byTool("toolu_A"); l.Tokens == nil || *l.Tokens != *tokB {
		t.Fatalf("after B's stop, toolu_A holds %+v; want B's guessed there", l.Tokens)
	}
	h.env.Tokens = nil
	h.post("toolu_B", "agent-B")
	h.env.Tokens = tokA
	h.stop(ResearchSpecialist, "agent-A", "REPORT_CREATED: "+r1)
	h.env.Tokens = nil
	h.post("toolu_A", "agent-A")
	for tu, want := range map[string]*gates.Tokens{"toolu_A": tokA, "toolu_B": tokB} {
		if got := h.c.byTool(tu).Tokens; got == nil || *got != *want {
			t.Errorf("%s: tokens %+v, want %+v", tu, got, want)
		}
	}
	u := h.c.TokenUse()
	if u.Known != 2 || len(u.Phases) != 1 || u.Phases[0].Phase != "research" || u.Total.Total() != 110 || u.Total.Responses != 4 {
		t.Errorf("TokenUse = %+v", u)
	}
}

// A stop whose transcript could not be read records why; the decision is
// the same.
func TestCoordTokensUnknown(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeResearchOnly)
	h.env.Tokens = &gates.Tokens{Unknown: "transcript missing"}
	ctx := h.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	if !strings.Contains(ctx, "report verified") {
		t.Errorf("context %q", ctx)
	}
	u := h.c.TokenUse()
	if u.Known != 0 || u.Unknown != 1 || u.Summary() != "tokens unknown for 1 agent (transcript missing)" {
		t.Errorf("TokenUse = %+v, %q", u, u.Summary())
	}
}
