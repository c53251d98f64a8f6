package coordinate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// fail launches agent in the current state and fails it once: its Agent
// call fails (transient), or it returns twice without what it owes
// (permanent). It returns what the orchestrator is told, and the outcome
// that told it.
func (h *ceHarness) fail(agent, class string) (string, gates.Outcome) {
	h.t.Helper()
	tu, aid := h.ids()
	if o := h.launch(agent, tu, "do the "+string(h.c.Current)+" step"); o.Verdict != gates.Allow {
		h.t.Fatalf("launch of %s in %s: %s", agent, h.c.Current, o.Reason)
	}
	if class == gates.Transient {
		o := h.do(gates.Call{Event: gates.PostToolUseFailure, Session: "sess-1", Tool: "Agent", ToolUseID: tu, Failure: "API Error: 529 overloaded"})
		return o.Context, o
	}
	if o := h.stop(agent, aid, "Done."); o.Verdict != gates.Block {
		h.t.Fatalf("%s's first report without its line was not nudged: %+v", agent, o)
	}
	s := h.stop(agent, aid, "Done, really.")
	o := h.post(tu, aid)
	o.Files = s.Files
	return o.Context, o
}

// resolve is the user typing /orch-hook:resolve option.
func (h *ceHarness) resolve(option string) gates.Outcome {
	h.n++
	return h.do(gates.Call{Event: gates.UserPromptSubmit, Session: "sess-1", PromptID: "p" + option + string(rune('0'+h.n)), Prompt: "/orch-hook:resolve " + option})
}

// escalate fails agent three times in the current state.
func (h *ceHarness) escalate(agent string) gates.Outcome {
	h.t.Helper()
	var o gates.Outcome
	for i, class := range []string{gates.Transient, gates.Permanent, gates.Transient} {
		var line string
		line, o = h.fail(agent, class)
		if i < 2 && !strings.Contains(line, "relaunch it (retry ") {
			h.t.Fatalf("failure %d of %s: %q", i+1, agent, line)
		}
	}
	if h.c.Escalation == nil {
		h.t.Fatalf("%s failed 3 times in %s without an escalation", agent, h.c.Current)
	}
	return o
}

// toTest runs a full-implementation workflow to its test state.
func toTest(t *testing.T) *ceHarness {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	h.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	h.run(PlanArchitect, cePlan, "PLAN_CREATED: "+cePlan)
	h.run(ImplementationExec, "", "IMPLEMENTATION STATUS: COMPLETE")
	if h.c.Current != CTest {
		t.Fatalf("state %s", h.c.Current)
	}
	return h
}

