package coordinate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// Tests of the coordinate workflow (decide.go), driven through
// Decide with hook calls shaped like the ones package hooks builds, and
// a fake project behind Env's Inspect, Hash, List and Read.

const (
	ceRoot     = "/home/user/project"
	ceTopicDir = "specs/001_auth"
	ceReports  = ceTopicDir + "/reports/"
	cePlan     = ceTopicDir + "/plans/001_auth_plan.md"
	ceDebug    = ceTopicDir + "/debug/"
	ceSumm     = ceTopicDir + "/summaries/"
	// ceFlatDesc has 2 research topics (flat research), ceWideDesc 4
	// (hierarchical: base 2, +1 migration, +2 distributed, clamped to 4).
	ceFlatDesc = "Research authentication patterns"
	ceWideDesc = "Research the distributed session store migration"
	ceStep     = 1500 * time.Millisecond // the clock's advance per event
)

// ceHarness is one coordinate workflow and the project it looks at.
type ceHarness struct {
	t     *testing.T
	c     *Workflow
	env   *Env
	files map[string]int64 // project files (relative path -> size)
	// sums are the files' content hashes where a test set them (a file
	// changed, or linked to another); others hash their path and size.
	sums map[string]string
	n    int // launch counter for tool_use and agent ids
}

func newCE(t *testing.T, desc, scope string) *ceHarness {
	t.Helper()
	h := &ceHarness{t: t, files: map[string]int64{}, sums: map[string]string{}}
	h.c = must(NewWorkflow(desc, scope, "sess-1", ceTopicDir))
	h.env = &Env{
		Root:    ceRoot,
		Now:     time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC),
		StopCap: gates.DefaultStopCap,
		Inspect: h.inspect,
		Hash:    h.hash,
		List:    h.list,
		Read: func(rel string) []byte {
			if _, ok := h.files[rel]; !ok {
				return nil
			}
			return []byte("# Plan\n\n### Phase 1: Core\ndependencies: []\n\n### Phase 2: Polish\ndependencies: [1]\n")
		},
	}
	if h.c.Current != CResearch || !reflect.DeepEqual(h.c.Completed, []gates.State{CInitialize}) {
		t.Fatalf("NewCoord: state %q, completed %v; want research after [initialize]", h.c.Current, h.c.Completed)
	}
	return h
}

// inspect resolves a path as the real Inspect does: absolute paths must be
// under the root, relative ones are relative to it, and `..` may not leave.
func (h *ceHarness) inspect(p string) FileCheck {
	rel := p
	if strings.HasPrefix(p, "/") {
		r, ok := strings.CutPrefix(p, ceRoot+"/")
		if !ok {
			return FileCheck{}
		}
		rel = r
	}
	rel = path.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return FileCheck{}
	}
	size, ok := h.files[rel]
	return FileCheck{Rel: rel, Inside: true, Exists: ok, Size: size}
}

// hash is Inspect's resolution and the file's content hash.
func (h *ceHarness) hash(p string) (string, string, error) {
	fc := h.inspect(p)
	switch {
	case !fc.Inside:
		return "", "", fmt.Errorf("%s is outside the project", p)
	case !fc.Exists:
		return fc.Rel, "", fmt.Errorf("open %s: no such file or directory", fc.Rel)
	}
	return fc.Rel, h.sumOf(fc.Rel), nil
}

