package coordinate

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// Tests of the writer rule (writes.go): a reported artifact counts
// only if the reporting agent wrote it with its Write tool and the file
// still holds what that write left.

func TestCoordArtifactWriter(t *testing.T) {
	r1, r2 := ceReports+"001_sessions.md", ceReports+"002_tokens.md"
	// earlier is a research-specialist launched before the one under test
	// that writes r1 and has it verified.
	earlier := func(h *ceHarness) {
		h.t.Helper()
		h.launch(ResearchSpecialist, "toolu_E", "Topic 1: sessions")
		h.write(ResearchSpecialist, "agent-E", r1)
		if o := h.stop(ResearchSpecialist, "agent-E", "REPORT_CREATED: "+r1); o.Verdict != gates.Allow {
			h.t.Fatalf("earlier report: %v %q", o.Verdict, o.Reason)
		}
	}
	at := func(h *ceHarness, id string) string { return stamp(h.c.byTool(id).Started) }
	cases := []struct {
		name   string
		before func(h *ceHarness) // before the reporter (agent-R, toolu_R) is launched
		during func(h *ceHarness) // while it runs, before it ends
		report string
		want   func(h *ceHarness) string // the block's reason; nil: accepted
	}{
		{
			name:   "written by the agent's Write",
			during: func(h *ceHarness) { h.write(ResearchSpecialist, "agent-R", r1) },
			report: r1,
		},
		{
			name: "rewritten by the agent: the last write counts",
			during: func(h *ceHarness) {
				h.write(ResearchSpecialist, "agent-R", r1)
				h.sums[r1] = "second-draft"
				h.write(ResearchSpecialist, "agent-R", r1)
			},
			report: r1,
		},
		{
			name:   "written by Bash",
			during: func(h *ceHarness) { h.files[r1] = 300 },
			report: r1,
			want: func(*ceHarness) string {
				return r1 + " was not written with the Write tool by this agent: a file created by a shell command does not count; write it with the Write tool."
			},
		},
		{
			// Mtimes are not read: a file from an earlier run, re-touched or
			// with a future mtime, has no write record of this workflow.
			name:   "left from an earlier run",
			before: func(h *ceHarness) { h.files[r1] = 300 },
			report: r1,
			want: func(*ceHarness) string {
				return r1 + " was not written with the Write tool by this agent: a file created by a shell command does not count"
			},
		},
		{
			name: "written by another agent",
			during: func(h *ceHarness) {
				h.launch(ResearchSpecialist, "toolu_O", "Topic 2: tokens")
				h.write(ResearchSpecialist, "agent-O", r1)
			},
			report: r1,
			want: func(*ceHarness) string {
				return r1 + " was written by research-specialist (agent agent-O), not by this agent: an agent reports only the file it wrote itself; write your own report with the Write tool."
			},
		},
		{
			name:   "written before the launch",
			before: earlier,
			report: r1,
			want: func(h *ceHarness) string {
				return fmt.Sprintf("%s was written by an earlier launch (research-specialist (agent agent-E), at %s), before this agent was launched at %s: it is not this run's work; write it anew with the Write tool.",
					r1, stamp(h.c.Writes[0].Files[0].At), at(h, "toolu_R"))
			},
		},
		{
			name:   "hard-linked from another report",
			before: earlier,
			during: func(h *ceHarness) {
				h.files[r2] = h.files[r1]
				h.sums[r2] = h.sumOf(r1)
			},
			report: r2,
			want: func(*ceHarness) string {
				return r2 + " was not written with the Write tool by this agent and has the same content as " + r1 + ", written by research-specialist (agent agent-E): a hard link or copy of another artifact does not count; write it with the Write tool."
			},
		},
		{
			name:   "another report's content written again",
			before: earlier,
			during: func(h *ceHarness) {
				h.sums[r2] = h.sumOf(r1)
				h.write(ResearchSpecialist, "agent-R", r2)
			},
			report: r2,
			want: func(*ceHarness) string {
				return r2 + " has the same content as " + r1 + ", written by research-specialist (agent agent-E): a copy of another artifact does not count; write this run's own report with the Write tool."
			},
		},
		{
			name: "changed after the write",
			during: func(h *ceHarness) {
				h.write(ResearchSpecialist, "agent-R", r1)
				h.sums[r1] = "appended-by-sed"
			},
			report: r1,
			want: func(h *ceHarness) string {
				return fmt.Sprintf("%s was changed after research-specialist (agent agent-R) last wrote it with Write or Edit at %s (it no longer holds what that write left): write it again with the Write tool, and change it only with Write or Edit.",
					r1, stamp(h.c.Writes[len(h.c.Writes)-1].Files[0].At))
			},
		},
		{
			name: "unreadable when verified",
			during: func(h *ceHarness) {
				h.write(ResearchSpecialist, "agent-R", r1)
				h.env.Hash = func(string) (string, string, error) { return r1, "", errors.New(r1 + " is larger than 16777216 bytes") }
			},
			report: r1,
			want: func(*ceHarness) string {
				return r1 + " cannot be read to check who wrote it (" + r1 + " is larger than 16777216 bytes); write it with the Write tool."
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newCE(t, ceFlatDesc, ScopeResearchOnly)
			if tc.before != nil {
				tc.before(h)
			}
			reports := append([]string(nil), h.c.Reports...)
			if o := h.launch(ResearchSpecialist, "toolu_R", "Topic 2: tokens"); o.Verdict != gates.Allow {
				t.Fatalf("launch: %v %q", o.Verdict, o.Reason)
			}
			if tc.during != nil {
				tc.during(h)
			}
			o := h.stop(ResearchSpecialist, "agent-R", "Findings below.\nREPORT_CREATED: "+ceRoot+"/"+tc.report)
			if tc.want == nil {
				if o.Verdict != gates.Allow || o.Reason != "" {
					t.Fatalf("verdict %v, reason %q; want the report accepted", o.Verdict, o.Reason)
				}
				if !slices.Contains(h.c.Reports, tc.report) || h.c.byTool("toolu_R").Status != gates.Returned {
					t.Errorf("reports %v, launch %s; want %s verified and the launch returned", h.c.Reports, h.c.byTool("toolu_R").Status, tc.report)
				}
				return
			}
			want := "orch-hook: " + tc.want(h)
			if o.Verdict != gates.Block || !strings.HasPrefix(o.Reason, want) || !strings.HasSuffix(o.Reason, " Fix it, then reply with your complete report again, ending with the result line; the orchestrator cannot go on without it.") {
				t.Fatalf("verdict %v, reason\n  %q\nwant a block starting\n  %q", o.Verdict, o.Reason, want)
			}
			if !reflect.DeepEqual(h.c.Reports, reports) || h.c.Current != CResearch || h.c.byTool("toolu_R").Status != gates.Running {
				t.Errorf("a refused report counted: reports %v (were %v), state %s, launch %s", h.c.Reports, reports, h.c.Current, h.c.byTool("toolu_R").Status)
			}
		})
	}
}

