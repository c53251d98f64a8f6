package orchestrate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestDecisionOncePerPrompt(t *testing.T) {
	h := driveTo(t, S3)
	c := promptCall("/orch-hook:approve", "prompt-approve")
	o := h.do(c)
	h.expect(S4a)
	if !contains(h.w.Decisions, "prompt-approve") {
		t.Fatalf("decision not recorded: %v", h.w.Decisions)
	}
	// The same prompt again (e.g. a replayed hook) is not a second
	// decision: no "nothing to approve" block either.
	again := h.do(promptCall("/orch-hook:approve", "prompt-approve"))
	if again.Verdict != gates.Allow || again.Changed || again.Context != "" {
		t.Errorf("repeat: %+v", again)
	}
	// UserPromptExpansion of the same prompt decides nothing.
	exp := h.do(&gates.Call{Event: gates.UserPromptExpansion, Prompt: "/orch-hook:approve", PromptID: "prompt-approve"})
	if exp.Changed || exp.Verdict != gates.Allow {
		t.Errorf("expansion: %+v", exp)
	}
	// A new prompt is a new decision.
	wantBlock(t, h.user("/orch-hook:approve"), 0, "there is no plan waiting for approval.")
	wantContext(t, o, "APPROVED -> 4a")
	// Decisions are remembered for the last 50 prompts only.
	for i := 0; i < 60; i++ {
		h.w.Decisions = append(h.w.Decisions, "x")
	}
	h.user("/orch-hook:abort")
	if len(h.w.Decisions) != 50 || h.w.Decisions[49] == "x" {
		t.Errorf("decisions grow without bound: %d", len(h.w.Decisions))
	}
}

func TestUserCommandsAreUserPromptsOnly(t *testing.T) {
	// The init-install form decides too.
	h := driveTo(t, S3)
	h.user("/orch-hook-approve")
	h.expect(S4a)
	// A command mentioned inside a prompt is no decision.
	h = driveTo(t, S3)
	h.user("please run /orch-hook:approve for me")
	h.expect(S3)
	// Commands that are not decisions pass through.
	o := h.user("/orch-hook:status")
	if o.Verdict != gates.Allow || o.Changed {
		t.Errorf("status: %+v", o)
	}
}

