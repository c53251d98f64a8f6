// Package e2e runs the real Claude Code CLI offline against the scripted
// Messages API mock (internal/dev/mockapi) with a plugin loaded by
// --plugin-dir, and checks what the hooks did and what the model was told.
//
// # Running
//
//	go test ./internal/dev/e2e/                 # skips when claude is absent
//	ORCH_HOOK_E2E_REQUIRED=1 go test ./internal/dev/e2e/   # fails instead
//	go test ./internal/dev/e2e/ -v -run Smoke   # logs every mock request
//	ORCH_HOOK_E2E_DUMP=/tmp/d go test ...   # writes events, stderr and every
//	                                        # request body under /tmp/d/TEST/
//
// The claude binary is $ORCH_HOOK_CLAUDE, else `claude` on PATH, else
// .e2e/node_modules/.bin/claude under the repository root; install the
// pinned CLI there with
//
//	npm i --prefix .e2e @anthropic-ai/claude-code@2.1.328
//
// # Writing a test
//
//	run := runClaude(t, Config{
//		PluginDir: pluginDir,             // the plugin under test
//		Script:    loadScript(t, "testdata/smoke.txtar"),
//		Messages:  []string{"[[SMOKE]] run it", "/orch-hook:approve"},
//		MaxTurns:  10,
//	})
//	run.Mock.FindToolResult("PreToolUse:Bash hook error: ")
//	run.HookEvents(), run.Results(), run.ProjectDir
//
// runClaude starts a mock for the script, runs
//
//	claude -p --plugin-dir DIR --permission-mode bypassPermissions
//	  --input-format stream-json --output-format stream-json --verbose
//	  --include-hook-events --max-turns N
//
// in a throwaway project dir with a throwaway HOME and the offline
// environment (ANTHROPIC_BASE_URL to the mock, ANTHROPIC_API_KEY=test,
// DISABLE_TELEMETRY=1, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
// DISABLE_AUTOUPDATER=1, IS_SANDBOX=1 as root), writes each message as a
// stream-json user message once a `result` event arrived and the session
// is idle (no background agent running, no task notification pending; the
// CLI prints a result for the main thread's turn *and* one for each
// notification turn), closes stdin at the idle result after the last
// message, and returns every stream-json event.
// It fails the test if the run times out, if events carry more than one
// session_id, or if the CLI exits non-zero (unless Config.AllowFailure).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

// Environment variables read by the harness.
const (
	envClaude   = "ORCH_HOOK_CLAUDE"
	envRequired = "ORCH_HOOK_E2E_REQUIRED"
	envDump     = "ORCH_HOOK_E2E_DUMP"
)

// quietIdle is how long the harness waits after a result, with no
// background agent running, for the turn of a pending task notification.
const quietIdle = 3 * time.Second

// claudeBinary finds the claude CLI, or skips (fails when
// ORCH_HOOK_E2E_REQUIRED=1).
func claudeBinary(t testing.TB) string {
	t.Helper()
	var tried []string
	if p := os.Getenv(envClaude); p != "" {
		if isExecutable(p) {
			return p
		}
		tried = append(tried, fmt.Sprintf("$%s=%s (not an executable file)", envClaude, p))
	} else {
		if p, err := exec.LookPath("claude"); err == nil {
			return p
		}
		tried = append(tried, "claude on $PATH")
		root, err := repoRoot()
		if err == nil {
			p := filepath.Join(root, ".e2e", "node_modules", ".bin", "claude")
			if isExecutable(p) {
				return p
			}
			tried = append(tried, p)
		}
	}
	msg := fmt.Sprintf("claude CLI not found (tried %s); install it with "+
		"`npm i --prefix .e2e @anthropic-ai/claude-code@2.1.328` or set %s",
		strings.Join(tried, ", "), envClaude)
	if os.Getenv(envRequired) == "1" {
		t.Fatalf("%s=1 but %s", envRequired, msg)
	}
	t.Skip("e2e skipped: " + msg)
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found")
		}
		dir = parent
	}
}