func (h *ceHarness) sumOf(rel string) string {
	if s, ok := h.sums[rel]; ok {
		return s
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", rel, h.files[rel])))
	return hex.EncodeToString(sum[:])
}

// write is agent aid's Write of file (created, 2048 bytes, when new): the
// PostToolUse that records it.
func (h *ceHarness) write(agent, aid, file string) gates.Outcome {
	if _, ok := h.files[file]; !ok {
		h.files[file] = 2048
	}
	return h.do(gates.Call{Event: gates.PostToolUse, Session: "sess-1", Tool: "Write", ToolUseID: "toolu_write_" + aid, AgentID: aid, AgentType: gates.PluginPrefix + agent, Path: ceRoot + "/" + file})
}

func (h *ceHarness) list(dir string) []string {
	dir = strings.TrimSuffix(dir, "/")
	var out []string
	for f := range h.files {
		if path.Dir(f) == dir {
			out = append(out, path.Base(f))
		}
	}
	sort.Strings(out)
	return out
}

// do advances the clock and decides one call.
func (h *ceHarness) do(call gates.Call) gates.Outcome {
	h.env.Now = h.env.Now.Add(ceStep)
	o := Decide(h.c, &call, h.env)
	if p := refusalProblem(o); p != "" {
		h.t.Errorf("%s %s: %s", call.Event, call.Tool, p)
	}
	return o
}

func (h *ceHarness) ids() (tu, aid string) {
	h.n++
	return fmt.Sprintf("toolu_%02d", h.n), fmt.Sprintf("agent-%02d", h.n)
}

// launch is the orchestrator's foreground Agent call.
func (h *ceHarness) launch(agent, tu, prompt string) gates.Outcome {
	return h.do(gates.Call{Event: gates.PreToolUse, Session: "sess-1", Tool: "Agent", ToolUseID: tu, SubagentType: gates.PluginPrefix + agent, Prompt: prompt})
}

// nested is an Agent call made inside the agent parentID of type parent.
func (h *ceHarness) nested(parent, parentID, agent, tu, prompt string) gates.Outcome {
	return h.do(gates.Call{Event: gates.PreToolUse, Session: "sess-1", Tool: "Agent", ToolUseID: tu, AgentID: parentID, AgentType: gates.PluginPrefix + parent, SubagentType: gates.PluginPrefix + agent, Prompt: prompt})
}

func (h *ceHarness) stop(agent, aid, text string) gates.Outcome {
	return h.do(gates.Call{Event: gates.SubagentStop, Session: "sess-1", AgentID: aid, AgentType: gates.PluginPrefix + agent, Text: text})
}

// post is a foreground agent's PostToolUse (after its SubagentStop).
func (h *ceHarness) post(tu, aid string) gates.Outcome {
	return h.do(gates.Call{Event: gates.PostToolUse, Session: "sess-1", Tool: "Agent", ToolUseID: tu, Status: "completed", LinkAgentID: aid})
}

// run launches a foreground agent, lets it return text (writing file with
// its Write tool first when not empty) and returns the Context of its
// PostToolUse.
func (h *ceHarness) run(agent, file, text string) string {
	h.t.Helper()
	tu, aid := h.ids()
	if o := h.launch(agent, tu, "do the "+string(h.c.Current)+" step"); o.Verdict != gates.Allow {
		h.t.Fatalf("launch of %s in state %s: verdict %v, reason %q", agent, h.c.Current, o.Verdict, o.Reason)
	}
	if file != "" {
		if o := h.write(agent, aid, file); !o.Changed || o.Verdict != gates.Allow {
			h.t.Fatalf("Write of %s by %s: changed %v, verdict %v; want the write recorded", file, agent, o.Changed, o.Verdict)
		}
	}
	if o := h.stop(agent, aid, text); o.Verdict != gates.Allow || o.Reason != "" {
		h.t.Fatalf("SubagentStop of %s: verdict %v, reason %q", agent, o.Verdict, o.Reason)
	}
	o := h.post(tu, aid)
	if o.Verdict != gates.Allow {
		h.t.Fatalf("PostToolUse of %s: verdict %v, reason %q", agent, o.Verdict, o.Reason)
	}
	return o.Context
}

func ceNoDuplicates(t *testing.T, states []gates.State) {
	t.Helper()
	seen := map[gates.State]bool{}
	for _, s := range states {
		if seen[s] {
			t.Errorf("completed states %v list %s twice", states, s)
		}
		seen[s] = true
	}
}

func TestCoordTable(t *testing.T) {
	cases := []struct {
		scope string
		want  map[string]string
	}{
		{ScopeResearchOnly, map[string]string{
			CInitialize: "research",
			CResearch:   "complete",
			CComplete:   "",
		}},
		{ScopeResearchAndPlan, map[string]string{
			CInitialize: "research",
			CResearch:   "plan",
			CPlan:       "complete",
			CComplete:   "",
		}},
		{ScopeResearchAndRevise, map[string]string{
			CInitialize: "research",
			CResearch:   "plan",
			CPlan:       "complete",
			CComplete:   "",
		}},
		{ScopeFullImplementation, map[string]string{
			CInitialize: "research",
			CResearch:   "plan",
			CPlan:       "implement",
			CImplement:  "test",
			CTest:       "complete,debug,document",
			CDebug:      "complete,test",
			CDocument:   "complete",
			CComplete:   "",
		}},
		{ScopeDebugOnly, map[string]string{
			CInitialize: "research",
			CResearch:   "debug",
			CDebug:      "complete,test",
			CTest:       "complete,debug",
			CComplete:   "",
		}},
	}
	if len(cases) != len(Scopes) {
		t.Fatalf("%d cases for %d scopes", len(cases), len(Scopes))
	}
	for _, tc := range cases {
		t.Run(tc.scope, func(t *testing.T) {
			got := Table(tc.scope)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("CoordTable(%s) =\n  %v\nwant\n  %v", tc.scope, got, tc.want)
			}
			// Closed: every successor is a state of the table, and the
			// terminal state has none.
			for from, tos := range got {
				if tos == "" {
					if from != CComplete {
						t.Errorf("state %s has no successor", from)
					}
					continue
				}
				for _, to := range strings.Split(tos, ",") {
					if _, ok := got[to]; !ok {
						t.Errorf("%s -> %s leaves the table", from, to)
					}
				}
			}
		})
	}
}

