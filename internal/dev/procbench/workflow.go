package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orch-hook/orch-hook/internal/dev/payloads"
	"github.com/orch-hook/orch-hook/state"
)

// This file drives a project through the real orchestrate workflow with
// the real binary, one hook payload at a time, as Claude Code would: the
// same payloads, built the same way, as the `reach` command of the
// cmd/orch-hook testscripts (reach_test.go, hookcmd_test.go). Nothing is
// written into the state files directly.

// benchSession is the session_id of every payload procbench sends.
const benchSession = "procbench-session"

// payload builds a hook payload from the captured templates (see package
// payloads), as the testscript `hook` command does.
func (h *harness) payload(project, template string, overrides ...string) ([]byte, error) {
	return payloads.Build(filepath.Join(h.module, payloads.Dir), template, project, benchSession, overrides...)
}

// hookCall is a timed "orch-hook hook EVENT" in project on the payload
// built from template and overrides, with CLAUDE_PROJECT_DIR set. Its
// check is left to the caller.
func (h *harness) hookCall(key, project, template string, overrides ...string) (command, error) {
	stdin, err := h.payload(project, template, overrides...)
	if err != nil {
		return command{}, err
	}
	var probe struct {
		Event string `json:"hook_event_name"`
	}
	if err := json.Unmarshal(stdin, &probe); err != nil || probe.Event == "" {
		return command{}, fmt.Errorf("%s.json: no hook_event_name", template)
	}
	return command{
		key:   key,
		label: "orch-hook hook",
		path:  h.orch,
		args:  []string{"hook", probe.Event},
		env:   []string{"CLAUDE_PROJECT_DIR=" + project},
		stdin: stdin,
	}, nil
}