// A supervisor's reports count when its own workers wrote them: a report
// of a worker of an earlier, failed supervisor does not.
func TestCoordSupervisorReportWriters(t *testing.T) {
	h := newCE(t, ceWideDesc, ScopeResearchAndPlan)
	_, _, ws := h.hierarchical(nil)
	h.stop(ResearchSupervisor, "agent-sup", "SUPERVISOR_FAILED: {\"errors\": [\"gave up\"]}")
	h.post("toolu_sup", "agent-sup")
	if o := h.launch(ResearchSupervisor, "toolu_sup2", "Research the 4 topics again"); o.Verdict != gates.Allow {
		t.Fatalf("second supervisor: %v %q", o.Verdict, o.Reason)
	}
	var reports []string
	var sum int64
	for i := 5; i <= 6; i++ {
		tu, aid, report := fmt.Sprintf("toolu_v%d", i), fmt.Sprintf("agent-v%d", i), fmt.Sprintf("%s%03d_again.md", ceReports, i)
		h.nested(ResearchSupervisor, "agent-sup2", ResearchSpecialist, tu, fmt.Sprintf("Topic %d: again", i))
		h.write(ResearchSpecialist, aid, report)
		if o := h.stop(ResearchSpecialist, aid, "REPORT_CREATED: "+report); o.Verdict != gates.Allow || o.Reason != "" {
			t.Fatalf("worker %s: %v %q", aid, o.Verdict, o.Reason)
		}
		reports = append(reports, report)
		sum += h.c.byTool(tu).duration()
	}
	o := h.stop(ResearchSupervisor, "agent-sup2", ceSupervisorText(append(reports, ws[0].report), ceSummary, sum))
	want := fmt.Sprintf("%s was written by an earlier launch (research-specialist (agent agent-w1), at %s), before this agent was launched at %s: it is not this run's work; list only the reports your workers wrote with the Write tool during this launch.",
		ws[0].report, stamp(h.c.Writes[0].Files[0].At), stamp(h.c.byTool("toolu_sup2").Started))
	if o.Verdict != gates.Block || !strings.Contains(o.Reason, want) {
		t.Fatalf("verdict %v, reason\n  %q\nwant a block containing\n  %q", o.Verdict, o.Reason, want)
	}
	if h.c.Current != CResearch {
		t.Errorf("state %s, want research", h.c.Current)
	}
	// Without the old report, the new workers' reports are verified.
	if o := h.stop(ResearchSupervisor, "agent-sup2", ceSupervisorText(reports, ceSummary, sum)); o.Verdict != gates.Allow || h.c.Current != CPlan {
		t.Errorf("verdict %v, reason %q, state %s; want plan", o.Verdict, o.Reason, h.c.Current)
	}
}