// TestCoordEscalation: a work that fails a third time in a state (either
// class) escalates: nothing runs, the session may stop, ESCALATION.md has
// seed 002's five parts, and the user's /orch-hook:resolve decides.
func TestCoordEscalation(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	h.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	h.run(PlanArchitect, cePlan, "PLAN_CREATED: "+cePlan)
	line, _ := h.fail(ImplementationExec, gates.Transient)
	if want := "[coordinate implement] implementation-executor launch failed (API Error: 529 overloaded); relaunch it (retry 1/2, a transient failure)."; line != want {
		t.Errorf("first failure: %q, want %q", line, want)
	}
	if _, failed, n, class, ok := h.c.ErrorState(); !ok || failed != CImplement || n != 1 || class != gates.Transient {
		t.Errorf("error_state %s %d %s %v", failed, n, class, ok)
	}
	line, _ = h.fail(ImplementationExec, gates.Permanent)
	if !strings.HasSuffix(line, "relaunch it (retry 2/2, a permanent failure).") {
		t.Errorf("second failure: %q", line)
	}
	line, o := h.fail(ImplementationExec, gates.Transient)
	if !strings.HasPrefix(line, "[coordinate implement] -> escalated | implementation-executor failed 3 times in state implement") || !strings.Contains(line, "/orch-hook:resolve retry|abort") {
		t.Errorf("third failure: %q", line)
	}
	escalations := 0
	for _, r := range o.Records {
		if EscalationRecord(r.Reason) {
			escalations++
		}
	}
	if escalations != 1 {
		t.Errorf("%d records read as the escalation's (metrics count them): %+v", escalations, o.Records)
	}
	md := o.Files[EscalationFile]
	for _, want := range []string{"**What failed**: implementation-executor, 3 times in state implement", "**Expected**: `IMPLEMENTATION STATUS: COMPLETE`", "**Found**: launch failed (API Error: 529 overloaded) (transient)", "| 2 | permanent |", "1. `/orch-hook:resolve retry`", "2. `/orch-hook:resolve abort`", "`orch-hook log --type agent_complete --type error`"} {
		if !strings.Contains(md, want) {
			t.Errorf("ESCALATION.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "resolve skip") {
		t.Error("skip offered for implement")
	}
	tu, _ := h.ids()
	if o := h.launch(ImplementationExec, tu, "again"); o.Verdict != gates.Deny || !strings.Contains(o.Reason, "the workflow is escalated") {
		t.Errorf("launch while escalated: %+v", o)
	}
	if o := h.do(gates.Call{Event: gates.Stop, Session: "sess-1"}); o.Verdict != gates.Allow {
		t.Errorf("Stop while escalated: %+v", o)
	}
	if o := h.resolve("skip"); o.Verdict != gates.Block || !strings.Contains(o.Reason, "skip is not possible for a failure in implement") {
		t.Errorf("skip at implement: %+v", o)
	}
	o = h.resolve("retry")
	if h.c.Escalation != nil || h.c.Failures != nil || !strings.Contains(o.Context, "[RESOLVE] retry | implementation-executor's failure count in implement is reset") {
		t.Errorf("retry: %q, escalation %+v", o.Context, h.c.Escalation)
	}
	if _, _, _, _, ok := h.c.ErrorState(); ok {
		t.Error("error_state not cleared")
	}
	h.run(ImplementationExec, "", "IMPLEMENTATION STATUS: COMPLETE")
	if h.c.Current != CTest {
		t.Fatalf("state %s after the retry", h.c.Current)
	}
}

// TestCoordEscalationSkips drives every skip row: test -> document
// (full-implementation), test -> complete (debug-only), debug -> complete,
// document -> complete; each recorded as a known issue.
func TestCoordEscalationSkips(t *testing.T) {
	h := toTest(t)
	h.escalate(TestSpecialist)
	o := h.resolve("skip")
	if h.c.Current != CDocument || !strings.Contains(o.Context, "[RESOLVE] skip -> document | test skipped after test-specialist failed 3 times") {
		t.Fatalf("skip at test: state %s, %q", h.c.Current, o.Context)
	}
	h.escalate(DocWriter)
	h.resolve("skip")
	if h.c.Current != CComplete || len(h.c.KnownIssues) != 2 || !strings.Contains(h.c.Outcome, "known issue") {
		t.Fatalf("skip at document: state %s, known issues %v, outcome %q", h.c.Current, h.c.KnownIssues, h.c.Outcome)
	}

	d := newCE(t, "Fix the login bug", ScopeDebugOnly)
	d.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	for d.c.Current == CResearch {
		d.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	}
	d.run(DebugAnalyst, ceDebug+"001_debug.md", "REPORT_CREATED: "+ceDebug+"001_debug.md")
	if d.c.Current != CTest {
		t.Fatalf("debug-only: state %s", d.c.Current)
	}
	d.escalate(TestSpecialist)
	d.resolve("skip")
	if d.c.Current != CComplete {
		t.Fatalf("debug-only skip at test: state %s", d.c.Current)
	}

	g := newCE(t, "Fix the login bug", ScopeDebugOnly)
	g.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	for g.c.Current == CResearch {
		g.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	}
	g.escalate(DebugAnalyst)
	if o := g.resolve("abort"); g.c.Current != CComplete || !strings.Contains(g.c.Outcome, "aborted by the user at debug") || !strings.Contains(o.Context, "[RESOLVE] abort") {
		t.Fatalf("abort: state %s outcome %q", g.c.Current, g.c.Outcome)
	}
	k := newCE(t, "Fix the login bug", ScopeDebugOnly)
	k.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	for k.c.Current == CResearch {
		k.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	}
	k.escalate(DebugAnalyst)
	k.resolve("skip")
	if k.c.Current != CComplete || len(k.c.KnownIssues) != 1 {
		t.Fatalf("skip at debug: state %s known %v", k.c.Current, k.c.KnownIssues)
	}
}