// Config describes one CLI run.
type Config struct {
	// PluginDir is passed as --plugin-dir; "" runs the plugins installed
	// in Home (claude plugin install).
	PluginDir string
	// Script is served by a fresh mock; alternatively Mock is a running
	// one (then Script is ignored).
	Script *mockapi.Script
	Mock   *mockapi.Server
	// Messages are the user messages (at least one). Each is sent after a
	// result event that leaves the session idle: no background agent
	// running and no task notification waiting for its turn. Stdin is
	// closed at the next idle result after the last message, and the CLI
	// exits.
	Messages []string
	// SendEarly sends each message (and closes stdin) after the next
	// result event, even while background agents run.
	SendEarly bool
	// MaxTurns is --max-turns; 0 means 20.
	MaxTurns int
	// Timeout bounds the whole run; 0 means 60s. The CLI (and its process
	// group) is killed when it expires and the test fails.
	Timeout time.Duration
	// ProjectDir is the CLI's working directory; "" means a new temp dir.
	ProjectDir string
	// Home is the CLI's HOME; "" means a new temp dir.
	Home string
	// Env adds KEY=VALUE entries to the CLI's environment.
	Env []string
	// Args adds CLI arguments.
	Args []string
	// AllowFailure accepts a non-zero exit status.
	AllowFailure bool
}

// Event is one stream-json line of the CLI's output.
type Event struct {
	Type      string // "system", "assistant", "user", "result", ...
	Subtype   string // "init", "hook_started", "hook_response", "task_started", ...
	SessionID string
	// Hook events (type "system", subtype "hook_started"/"hook_response"):
	// HookName is e.g. "PreToolUse:Bash", HookEvent "PreToolUse". Use
	// Field("output", ...), "exit_code", "outcome" for the rest.
	HookID    string
	HookName  string
	HookEvent string
	// Result events.
	IsError  bool
	Result   string
	NumTurns int
	// Raw is the whole line.
	Raw json.RawMessage
	// At is when the line was read, relative to the start of the run.
	At time.Duration
}

// decodeEvent decodes one output line leniently: a field of an unexpected
// type is left empty instead of losing the event.
func decodeEvent(line []byte, at time.Duration) Event {
	e := Event{Raw: append(json.RawMessage(nil), line...), At: at}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		e.Type = "non-json"
		return e
	}
	for name, dst := range map[string]any{
		"type": &e.Type, "subtype": &e.Subtype, "session_id": &e.SessionID,
		"hook_id": &e.HookID, "hook_name": &e.HookName, "hook_event": &e.HookEvent,
		"is_error": &e.IsError, "result": &e.Result, "num_turns": &e.NumTurns,
	} {
		if raw, ok := m[name]; ok {
			_ = json.Unmarshal(raw, dst)
		}
	}
	return e
}

// IsHook reports whether e is a hook event (--include-hook-events).
func (e Event) IsHook() bool {
	return e.Type == "system" && strings.HasPrefix(e.Subtype, "hook_")
}

// Field decodes a top-level field of the raw event into v.
func (e Event) Field(name string, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(e.Raw, &m); err != nil {
		return err
	}
	raw, ok := m[name]
	if !ok {
		return fmt.Errorf("event has no field %q", name)
	}
	return json.Unmarshal(raw, v)
}

// Run is the outcome of runClaude.
type Run struct {
	Events     []Event
	Mock       *mockapi.Server
	ProjectDir string
	Home       string
	Stderr     string
	Err        error // the CLI's exit error, if any
	Elapsed    time.Duration
	SessionID  string
}

// HookEvents are the hook_started / hook_response / ... events.
func (r *Run) HookEvents() []Event {
	var out []Event
	for _, e := range r.Events {
		if e.IsHook() {
			out = append(out, e)
		}
	}
	return out
}

