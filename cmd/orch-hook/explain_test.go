package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/state"
)

// TestExplainReadsTheRefusal: after real denies through the hook, `explain
// --json` shows the refusal as the decision made it (gate, task, rule,
// where, next step, MCP tool), read from the log record's parts, and the
// reason the model was told is made of those same parts.
func TestExplainReadsTheRefusal(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "CLAUDE_PROJECT_DIR":
			return work
		case "HOME", "XDG_CONFIG_HOME":
			return os.Getenv(k)
		}
		return ""
	}
	// hook runs one call and returns the reason it was refused with.
	hook := func(template string, overrides ...string) string {
		t.Helper()
		input, err := buildPayload(template, work, "session-1", overrides...)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := hookInProcess(getenv, input)
		if code != 0 {
			t.Fatalf("hook %s: exit %d\n%s", template, code, stderr)
		}
		if stdout == "" {
			return ""
		}
		var out struct {
			Specific struct {
				Reason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("hook %s: %v\n%s", template, err, stdout)
		}
		return out.Specific.Reason + out.Reason
	}
	explain := func(id string) (explainReport, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"orch-hook", "--project", work, "explain", "--json", id}, strings.NewReader(""), &stdout, &stderr, getenv); code != 0 {
			t.Fatalf("explain %s: exit %d\n%s", id, code, stderr.String())
		}
		var r explainReport
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("explain %s: %v\n%s", id, err, stdout.String())
		}
		return r, stdout.String()
	}

	// Drive the workflow to F1 (reach F1 in the scripts).
	tasks := filepath.Join(work, ".orchestrator", "tasks")
	for _, m := range milestones {
		for _, st := range m.steps {
			if st.files != nil {
				if err := os.MkdirAll(tasks, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range st.files {
					if err := os.WriteFile(filepath.Join(tasks, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if reason := hook(st.args[0], st.args[1:]...); reason != "" {
				t.Fatalf("milestone %s, %s refused: %s", m.name, st.args[0], reason)
			}
		}
		if m.name == "F1" {
			break
		}
	}
	for _, c := range []struct {
		id        string
		template  string
		overrides []string
		via       string
	}{
		// A launch the step does not allow: a gate, the task, the next step.
		{id: "t-impl", template: "pre-agent", overrides: []string{"tool_input.subagent_type=orch-hook:code-implementer", "tool_input.prompt=Task 02: fix now"}},
		// A write through an MCP tool: the tool is named.
		{id: "t-mcp", template: "pre-bash", overrides: []string{"tool_name=mcp__fs__write_file", "-tool_input", `tool_input:={"path":"src/a.go","content":"x"}`}, via: "mcp__fs__write_file"},
	} {
		told := hook(c.template, append([]string{"tool_use_id=" + c.id}, c.overrides...)...)
		if told == "" {
			t.Fatalf("%s: not refused", c.id)
		}
		r, raw := explain(c.id)
		if r.Outcome != "denied" || r.Denial == nil || r.Denial.Refusal == nil {
			t.Fatalf("%s: explain --json has no refusal:\n%s", c.id, raw)
		}
		f := r.Denial.Refusal
		if f.Rule == "" || f.Where == "" || f.Next == "" || f.Via != c.via {
			t.Errorf("%s: refusal %+v; want a rule, where, next and via %q", c.id, f, c.via)
		}
		// What the model was told holds each part, in its place.
		head := "orch-hook: "
		if f.Via != "" {
			head += "(MCP tool " + f.Via + ") "
		}
		if f.Gate > 0 {
			head += "[Gate " + strconv.Itoa(f.Gate) + "] "
		}
		if want := head + f.Rule + " Now: " + f.Where + ". Next: " + f.Next + "."; told != want {
			t.Errorf("%s: the model was told\n%q\nexplain's parts make\n%q", c.id, told, want)
		}
		if !strings.Contains(told, "Next: "+f.Next+".") {
			t.Errorf("%s: the next step %q is not what the model was told: %q", c.id, f.Next, told)
		}
		if r.Denial.Rule != strings.TrimPrefix(told, "orch-hook: ") || f.Gate != 0 && (r.Denial.Gate == nil || r.Denial.Gate.Number != f.Gate) {
			t.Errorf("%s: denial %+v for %q", c.id, r.Denial, told)
		}
		if !strings.Contains(r.Text, "\nNext step the model was told: "+f.Next+".\n") || !strings.Contains(r.Text, "\nWhere the workflow stood: "+f.Where+".\n") {
			t.Errorf("%s: explain's text does not read the parts:\n%s", c.id, r.Text)
		}
	}
	if r, _ := explain("t-impl"); r.Denial.Refusal.Task != 2 || r.Denial.Task != 2 || r.Denial.Refusal.Gate != 3 {
		t.Errorf("t-impl: the refused launch's task: %+v", r.Denial)
	}
}

// TestExplainOlderDenial: a deny record written before refusals were
// values has its reason alone; explain tells it from the reason, as it
// did then, and --json has no refusal.
func TestExplainOlderDenial(t *testing.T) {
	ev := state.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Serial: 9, Type: state.EventDeny, HookEvent: "PreToolUse", Session: "s", ToolUseID: "t-old",
		AgentType: "code-implementer", Task: 2, Phase: 1, Gate: 3, StateBefore: "F1",
		Reason: "orch-hook: [Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed. Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS."}
	var w bytes.Buffer
	d := explainDeny(&w, &ev)
	if d.Refusal != nil {
		t.Errorf("refusal %+v from a record without parts", d.Refusal)
	}
	if want := "\nRule: [Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed. Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS.\nGate 3 (after 4b FAIL)"; !strings.Contains(w.String(), want) {
		t.Errorf("text:\n%s\nwant it to hold %q", w.String(), want)
	}
	if d.Rule != strings.TrimPrefix(ev.Reason, "orch-hook: ") || d.Gate == nil || d.Gate.Number != 3 {
		t.Errorf("denial %+v", d)
	}
}