// step runs one hook call untimed, as a setup step: it must succeed and be
// neither denied nor blocked. It returns the hook's stdout.
func (h *harness) step(project, template string, overrides ...string) (string, error) {
	c, err := h.hookCall("setup", project, template, overrides...)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(c.path, c.args...)
	cmd.Dir = project
	cmd.Env = childEnv(c.env)
	cmd.Stdin = bytes.NewReader(c.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out := stdout.String()
	if err != nil || strings.Contains(out, `"deny"`) || strings.Contains(out, `"block"`) {
		return out, fmt.Errorf("setup step %s %s was refused: %v\n%s%s", template, strings.Join(overrides, " "), err, out, stderr.String())
	}
	return out, nil
}

// standardPlan is the plan of reach_test.go: phase 1 has three tasks (03
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

// reach4a drives a fresh project to step 4a (phase 1 approved) with the
// hook calls of reach_test.go's milestones 0a, 2, 3 and 4a, then checks
// that orch-hook status says 4a.
func (h *harness) reach4a(project string) error {
	type call struct {
		template  string
		overrides []string
		plan      bool // write the standard plan first
	}
	calls := []call{
		// 0a: the user starts the workflow.
		{template: "user-prompt", overrides: []string{"prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start"}},
		// 2: requirements-analyst in the foreground finds them clear.
		{template: "pre-agent", overrides: []string{"tool_use_id=t-ra", "tool_input.subagent_type=orch-hook:requirements-analyst", "tool_input.run_in_background:=false", "tool_input.prompt=Analyse the request"}},
		{template: "subagent-stop", overrides: []string{"agent_id=a-ra", "agent_type=orch-hook:requirements-analyst", `last_assistant_message=Clear enough.\nREQUIREMENTS_CLEAR`}},
		{template: "post-agent-fg", overrides: []string{"tool_use_id=t-ra", "tool_response.agentId=a-ra", "tool_input.subagent_type=orch-hook:requirements-analyst"}},
		// 3: task-planner in the foreground writes the standard plan.
		{template: "pre-agent", overrides: []string{"tool_use_id=t-tp", "tool_input.subagent_type=orch-hook:task-planner", "tool_input.run_in_background:=false", "tool_input.prompt=Plan it"}},
		{template: "post-write-sub", overrides: []string{"agent_id=a-tp", "agent_type=orch-hook:task-planner", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md"}, plan: true},
		{template: "subagent-stop", overrides: []string{"agent_id=a-tp", "agent_type=orch-hook:task-planner", "last_assistant_message=Plan written."}},
		{template: "post-agent-fg", overrides: []string{"tool_use_id=t-tp", "tool_response.agentId=a-tp"}},
		// 4a: the user approves.
		{template: "user-prompt", overrides: []string{"prompt=/orch-hook:approve", "prompt_id=p-approve"}},
	}
	tasks := filepath.Join(project, ".orchestrator", "tasks")
	for _, c := range calls {
		if c.plan {
			if err := os.MkdirAll(tasks, 0o755); err != nil {
				return err
			}
			for name, content := range standardPlan {
				if err := os.WriteFile(filepath.Join(tasks, name), []byte(content), 0o644); err != nil {
					return err
				}
			}
		}
		if _, err := h.step(project, c.template, c.overrides...); err != nil {
			return err
		}
	}
	st, err := h.status(project)
	if err != nil {
		return err
	}
	if st.state() != "4a" || len(st.inFlight()) != 0 {
		return fmt.Errorf("after approval: want step 4a with no agent in flight, got orch-hook status --json:\n%s", st.raw)
	}
	return nil
}

// benchStatus is the part of `orch-hook status --json` (schema
// orch-hook.status/1) procbench checks.
type benchStatus struct {
	Workflow *struct {
		State  string `json:"state"`
		Serial uint64 `json:"serial"`
	} `json:"workflow"`
	Plan *struct {
		Phase  int `json:"phase"`
		Phases []struct {
			Number int `json:"number"`
			Tasks  []struct {
				Number int    `json:"number"`
				Status string `json:"status"`
			} `json:"tasks"`
		} `json:"phases"`
	} `json:"plan"`
	Agents *struct {
		InFlight []benchAgent `json:"in_flight"`
	} `json:"agents"`
	raw string
}

type benchAgent struct {
	Agent      string `json:"agent"`
	Task       int    `json:"task"`
	ToolUseID  string `json:"tool_use_id"`
	AgentID    string `json:"agent_id"`
	Background bool   `json:"background"`
}

// state is the workflow's step ("" without a workflow).
func (s benchStatus) state() string {
	if s.Workflow == nil {
		return ""
	}
	return s.Workflow.State
}

func (s benchStatus) serial() uint64 {
	if s.Workflow == nil {
		return 0
	}
	return s.Workflow.Serial
}

// inFlight lists the running agents.
func (s benchStatus) inFlight() []benchAgent {
	if s.Agents == nil {
		return nil
	}
	return s.Agents.InFlight
}

// taskStatus is the status of task n of the current phase ("" if none).
func (s benchStatus) taskStatus(n int) string {
	if s.Plan == nil {
		return ""
	}
	for _, ph := range s.Plan.Phases {
		for _, t := range ph.Tasks {
			if ph.Number == s.Plan.Phase && t.Number == n {
				return t.Status
			}
		}
	}
	return ""
}

// status runs `orch-hook --project DIR status --json`.
func (h *harness) status(project string) (benchStatus, error) {
	cmd := exec.Command(h.orch, "--project", project, "status", "--json")
	cmd.Env = childEnv(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return benchStatus{}, fmt.Errorf("orch-hook status --json: %v\n%s", err, stderr.String())
	}
	st := benchStatus{raw: string(out)}
	if err := json.Unmarshal(out, &st); err != nil {
		return benchStatus{}, fmt.Errorf("orch-hook status --json: %v\n%s", err, out)
	}
	return st, nil
}

// snapshot copies project's .orchestrator directory and its workflow's
// marker (outside the project, in procbench's config directory) aside, and
// returns a function that puts both back (untimed, in command.before), so
// that every run of a command that changes the state starts from the same
// state. Without the marker, orch-hook would find the state rolled back and
// fail closed. The files put back are new files, so their stamps no longer
// match the marker's: an untimed `orch-hook repair` (which on a healthy
// state only checks it and records the stamps) pins them again, and the
// timed run reads the state as it reads one orch-hook has just written.
func (h *harness) snapshot(project string) (restore func() error, err error) {
	live := filepath.Join(project, ".orchestrator")
	saved := project + ".snapshot"
	if err := copyTree(live, saved); err != nil {
		return nil, err
	}
	marker := state.Open(project).MarkerPath()
	pinned, err := os.ReadFile(marker)
	if err != nil {
		return nil, fmt.Errorf("the workflow's marker: %w", err)
	}
	return func() error {
		if err := os.RemoveAll(live); err != nil {
			return err
		}
		if err := copyTree(saved, live); err != nil {
			return err
		}
		if err := os.WriteFile(marker, pinned, 0o600); err != nil {
			return err
		}
		return h.orchHook("--project", project, "repair")
	}, nil
}

// copyTree copies the directory tree src to dst (which must not exist):
// directories, regular files with their modes and modification times.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm())
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, b, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(target, info.ModTime(), info.ModTime())
		default:
			return fmt.Errorf("%s: cannot snapshot a %s", path, d.Type())
		}
	})
}

