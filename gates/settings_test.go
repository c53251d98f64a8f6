package gates

import "testing"

func TestTeamAgentsText(t *testing.T) {
	team := TeamAgents{"code-implementer": "backend-dev", "code-quality": "qa"}
	for in, want := range map[string]string{
		"launch code-implementer for Task 01":                    "launch backend-dev for Task 01",
		"launch orch-hook:code-implementer (subagent_type)":      "launch backend-dev (subagent_type)",
		"code-quality and ux-dx-quality":                         "qa and ux-dx-quality",
		"my-code-implementer, code-implementer2, x:code-quality": "my-code-implementer, code-implementer2, x:code-quality",
		"(code-implementer).":                                    "(backend-dev).",
		"code-implementer":                                       "backend-dev",
		"":                                                       "",
	} {
		if got := team.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTeamAgentsIn(t *testing.T) {
	team := TeamAgents{"code-implementer": "backend-dev"}
	c := &Call{Event: PreToolUse, Tool: "Agent", SubagentType: "backend-dev"}
	got, refused := team.In(c)
	if refused != "" || got.SubagentType != PluginPrefix+"code-implementer" || c.SubagentType != "backend-dev" {
		t.Errorf("the team's agent: %+v %q (the call %+v must not change)", got, refused, c)
	}
	for _, own := range []string{"code-implementer", "orch-hook:code-implementer"} {
		if _, refused := team.In(&Call{Event: PreToolUse, Tool: "Agent", SubagentType: own}); refused == "" {
			t.Errorf("%s: the role's own agent is not refused though the team mapped it", own)
		}
	}
	if got, refused := team.In(&Call{Event: PreToolUse, Tool: "Agent", SubagentType: "orch-hook:code-quality"}); refused != "" || got.SubagentType != "orch-hook:code-quality" {
		t.Errorf("an unmapped role: %+v %q", got, refused)
	}
	if got, _ := team.In(&Call{Event: SubagentStop, AgentType: "backend-dev"}); got.AgentType != PluginPrefix+"code-implementer" {
		t.Errorf("SubagentStop of the team's agent: %+v", got)
	}
}

func TestNoteChange(t *testing.T) {
	c := &ConfigSnapshot{Settings: DefaultSettings(), File: ConfigFile, Hash: "aaa"}
	var o Outcome
	if c.NoteChange("aaa", &o) || o.Changed || o.Message != "" {
		t.Errorf("unchanged: %+v", o)
	}
	if !c.NoteChange("bbb", &o) || !o.Changed || o.Message == "" || len(o.Records) != 1 {
		t.Errorf("changed: %+v", o)
	}
	o = Outcome{}
	if c.NoteChange("bbb", &o) || o.Message != "" {
		t.Errorf("the same change reported twice: %+v", o)
	}
	if !c.NoteChange("", &o) || c.NoteChange("", &o) {
		t.Errorf("removed after a change: reported once? %+v %+v", o, c)
	}
	first := &ConfigSnapshot{Settings: DefaultSettings(), File: ConfigFile, Hash: "aaa"}
	if !first.NoteChange("", &o) || first.NoteChange("", &o) {
		t.Errorf("removed: reported once? %+v", first)
	}
	var none *ConfigSnapshot
	if none.NoteChange("x", &o) || none.Effective().Limits != DefaultSettings().Limits {
		t.Error("a workflow without a snapshot runs by the defaults and reports nothing")
	}
}
