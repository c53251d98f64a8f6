package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// The standard plan of the `reach` command: phase 1 has three tasks (03
// depends on 01 and shares src/shared.go with 02), phase 2 one task that
// asks for a UX/DX review.
var standardPlan = map[string]string{
	"MASTER_PLAN.md": `# Master Plan: word counter

Progress: 0/4

## Phase 1: Core
Status: pending
- [ ] Task 01: Parser
- [ ] Task 02: Formatter
- [ ] Task 03: CLI flag

## Phase 2: Docs
Status: pending
- [ ] Task 04: Document it
`,
	"task-01-parser.md":    "# Task 01: Parser\nParallel With: 02\nFiles: src/parser.go\nrequires_ux_dx_review: false\n",
	"task-02-formatter.md": "# Task 02: Formatter\nParallel With: 01\nFiles: src/format.go, src/shared.go\nrequires_ux_dx_review: false\n",
	"task-03-cli.md":       "# Task 03: CLI flag\nDepends On: 01\nFiles: src/cli.go, src/shared.go\nrequires_ux_dx_review: false\n",
	"task-04-docs.md":      "# Task 04: Document it\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n",
}

// Ticked plans for 4c.
var (
	planPhase1Done = strings.NewReplacer("Progress: 0/4", "Progress: 3/4", "- [ ] Task 01", "- [x] Task 01", "- [ ] Task 02", "- [x] Task 02", "- [ ] Task 03", "- [x] Task 03", "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\nStatus: complete").Replace(standardPlan["MASTER_PLAN.md"])
	planAllDone    = strings.NewReplacer("Progress: 3/4", "Progress: 4/4", "- [ ] Task 04", "- [x] Task 04", "## Phase 2: Docs\nStatus: pending", "## Phase 2: Docs\nStatus: complete").Replace(planPhase1Done)
)

// step is one hook call of a milestone; files are written before it.
type step struct {
	args  []string
	files map[string]string
}

func agentCalls(id, agent, prompt, report string) []step {
	return []step{
		{args: []string{"pre-agent", "tool_use_id=t-" + id, "tool_input.subagent_type=orch-hook:" + agent, "tool_input.run_in_background:=false", "tool_input.prompt=" + prompt}},
		{args: []string{"subagent-stop", "agent_id=a-" + id, "agent_type=orch-hook:" + agent, "last_assistant_message=" + report}},
		{args: []string{"post-agent-fg", "tool_use_id=t-" + id, "tool_response.agentId=a-" + id, "tool_input.subagent_type=orch-hook:" + agent}},
	}
}

