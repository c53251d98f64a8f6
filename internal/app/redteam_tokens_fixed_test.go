package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

// TestRedTeamFixedVerifyImpossibleTokens: a record whose SubagentStop read
// holds tokens no transcript read can give (transcript.Sum clamps each
// count at 0 and saturates its sums; Unread is one of a few fixed
// phrases), with the checkpoints that follow agreeing, verifies "ok":
// here negative counts (3 × -2^62, whose Total wraps around to +2^62:
// gates.addTokens saturates only for b > 0, shown as "4611686018.43G
// tokens") and an Unread phrase holding a terminal escape. Reads are the
// record's word, but a read the binary could never have made is a
// forger's tell, as a malformed payload is for the hooks: replay should
// refuse tokens with a negative count (or Unknown/Unread text that is not
// one of transcript's phrases).
func TestRedTeamFixedVerifyImpossibleTokens(t *testing.T) {
	rec := recordRun(t)
	real := `"tokens":{"input":4403,"output":103,"cache_read":15403,"cache_write":13203,"responses":2}`
	forged := `"tokens":{"input":-4611686018427387904,"output":-4611686018427387904,"cache_read":-4611686018427387904,"responses":-2,"unread":"\u001b]0;pwned\u0007"}`
	i := lineOf(t, rec, state.EventAgentDone, "verified")
	for !strings.Contains(rec.Log[i], `"checkpoint"`) {
		i++
	}
	r := clone(t, rec)
	n := 0
	for j := i; j < len(r.Log); j++ {
		n += strings.Count(r.Log[j], real)
		r.Log[j] = strings.ReplaceAll(r.Log[j], real, forged)
	}
	if n < 2 {
		t.Fatalf("tokens found %d times from line %d", n, i+1)
	}
	rechain(t, r, i+1)
	r = forge(t, r, r.Log)
	sum, err := app.Verify(r)
	t.Logf("verify: %v", err)
	if err == nil {
		var u gates.TokenUse
		for _, a := range sum.Agents {
			u.Count("x", a.Tokens, true)
		}
		b, _ := json.Marshal(u.Total)
		t.Errorf("a record whose read holds negative token counts verifies; its agents' total: %s (%s)", b, u.Summary())
	}
}