func TestCoordFullPaths(t *testing.T) {
	type step struct {
		agent, file, text string
		ctx               string // the PostToolUse Context, up to " | next:" when it goes on
		state             gates.State
	}
	r1, r2 := ceReports+"001_topic1.md", ceReports+"002_topic2.md"
	research := []step{
		{ResearchSpecialist, r1, "Sessions researched.\nREPORT_CREATED: " + ceRoot + "/" + r1,
			"[coordinate research] report verified: " + r1 + " (1/2) | waiting for the other topics", CResearch},
	}
	researchTo := func(to gates.State) step {
		return step{ResearchSpecialist, r2, "Tokens researched.\nREPORT_CREATED: " + r2,
			"[coordinate research] 2/2 reports verified -> " + string(to) + " | next:", to}
	}
	planTo := func(to gates.State) step {
		return step{PlanArchitect, cePlan, "Plan written.\nPLAN_CREATED: " + cePlan,
			"[coordinate plan] " + cePlan + " verified -> " + string(to) + " | next:", to}
	}
	cases := []struct {
		scope     string
		steps     []step
		completed []gates.State
		outcome   string // a fragment of c.Outcome ("" = unchecked)
	}{
		{ScopeResearchOnly, append(research, researchTo(CComplete)),
			[]gates.State{CInitialize, CResearch}, ""},
		{ScopeResearchAndPlan, append(research, researchTo(CPlan), planTo(CComplete)),
			[]gates.State{CInitialize, CResearch, CPlan}, "completed at plan (research-and-plan)"},
		{ScopeResearchAndRevise, append(research, researchTo(CPlan), planTo(CComplete)),
			[]gates.State{CInitialize, CResearch, CPlan}, "completed at plan (research-and-revise)"},
		{ScopeFullImplementation, append(research, researchTo(CPlan), planTo(CImplement),
			step{ImplementationExec, "", "Done.\nIMPLEMENTATION STATUS: COMPLETE", "[coordinate implement] IMPLEMENTATION STATUS: COMPLETE -> test | next:", CTest},
			step{TestSpecialist, "", "42 tests ran.\nTESTS: PASS", "[coordinate test] TESTS: PASS -> document | next: launch doc-writer", CDocument},
			step{DocWriter, ceSumm + "001_summary.md", "REPORT_CREATED: " + ceSumm + "001_summary.md",
				"[coordinate document] summary " + ceSumm + "001_summary.md verified -> complete | the workflow is complete", CComplete}),
			[]gates.State{CInitialize, CResearch, CPlan, CImplement, CTest, CDocument}, "completed"},
		{ScopeDebugOnly, append(research, researchTo(CDebug),
			step{DebugAnalyst, ceDebug + "001_debug.md", "Root cause found.\nREPORT_CREATED: " + ceDebug + "001_debug.md",
				"[coordinate debug] report " + ceDebug + "001_debug.md verified -> test |", CTest},
			step{TestSpecialist, "", "All green.\nTESTS: PASS", "[coordinate test] TESTS: PASS -> complete | next: nothing; the workflow is complete", CComplete}),
			[]gates.State{CInitialize, CResearch, CDebug, CTest}, "completed (debug-only: tests pass)"},
	}
	for _, tc := range cases {
		t.Run(tc.scope, func(t *testing.T) {
			h := newCE(t, ceFlatDesc, tc.scope)
			if h.c.Topics != 2 || h.c.Hierarchical {
				t.Fatalf("%q: %d topics, hierarchical %v; want 2, flat", ceFlatDesc, h.c.Topics, h.c.Hierarchical)
			}
			for i, s := range tc.steps {
				ctx := h.run(s.agent, s.file, s.text)
				if !strings.HasPrefix(ctx, s.ctx) {
					t.Errorf("step %d (%s): context\n  %q\nwant it to start with\n  %q", i, s.agent, ctx, s.ctx)
				}
				// The launch keeps what was verified for it (the report
				// reads it): its artifact, or its verdict.
				l := h.c.Launches[len(h.c.Launches)-1]
				verdict := map[string]string{ImplementationExec: "COMPLETE", TestSpecialist: "PASS"}[s.agent]
				if l.Output != s.file || l.Result != verdict {
					t.Errorf("step %d (%s): launch output %q, result %q; want %q, %q", i, s.agent, l.Output, l.Result, s.file, verdict)
				}
				if h.c.Current != s.state {
					t.Fatalf("step %d (%s): state %s, want %s", i, s.agent, h.c.Current, s.state)
				}
				ceNoDuplicates(t, h.c.Completed)
			}
			if h.c.Current != CComplete {
				t.Errorf("final state %s, want complete", h.c.Current)
			}
			if !reflect.DeepEqual(h.c.Completed, tc.completed) {
				t.Errorf("completed = %v, want %v", h.c.Completed, tc.completed)
			}
			if !reflect.DeepEqual(h.c.Reports, []string{r1, r2}) {
				t.Errorf("reports = %v, want [%s %s]", h.c.Reports, r1, r2)
			}
			if !strings.Contains(h.c.Outcome, tc.outcome) {
				t.Errorf("outcome = %q, want it to contain %q", h.c.Outcome, tc.outcome)
			}
			for _, l := range h.c.Launches {
				if l.Status != gates.Returned || l.Notice != "" || !l.Ended.After(l.Started) {
					t.Errorf("launch %s (%s): status %s, notice %q, started %v, ended %v; want returned, delivered, ended after started",
						l.ToolUseID, l.Agent, l.Status, l.Notice, l.Started, l.Ended)
				}
			}
			// Complete gates nothing: Stop passes, launches pass.
			if o := h.do(gates.Call{Event: gates.Stop, Session: "sess-1"}); o.Verdict != gates.Allow {
				t.Errorf("Stop at complete: verdict %v, reason %q", o.Verdict, o.Reason)
			}
		})
	}
}

func TestCoordFireRefused(t *testing.T) {
	cases := []struct {
		scope   string
		state   gates.State
		trigger gates.Trigger
		guard   bool // a row matched but its guard failed
	}{
		{ScopeFullImplementation, CInitialize, OnImplemented, false}, // initialize -> implement is refused
		{ScopeFullImplementation, CResearch, OnTestsPass, false},
		{ScopeFullImplementation, CPlan, OnSummaryVerified, false},
		{ScopeFullImplementation, CImplement, OnPlanVerified, false},
		{ScopeFullImplementation, CDebug, OnTestsFail, false},
		{ScopeDebugOnly, CComplete, OnResearchVerified, false},
		{ScopeResearchOnly, CPlan, OnPlanVerified, true},
		{ScopeResearchAndPlan, CTest, OnTestsPass, true},
	}
	for _, tc := range cases {
		t.Run(tc.scope+"/"+string(tc.state)+"/"+string(tc.trigger), func(t *testing.T) {
			c := &Workflow{Scope: tc.scope, Current: tc.state, Completed: []gates.State{CInitialize}, StopBlocks: 2}
			tr, err := c.fire(tc.trigger)
			var te *gates.TransitionError
			if !errors.As(err, &te) {
				t.Fatalf("fire(%q) at %s = %+v, %v; want a *TransitionError", tc.trigger, tc.state, tr, err)
			}
			if te.State != tc.state || te.Trigger != tc.trigger {
				t.Errorf("error names state %q trigger %q; want %q %q", te.State, te.Trigger, tc.state, tc.trigger)
			}
			if (te.Guard != "") != tc.guard {
				t.Errorf("error guard %q; want a guard: %v", te.Guard, tc.guard)
			}
			if !strings.Contains(err.Error(), "state "+string(tc.state)) {
				t.Errorf("error %q does not name state %s", err, tc.state)
			}
			if c.Current != tc.state || !reflect.DeepEqual(c.Completed, []gates.State{CInitialize}) || c.StopBlocks != 2 {
				t.Errorf("a refused trigger changed the workflow: state %s, completed %v, stop blocks %d", c.Current, c.Completed, c.StopBlocks)
			}
		})
	}
}

