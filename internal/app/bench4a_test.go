package app

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/dev/payloads"
	"github.com/orch-hook/orch-hook/state"
)

// BenchmarkHookAt4a is procbench's scenarios b, f and g (internal/dev/
// procbench/workflow.go: the same plan and hook calls) in one process, for
// CPU profiles of the hook path: a project driven to step 4a through real
// hook calls, then the call measured, the state put back untimed before
// each run (files, marker, and a repair that pins the files' stamps again,
// as procbench does). The config directory (marker, key) is on tmpfs
// beside the project unless ORCH_HOOK_BENCH_CONFIG names another: these
// measure orch-hook's own work, procbench the whole process.

const benchSession = "bench-session"

// benchPlan is procbench's standard plan.
var benchPlan = map[string]string{
	"MASTER_PLAN.md":       "# Master Plan: word counter\n\nProgress: 0/4\n\n## Phase 1: Core\nStatus: pending\n- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n- [ ] Task 03: CLI flag\n\n## Phase 2: Docs\nStatus: pending\n- [ ] Task 04: Document it\n",
	"task-01-parser.md":    "# Task 01: Parser\nParallel With: 02\nFiles: src/parser.go\nrequires_ux_dx_review: false\n",
	"task-02-formatter.md": "# Task 02: Formatter\nParallel With: 01\nFiles: src/format.go, src/shared.go\nrequires_ux_dx_review: false\n",
	"task-03-cli.md":       "# Task 03: CLI flag\nDepends On: 01\nFiles: src/cli.go, src/shared.go\nrequires_ux_dx_review: false\n",
	"task-04-docs.md":      "# Task 04: Document it\nFiles: docs/usage.md\nrequires_ux_dx_review: true\n",
}

type benchStep struct {
	template  string
	overrides []string
	plan      bool
}

