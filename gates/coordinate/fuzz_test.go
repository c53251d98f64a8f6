package coordinate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// FuzzDecideCoord drives the coordinate engine with arbitrary event
// sequences: it must never panic, stay on its scope's table, and keep
// completed_states free of duplicates. Each line of the input is one event:
// "<event> <agent> <ids> <text>", fields separated by '|'.
func FuzzDecideCoord(f *testing.F) {
	f.Add("research-and-plan", "pre|research-specialist|t1||Topic: a\nstop|research-specialist|t1|a1|REPORT_CREATED: specs/001_x/reports/001_a.md\npost|research-specialist|t1|a1|")
	f.Add("research-only", "pre|research-sub-supervisor|t1||x\npre|research-specialist|w1|s1|Topic: a\nstop|research-specialist|w1|a1|REPORT_CREATED: /etc/passwd\nstop|research-sub-supervisor|t1|s1|SUPERVISOR_COMPLETE: {\"summary\":\"x\"}")
	f.Add("full-implementation", "pre|implementation-sub-supervisor|t1||Plan\npre|implementation-executor|w3|s1|Track 3: x\nstop|test-specialist|t2|a2|TESTS: FAIL\nstop||t9|a9|\nStop|||\nuser|||/orch-hook:abort")
	f.Add("debug-only", "pre|debug-analyst|t1||x\nstop|debug-analyst|t1|a1|REPORT_CREATED: specs/001_x/debug/001.md\npost|debug-analyst|t1|a1|\nnotify||t1|a1|")
	f.Add("research-only", "pre|research-specialist|t1||Topic: a\nwrote|research-specialist|t1|a1|/p/specs/001_x/reports/01.md\nstop|research-specialist|t1|a1|REPORT_CREATED: specs/001_x/reports/01.md\nwrote|research-specialist|t2|a2|/p/specs/001_x/reports/01.md")
	f.Fuzz(func(t *testing.T, scope, script string) {
		if !ValidScope(scope) {
			scope = ScopeFullImplementation
		}
		c := must(NewWorkflow("fuzz the engine", scope, "s", "specs/001_x"))
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		env := &Env{
			Root: "/p",
			Now:  now,
			Inspect: func(p string) FileCheck {
				rel := strings.TrimPrefix(p, "/p/")
				inside := !strings.Contains(p, "..") && (!strings.HasPrefix(p, "/") || strings.HasPrefix(p, "/p/"))
				return FileCheck{Rel: rel, Inside: inside, Exists: inside && len(rel)%2 == 0, Size: int64(len(rel))}
			},
			// A file's content is its name's length: paths of one length
			// look like copies of each other.
			Hash: func(p string) (string, string, error) {
				rel := strings.TrimPrefix(p, "/p/")
				if strings.Contains(p, "..") || len(rel)%3 == 0 {
					return rel, "", fmt.Errorf("cannot read %s", rel)
				}
				return rel, fmt.Sprint(len(rel)), nil
			},
			List: func(string) []string { return []string{"001_a.md"} },
			Read: func(string) []byte {
				return []byte("### Phase 1: a\ndependencies: []\n### Phase 2: b\ndependencies: [1]\n")
			},
		}
		table := Table(scope)
		lines := strings.Split(script, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		for i, line := range lines {
			parts := strings.SplitN(line, "|", 5)
			for len(parts) < 5 {
				parts = append(parts, "")
			}
			kind, agent, tu, id, text := parts[0], gates.PluginPrefix+parts[1], parts[2], parts[3], parts[4]
			call := &gates.Call{Session: "s", ToolUseID: tu}
			switch kind {
			case "pre":
				call.Event, call.Tool, call.SubagentType, call.Prompt = gates.PreToolUse, "Agent", agent, text
				if id != "" {
					call.AgentID, call.AgentType = id, gates.PluginPrefix+supervisorOf(id)
				}
			case "post":
				call.Event, call.Tool, call.Status, call.LinkAgentID, call.DurationMs = gates.PostToolUse, "Agent", "completed", id, int64(len(text))
			case "stop":
				call.Event, call.AgentID, call.AgentType, call.Text = gates.SubagentStop, id, agent, text
			case "Stop":
				call.Event = gates.Stop
			case "user":
				call.Event, call.Prompt, call.PromptID = gates.UserPromptSubmit, text, fmt.Sprint("p", i)
			case "notify":
				call.Event, call.Prompt = gates.UserPromptSubmit, fmt.Sprintf("<task-notification>\n<task-id>%s</task-id>\n<tool-use-id>%s</tool-use-id>\n<status>completed</status>\n</task-notification>", id, tu)
			case "write":
				call.Event, call.Tool, call.Path, call.AgentID = gates.PreToolUse, "Write", text, id
			case "wrote":
				call.Event, call.Tool, call.Path, call.AgentID, call.AgentType = gates.PostToolUse, "Write", text, id, agent
			default:
				continue
			}
			env.Now = now.Add(time.Duration(i) * time.Second)
			if p := refusalProblem(Decide(c, call, env)); p != "" {
				t.Fatalf("event %d (%q): %s", i, line, p)
			}
			if _, ok := table[string(c.Current)]; !ok {
				t.Fatalf("event %d (%q): state %q is not on the %s path %v", i, line, c.Current, scope, table)
			}
			seen := map[gates.State]bool{}
			for _, s := range c.Completed {
				if seen[s] {
					t.Fatalf("event %d: completed_states %v repeats %s", i, c.Completed, s)
				}
				seen[s] = true
			}
		}
	})
}

// supervisorOf picks a parent agent type from a fuzzed agent id.
func supervisorOf(id string) string {
	kinds := []string{ResearchSupervisor, ImplSupervisor, TestSupervisor, ResearchSpecialist}
	return kinds[len(id)%len(kinds)]
}