func TestSelfApprovalDenied(t *testing.T) {
	skills := []struct {
		skill string
		deny  bool
		why   string
	}{
		{"orch-hook:approve", true, "orch-hook: /orch-hook:approve is the user's decision; the model may not invoke it. Ask the user to type it."},
		{"orch-hook:request-changes", true, "/orch-hook:request-changes is the user's decision"},
		{"orch-hook:resolve", true, "/orch-hook:resolve is the user's decision"},
		{"/orch-hook:abort", true, "/orch-hook:abort is the user's decision"},
		{"orch-hook-resume", true, "/orch-hook:resume is the user's decision"},
		{"orch-hook:orchestrate", true, "orch-hook: only the user starts a workflow: ask them to type /orch-hook:orchestrate <request>."},
		{"orch-hook:status", false, ""},
		{"orch-hook:statusline", true, "/orch-hook:statusline is the user's decision"},
		{"approve", false, ""},
		{"pdf", false, ""},
	}
	cmds := []struct {
		cmd  string
		word string
	}{
		{"orch-hook approve", "approve"},
		{"./bin/orch-hook approve", "approve"},
		{"\"/abs/path/orch-hook\" resolve skip", "resolve"},
		{"env X=1 orch-hook --project . abort", "abort"},
		{"cd /tmp && ORCH=1 /usr/local/bin/orch-hook request-changes 'more tests'", "request-changes"},
		{"sh -c 'orch-hook resume'", "resume"},
		{"orch-hook --project=. approve", "approve"},
		{"orch-hook -v resolve retry", "resolve"},
		{"echo done; $(which orch-hook) approve", "approve"},
		{"orch-hook start \"build it\"", "start"},
		{"orch-hook status", ""},
		{"orch-hook status --json", ""},
		{"orch-hook log | grep approve", ""},
		{"cat orch-hook-notes.txt approve", ""},
		{"go test ./...", ""},
		{"orch-hook statusline", ""},
	}
	for _, w := range []*Workflow{nil, must(NewWorkflow("x", ownerSession)), {Current: Complete}} {
		for _, tc := range skills {
			var o gates.Outcome
			if w == nil { // no workflow at all: package internal/app decides on a finished one
				o = Decide(&Workflow{Current: Complete}, skillCall(tc.skill), &Env{})
			} else {
				o = Decide(w, skillCall(tc.skill), &Env{Root: testRoot})
			}
			if tc.deny {
				wantVerdict(t, o, gates.Deny)
				if !strings.Contains(o.Reason, tc.why) {
					t.Errorf("skill %q: reason %q", tc.skill, o.Reason)
				}
				if !hasRecord(o, gates.RecDeny, "") {
					t.Errorf("skill %q: deny not recorded", tc.skill)
				}
			} else if o.Verdict != gates.Allow {
				t.Errorf("skill %q denied: %s", tc.skill, o.Reason)
			}
		}
		for _, tc := range cmds {
			if got := gates.BinaryDecision(tc.cmd); got != tc.word {
				t.Errorf("binaryDecision(%q) = %q, want %q", tc.cmd, got, tc.word)
			}
			ww := w
			if ww == nil {
				ww = &Workflow{Current: Complete}
			}
			o := Decide(ww, bashCall(tc.cmd), &Env{Root: testRoot})
			if tc.word == "" {
				if o.Verdict != gates.Allow {
					t.Errorf("%q denied: %s", tc.cmd, o.Reason)
				}
				continue
			}
			wantVerdict(t, o, gates.Deny)
			want := "orch-hook: running orch-hook " + tc.word + " from Bash is not allowed: " + tc.word + " is the user's decision. Ask the user to type /orch-hook:" + tc.word + "."
			if tc.word == "start" {
				want = "orch-hook: the model may not start a workflow; only the user does, with /orch-hook:orchestrate <request>."
			}
			if o.Reason != want {
				t.Errorf("%q: reason %q, want %q", tc.cmd, o.Reason, want)
			}
		}
	}
}

func TestToolsDeniedWhileActive(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	cases := []struct {
		name string
		call *gates.Call
		deny bool
		why  string
	}{
		{"SendMessage to a workflow agent type", &gates.Call{Event: gates.PreToolUse, Tool: "SendMessage", SendTo: "orch-hook:code-implementer"}, true,
			"SendMessage to a workflow agent is not allowed: each launch does one job and returns its result line; launch a new agent instead."},
		{"SendMessage to a workflow launch", &gates.Call{Event: gates.PreToolUse, Tool: "SendMessage", SendTo: r.agentID}, true, "SendMessage to a workflow agent is not allowed"},
		{"SendMessage elsewhere", &gates.Call{Event: gates.PreToolUse, Tool: "SendMessage", SendTo: "team-lead"}, false, ""},
		{"Workflow", &gates.Call{Event: gates.PreToolUse, Tool: "Workflow"}, true,
			"the native Workflow tool is not allowed while an orch-hook workflow is active (its agents would bypass the gates)."},
		{"general-purpose agent", &gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: "general-purpose", Prompt: "Task 01"}, true,
			"agent type \"general-purpose\" is not allowed while a workflow is active; only the workflow's agents (orch-hook:<name>) and the read-only Explore and Plan may run."},
		{"agent without a type", &gates.Call{Event: gates.PreToolUse, Tool: "Agent", Prompt: "do it"}, true, "agent type \"general-purpose\" is not allowed"},
		{"unknown plugin agent", &gates.Call{Event: gates.PreToolUse, Tool: "Task", SubagentType: "orch-hook:helper"}, true, "agent type \"orch-hook:helper\" is not allowed"},
		{"Explore", &gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: "Explore", Prompt: "find"}, false, ""},
		{"Plan", &gates.Call{Event: gates.PreToolUse, Tool: "Task", SubagentType: "Plan", Prompt: "think"}, false, ""},
		{"isolation", &gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: "orch-hook:code-implementer", Prompt: implPrompt(2), Isolation: "worktree"}, true,
			"isolation \"worktree\" on a workflow agent is not allowed: its edits would happen outside the project the gates watch; launch code-implementer without isolation."},
		{"Bash on the state", bashCall("cat .orchestrator/state/checkpoint.json"), true,
			"commands that name .orchestrator/state, or change or remove anything under .orchestrator, are not allowed: it is orch-hook's state and plan."},
		{"Bash", bashCall("go test ./..."), false, ""},
		{"Read", &gates.Call{Event: gates.PreToolUse, Tool: "Read", Path: testRoot + "/.orchestrator/state/checkpoint.json"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := h.do(tc.call)
			if tc.deny {
				wantDeny(t, o, 0, tc.why)
			} else {
				wantAllow(t, o)
			}
		})
	}
	if len(h.w.InFlight()) != 1 {
		t.Errorf("in flight: %d", len(h.w.InFlight()))
	}
}