func TestCoordRecordWrite(t *testing.T) {
	r1 := ceReports + "001_a.md"
	write := func(h *ceHarness, call gates.Call) gates.Outcome {
		h.files[r1] = 10
		call.Event, call.Session = gates.PostToolUse, "sess-1"
		return h.do(call)
	}
	sub := gates.Call{Tool: "Write", AgentID: "agent-1", AgentType: gates.PluginPrefix + ResearchSpecialist, Path: ceRoot + "/" + r1}
	t.Run("recorded", func(t *testing.T) {
		for _, tool := range []string{"Write", "Edit", "NotebookEdit"} {
			h := newCE(t, ceFlatDesc, ScopeResearchOnly)
			call := sub
			call.Tool = tool
			o := write(h, call)
			want := []*AgentWrites{{AgentID: "agent-1", Agent: ResearchSpecialist, Files: []ArtifactWrite{{Path: r1, SHA256: h.sumOf(r1), At: h.env.Now}}}}
			if !o.Changed || o.Verdict != gates.Allow || o.Context != "" || !reflect.DeepEqual(h.c.Writes, want) {
				t.Errorf("%s: changed %v, verdict %v, context %q, writes %+v; want %+v", tool, o.Changed, o.Verdict, o.Context, h.c.Writes, want)
			}
			if !hasRecord(o, gates.RecUpdate, "write recorded: "+r1+" (sha256 "+h.sumOf(r1)[:12]+")") {
				t.Errorf("%s: records %+v; want the write logged", tool, o.Records)
			}
			// In the checkpoint's workflow section.
			b, _ := h.c.Encode()
			back, err := DecodeWorkflow(b)
			if err != nil || !reflect.DeepEqual(back.Writes, h.c.Writes) {
				t.Errorf("%s: writes after a round trip %+v (%v)", tool, back.Writes, err)
			}
		}
	})
	t.Run("same content again changes nothing; new content replaces the hash", func(t *testing.T) {
		h := newCE(t, ceFlatDesc, ScopeResearchOnly)
		write(h, sub)
		if o := write(h, sub); o.Changed || len(o.Records) != 0 {
			t.Errorf("the same content again: %+v; want no change", o)
		}
		h.sums[r1] = "edited"
		if o := write(h, sub); !o.Changed || len(h.c.Writes) != 1 || len(h.c.Writes[0].Files) != 1 || h.c.Writes[0].Files[0].SHA256 != "edited" || !h.c.Writes[0].Files[0].At.Equal(h.env.Now) {
			t.Errorf("an edit: changed %v, writes %+v; want one record with the new hash and time", o.Changed, h.c.Writes[0])
		}
	})
	t.Run("not recorded", func(t *testing.T) {
		for name, call := range map[string]gates.Call{
			"main thread":        {Tool: "Write", Path: ceRoot + "/" + r1},
			"outside the topic":  {Tool: "Write", AgentID: "agent-1", AgentType: gates.PluginPrefix + ImplementationExec, Path: ceRoot + "/src/main.go"},
			"unresolved":         {Tool: "Write", AgentID: "agent-1", Path: "/elsewhere/" + r1, Unresolved: true},
			"no path":            {Tool: "Write", AgentID: "agent-1"},
			"another tool":       {Tool: "Bash", AgentID: "agent-1", Command: "echo x > " + r1},
			"a failed Write":     {Event: gates.PostToolUseFailure, Tool: "Write", AgentID: "agent-1", Path: ceRoot + "/" + r1},
			"the specs neighbor": {Tool: "Write", AgentID: "agent-1", Path: ceRoot + "/specs/001_auth2/reports/x.md"},
		} {
			h := newCE(t, ceFlatDesc, ScopeResearchOnly)
			h.files[r1] = 10
			if call.Event == "" {
				call.Event = gates.PostToolUse
			}
			if o := h.do(call); o.Changed || len(o.Records) != 0 || len(h.c.Writes) != 0 {
				t.Errorf("%s: %+v, writes %+v; want nothing recorded", name, o, h.c.Writes)
			}
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		h := newCE(t, ceFlatDesc, ScopeResearchOnly)
		o := h.do(gates.Call{Event: gates.PostToolUse, Tool: "Write", AgentID: "agent-1", AgentType: gates.PluginPrefix + ResearchSpecialist, Path: ceRoot + "/" + ceReports + "gone.md"})
		if o.Changed || len(h.c.Writes) != 0 || !hasRecord(o, gates.RecError, "write not recorded: open "+ceReports+"gone.md: no such file") {
			t.Errorf("%+v, writes %+v; want nothing recorded and the error logged", o, h.c.Writes)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		h := newCE(t, ceFlatDesc, ScopeResearchOnly)
		for i := 0; i < MaxWritesPerAgent; i++ {
			f := fmt.Sprintf("%s%03d.md", ceReports, i)
			h.files[f] = 1
			if o := h.do(gates.Call{Event: gates.PostToolUse, Tool: "Write", AgentID: "agent-1", AgentType: gates.PluginPrefix + ResearchSpecialist, Path: ceRoot + "/" + f}); !o.Changed {
				t.Fatalf("write %d not recorded", i)
			}
		}
		h.files[ceReports+"last.md"] = 1
		o := h.do(gates.Call{Event: gates.PostToolUse, Tool: "Write", AgentID: "agent-1", AgentType: gates.PluginPrefix + ResearchSpecialist, Path: ceRoot + "/" + ceReports + "last.md"})
		if o.Changed || len(h.c.Writes[0].Files) != MaxWritesPerAgent || !hasRecord(o, gates.RecError, fmt.Sprintf("already wrote %d files", MaxWritesPerAgent)) {
			t.Errorf("write %d: changed %v, %d files; want it refused and logged", MaxWritesPerAgent+1, o.Changed, len(h.c.Writes[0].Files))
		}
	})
}