// Results are the result events (one per answered user message, at least).
func (r *Run) Results() []Event {
	var out []Event
	for _, e := range r.Events {
		if e.Type == "result" {
			out = append(out, e)
		}
	}
	return out
}

// HookEventsFor are the hook events of one hook event name (e.g.
// "PreToolUse").
func (r *Run) HookEventsFor(hookEvent string) []Event {
	var out []Event
	for _, e := range r.HookEvents() {
		if e.HookEvent == hookEvent {
			out = append(out, e)
		}
	}
	return out
}

// Dump is every event on one line each, for failure messages.
func (r *Run) Dump() string {
	var b strings.Builder
	for _, e := range r.Events {
		line := string(e.Raw)
		if len(line) > 400 {
			line = line[:400] + "..."
		}
		fmt.Fprintf(&b, "%6.2fs %s\n", e.At.Seconds(), line)
	}
	return b.String()
}

// loadScript loads a mockapi script file (path relative to the test).
func loadScript(t testing.TB, path string) *mockapi.Script {
	t.Helper()
	s, err := mockapi.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runClaude runs the CLI as cfg says and returns what it printed. See the
// package comment.
func runClaude(t *testing.T, cfg Config) *Run {
	t.Helper()
	bin := claudeBinary(t)
	if cfg.PluginDir == "" && cfg.Home == "" {
		t.Fatal("runClaude: neither Config.PluginDir nor a Home with installed plugins")
	}
	if len(cfg.Messages) == 0 {
		t.Fatal("runClaude: Config.Messages is empty")
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	mock := cfg.Mock
	if mock == nil {
		if cfg.Script == nil {
			t.Fatal("runClaude: neither Config.Script nor Config.Mock")
		}
		var err error
		mock, err = mockapi.Start(mockapi.Options{
			Script:      cfg.Script,
			Timeout:     cfg.Timeout + 10*time.Second,
			MaxRequests: 300,
			Logf:        t.Logf,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = mock.Close() })
	}
	run := &Run{Mock: mock, ProjectDir: cfg.ProjectDir, Home: cfg.Home}
	if run.Home == "" {
		run.Home = t.TempDir()
	}
	if run.ProjectDir == "" {
		run.ProjectDir = t.TempDir()
	}

	args := []string{"-p"}
	if cfg.PluginDir != "" {
		args = append(args, "--plugin-dir", cfg.PluginDir)
	}
	args = append(args,
		"--permission-mode", "bypassPermissions",
		"--input-format", "stream-json",
		"--output-format", "stream-json",
		"--verbose",
		"--include-hook-events",
		"--max-turns", fmt.Sprint(cfg.MaxTurns),
	)
	args = append(args, cfg.Args...)

	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = run.ProjectDir
	// TMPDIR too is per run: the CLI keeps background agents' output
	// files under $TMPDIR/claude-UID/.
	cmd.Env = append(cliEnv(run.Home, mock.URL()), "TMPDIR="+t.TempDir())
	cmd.Env = append(cmd.Env, cfg.Env...)
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	seen := len(mock.Requests()) // a shared mock may hold earlier runs'
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() { // in case of a t.Fatal below
		if cmd.ProcessState == nil {
			killProcessGroup(cmd)
		}
	})

	events := make(chan Event, 64)
	readErr := make(chan error, 1)
	go func() {
		defer close(events)
		rd := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := rd.ReadBytes('\n')
			if line = bytes.TrimSpace(line); len(line) > 0 {
				events <- decodeEvent(line, time.Since(start))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
		}
	}()

	send := func(text string) error {
		msg := map[string]any{
			"type":               "user",
			"session_id":         "",
			"parent_tool_use_id": nil,
			"message": map[string]any{
				"role":    "user",
				"content": []any{map[string]any{"type": "text", "text": text}},
			},
		}
		b, err := json.Marshal(msg)
		if err != nil {
			return err
		}
		_, err = stdin.Write(append(b, '\n'))
		return err
	}

	var failure string
	if err := send(cfg.Messages[0]); err != nil {
		failure = fmt.Sprintf("write message 1: %v", err)
	}
	next := 1         // messages sent
	stdinOpen := true // closed after the last message: the CLI ends on EOF
	// The session is idle after a result when no background agent runs and
	// no background agent's notification arrived since the last turn
	// started (its own turn is still to come). Should a notification be
	// folded into a running turn instead, quiet time after a result with
	// nothing running counts as idle too.
	running, notified, pendingResult := 0, false, false
	background := map[string]bool{} // task ids launched in the background
	quiet := time.NewTimer(time.Hour)
	defer quiet.Stop()
	advance := func() {
		pendingResult = false
		if next < len(cfg.Messages) {
			if err := send(cfg.Messages[next]); err != nil {
				failure = fmt.Sprintf("write message %d: %v", next+1, err)
			}
			next++
		} else {
			_ = stdin.Close()
			stdinOpen = false
		}
	}
	timedOut := false
loop:
	for failure == "" {
		select {
		case e, ok := <-events:
			if !ok {
				break loop
			}
			run.Events = append(run.Events, e)
			var task struct {
				TaskID         string `json:"task_id"`
				IsBackgrounded bool   `json:"is_backgrounded"`
			}
			switch e.Type + "/" + e.Subtype {
			case "system/task_started":
				if json.Unmarshal(e.Raw, &task) == nil && task.IsBackgrounded {
					background[task.TaskID] = true
				}
			case "system/background_tasks_changed":
				var tasks []json.RawMessage
				_ = e.Field("tasks", &tasks)
				running = len(tasks)
			case "system/task_notification":
				if json.Unmarshal(e.Raw, &task) == nil && background[task.TaskID] {
					notified = true
				}
			case "system/init": // every turn starts with one
				notified = false
				pendingResult = false
			}
			if !stdinOpen {
				continue
			}
			if e.Type == "result" {
				pendingResult = true
			}
			if !pendingResult {
				continue
			}
			if cfg.SendEarly || (running == 0 && !notified) {
				advance()
			} else if running == 0 {
				quiet.Reset(quietIdle)
			}
		case <-quiet.C:
			if stdinOpen && pendingResult && running == 0 {
				t.Logf("harness: no turn followed a task notification for %v; taking the session as idle", quietIdle)
				advance()
			}
		case <-ctx.Done():
			timedOut = true
			break loop
		}
	}
	if stdinOpen {
		_ = stdin.Close()
	}
	if timedOut || failure != "" {
		killProcessGroup(cmd)
	}
	for e := range events { // drain after a kill or EOF
		run.Events = append(run.Events, e)
	}
	run.Err = cmd.Wait()
	killProcessGroup(cmd) // hooks or tools left behind
	run.Elapsed = time.Since(start)
	run.Stderr = stderr.String()
	select {
	case err := <-readErr:
		failure = fmt.Sprintf("read stdout: %v", err)
	default:
	}
	t.Logf("claude ran %.1fs: %d events, %d mock requests, exit %v",
		run.Elapsed.Seconds(), len(run.Events), len(mock.Requests()), run.Err)
	if dir := os.Getenv(envDump); dir != "" {
		dumpRun(t, filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")), run)
	}

	report := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
		t.Logf("stderr:\n%s", run.Stderr)
		t.Logf("events:\n%s", run.Dump())
		t.Logf("mock requests:\n%s", mock.Summary())
		t.FailNow()
	}
	switch {
	case timedOut:
		report("claude did not finish within %v (sent %d of %d messages)", cfg.Timeout, next, len(cfg.Messages))
	case failure != "":
		report("%s", failure)
	case next < len(cfg.Messages):
		report("claude exited after %d of %d messages: %v", next, len(cfg.Messages), run.Err)
	case run.Err != nil && !cfg.AllowFailure:
		report("claude failed: %v", run.Err)
	}
	if err := mock.Err(); err != nil {
		report("mock stopped itself: %v", err)
	}
	ids := map[string]bool{}
	for _, e := range run.Events {
		if e.SessionID != "" {
			ids[e.SessionID] = true
			if run.SessionID == "" {
				run.SessionID = e.SessionID
			}
		}
	}
	if len(ids) != 1 {
		report("want one session_id across the events, got %d: %v", len(ids), keys(ids))
	}
	for _, r := range mock.Requests()[seen:] {
		if r.SessionID != "" && r.SessionID != run.SessionID {
			report("mock request #%d has session id %s, the events %s", r.Seq, r.SessionID, run.SessionID)
		}
	}
	if len(run.HookEvents()) == 0 {
		t.Logf("note: no hook events in the output")
	}
	return run
}

// dumpRun writes the run's events, stderr and every mock request (headers
// and body) under dir, for ORCH_HOOK_E2E_DUMP=dir.
func dumpRun(t *testing.T, dir string, run *Run) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("dump: %v", err)
		return
	}
	var ev bytes.Buffer
	for _, e := range run.Events {
		ev.Write(e.Raw)
		ev.WriteByte('\n')
	}
	files := map[string][]byte{
		"events.jsonl": ev.Bytes(),
		"stderr.txt":   []byte(run.Stderr),
		"requests.txt": []byte(run.Mock.Summary()),
	}
	for _, r := range run.Mock.Requests() {
		name := fmt.Sprintf("req-%03d-%s-t%d", r.Seq, r.Conversation, r.Turn)
		if r.Conversation == "" {
			name = fmt.Sprintf("req-%03d-unmatched", r.Seq)
		}
		var hdr strings.Builder
		fmt.Fprintf(&hdr, "%s %s?%s\n", r.Method, r.Path, r.RawQuery)
		for k, v := range r.Header {
			fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(v, ", "))
		}
		files[name+".headers"] = []byte(hdr.String())
		var body bytes.Buffer
		if json.Indent(&body, r.Body, "", "  ") != nil {
			body.Reset()
			body.Write(r.Body)
		}
		files[name+".json"] = body.Bytes()
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Logf("dump: %v", err)
		}
	}
	t.Logf("dumped the run to %s", dir)
}

