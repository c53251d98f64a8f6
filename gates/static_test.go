package gates

import "testing"

// TestStartFromPrompt: the request is everything after the command name,
// whatever space separates them; an empty one is refused with the usage.
func TestStartFromPrompt(t *testing.T) {
	for _, tc := range []struct{ prompt, start, reason string }{
		{"/orch-hook:orchestrate add a flag", "add a flag", ""},
		{"/orch-hook:orchestrate\nadd a flag\nand its test", "add a flag\nand its test", ""},
		{"  /orch-hook-orchestrate\tadd a flag ", "add a flag", ""},
		{"/orch-hook:coordinate --scope research-only why is it slow", "--scope research-only why is it slow", ""},
		{"/orch-hook:orchestrate", "", "orch-hook: say what to build: /orch-hook:orchestrate <request>."},
		{"/orch-hook:coordinate   ", "", "orch-hook: say what to research or build: /orch-hook:coordinate [--scope S] <description>."},
	} {
		o := StartFromPrompt(&Call{Event: UserPromptSubmit, Prompt: tc.prompt})
		if o.Start != tc.start || o.Reason != tc.reason || (tc.reason != "") != (o.Verdict == Block) {
			t.Errorf("%q: start %q, verdict %v, reason %q; want start %q, reason %q", tc.prompt, o.Start, o.Verdict, o.Reason, tc.start, tc.reason)
		}
	}
}