func TestOtherSession(t *testing.T) {
	h := driveTo(t, S4a)
	other := func(c *gates.Call) *gates.Call { c.Session = otherSession; return c }
	o := h.do(other(agentCall(Implementer, implPrompt(1), "toolu_o1")))
	wantDeny(t, o, 0)
	const foreign = "orch-hook: this workflow belongs to another Claude Code session. To continue it here, type /orch-hook:resume (see `orch-hook status`)."
	if o.Reason != foreign {
		t.Errorf("reason %q", o.Reason)
	}
	// Plan edits and decisions are refused too.
	wantDeny(t, h.do(other(writeCall(tasksPath(MasterPlan), "x"))), 0, "belongs to another Claude Code session")
	wantBlock(t, h.do(other(promptCall("/orch-hook:abort", "po1"))), 0, "belongs to another Claude Code session")
	h.expect(S4a)
	// Its other tools and its Stop are not affected.
	wantAllow(t, h.do(other(bashCall("ls"))))
	wantAllow(t, h.do(other(stopCall())))
	wantAllow(t, h.do(other(&gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: "Explore"})))
	// SessionStart there tells how to take over.
	s := h.do(other(&gates.Call{Event: gates.SessionStart, Source: "startup"}))
	wantContext(t, s, "another session owns the active workflow; type /orch-hook:resume here to take it over.")
	// /orch-hook:resume moves the workflow.
	r := h.do(other(promptCall("/orch-hook:resume", "po2")))
	if h.w.Owner != otherSession || !hasRecord(r, gates.RecDecision, "resume: ownership moved from session sess-owner to sess-other") {
		t.Fatalf("owner %q records %+v", h.w.Owner, r.Records)
	}
	wantContext(t, r, "orch-hook: this session now owns the workflow.")
	wantAllow(t, h.do(other(agentCall(Implementer, implPrompt(1), "toolu_o2"))))
	// Now the first session is the other one.
	wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 0, "belongs to another Claude Code session")
	o = h.user("/orch-hook:resume")
	wantContext(t, o, "this session now owns the workflow")
	o = h.user("/orch-hook:resume")
	wantContext(t, o, "orch-hook: this session already owns the workflow.")
}

func TestOtherSessionAnswersNothing(t *testing.T) {
	h := driveTo(t, questionsPending)
	c := promptCall("my answers", "po1")
	c.Session = otherSession
	h.do(c)
	if h.w.WaitingOn != "answers" {
		t.Error("another session answered the questions")
	}
}