func TestCoordWrongLaunchDenied(t *testing.T) {
	cases := []struct {
		name  string
		desc  string
		setup func(h *ceHarness) // launches made before the call
		call  func(h *ceHarness) gates.Outcome
		want  string
	}{
		{
			name: "research-sub-supervisor with 2 topics",
			desc: ceFlatDesc,
			call: func(h *ceHarness) gates.Outcome { return h.launch(ResearchSupervisor, "toolu_x", "supervise") },
			want: "research has 2 topics (fewer than 4): launch research-specialists directly",
		},
		{
			name: "research-specialist by the orchestrator with 4 topics",
			desc: ceWideDesc,
			call: func(h *ceHarness) gates.Outcome { return h.launch(ResearchSpecialist, "toolu_x", "Topic 1") },
			want: "research has 4 topics (4 or more): it goes through one research-sub-supervisor",
		},
		{
			name: "plan-architect during research",
			desc: ceFlatDesc,
			call: func(h *ceHarness) gates.Outcome { return h.launch(PlanArchitect, "toolu_x", "plan") },
			want: "plan-architect does not run in state research (there: research-specialist).",
		},
		{
			name: "debug-analyst during hierarchical research",
			desc: ceWideDesc,
			call: func(h *ceHarness) gates.Outcome { return h.launch(DebugAnalyst, "toolu_x", "debug") },
			want: "debug-analyst does not run in state research (there: research-sub-supervisor).",
		},
		{
			name: "a worker launching an agent",
			desc: ceFlatDesc,
			setup: func(h *ceHarness) {
				h.launch(ResearchSpecialist, "toolu_w", "Topic 1")
			},
			call: func(h *ceHarness) gates.Outcome {
				return h.nested(ResearchSpecialist, "agent-w", ResearchSpecialist, "toolu_x", "sub-topic")
			},
			want: "research-specialist may not launch agents; only the sub-supervisors launch their workers.",
		},
		{
			name: "a supervisor launching the wrong worker",
			desc: ceWideDesc,
			setup: func(h *ceHarness) {
				h.launch(ResearchSupervisor, "toolu_s", "supervise")
			},
			call: func(h *ceHarness) gates.Outcome {
				return h.nested(ResearchSupervisor, "agent-s", PlanArchitect, "toolu_x", "plan it")
			},
			want: "research-sub-supervisor launches research-specialist workers, not plan-architect.",
		},
		{
			name: "a second research-sub-supervisor",
			desc: ceWideDesc,
			setup: func(h *ceHarness) {
				h.launch(ResearchSupervisor, "toolu_s", "supervise")
			},
			call: func(h *ceHarness) gates.Outcome { return h.launch(ResearchSupervisor, "toolu_x", "again") },
			want: "research-sub-supervisor is already running; wait for it to return.",
		},
		{
			name: "an agent outside the workflow",
			desc: ceFlatDesc,
			call: func(h *ceHarness) gates.Outcome {
				return h.do(gates.Call{Event: gates.PreToolUse, Tool: "Agent", ToolUseID: "toolu_x", SubagentType: "general-purpose", Prompt: "x"})
			},
			want: `agent type "general-purpose" is not part of the coordinate workflow`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newCE(t, tc.desc, ScopeResearchAndPlan)
			if tc.setup != nil {
				tc.setup(h)
			}
			launches := len(h.c.Launches)
			o := tc.call(h)
			if o.Verdict != gates.Deny {
				t.Fatalf("verdict %v (reason %q), want deny", o.Verdict, o.Reason)
			}
			if !strings.Contains(o.Reason, tc.want) {
				t.Errorf("reason %q\nwant it to contain %q", o.Reason, tc.want)
			}
			nested := strings.Contains(tc.name, "supervisor launching") || strings.Contains(tc.name, "worker launching")
			switch {
			case nested && !strings.HasSuffix(o.Reason, "(coordinate workflow, state research.)"):
				// Inside a subagent the orchestrator's next step is no advice.
				t.Errorf("reason %q (a nested launch) does not say the state, or gives the orchestrator's next step", o.Reason)
			case !nested && !strings.Contains(o.Reason, "state research. Next: "):
				t.Errorf("reason %q does not say the state and the next step", o.Reason)
			}
			if len(h.c.Launches) != launches || h.c.Current != CResearch {
				t.Errorf("a denied launch changed the workflow: %d launches (was %d), state %s", len(h.c.Launches), launches, h.c.Current)
			}
		})
	}
}

func TestCoordDebugRetries(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	h.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	h.run(PlanArchitect, cePlan, "PLAN_CREATED: "+cePlan)
	h.run(ImplementationExec, "", "IMPLEMENTATION STATUS: COMPLETE")
	if h.c.Current != CTest {
		t.Fatalf("state %s, want test", h.c.Current)
	}
	fail := "3 of 40 tests failed in auth_test.go\nTESTS: FAIL"
	steps := []struct {
		agent, file, text string
		ctx               string
		state             gates.State
		retries           int
	}{
		{TestSpecialist, "", fail, "[coordinate test] TESTS: FAIL -> debug | 3 of 40 tests failed in auth_test.go; next: launch debug-analyst", CDebug, 1},
		{DebugAnalyst, ceDebug + "001_debug.md", "REPORT_CREATED: " + ceDebug + "001_debug.md", "[coordinate debug] report " + ceDebug + "001_debug.md verified -> test | retry 1/2", CTest, 1},
		{TestSpecialist, "", fail, "[coordinate test] TESTS: FAIL -> debug |", CDebug, 2},
		{DebugAnalyst, ceDebug + "002_debug.md", "REPORT_CREATED: " + ceDebug + "002_debug.md", "[coordinate debug] report " + ceDebug + "002_debug.md verified -> test | retry 2/2", CTest, 2},
		{TestSpecialist, "", fail, "[coordinate test] TESTS: FAIL -> complete | debug retries 2/2 used; the failure is recorded: 3 of 40 tests failed", CComplete, 2},
	}
	for i, s := range steps {
		ctx := h.run(s.agent, s.file, s.text)
		if !strings.HasPrefix(ctx, s.ctx) {
			t.Errorf("step %d (%s): context\n  %q\nwant it to start with\n  %q", i, s.agent, ctx, s.ctx)
		}
		if h.c.Current != s.state || h.c.Retries != s.retries {
			t.Fatalf("step %d (%s): state %s, retries %d; want %s, %d", i, s.agent, h.c.Current, h.c.Retries, s.state, s.retries)
		}
	}
	if h.c.Retries != MaxDebugRetries {
		t.Errorf("retries = %d, want %d", h.c.Retries, MaxDebugRetries)
	}
	if h.c.FailedState != CTest || !strings.Contains(h.c.LastError, "3 of 40 tests failed") {
		t.Errorf("failed state %q, last error %q; want test and the failure", h.c.FailedState, h.c.LastError)
	}
	if !strings.Contains(h.c.Outcome, "failing tests after 2 debug retries") {
		t.Errorf("outcome %q does not record the failure", h.c.Outcome)
	}
	want := []gates.State{CInitialize, CResearch, CPlan, CImplement, CTest, CDebug}
	if !reflect.DeepEqual(h.c.Completed, want) {
		t.Errorf("completed = %v, want %v", h.c.Completed, want)
	}
}

