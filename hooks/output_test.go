package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// allEvents are the events Claude Code sends (see testdata/payloads), plus
// one it may add later.
var allEvents = []string{gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure, gates.SubagentStart, gates.SubagentStop, gates.Stop,
	gates.UserPromptSubmit, gates.UserPromptExpansion, gates.SessionStart, gates.SessionEnd, "PostToolBatch", "PreCompact", "PostCompact", "Notification"}

func render(t *testing.T, event string, d Decision) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, event, d); err != nil {
		t.Fatalf("Render(%s, %+v): %v", event, d, err)
	}
	return buf.String()
}

func TestRenderAllowIsSilent(t *testing.T) {
	for _, ev := range allEvents {
		if out := render(t, ev, Decision{}); out != "" {
			t.Errorf("allow on %s wrote %q", ev, out)
		}
		// A reason without a verdict is still an allow.
		if out := render(t, ev, Decision{Reason: "fine"}); out != "" {
			t.Errorf("allow with a reason on %s wrote %q", ev, out)
		}
	}
	// Context where Claude Code does not read additionalContext: nothing.
	for _, ev := range []string{gates.Stop, gates.SubagentStop, gates.SessionEnd, gates.UserPromptExpansion, "PostToolBatch", "Notification"} {
		if out := render(t, ev, Decision{Context: "note"}); out != "" {
			t.Errorf("context on %s wrote %q", ev, out)
		}
	}
}

func TestRenderExact(t *testing.T) {
	const reason = `Plan first: run "/orch-hook:plan" <then> retry & see docs/é.md` + "\n" + `second line`
	const reasonJSON = `"Plan first: run \"/orch-hook:plan\" <then> retry & see docs/é.md\nsecond line"`
	tests := []struct {
		name  string
		event string
		d     Decision
		want  string
	}{
		{"PreToolUse deny", gates.PreToolUse, Decision{Deny: true, Reason: reason},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + reasonJSON + `}}`},
		{"PreToolUse deny with context", gates.PreToolUse, Decision{Deny: true, Reason: "R", Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R","additionalContext":"C"}}`},
		{"Stop block", gates.Stop, Decision{Block: true, Reason: reason},
			`{"decision":"block","reason":` + reasonJSON + `}`},
		{"SubagentStop block", gates.SubagentStop, Decision{Block: true, Reason: "R"},
			`{"decision":"block","reason":"R"}`},
		{"Stop deny renders as a block", gates.Stop, Decision{Deny: true, Reason: "R"},
			`{"decision":"block","reason":"R"}`},
		{"Stop block drops context", gates.Stop, Decision{Block: true, Reason: "R", Context: "C"},
			`{"decision":"block","reason":"R"}`},
		{"UserPromptSubmit block", gates.UserPromptSubmit, Decision{Block: true, Reason: "R"},
			`{"decision":"block","reason":"R"}`},
		{"UserPromptSubmit block with context", gates.UserPromptSubmit, Decision{Block: true, Reason: "R", Context: "C"},
			`{"decision":"block","reason":"R","hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"C"}}`},
		{"PostToolUse feedback", gates.PostToolUse, Decision{Block: true, Reason: "R"},
			`{"decision":"block","reason":"R"}`},
		{"PostToolUse context", gates.PostToolUse, Decision{Context: reason},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":` + reasonJSON + `}}`},
		{"PostToolUseFailure context", gates.PostToolUseFailure, Decision{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"C"}}`},
		{"UserPromptSubmit context", gates.UserPromptSubmit, Decision{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"C"}}`},
		{"SessionStart context", gates.SessionStart, Decision{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"C"}}`},
		{"SubagentStart context", gates.SubagentStart, Decision{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"C"}}`},
		{"PreToolUse context only", gates.PreToolUse, Decision{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"C"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, tt.event, tt.d)
			if got != tt.want+"\n" {
				t.Errorf("Render:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Whatever the decision, the output is empty or one line of JSON, and it
// never says "allow": an explicit allow would skip the user's own
// permission prompts.
func TestRenderNeverAllows(t *testing.T) {
	for _, ev := range allEvents {
		for _, deny := range []bool{false, true} {
			for _, block := range []bool{false, true} {
				for _, reason := range []string{"", "R"} {
					for _, ctx := range []string{"", "C"} {
						d := Decision{Deny: deny, Block: block, Reason: reason, Context: ctx}
						out := render(t, ev, d)
						if strings.Contains(strings.ToLower(out), "allow") {
							t.Errorf("%s %+v wrote %q", ev, d, out)
						}
						if out == "" {
							if deny || block {
								t.Errorf("%s %+v: a refusal wrote nothing", ev, d)
							}
							continue
						}
						if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
							t.Errorf("%s %+v: not one line: %q", ev, d, out)
						}
						var o struct {
							Decision           *string `json:"decision"`
							HookSpecificOutput *struct {
								HookEventName      string  `json:"hookEventName"`
								PermissionDecision *string `json:"permissionDecision"`
							} `json:"hookSpecificOutput"`
						}
						if err := json.Unmarshal([]byte(out), &o); err != nil {
							t.Fatalf("%s %+v: %v: %q", ev, d, err, out)
						}
						if o.Decision != nil && *o.Decision != "block" {
							t.Errorf("%s: decision %q", ev, *o.Decision)
						}
						if h := o.HookSpecificOutput; h != nil {
							if h.HookEventName != ev {
								t.Errorf("%s: hookEventName %q", ev, h.HookEventName)
							}
							if h.PermissionDecision != nil && (*h.PermissionDecision != "deny" || ev != gates.PreToolUse) {
								t.Errorf("%s: permissionDecision %q", ev, *h.PermissionDecision)
							}
						}
					}
				}
			}
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

func TestRenderWriteError(t *testing.T) {
	if err := Render(failingWriter{}, gates.Stop, Decision{Block: true, Reason: "R"}); err == nil || !strings.Contains(err.Error(), "stdout closed") {
		t.Errorf("Render to a broken writer: %v", err)
	}
	if err := Render(failingWriter{}, gates.Stop, Decision{}); err != nil {
		t.Errorf("allow wrote to the writer: %v", err)
	}
}
