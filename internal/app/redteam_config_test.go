//go:build unix

package app_test

// Red-team pass on the team configuration, end to end through app.Run as
// the hooks run it. TestRedTeamFixed* FAIL on the code as reviewed (each is
// a hole the review found); TestRedTeamRefused* pass; TestRedTeamFixed*
// failed before a small fix made on wt-red and now guard it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/dev/payloads"
)

// redProject is a project whose hooks run through app.Run, each with a
// deadline: a hook that has not answered after it is what Claude Code
// would kill at its timeout, letting the call through.
type redProject struct {
	t    *testing.T
	root string
}

func newRedProject(t *testing.T) *redProject {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	return &redProject{t: t, root: root}
}

func (p *redProject) write(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// hook runs one hook call; answered is false when it did not answer
// within d (unblock is then called so that it can finish).
func (p *redProject) hook(d time.Duration, unblock func(), template string, overrides ...string) (out string, answered bool) {
	p.t.Helper()
	in, err := payloads.Build(payloadDir, template, p.root, "session-1", overrides...)
	if err != nil {
		p.t.Fatal(err)
	}
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(in, &ev)
	env := app.EnvFrom(func(k string) string {
		switch k {
		case "CLAUDE_PROJECT_DIR":
			return p.root
		case "HOME", "XDG_CONFIG_HOME":
			return os.Getenv(k)
		}
		return ""
	}, &bytes.Buffer{})
	env.Budget = 14 * time.Second
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- app.Run(env, bytes.NewReader(in), &buf, ev.Name) }()
	select {
	case err := <-done:
		if err != nil {
			p.t.Fatalf("hook %s: %v", template, err)
		}
		return buf.String(), true
	case <-time.After(d):
		if unblock != nil {
			unblock()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.t.Fatalf("hook %s still blocked after unblocking", template)
		}
		return "", false
	}
}

func fifoUnblocker(path string) func() {
	return func() {
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
}

// FIXED on wt-red (was a HOLE, the worst found; it failed before the fix
// to state's readSmall, which now opens with O_NONBLOCK and reads regular
// files only, and now guards it; ConfigHash then reads "unreadable" and
// the change is reported).
//
// HOLE (fail-open of every gate): before a workflow starts the model may
// change anything (README: "Before a workflow starts anyone may edit the
// file, the model included"). Without the sandbox it makes
// .orchestrator/config.json a symlink to a project file (src/team.json,
// content "{}": every value the default, so the start's notice shows
// nothing unusual; with git it can even read "committed", see below).
// Once the workflow runs, .orchestrator is closed to it, but src/ is not:
// `rm src/team.json && mkfifo src/team.json` names no .orchestrator path
// and is allowed. From then on every decision that is logged (every
// refusal) reads the configuration's hash (ConfigHash, through
// Confine, which follows the symlink into the project) and blocks opening
// the FIFO: the PreToolUse hook never answers, Claude Code kills it at its
// timeout (15s) and lets the refused call through.
func TestRedTeamFixedConfigSymlinkToFIFOFailsOpen(t *testing.T) {
	p := newRedProject(t)
	p.write("src/team.json", "{}")
	if err := os.MkdirAll(filepath.Join(p.root, ".orchestrator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src/team.json", filepath.Join(p.root, ".orchestrator", "config.json")); err != nil {
		t.Fatal(err)
	}
	// Fixed: a configuration that is a symbolic link is refused at the
	// start (and the link's target is never read).
	out, ok := p.hook(5*time.Second, nil, "user-prompt", "prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start")
	if !ok || !strings.Contains(out, `"block"`) || !strings.Contains(out, "is a symbolic link") {
		t.Fatalf("start with a symlinked configuration: %v %s", ok, out)
	}
	// Started by a regular file, the configuration then replaced by a
	// FIFO (only the user can, outside the sandbox's reach; the model's
	// tools are refused .orchestrator): every logged decision still
	// answers, and reports the change.
	if err := os.Remove(filepath.Join(p.root, ".orchestrator", "config.json")); err != nil {
		t.Fatal(err)
	}
	p.write(".orchestrator/config.json", "{}")
	if out, ok := p.hook(5*time.Second, nil, "user-prompt", "prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start2"); !ok || !strings.Contains(out, "workflow started") {
		t.Fatalf("start: %v %s", ok, out)
	}
	fifo := filepath.Join(p.root, ".orchestrator", "config.json")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out, ok = p.hook(5*time.Second, fifoUnblocker(fifo), "pre-agent", "tool_use_id=t-2", "tool_input.subagent_type=general-purpose", "tool_input.prompt=do it all")
	if !ok {
		t.Fatalf("HOLE: the refusal of general-purpose did not answer within 5s once the configuration became a FIFO: Claude Code's timeout would let the launch through (every refusal fails open the same way)")
	}
	if !strings.Contains(out, `"deny"`) || !strings.Contains(out, "config.json changed after this workflow started") {
		t.Errorf("general-purpose after the swap: %s", out)
	}
}

// The symlink of the test above reads "committed" with a little care: a
// symlink's blob is its target's text, so .orchestrator/config.json ->
// "{}" (a file .orchestrator/{}, itself a symlink to ../src/team.json,
// whose content is "{}") is committed as the blob "{}", the content read.
// The start then says "(committed): every value is the default."
func TestRedTeamFixedConfigSymlinkReadsCommitted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	p := newRedProject(t)
	p.write("src/team.json", "{}")
	orch := filepath.Join(p.root, ".orchestrator")
	if err := os.MkdirAll(orch, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../src/team.json", filepath.Join(orch, "{}")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("{}", filepath.Join(orch, "config.json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"commit", "-q", "-m", "team config"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+p.root, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v %s", args, err, b)
		}
	}
	snap, err := app.ReadConfig(p.root)
	var ce *app.ConfigError
	if errors.As(err, &ce) && strings.Contains(ce.Problem, "symbolic link") {
		return // fixed: refused
	}
	if err != nil {
		t.Fatal(err)
	}
	if snap.Git == "committed" {
		t.Errorf("HOLE: a configuration file that is a symlink (into a file the model may later replace) reads %q; a symlink should be refused, or at least never read as committed", snap.Git)
	}
}