var benchTo4a = []benchStep{
	{template: "user-prompt", overrides: []string{"prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start"}},
	{template: "pre-agent", overrides: []string{"tool_use_id=t-ra", "tool_input.subagent_type=orch-hook:requirements-analyst", "tool_input.run_in_background:=false", "tool_input.prompt=Analyse the request"}},
	{template: "subagent-stop", overrides: []string{"agent_id=a-ra", "agent_type=orch-hook:requirements-analyst", `last_assistant_message=Clear enough.\nREQUIREMENTS_CLEAR`}},
	{template: "post-agent-fg", overrides: []string{"tool_use_id=t-ra", "tool_response.agentId=a-ra", "tool_input.subagent_type=orch-hook:requirements-analyst"}},
	{template: "pre-agent", overrides: []string{"tool_use_id=t-tp", "tool_input.subagent_type=orch-hook:task-planner", "tool_input.run_in_background:=false", "tool_input.prompt=Plan it"}},
	{template: "post-write-sub", overrides: []string{"agent_id=a-tp", "agent_type=orch-hook:task-planner", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md"}, plan: true},
	{template: "subagent-stop", overrides: []string{"agent_id=a-tp", "agent_type=orch-hook:task-planner", "last_assistant_message=Plan written."}},
	{template: "post-agent-fg", overrides: []string{"tool_use_id=t-tp", "tool_response.agentId=a-tp"}},
	{template: "user-prompt", overrides: []string{"prompt=/orch-hook:approve", "prompt_id=p-approve"}},
}

var benchLaunch = []string{"tool_use_id=t-i1", "tool_input.subagent_type=orch-hook:code-implementer", "tool_input.prompt=Task 01: parser"}

func benchPayload(b *testing.B, root string, s benchStep) []byte {
	b.Helper()
	p, err := payloads.Build(filepath.Join("..", "..", payloads.Dir), s.template, root, benchSession, s.overrides...)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchEvent(b *testing.B, payload []byte) string {
	in, err := hooks.DecodeBytes(payload, "")
	if err != nil {
		b.Fatal(err)
	}
	return in.HookEventName
}

// benchStepRun runs one setup hook call, which must be neither denied
// nor blocked.
func benchStepRun(b *testing.B, env Env, root string, s benchStep) {
	b.Helper()
	if s.plan {
		dir := filepath.Join(root, ".orchestrator", "tasks")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for name, content := range benchPlan {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	p := benchPayload(b, root, s)
	var out bytes.Buffer
	if err := Run(env, bytes.NewReader(p), &out, benchEvent(b, p)); err != nil {
		b.Fatalf("%s: %v", s.template, err)
	}
	if bytes.Contains(out.Bytes(), []byte(`"deny"`)) || bytes.Contains(out.Bytes(), []byte(`"block"`)) {
		b.Fatalf("%s %v refused: %s", s.template, s.overrides, out.String())
	}
}

// benchPinned saves the project's state and marker, and returns what puts
// them back and pins them again.
func benchPinned(b *testing.B, root string) func() {
	b.Helper()
	store := state.Open(root)
	names := []string{"checkpoint.json", "events.jsonl"}
	saved := map[string][]byte{}
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(store.Dir, n))
		if err != nil {
			b.Fatal(err)
		}
		saved[n] = raw
	}
	marker, err := os.ReadFile(store.MarkerPath())
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(store.Dir, n), saved[n], 0o600); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(store.MarkerPath(), marker, 0o600); err != nil {
			b.Fatal(err)
		}
		if _, err := store.Repair(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHookAt4a: Run (decode, decide, render) of procbench's b
// (a lock-free Bash call), f (the launch of Task 01's code-implementer)
// and g (its completion, after the launch and its link).
func BenchmarkHookAt4a(b *testing.B) {
	cfg := os.Getenv("ORCH_HOOK_BENCH_CONFIG")
	if cfg == "" {
		cfg = benchProject(b)
	}
	b.Setenv("XDG_CONFIG_HOME", cfg)
	setup := func(b *testing.B, extra ...benchStep) (Env, string) {
		root := benchProject(b)
		env := Env{ProjectDir: root}
		for _, s := range benchTo4a {
			benchStepRun(b, env, root, s)
		}
		for _, s := range extra {
			benchStepRun(b, env, root, s)
		}
		return env, root
	}
	measure := func(b *testing.B, env Env, root string, call benchStep, changes bool) {
		p := benchPayload(b, root, call)
		event := benchEvent(b, p)
		restore := func() {}
		if changes {
			restore = benchPinned(b, root)
		}
		// Check once: allowed, and a state change when one is expected.
		before := mustLoadB(b, root).Serial
		var out bytes.Buffer
		if err := Run(env, bytes.NewReader(p), &out, event); err != nil || out.Len() != 0 {
			b.Fatalf("want an allow with no output, got %v %s", err, out.String())
		}
		if after := mustLoadB(b, root).Serial; changes != (after == before+1) {
			b.Fatalf("serial %d -> %d (a change: %v)", before, after, changes)
		}
		restore()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			b.StopTimer()
			restore()
			b.StartTimer()
			if err := Run(env, bytes.NewReader(p), io.Discard, event); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bash", func(b *testing.B) {
		env, root := setup(b)
		measure(b, env, root, benchStep{template: "pre-bash", overrides: []string{"tool_input.command=ls"}}, false)
	})
	b.Run("launch", func(b *testing.B) {
		env, root := setup(b)
		measure(b, env, root, benchStep{template: "pre-agent", overrides: benchLaunch}, true)
	})
	// complete: its transcript is missing (where no transcript is kept:
	// not waited for); complete-transcript: the real CLI's (30 KB, two
	// responses), read for its tokens.
	complete := func(b *testing.B, transcript bool) {
		env, root := setup(b,
			benchStep{template: "pre-agent", overrides: benchLaunch},
			benchStep{template: "post-agent-bg", overrides: []string{"tool_use_id=t-i1", "tool_response.agentId=a-i1", "tool_input.subagent_type=orch-hook:code-implementer"}})
		overrides := []string{
			"agent_id=a-i1", "agent_type=orch-hook:code-implementer",
			`last_assistant_message=Parser done.\nIMPLEMENTATION STATUS: COMPLETE`,
			`background_tasks:=[{"id":"a-i1","type":"subagent","status":"running","description":"Implement feature X","agent_type":"orch-hook:code-implementer"}]`,
		}
		if transcript {
			data, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "subagent-transcript.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			data = bytes.Replace(data, []byte(`"text":"WORKER REPORT: echo ran."`), []byte(`"text":"Parser done.\nIMPLEMENTATION STATUS: COMPLETE"`), 1)
			path := filepath.Join(b.TempDir(), "-p", "session", "subagents", "agent-a-i1.jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			overrides = append(overrides, "agent_transcript_path="+path)
		}
		measure(b, env, root, benchStep{template: "subagent-stop", overrides: overrides}, true)
	}
	b.Run("complete", func(b *testing.B) { complete(b, false) })
	b.Run("complete-transcript", func(b *testing.B) { complete(b, true) })
}

func mustLoadB(b *testing.B, root string) *state.Checkpoint {
	b.Helper()
	cp, err := state.Open(root).Load()
	if err != nil {
		b.Fatal(err)
	}
	return cp
}