func TestCoordReportVerification(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]int64
		report string
		want   string
	}{
		{"outside by ..", nil, ceRoot + "/../evil.md", "/home/user/project/../evil.md is outside the project (a `..` or a symlink leaving it); artifacts go under " + strings.TrimSuffix(ceReports, "/")},
		{"outside absolute", nil, "/tmp/report.md", "/tmp/report.md is outside the project"},
		{"not under reports", map[string]int64{cePlan: 10}, cePlan, cePlan + " is not under " + strings.TrimSuffix(ceReports, "/")},
		{"missing", map[string]int64{ceReports + "002_tokens.md": 10, ceReports + "003_keys.md": 5},
			ceReports + "001_sessions.md",
			"expected the file " + ceReports + "001_sessions.md, but it does not exist; " + strings.TrimSuffix(ceReports, "/") + " holds: 002_tokens.md, 003_keys.md."},
		{"empty", map[string]int64{ceReports + "001_sessions.md": 0},
			ceReports + "001_sessions.md",
			"expected the file " + ceReports + "001_sessions.md, but it is empty; " + strings.TrimSuffix(ceReports, "/") + " holds: 001_sessions.md."},
		{"no line", nil, "", "your report must end with `REPORT_CREATED: <path>`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newCE(t, ceFlatDesc, ScopeResearchOnly)
			for f, n := range tc.files {
				h.files[f] = n
			}
			text := "Findings below."
			if tc.report != "" {
				text += "\nREPORT_CREATED: " + tc.report
			}
			if o := h.launch(ResearchSpecialist, "toolu_1", "Topic 1: sessions"); o.Verdict != gates.Allow {
				t.Fatalf("launch: %v %q", o.Verdict, o.Reason)
			}
			o := h.stop(ResearchSpecialist, "agent-1", text)
			if o.Verdict != gates.Block {
				t.Fatalf("first SubagentStop: verdict %v, want block", o.Verdict)
			}
			if !strings.Contains(o.Reason, tc.want) {
				t.Errorf("reason %q\nwant it to contain %q", o.Reason, tc.want)
			}
			l := h.c.byTool("toolu_1")
			if l.Status != gates.Running || h.c.Current != CResearch || len(h.c.Reports) != 0 {
				t.Fatalf("after the block: launch %s, state %s, reports %v; want running, research, none", l.Status, h.c.Current, h.c.Reports)
			}
			// The agent ends again with the same report: no second block,
			// the launch is rejected and nothing advances.
			o = h.stop(ResearchSpecialist, "agent-1", text)
			if o.Verdict != gates.Allow || o.Reason != "" {
				t.Errorf("second SubagentStop: verdict %v, reason %q; want no block", o.Verdict, o.Reason)
			}
			if l.Status != gates.Unrecognized || l.Ended.IsZero() {
				t.Errorf("launch status %s, ended %v; want unrecognized (rejected), ended", l.Status, l.Ended)
			}
			if h.c.Current != CResearch || len(h.c.Reports) != 0 || !reflect.DeepEqual(h.c.Completed, []gates.State{CInitialize}) {
				t.Errorf("a rejected report advanced: state %s, reports %v, completed %v", h.c.Current, h.c.Reports, h.c.Completed)
			}
			if last, failed, retries, class, ok := h.c.ErrorState(); !ok || failed != CResearch || retries != 1 || class != gates.Permanent || !strings.Contains(last, strings.TrimSuffix(tc.want, ".")) {
				t.Errorf("error_state: failed state %q, last error %q, retries %d, class %q", failed, last, retries, class)
			}
			post := h.post("toolu_1", "agent-1")
			if !strings.HasPrefix(post.Context, "[coordinate research] research-specialist returned, but ") || !strings.HasSuffix(post.Context, ": nothing advanced; relaunch it (retry 1/2, a permanent failure).") {
				t.Errorf("PostToolUse context %q; want the rejection line", post.Context)
			}
			// A third stop of the same agent changes nothing.
			if o := h.stop(ResearchSpecialist, "agent-1", "REPORT_CREATED: "+ceReports+"001_x.md"); o.Changed || o.Verdict != gates.Allow {
				t.Errorf("stop of a finished launch: %+v", o)
			}
			// A relaunch that writes its report is verified.
			h.files[ceReports+"001_sessions.md"] = 100
			if o := h.launch(ResearchSpecialist, "toolu_2", "Topic 1 again"); o.Verdict != gates.Allow {
				t.Fatalf("relaunch: %v %q", o.Verdict, o.Reason)
			}
			h.write(ResearchSpecialist, "agent-2", ceReports+"001_sessions.md")
			if o := h.stop(ResearchSpecialist, "agent-2", "REPORT_CREATED: "+ceReports+"001_sessions.md"); o.Verdict != gates.Allow {
				t.Fatalf("relaunch stop: %v %q", o.Verdict, o.Reason)
			}
			if !reflect.DeepEqual(h.c.Reports, []string{ceReports + "001_sessions.md"}) {
				t.Errorf("reports = %v after the relaunch", h.c.Reports)
			}
		})
	}
}

