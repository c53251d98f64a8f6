package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// TestTypedFollowUpReadAsTyped: a follow-up the user types is read by
// gates.UserCommand like every other typed command: the kind is the first
// word of its arguments, whatever white space separates the words, and the
// request is the rest (a request of several lines included), as the start
// reads /orch-hook:orchestrate (gates.TestStartFromPrompt).
func TestTypedFollowUpReadAsTyped(t *testing.T) {
	for _, tc := range []struct{ prompt, state, request string }{
		{"/orch-hook:follow-up partial Support counting several files", S2, "partial: Support counting several files"},
		{"/orch-hook:follow-up\tpartial Support counting several files", S2, "partial: Support counting several files"},
		{"/orch-hook:follow-up partial\nSupport counting several files\nand stdin", S2, "partial: Support counting several files\nand stdin"},
		{"/orch-hook:follow-up\nlightweight\tfix the typo", S4a, "lightweight: fix the typo"},
		{"/orch-hook-follow-up  partial   more", S2, "partial: more"},
	} {
		h := driveTo(t, Complete)
		o := h.user(tc.prompt)
		if o.Verdict != gates.Allow || string(h.w.Current) != tc.state || len(h.w.FollowUps) != 1 || h.w.FollowUps[0] != tc.request {
			t.Errorf("%q: verdict %v (%s), state %s, follow-ups %q; want %s with %q", tc.prompt, o.Verdict, o.Reason, h.w.Current, h.w.FollowUps, tc.state, tc.request)
		}
	}
}
