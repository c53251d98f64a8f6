package gates

// Red-team pass on the team configuration's agent mapping.
// TestRedTeamFixed* FAIL on the code as reviewed (each is a bug the review
// found); TestRedTeamRefused* pass.

import (
	"strings"
	"testing"
)

// BUG: Text replaces role by role, each pass over the previous pass's
// output, so an agent name that contains another role's name where it
// stands alone ('.' is not a name character, though agent names may hold
// dots) is rewritten again: with code-implementer -> "team.code-quality"
// and code-quality -> "qa", the model is told to launch "team.qa", an
// agent that does not exist (and whose launch is refused).
func TestRedTeamFixedTextRewritesAgentNames(t *testing.T) {
	team := TeamAgents{"code-implementer": "team.code-quality", "code-quality": "qa"}
	in := "launch code-implementer for Task 01, then code-quality."
	want := "launch team.code-quality for Task 01, then qa."
	if got := team.Text(in); got != want {
		t.Errorf("BUG: Text(%q) = %q, want %q (a replacement replaced again)", in, got, want)
	}
	team = TeamAgents{"code-implementer": "code-quality.v2", "code-quality": "qa"}
	in = "launch code-implementer."
	want = "launch code-quality.v2."
	if got := team.Text(in); got != want {
		t.Errorf("BUG: Text(%q) = %q, want %q", in, got, want)
	}
}

// BUG: Text rewrites a role's name inside paths ('/' and '.' are not name
// characters), so refusals and contexts quote files that do not exist:
// "the orchestrator may not edit src/researcher.go" becomes ".../
// src/deep-research.go" (researcher is a role, and a common word), and a
// deny record in the log keeps the wrong path.
func TestRedTeamFixedTextRewritesPaths(t *testing.T) {
	for team, cases := range map[string]struct {
		t  TeamAgents
		in []string
	}{
		"researcher": {TeamAgents{"researcher": "deep-research"}, []string{
			"the orchestrator may not edit src/researcher.go now",
			"docs/researcher/index.md belongs to Task 02",
		}},
		"code-implementer": {TeamAgents{"code-implementer": "backend-dev"}, []string{
			".claude/agents/code-implementer.md is Claude Code's configuration",
		}},
	} {
		for _, in := range cases.in {
			if got := cases.t.Text(in); got != in {
				t.Errorf("BUG (%s mapped): Text(%q) = %q: a path was rewritten", team, in, got)
			}
		}
	}
}

// REFUSED: a launch is read as a role only by the exact name the team
// mapped; every other spelling stays what it is (a non-workflow agent,
// which the workflows refuse), and the role's own agent is refused in both
// of its spellings.
func TestRedTeamRefusedInSpellings(t *testing.T) {
	team := TeamAgents{"code-implementer": "backend-dev", "research-specialist": "team:web"}
	for _, name := range []string{
		"Backend-Dev", "BACKEND-DEV", " backend-dev", "backend-dev ", "backend-dev\n",
		"orch-hook:backend-dev", "backеnd-dev", "backend\u200b-dev", "backend_dev",
		"web", "team:Web", "Team:web", "orch-hook:team:web",
	} {
		c := &Call{Event: PreToolUse, Tool: "Agent", SubagentType: name}
		got, refused := team.In(c)
		if got.SubagentType != name || refused != "" {
			t.Errorf("%q: read as %q (refused %q); only the exact mapped name plays the role", name, got.SubagentType, refused)
		}
		if got, _ := team.In(&Call{Event: SubagentStop, AgentType: name}); got.AgentType != name {
			t.Errorf("SubagentStop of %q counted as %q", name, got.AgentType)
		}
		if got, _ := team.In(&Call{Event: PreToolUse, Tool: "Write", AgentID: "a", AgentType: name}); got.AgentType != name {
			t.Errorf("a write by %q attributed to %q", name, got.AgentType)
		}
	}
	for _, own := range []string{"code-implementer", "orch-hook:code-implementer", "research-specialist", "orch-hook:research-specialist"} {
		if _, refused := team.In(&Call{Event: PreToolUse, Tool: "Agent", SubagentType: own}); refused == "" {
			t.Errorf("%s: the role's own agent is not refused though the team mapped it", own)
		}
	}
	// A supervisor (mapped or not) launching a mapped worker: the worker
	// is the role, the supervisor keeps its own name.
	got, refused := team.In(&Call{Event: PreToolUse, Tool: "Agent", AgentID: "sup", AgentType: "orch-hook:research-sub-supervisor", SubagentType: "team:web"})
	if refused != "" || got.SubagentType != PluginPrefix+"research-specialist" || got.AgentType != "orch-hook:research-sub-supervisor" {
		t.Errorf("a supervisor's launch of the mapped worker: %+v %q", got, refused)
	}
}

// REFUSED: the result lines and the texts verify compares are not touched
// by the translation (no role name in them), and a text with no role is
// returned as it is.
func TestRedTeamRefusedTextKeepsResultLines(t *testing.T) {
	team := TeamAgents{"code-implementer": "backend-dev", "code-quality": "qa", "task-planner": "planner", "researcher": "deep-research"}
	for _, in := range []string{
		"IMPLEMENTATION STATUS: COMPLETE", "PHASE GATE STATUS: PASS", "FAILING TASKS: 01, 02",
		"FAILURE_ANALYSIS: COMPLETE", "SUCCESS_EXTRACTION: COMPLETE", "REQUIREMENTS_CLEAR",
		"REPORT_CREATED: specs/001_x/reports/001_a.md", "[redacted sha256:" + "0000000000000000000000000000000000000000000000000000000000000000" + "]",
	} {
		if got := team.Text(in); got != in {
			t.Errorf("Text(%q) = %q", in, got)
		}
	}
}

// HOLE (defense in depth, low): the launch of a role's own agent is
// refused once the team mapped the role, but a subagent whose type is
// that agent is still read as the role: In leaves AgentType
// "orch-hook:code-implementer" (or "code-implementer") as it is, and the
// gates strip the namespace, so its writes are the implementer's and its
// SubagentStop completes a task. End to end (checked by hand): in 4a with
// code-implementer -> backend-dev, a backend-dev launch in flight, a
// pre-write of agent_type=orch-hook:code-implementer to src/parser.go is
// allowed, and its subagent-stop with IMPLEMENTATION STATUS: COMPLETE
// completes Task 01. Such an agent runs only when its launch escaped the
// PreToolUse rule (launched before the workflow started, in the
// background, or let through by a hook that hung: see the FIFO holes), but
// the mapping should close it on both sides.
func TestRedTeamFixedInRoleOwnAgentTypeStillPlaysRole(t *testing.T) {
	team := TeamAgents{"code-implementer": "backend-dev"}
	for _, own := range []string{"orch-hook:code-implementer", "code-implementer"} {
		for _, c := range []*Call{
			{Event: SubagentStop, AgentID: "a-own", AgentType: own},
			{Event: PreToolUse, Tool: "Write", AgentID: "a-own", AgentType: own, Path: "src/parser.go"},
		} {
			got, refused := team.In(c)
			if refused == "" && strings.TrimPrefix(got.AgentType, PluginPrefix) == "code-implementer" {
				t.Errorf("HOLE: %s of agent type %q is read as the role code-implementer, which the team mapped to backend-dev", c.Event, own)
			}
		}
	}
}