// HOLE (fail-open of the start, with the sandbox too): .git/index is
// writable to the model's sandboxed Bash (git add writes it). A FIFO there
// hangs the UserPromptSubmit hook that starts the workflow (gitFileState's
// os.ReadFile): Claude Code kills it at its timeout and the typed
// /orch-hook:orchestrate reaches the model, whose command text says that
// orch-hook started the workflow and checks every step, while no workflow
// exists and nothing is enforced.
func TestRedTeamFixedStartHangsOnGitIndexFIFO(t *testing.T) {
	p := newRedProject(t)
	p.write(".orchestrator/config.json", "{}")
	index := filepath.Join(p.root, ".git", "index")
	if err := os.MkdirAll(filepath.Dir(index), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(index, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out, ok := p.hook(5*time.Second, fifoUnblocker(index), "user-prompt", "prompt=/orch-hook:orchestrate Build a word counter", "prompt_id=p-start")
	if !ok {
		t.Fatalf("HOLE: the start did not answer within 5s with a FIFO at .git/index: Claude Code's timeout passes the prompt to the model with no workflow started")
	}
	t.Logf("start: %s", out)
}

// withConfig is rec forged (chain, summary, outcome) with every
// checkpoint's configuration snapshot replaced by settings.
func withConfig(t *testing.T, rec *app.Record, settings map[string]any) *app.Record {
	t.Helper()
	lines := make([]string, len(rec.Log))
	for i, l := range rec.Log {
		m := lineMap(t, l)
		if cp, ok := m["checkpoint"].(map[string]any); ok {
			if wf, ok := cp["workflow"].(map[string]any); ok {
				wf["config"] = map[string]any{"settings": settings}
			}
		}
		lines[i] = lineOfMap(m)
	}
	return forge(t, rec, lines)
}

// HOLE: verify takes the configuration snapshot "as recorded" and never
// checks it is one ParseConfig accepts. A forged record whose workflow
// ran with limits no configuration allows (retries 1000, stop_cap 0) or
// an agent mapping the parser refuses verifies "ok", though README says a
// verified record "obeyed the rules this binary enforces". (The same
// record with in-range values verifies, as it should: the control.) The
// summary does not show the configuration at all, so a reader of `verify`
// cannot tell that a record ran with 5b off or fix_iterations 10 either.
func TestRedTeamFixedVerifyAcceptsConfigTheParserRefuses(t *testing.T) {
	rec := recordRun(t)
	limits := func(retries, stopCap int) map[string]any {
		return map[string]any{"clarification_rounds": 3, "discovery_loops": 2, "fix_iterations": 3, "final_validation_failures": 3, "retries": retries, "stop_cap": stopCap}
	}
	control := withConfig(t, rec, map[string]any{"limits": limits(5, 7), "steps": map[string]any{"ux_dx_review": true}})
	if _, err := app.Verify(control); err != nil {
		t.Fatalf("control: a record forged with an in-range configuration does not verify, so this test forges wrongly: %v", err)
	}
	for name, settings := range map[string]map[string]any{
		"retries 1000":       {"limits": limits(1000, 3), "steps": map[string]any{"ux_dx_review": true}},
		"stop_cap 0":         {"limits": limits(2, 0), "steps": map[string]any{"ux_dx_review": true}},
		"all limits 0":       {"limits": map[string]any{}, "steps": map[string]any{"ux_dx_review": true}},
		"agent is a builtin": {"limits": limits(2, 3), "steps": map[string]any{"ux_dx_review": true}, "agents": map[string]any{"doc-writer": "general-purpose"}},
	} {
		if _, err := app.Verify(withConfig(t, rec, settings)); err == nil {
			t.Errorf("HOLE: a record whose configuration snapshot has %s (refused by ParseConfig) verifies ok", name)
		}
	}
}

// REFUSED (performance and safety): no hook reads the configuration when
// no workflow is active (only a start does). A FIFO at
// .orchestrator/config.json, which blocks any reader, is the detector:
// every other hook still answers at once.
func TestRedTeamRefusedNoWorkflowPathDoesNotReadConfig(t *testing.T) {
	p := newRedProject(t)
	cfg := filepath.Join(p.root, ".orchestrator", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfg, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, call := range [][]string{
		{"session-start"},
		{"pre-bash", "tool_input.command=go test ./..."},
		{"pre-agent", "tool_use_id=t-1", "tool_input.subagent_type=general-purpose"},
		{"pre-write", "tool_input.file_path=$WORK/src/a.go", "tool_input.content=x"},
		{"post-agent-fg", "tool_use_id=t-1"},
		{"user-prompt", "prompt=hello", "prompt_id=p-1"},
		{"stop"},
	} {
		if _, ok := p.hook(3*time.Second, fifoUnblocker(cfg), call[0], call[1:]...); !ok {
			t.Errorf("%s with no workflow read the configuration file (blocked on the FIFO)", call[0])
		}
	}
}