// cliEnv is the CLI's whole environment: nothing of the caller's but what
// tools need (PATH, locale, temp dir, Go caches), plus the offline setup.
func cliEnv(home, baseURL string) []string {
	env := []string{
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=test",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"NO_COLOR=1",
	}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	for _, k := range []string{"PATH", "LANG", "LC_ALL", "TZ", "GOROOT", "GOPATH", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "XDG_CONFIG_HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// Keep the Go caches of the real user, so a hook that runs go does not
	// start cold in the throwaway HOME.
	if v := os.Getenv("GOCACHE"); v != "" {
		env = append(env, "GOCACHE="+v)
	} else if d, err := os.UserCacheDir(); err == nil {
		env = append(env, "GOCACHE="+filepath.Join(d, "go-build"))
	}
	if v := os.Getenv("GOMODCACHE"); v != "" {
		env = append(env, "GOMODCACHE="+v)
	} else if h, err := os.UserHomeDir(); err == nil && os.Getenv("GOPATH") == "" {
		env = append(env, "GOMODCACHE="+filepath.Join(h, "go", "pkg", "mod"))
	}
	if runtime.GOOS == "windows" {
		env = append(env, "USERPROFILE="+home)
	}
	return env
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Saw reports whether any stream-json line of the run contains text (what
// the user is shown: results, hook responses, informational messages).
func (r *Run) Saw(text string) bool {
	for _, e := range r.Events {
		if strings.Contains(string(e.Raw), text) {
			return true
		}
	}
	return false
}