// launchTask01 are the overrides of pre-agent.json (a background launch, as
// captured) that launch code-implementer for Task 01.
var launchTask01 = []string{"tool_use_id=t-i1", "tool_input.subagent_type=orch-hook:code-implementer", "tool_input.prompt=Task 01: parser"}

// benchLaunch is scenario f: at 4a, the PreToolUse(Agent) that launches
// code-implementer for Task 01. It is allowed (no output) and records the
// launch under the lock; each run starts again from the 4a snapshot.
func (h *harness) benchLaunch() (command, command, error) {
	p, err := h.project(h.tmpfs, "launch")
	if err != nil {
		return command{}, command{}, err
	}
	if err := h.reach4a(p); err != nil {
		return command{}, command{}, err
	}
	at4a, err := h.status(p)
	if err != nil {
		return command{}, command{}, err
	}
	restore, err := h.snapshot(p)
	if err != nil {
		return command{}, command{}, err
	}
	cmd, err := h.hookCall("hook-4a-launch", p, "pre-agent", launchTask01...)
	cmd.before = restore
	cmd.check = func(out []byte) error {
		if len(out) != 0 {
			return fmt.Errorf("got %q, want no output (allowed)", out)
		}
		st, err := h.status(p)
		if err != nil {
			return err
		}
		in := st.inFlight()
		if st.state() != "4a" || st.serial() != at4a.serial()+1 || len(in) != 1 || in[0].Agent != "code-implementer" || in[0].Task != 1 || in[0].ToolUseID != "t-i1" {
			return fmt.Errorf("want one state change recording the launch of code-implementer for Task 01 (serial %d) at 4a, got orch-hook status --json:\n%s", at4a.serial()+1, st.raw)
		}
		return nil
	}
	return cmd, h.floorTrivialCmd(), err
}

// benchCompletion is scenario g: the SubagentStop of the code-implementer
// launched for Task 01 in the background and linked to its agent id by its
// PostToolUse. It completes Task 01 under the lock (4a stays: Task 02 is
// open) and keeps the checkpoint line for the task-notification, so it
// prints nothing; each run starts again from the snapshot taken after the
// link.
func (h *harness) benchCompletion() (command, command, error) {
	p, err := h.project(h.tmpfs, "completion")
	if err != nil {
		return command{}, command{}, err
	}
	if err := h.reach4a(p); err != nil {
		return command{}, command{}, err
	}
	if _, err := h.step(p, "pre-agent", launchTask01...); err != nil {
		return command{}, command{}, err
	}
	if _, err := h.step(p, "post-agent-bg", "tool_use_id=t-i1", "tool_response.agentId=a-i1", "tool_input.subagent_type=orch-hook:code-implementer"); err != nil {
		return command{}, command{}, err
	}
	linked, err := h.status(p)
	if err != nil {
		return command{}, command{}, err
	}
	if in := linked.inFlight(); linked.state() != "4a" || len(in) != 1 || in[0].AgentID != "a-i1" || !in[0].Background || in[0].Task != 1 {
		return command{}, command{}, fmt.Errorf("after the launch and its link: want Task 01's code-implementer in flight in the background as a-i1, got orch-hook status --json:\n%s", linked.raw)
	}
	restore, err := h.snapshot(p)
	if err != nil {
		return command{}, command{}, err
	}
	// The agent's transcript, read for its tokens: the real CLI's (two
	// responses, 30 KB), its last response the report this stop names, so
	// the read does not wait for it.
	transcript, err := h.agentTranscript(p, "a-i1", "Parser done.\\nIMPLEMENTATION STATUS: COMPLETE")
	if err != nil {
		return command{}, command{}, err
	}
	cmd, err := h.hookCall("hook-4a-complete", p, "subagent-stop",
		"agent_id=a-i1", "agent_type=orch-hook:code-implementer",
		"last_assistant_message=Parser done.\\nIMPLEMENTATION STATUS: COMPLETE",
		"agent_transcript_path="+transcript,
		`background_tasks:=[{"id":"a-i1","type":"subagent","status":"running","description":"Implement feature X","agent_type":"orch-hook:code-implementer"}]`)
	cmd.before = restore
	cmd.check = func(out []byte) error {
		if len(out) != 0 {
			return fmt.Errorf("got %q, want no output (a background agent's line waits for its task-notification)", out)
		}
		st, err := h.status(p)
		if err != nil {
			return err
		}
		if st.state() != "4a" || st.serial() != linked.serial()+1 || len(st.inFlight()) != 0 || st.taskStatus(1) != "complete" {
			return fmt.Errorf("want one state change completing Task 01 (serial %d) at 4a, got orch-hook status --json:\n%s", linked.serial()+1, st.raw)
		}
		if !strings.Contains(st.raw, `"agents_known": 1,`) {
			return fmt.Errorf("want Task 01's tokens read from its transcript, got orch-hook status --json:\n%s", st.raw)
		}
		// The checkpoint line it kept is delivered at the notification.
		notified, err := h.step(p, "notification", "prompt=<task-notification>\\n<task-id>a-i1</task-id>\\n<tool-use-id>t-i1</tool-use-id>\\n<status>completed</status>\\n<result>Parser done.\\nIMPLEMENTATION STATUS: COMPLETE</result>\\n</task-notification>")
		if err != nil {
			return err
		}
		if want := "4a Task 01 COMPLETE -> 4a"; !strings.Contains(notified, want) {
			return fmt.Errorf("the task-notification after it says %q, want it to contain %q", notified, want)
		}
		return nil
	}
	return cmd, h.floorTrivialCmd(), err
}

