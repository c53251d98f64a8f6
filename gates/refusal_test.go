package gates

import (
	"strings"
	"testing"
)

// TestRefusalText: the text of a refusal is its parts, each in its place,
// in every shape the workflows use (the reasons the model is told, which
// the workflows' tests and the testscripts pin byte for byte).
func TestRefusalText(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Refusal
		want string
	}{
		{"rule alone (a static rule)", Refusal{Rule: "only the user starts a workflow: ask them to type /orch-hook:orchestrate <request>."},
			"orch-hook: only the user starts a workflow: ask them to type /orch-hook:orchestrate <request>."},
		{"orchestrate, no gate", Refusal{Rule: "isolation on a workflow agent is not allowed.", Where: "step 4a, phase 1 of 2", Next: "launch code-implementer for Task 01"},
			"orch-hook: isolation on a workflow agent is not allowed. Now: step 4a, phase 1 of 2. Next: launch code-implementer for Task 01."},
		{"orchestrate, a gate and a task", Refusal{Gate: 3, Task: 2, Rule: "code-implementer before FAILURE_ANALYSIS is not allowed.", Where: "phase 1, step F1, fix iteration 1/3", Next: "launch task-planner for FAILURE_ANALYSIS"},
			"orch-hook: [Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed. Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS."},
		{"through an MCP tool", Refusal{Gate: 1, Via: "mcp__fs__write_file", Rule: "the orchestrator may not edit src/a.go now.", Where: "phase 1, step 4b", Next: "launch code-quality"},
			"orch-hook: (MCP tool mcp__fs__write_file) [Gate 1] the orchestrator may not edit src/a.go now. Now: phase 1, step 4b. Next: launch code-quality."},
		{"coordinate, inside a subagent: where, no next step", Refusal{Rule: "isolation on a workflow agent is not allowed.", Where: "coordinate workflow, state research"},
			"orch-hook: isolation on a workflow agent is not allowed. (coordinate workflow, state research.)"},
		{"a next step alone", Refusal{Rule: "x.", Next: "y"}, "orch-hook: x. Next: y."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if got := r.Text(); got != tc.want {
				t.Errorf("Text\n got %q\nwant %q", got, tc.want)
			}
			if r.Told() != r.Text() {
				t.Errorf("Told %q differs from Text without a detail", r.Told())
			}
			// Each part is in the text, where the model reads it.
			for _, part := range []string{r.Rule, r.Via, r.Where, r.Next} {
				if !strings.Contains(r.Text(), part) {
					t.Errorf("%q is not in %q", part, r.Text())
				}
			}
			if r.Next != "" && !strings.HasSuffix(r.Text(), " Next: "+r.Next+".") {
				t.Errorf("the next step %q does not end %q", r.Next, r.Text())
			}
			if r.Where != "" && r.Next != "" && !strings.Contains(r.Text(), " Now: "+r.Where+". Next: ") {
				t.Errorf("where %q is not said as Now in %q", r.Where, r.Text())
			}
		})
	}
}

// TestRefuse: the outcome tells the model the refusal with its detail;
// the record keeps the parts and the text without the detail; records
// the outcome already held stay first.
func TestRefuse(t *testing.T) {
	o := Outcome{}
	o.Log(Record{Type: RecUpdate, Reason: "stale launch cleared"})
	r := &Refusal{Gate: 2, Task: 4, Rule: "the plan changed.", Where: "phase 1, step 4c", Next: "tick the tasks", Detail: "--- a\n+++ b"}
	o.Refuse(Block, r, Record{AgentID: "a-1", ToolUseID: "t-1"})
	if o.Verdict != Block || o.Gate != 2 || o.Refusal != r {
		t.Fatalf("outcome %+v", o)
	}
	if want := "orch-hook: [Gate 2] the plan changed. Now: phase 1, step 4c. Next: tick the tasks.\n\n--- a\n+++ b"; o.Reason != want || r.Told() != want {
		t.Errorf("reason %q, want %q", o.Reason, want)
	}
	if len(o.Records) != 2 || o.Records[0].Type != RecUpdate {
		t.Fatalf("records %+v", o.Records)
	}
	rec := o.Records[1]
	if rec.Type != RecDeny || rec.Gate != 2 || rec.Task != 4 || rec.Refusal != r || rec.AgentID != "a-1" || rec.ToolUseID != "t-1" || rec.Reason != r.Text() || strings.Contains(rec.Reason, "---") {
		t.Errorf("record %+v", rec)
	}

	// Through an MCP tool: named in the reason and in the record.
	d := Refuse(Deny, &Refusal{Rule: "no.", Where: "here", Next: "there", Detail: "diff"}, Record{})
	ViaMCP("mcp__fs__write_file", &d)
	if want := "orch-hook: (MCP tool mcp__fs__write_file) no. Now: here. Next: there."; d.Reason != want+"\n\ndiff" || d.Records[0].Reason != want {
		t.Errorf("reason %q, record %q", d.Reason, d.Records[0].Reason)
	}
}