// ---- hierarchical research ----

type ceWorker struct {
	tu, aid, report string
	started         time.Time
	durationMs      int64
}

// ceSupervisorText is a SUPERVISOR_COMPLETE line whose context_tokens fit
// its own size (CheckAggregation rule 4).
func ceSupervisorText(reports []string, summary string, totalMs int64) string {
	res := SupervisorResult{
		SupervisorName:   ResearchSupervisor,
		WorkerCount:      len(reports),
		TopicsResearched: len(reports),
		ReportsCreated:   reports,
		Summary:          summary,
		KeyFindings:      []string{"sessions live server-side", "tokens rotate hourly"},
		TotalDurationMs:  totalMs,
	}
	for i := 0; i < 3; i++ {
		b, _ := json.Marshal(res)
		res.Raw = string(b)
		res.ContextTokens = (res.AggregatedChars() + CharsPerToken - 1) / CharsPerToken
		res.Raw = ""
	}
	b, _ := json.Marshal(res)
	return "All four topics researched.\n\nSUPERVISOR_COMPLETE: " + string(b)
}

const ceSummary = "Sessions are stored server-side in Redis; tokens rotate hourly; the migration keeps both stores in sync until cut-over."

// hierarchical launches research-sub-supervisor and its 4 workers; the
// workers whose index is in failing report a path outside the project
// twice (blocked, then rejected), the others a real report. The workers
// return in launch order.
func (h *ceHarness) hierarchical(failing map[int]bool) (supTU, supID string, ws []ceWorker) {
	return h.hierarchicalOrder(failing, []int{1, 2, 3, 4})
}

// hierarchicalOrder is hierarchical with the workers returning in order
// (worker numbers 1-4), each with its SubagentStop then its PostToolUse.
func (h *ceHarness) hierarchicalOrder(failing map[int]bool, order []int) (supTU, supID string, ws []ceWorker) {
	h.t.Helper()
	supTU, supID = "toolu_sup", "agent-sup"
	if o := h.launch(ResearchSupervisor, supTU, "Research the 4 topics"); o.Verdict != gates.Allow {
		h.t.Fatalf("supervisor launch: %v %q", o.Verdict, o.Reason)
	}
	for i := 1; i <= 4; i++ {
		w := ceWorker{tu: fmt.Sprintf("toolu_w%d", i), aid: fmt.Sprintf("agent-w%d", i), report: fmt.Sprintf("%s%03d_topic%d.md", ceReports, i, i)}
		if o := h.nested(ResearchSupervisor, supID, ResearchSpecialist, w.tu, fmt.Sprintf("Topic %d: area %d\nWrite %s", i, i, w.report)); o.Verdict != gates.Allow {
			h.t.Fatalf("worker %d launch: %v %q", i, o.Verdict, o.Reason)
		}
		w.started = h.env.Now
		ws = append(ws, w)
	}
	for k, n := range order {
		i := n - 1
		w := &ws[i]
		h.env.Now = h.env.Now.Add(time.Duration(k) * time.Second) // unequal durations
		if failing[i+1] {
			bad := "REPORT_CREATED: " + ceRoot + "/../leak.md"
			if o := h.stop(ResearchSpecialist, w.aid, bad); o.Verdict != gates.Block {
				h.t.Fatalf("worker %d bad report: verdict %v", i+1, o.Verdict)
			}
			if o := h.stop(ResearchSpecialist, w.aid, bad); o.Verdict != gates.Allow {
				h.t.Fatalf("worker %d bad report again: verdict %v %q", i+1, o.Verdict, o.Reason)
			}
		} else {
			h.files[w.report] = 40000
			h.write(ResearchSpecialist, w.aid, w.report)
			if o := h.stop(ResearchSpecialist, w.aid, "Done.\nREPORT_CREATED: "+w.report); o.Verdict != gates.Allow || o.Reason != "" {
				h.t.Fatalf("worker %d stop: verdict %v %q", i+1, o.Verdict, o.Reason)
			}
		}
		w.durationMs = h.env.Now.Sub(w.started).Milliseconds()
		if o := h.do(gates.Call{Event: gates.PostToolUse, Tool: "Agent", AgentID: supID, AgentType: gates.PluginPrefix + ResearchSupervisor, ToolUseID: w.tu, Status: "completed", LinkAgentID: w.aid}); o.Context != "" {
			h.t.Errorf("worker %d PostToolUse reached the orchestrator: %q", i+1, o.Context)
		}
	}
	if h.c.Current != CResearch {
		h.t.Fatalf("workers advanced research to %s", h.c.Current)
	}
	return supTU, supID, ws
}

func ceReportsOf(ws []ceWorker) ([]string, int64) {
	var rs []string
	var sum int64
	for _, w := range ws {
		rs = append(rs, w.report)
		sum += w.durationMs
	}
	return rs, sum
}