func TestOwnershipAfterClear(t *testing.T) {
	h := driveTo(t, S4a)
	start := func(session, source string) gates.Outcome {
		return h.do(&gates.Call{Event: gates.SessionStart, Session: session, Source: source})
	}
	end := func(session, reason string) gates.Outcome {
		return h.do(&gates.Call{Event: gates.SessionEnd, Session: session, EndReason: reason})
	}
	// SessionStart alone never moves it.
	start("sess-new", "clear")
	start("sess-new", "startup")
	if h.w.Owner != ownerSession {
		t.Fatalf("owner %q", h.w.Owner)
	}
	// Another session's /clear, or the owner's other endings, arm nothing.
	end(otherSession, "clear")
	end(ownerSession, "logout")
	start("sess-new", "clear")
	if h.w.Owner != ownerSession {
		t.Fatalf("owner %q", h.w.Owner)
	}
	// The owner's SessionEnd(clear) then SessionStart(clear) moves it.
	if o := end(ownerSession, "clear"); !o.Changed || !h.w.OwnerCleared {
		t.Fatalf("end: %+v", o)
	}
	start("sess-new", "resume")
	if h.w.Owner != ownerSession {
		t.Fatal("a resume took the cleared workflow")
	}
	o := start("sess-new", "clear")
	if h.w.Owner != "sess-new" || h.w.OwnerCleared || !hasRecord(o, gates.RecUpdate, "ownership moved to session sess-new after /clear of sess-owner") {
		t.Fatalf("owner %q cleared %v records %+v", h.w.Owner, h.w.OwnerCleared, o.Records)
	}
	wantContext(t, o, "orch-hook: an orchestrate workflow is active")
	// Once.
	start("sess-third", "clear")
	if h.w.Owner != "sess-new" {
		t.Errorf("owner %q", h.w.Owner)
	}
}

func TestWorkflowStartedFromTheCLI(t *testing.T) {
	h := newHarness(t)
	h.w = must(NewWorkflow("Add a login page", ""))
	// Nothing is foreign before the first prompt.
	wantAllow(t, h.do(&gates.Call{Event: gates.PreToolUse, Tool: "Agent", SubagentType: gates.PluginPrefix + Analyst, Session: "sess-x", ToolUseID: "t1"}))
	o := h.do(promptCall("go on", "p1"))
	if h.w.Owner != ownerSession || !hasRecord(o, gates.RecUpdate, "workflow owned by session sess-owner (its first prompt)") {
		t.Errorf("owner %q records %+v", h.w.Owner, o.Records)
	}
}

func TestSummary(t *testing.T) {
	h := driveTo(t, S4a)
	h.w.Request = strings.Repeat("a very long request ", 400)
	for n := 1; n <= 2; n++ {
		h.launch(Implementer, implPrompt(n))
	}
	for i := 0; i < 300; i++ {
		h.w.Launches = append(h.w.Launches, &Launch{Agent: Implementer, Task: 99, Status: gates.Running})
	}
	s := h.w.Summary(h.env())
	if n := len([]rune(s)); n >= 2000 {
		t.Errorf("summary has %d characters", n)
	}
	o := h.do(&gates.Call{Event: gates.SessionStart, Source: "compact"})
	if n := len([]rune(o.Context)); n >= 2000 || o.Context == "" {
		t.Errorf("SessionStart context has %d characters", n)
	}
	h = driveTo(t, SF1)
	s = h.w.Summary(h.env())
	for _, want := range []string{
		"orch-hook: an orchestrate workflow is active: \"Add a login page\".",
		"Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS.",
		"Plan: 2 phases; current [PHASE 1 | Tasks 01-03].",
		"Counters: clarification 0/3, discovery 0/2, fix iterations 1/3, final-validation failures 0/3.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	for _, target := range []string{S0a, S1, S3, escalatedFix, awaitFix5a} {
		h := driveTo(t, target)
		o := h.do(&gates.Call{Event: gates.SessionStart, Source: "startup"})
		if len([]rune(o.Context)) >= 2000 || !strings.Contains(o.Context, "Now: "+h.w.Where()) {
			t.Errorf("%s: %q", target, o.Context)
		}
	}
}