func planWrite(content string) []step {
	return []step{
		{args: []string{"pre-write", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md", "tool_input.content=" + content}},
		{args: []string{"post-write", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md"}, files: map[string]string{"MASTER_PLAN.md": content}},
	}
}

func concat(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// milestones, in order; `reach NAME` runs every milestone up to NAME.
var milestones = []struct {
	name  string
	steps []step
}{
	{"0a", []step{{args: []string{"user-prompt", "prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start"}}}},
	{"2", agentCalls("ra", "requirements-analyst", "Analyse the request", "Clear enough.\nREQUIREMENTS_CLEAR")},
	{"3", concat(
		[]step{{args: []string{"pre-agent", "tool_use_id=t-tp", "tool_input.subagent_type=orch-hook:task-planner", "tool_input.run_in_background:=false", "tool_input.prompt=Plan it"}}},
		[]step{{args: []string{"post-write-sub", "agent_id=a-tp", "agent_type=orch-hook:task-planner", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md"}, files: standardPlan}},
		[]step{{args: []string{"subagent-stop", "agent_id=a-tp", "agent_type=orch-hook:task-planner", "last_assistant_message=Plan written."}}},
		[]step{{args: []string{"post-agent-fg", "tool_use_id=t-tp", "tool_response.agentId=a-tp"}}},
	)},
	{"4a", []step{{args: []string{"user-prompt", "prompt=/orch-hook:approve", "prompt_id=p-approve"}}}},
	{"4b", concat(
		agentCalls("i1", "code-implementer", "Task 01: parser", "IMPLEMENTATION STATUS: COMPLETE"),
		agentCalls("i2", "code-implementer", "Task 02: formatter", "IMPLEMENTATION STATUS: COMPLETE"),
		agentCalls("i3", "code-implementer", "Task 03: CLI flag", "IMPLEMENTATION STATUS: COMPLETE"),
	)},
	{"F1", agentCalls("q1", "code-quality", "Quality gate, phase 1", "Formatter test fails: trailing space.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02")},
	{"F2", agentCalls("fa1", "task-planner", "FAILURE_ANALYSIS for Task 02", "Root cause: the formatter pads with a space.\nFAILURE_ANALYSIS: COMPLETE")},
	{"4b-again", agentCalls("fx1", "code-implementer", "Task 02: fix the padding", "IMPLEMENTATION STATUS: COMPLETE")},
	{"4c", agentCalls("q2", "code-quality", "Quality gate, phase 1 again", "All green.\nPHASE GATE STATUS: PASS")},
	{"phase2", planWrite(planPhase1Done)},
	{"5a", concat(
		agentCalls("i4", "code-implementer", "Task 04: docs", "IMPLEMENTATION STATUS: COMPLETE"),
		agentCalls("q3", "code-quality", "Quality gate, phase 2", "PHASE GATE STATUS: PASS"),
		planWrite(planAllDone),
	)},
	{"5b", agentCalls("f1", "code-quality", "Final validation", "Full suite and build pass.\nPHASE GATE STATUS: PASS")},
	{"6", agentCalls("ux1", "ux-dx-quality", "UX/DX review", "Looks good.\nUX/DX STATUS: PASS")},
	{"complete", agentCalls("se", "task-planner", "SUCCESS_EXTRACTION", "Learnings recorded.\nSUCCESS_EXTRACTION: COMPLETE")},
}

// cmdReach is the testscript command `reach MILESTONE`: it drives a fresh
// project through the real hooks, with the standard plan, to the named
// milestone (0a, 2, 3, 4a, 4b, F1, F2, 4b-again, 4c, phase2, 5a, 5b, 6,
// complete). Every call must be allowed; the script then goes on from there.
func cmdReach(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: reach [FROM] MILESTONE (FROM: go on from a milestone reached before)")
	}
	tasks := filepath.Join(ts.Getenv("WORK"), ".orchestrator", "tasks")
	// $REACH_AGENTS ("code-implementer=backend-dev,...") launches the
	// team's agents a configuration maps the roles to.
	var rename []string
	for _, pair := range strings.Split(ts.Getenv("REACH_AGENTS"), ",") {
		if role, agent, ok := strings.Cut(pair, "="); ok {
			rename = append(rename, "_type=orch-hook:"+role, "_type="+agent)
		}
	}
	renamer := strings.NewReplacer(rename...)
	skip := len(args) == 2
	for _, m := range milestones {
		if skip {
			skip = m.name != args[0]
			continue
		}
		for _, st := range m.steps {
			if st.files != nil {
				ts.Check(os.MkdirAll(tasks, 0o755))
				for name, content := range st.files {
					ts.Check(os.WriteFile(filepath.Join(tasks, name), []byte(content), 0o644))
				}
			}
			hookArgs := make([]string, len(st.args)-1)
			for i, a := range st.args[1:] {
				hookArgs[i] = renamer.Replace(a)
			}
			stdout, stderr, err := runHook(ts, st.args[0], hookArgs...)
			if err != nil || strings.Contains(stdout, `"deny"`) || strings.Contains(stdout, `"block"`) {
				ts.Fatalf("reach %s: step %s of milestone %s was refused: %v\n%s%s", args[0], st.args[0], m.name, err, stdout, stderr)
			}
		}
		if m.name == args[len(args)-1] {
			return
		}
	}
	ts.Fatalf("reach: unknown milestone %q", args[len(args)-1])
}