func TestCoordHierarchicalResearch(t *testing.T) {
	h := newCE(t, ceWideDesc, ScopeResearchAndPlan)
	if h.c.Topics != 4 || !h.c.Hierarchical {
		t.Fatalf("%q: %d topics, hierarchical %v; want 4, hierarchical", ceWideDesc, h.c.Topics, h.c.Hierarchical)
	}
	supTU, supID, ws := h.hierarchical(nil)
	reports, sum := ceReportsOf(ws)
	o := h.stop(ResearchSupervisor, supID, ceSupervisorText(reports, ceSummary, sum))
	if o.Verdict != gates.Allow || o.Reason != "" {
		t.Fatalf("supervisor stop: verdict %v, reason %q", o.Verdict, o.Reason)
	}
	if h.c.Current != CPlan || !reflect.DeepEqual(h.c.Completed, []gates.State{CInitialize, CResearch}) {
		t.Fatalf("state %s, completed %v; want plan after [initialize research]", h.c.Current, h.c.Completed)
	}
	post := h.post(supTU, supID)
	if !strings.HasPrefix(post.Context, "[coordinate research] research-sub-supervisor: 4 reports verified, context reduction ") ||
		!strings.Contains(post.Context, " -> plan | next: launch plan-architect to write "+cePlan) {
		t.Errorf("supervisor PostToolUse context %q", post.Context)
	}
	if !reflect.DeepEqual(h.c.Reports, reports) {
		t.Errorf("reports = %v, want %v", h.c.Reports, reports)
	}
	st := h.c.Supervisors[SupervisorKeyResearch]
	if st == nil {
		t.Fatalf("no %s in supervisors: %v", SupervisorKeyResearch, h.c.Supervisors)
	}
	if !strings.HasPrefix(st.SupervisorID, "research_sub_supervisor_") || st.AgentID != supID || st.SupervisorName != ResearchSupervisor || st.WorkerCount != 4 || len(st.Workers) != 4 || st.AggregatedMetadata == nil {
		t.Errorf("supervisor state: id %q agent %q name %q count %d workers %d metadata %v", st.SupervisorID, st.AgentID, st.SupervisorName, st.WorkerCount, len(st.Workers), st.AggregatedMetadata != nil)
	}
	for i, w := range st.Workers {
		if i >= len(ws) {
			break
		}
		want := ws[i]
		if w.AgentID != want.aid || w.Status != WorkerCompleted || w.OutputPath != want.report || !strings.HasPrefix(w.Topic, fmt.Sprintf("Topic %d:", i+1)) {
			t.Errorf("worker %d = %+v; want agent %s, completed, output %s, topic %d", i+1, w, want.aid, want.report, i+1)
		}
		if w.DurationMs != want.durationMs {
			t.Errorf("worker %d duration_ms = %d, want %d (its SubagentStop time minus its launch time)", i+1, w.DurationMs, want.durationMs)
		}
	}
	for _, l := range h.c.Launches {
		if l.Status != gates.Returned {
			t.Errorf("launch %s (%s) status %s, want returned", l.ToolUseID, l.Agent, l.Status)
		}
	}
	// Plan follows.
	if ctx := h.run(PlanArchitect, cePlan, "PLAN_CREATED: "+cePlan); h.c.Current != CComplete || !strings.Contains(ctx, "-> complete") {
		t.Errorf("after plan-architect: state %s, context %q", h.c.Current, ctx)
	}
}

func TestCoordHierarchicalRefused(t *testing.T) {
	cases := []struct {
		name    string
		failing map[int]bool
		written bool // worker 1 also wrote 009_invented.md with its Write tool
		text    func(reports []string, sum int64) string
		want    string
	}{
		{
			name: "150-word summary",
			text: func(r []string, sum int64) string {
				return ceSupervisorText(r, strings.TrimSpace(strings.Repeat("finding ", 150)), sum)
			},
			want: "the aggregated metadata breaks the rules: summary has 150 words; at most 100 are allowed.",
		},
		{
			name: "total_duration_ms far from the workers' durations",
			text: func(r []string, sum int64) string { return ceSupervisorText(r, ceSummary, sum*50) },
			want: "total_duration_ms is ",
		},
		{
			name: "a report no worker wrote",
			text: func(r []string, sum int64) string {
				return ceSupervisorText(append(r, ceReports+"009_invented.md"), ceSummary, sum)
			},
			want: ceReports + "009_invented.md was not written with the Write tool by any of your workers: a file created by a shell command does not count; list only the reports your workers wrote with the Write tool during this launch.",
		},
		{
			name:    "a report a worker wrote but did not report",
			written: true,
			text: func(r []string, sum int64) string {
				return ceSupervisorText(append(r, ceReports+"009_invented.md"), ceSummary, sum)
			},
			want: "which no worker reported",
		},
		{
			name:    "one worker of four succeeded",
			failing: map[int]bool{2: true, 3: true, 4: true},
			text:    func(r []string, sum int64) string { return ceSupervisorText(r[:1], ceSummary, sum) },
			want:    "fewer than 2 of your workers succeeded (Failed: Topic 2: area 2 (",
		},
		{
			name: "no SUPERVISOR_COMPLETE line",
			text: func([]string, int64) string { return "All done." },
			want: "your report must end with `SUPERVISOR_COMPLETE: {json}`",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newCE(t, ceWideDesc, ScopeResearchAndPlan)
			h.files[ceReports+"009_invented.md"] = 500
			supTU, supID, ws := h.hierarchical(tc.failing)
			if tc.written {
				h.write(ResearchSpecialist, ws[0].aid, ceReports+"009_invented.md")
			}
			reports, sum := ceReportsOf(ws)
			o := h.stop(ResearchSupervisor, supID, tc.text(reports, sum))
			if o.Verdict != gates.Block {
				t.Fatalf("supervisor stop: verdict %v, want block (state %s)", o.Verdict, h.c.Current)
			}
			if !strings.Contains(o.Reason, tc.want) {
				t.Errorf("reason %q\nwant it to contain %q", o.Reason, tc.want)
			}
			if h.c.Current != CResearch || !reflect.DeepEqual(h.c.Completed, []gates.State{CInitialize}) {
				t.Errorf("a refused supervisor advanced: state %s, completed %v", h.c.Current, h.c.Completed)
			}
			if l := h.c.byTool(supTU); l.Status != gates.Running {
				t.Errorf("supervisor launch %s after a block, want running", l.Status)
			}
			if st := h.c.Supervisors[SupervisorKeyResearch]; st != nil && st.AggregatedMetadata != nil {
				t.Errorf("refused metadata was stored: %+v", st.AggregatedMetadata)
			}
			if tc.failing != nil {
				st := h.c.Supervisors[SupervisorKeyResearch]
				failed := 0
				for _, w := range st.Workers {
					if w.Status == WorkerFailed {
						failed++
					}
				}
				if failed != len(tc.failing) {
					t.Errorf("%d workers recorded failed, want %d: %+v", failed, len(tc.failing), st.Workers)
				}
				return
			}
			// The supervisor fixes its metadata: it is verified this time.
			o = h.stop(ResearchSupervisor, supID, ceSupervisorText(reports, ceSummary, sum))
			if o.Verdict != gates.Allow || h.c.Current != CPlan {
				t.Errorf("corrected supervisor stop: verdict %v reason %q, state %s; want plan", o.Verdict, o.Reason, h.c.Current)
			}
		})
	}
}