// agentTranscript writes the captured transcript of a real CLI's agent
// (internal/transcript/testdata) where Claude Code keeps agent id's, under
// the project, with its last response's text made report (as a JSON
// string's contents); it returns its path.
func (h *harness) agentTranscript(project, id, report string) (string, error) {
	data, err := os.ReadFile(filepath.Join(h.module, "internal", "transcript", "testdata", "subagent-transcript.jsonl"))
	if err != nil {
		return "", err
	}
	data = bytes.Replace(data, []byte(`"text":"WORKER REPORT: echo ran."`), []byte(`"text":"`+report+`"`), 1)
	path := filepath.Join(project, "transcripts", benchSession, "subagents", "agent-"+id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// bench4aBash is scenario b: at 4a, a PreToolUse(Bash `ls`), relevant to
// the workflow but allowed on the lock-free snapshot: no output, no state
// change.
func (h *harness) bench4aBash() (command, command, error) {
	p, err := h.project(h.tmpfs, "bash-4a")
	if err != nil {
		return command{}, command{}, err
	}
	if err := h.reach4a(p); err != nil {
		return command{}, command{}, err
	}
	at4a, err := h.status(p)
	if err != nil {
		return command{}, command{}, err
	}
	cmd, err := h.hookCall("hook-4a-bash", p, "pre-bash", "tool_input.command=ls", "tool_input.description=List files")
	cmd.check = func(out []byte) error {
		if len(out) != 0 {
			return fmt.Errorf("got %q, want no output (allowed)", out)
		}
		st, err := h.status(p)
		if err != nil {
			return err
		}
		if st.state() != "4a" || st.serial() != at4a.serial() {
			return fmt.Errorf("want no state change (serial %d, 4a), got orch-hook status --json:\n%s", at4a.serial(), st.raw)
		}
		return nil
	}
	return cmd, h.floorTrivialCmd(), err
}

// benchStatusLine is `orch-hook statusline` on a workflow at 4a, given the
// JSON Claude Code passes a status line (its project, as observed in
// internal/dev/e2e/testdata/observed): one line, no lock, no write.
func (h *harness) benchStatusLine() (command, command, error) {
	p, err := h.project(h.tmpfs, "statusline-4a")
	if err != nil {
		return command{}, command{}, err
	}
	if err := h.reach4a(p); err != nil {
		return command{}, command{}, err
	}
	in := fmt.Sprintf(`{"session_id":"s","cwd":%q,"workspace":{"current_dir":%q,"project_dir":%q},"version":"2.1.328"}`, p, p, p)
	return command{
		key:   "statusline-4a",
		path:  h.orch,
		args:  []string{"statusline"},
		stdin: []byte(in),
		check: func(out []byte) error {
			if !strings.HasPrefix(string(out), "orch-hook 4a · phase 1/") {
				return fmt.Errorf("got %q, want the line of step 4a", out)
			}
			return nil
		},
	}, h.floorTrivialCmd(), nil
}