// Parallel foreground agents may return in any order. A SubagentStop
// carries the agent id but not the tool_use_id of its launch; the
// PostToolUse that follows carries both. Whatever order they return in,
// every report counts for its own launch.
func TestCoordParallelForegroundOutOfOrder(t *testing.T) {
	t.Run("flat research-specialists", func(t *testing.T) {
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
		// B (launched second) returns first.
		if o := h.stop(ResearchSpecialist, "agent-B", "REPORT_CREATED: "+r2); o.Verdict != gates.Allow {
			t.Fatalf("B stop: %v %q", o.Verdict, o.Reason)
		}
		postB := h.post("toolu_B", "agent-B")
		if o := h.stop(ResearchSpecialist, "agent-A", "REPORT_CREATED: "+r1); o.Verdict != gates.Allow {
			t.Fatalf("A stop: %v %q", o.Verdict, o.Reason)
		}
		postA := h.post("toolu_A", "agent-A")
		if want := "[coordinate research] report verified: " + r2 + " (1/2)"; !strings.HasPrefix(postB.Context, want) {
			t.Errorf("B's PostToolUse context %q, want %q", postB.Context, want)
		}
		if want := "[coordinate research] 2/2 reports verified -> complete"; !strings.HasPrefix(postA.Context, want) {
			t.Errorf("A's PostToolUse context %q, want %q", postA.Context, want)
		}
		if h.c.Current != CComplete || len(h.c.Reports) != 2 {
			t.Errorf("state %s, reports %v; want complete with both reports", h.c.Current, h.c.Reports)
		}
		for _, id := range []string{"A", "B"} {
			l := h.c.byTool("toolu_" + id)
			if l.AgentID != "agent-"+id || l.Status != gates.Returned {
				t.Errorf("launch toolu_%s: agent %q, status %s; want agent-%s, returned", id, l.AgentID, l.Status, id)
			}
		}
	})
	t.Run("research-sub-supervisor workers", func(t *testing.T) {
		h := newCE(t, ceWideDesc, ScopeResearchAndPlan)
		_, supID, ws := h.hierarchicalOrder(nil, []int{2, 1, 4, 3})
		st := h.c.Supervisors[SupervisorKeyResearch]
		if st == nil || len(st.Workers) != 4 {
			t.Fatalf("supervisor state %+v; want 4 workers", st)
		}
		for _, w := range st.Workers {
			var n int
			fmt.Sscanf(w.AgentID, "agent-w%d", &n)
			if n < 1 || n > 4 {
				t.Errorf("worker %+v has an unknown agent id", w)
				continue
			}
			want := ws[n-1]
			if w.OutputPath != want.report || !strings.HasPrefix(w.Topic, fmt.Sprintf("Topic %d:", n)) || w.DurationMs != want.durationMs {
				t.Errorf("worker %s = topic %q, output %s, duration %d; want topic %d, output %s, duration %d",
					w.AgentID, w.Topic, w.OutputPath, w.DurationMs, n, want.report, want.durationMs)
			}
		}
		reports, sum := ceReportsOf(ws)
		o := h.stop(ResearchSupervisor, supID, ceSupervisorText(reports, ceSummary, sum))
		if o.Verdict != gates.Allow || h.c.Current != CPlan {
			t.Errorf("supervisor stop: verdict %v, reason %q, state %s; want plan", o.Verdict, o.Reason, h.c.Current)
		}
	})
}

// One research-specialist launch answers for one topic: with two
// REPORT_CREATED lines only the last counts.
func TestCoordOneReportPerLaunch(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeResearchOnly)
	h.files[ceReports+"001_a.md"] = 10
	ctx := h.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"001_a.md\nREPORT_CREATED: "+ceReports+"002_b.md")
	if h.c.Current != CResearch || !reflect.DeepEqual(h.c.Reports, []string{ceReports + "002_b.md"}) {
		t.Fatalf("state %s, reports %v; want research with only the last report (context %q)", h.c.Current, h.c.Reports, ctx)
	}
	if !strings.Contains(ctx, "(1/2)") {
		t.Errorf("context %q, want 1/2 reports", ctx)
	}
}

// A plan whose phase dependencies can never be met is refused when it is
// verified: the tracks would wait forever.
func TestCoordPlanDependenciesChecked(t *testing.T) {
	h := newCE(t, ceFlatDesc, ScopeFullImplementation)
	h.env.Read = func(string) []byte {
		return []byte("### Phase 1: A\ndependencies: [2]\n\n### Phase 2: B\ndependencies: [1]\n")
	}
	h.run(ResearchSpecialist, ceReports+"001_a.md", "REPORT_CREATED: "+ceReports+"001_a.md")
	h.run(ResearchSpecialist, ceReports+"002_b.md", "REPORT_CREATED: "+ceReports+"002_b.md")
	h.files[cePlan] = 100
	tu, aid := h.ids()
	h.launch(PlanArchitect, tu, "plan")
	h.write(PlanArchitect, aid, cePlan)
	o := h.stop(PlanArchitect, aid, "PLAN_CREATED: "+cePlan)
	if o.Verdict != gates.Block || !strings.Contains(o.Reason, "the plan's phase dependencies cannot all be met") {
		t.Fatalf("verdict %v, reason %q; want a block naming the dependencies", o.Verdict, o.Reason)
	}
	if h.c.Current != CPlan {
		t.Errorf("state %s, want plan", h.c.Current)
	}
}
