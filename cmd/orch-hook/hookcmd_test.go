package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orch-hook/orch-hook/internal/dev/payloads"
)

// payloadDir holds real Claude Code 2.1.328 payloads (testdata/payloads,
// see its README), used as templates.
var payloadDir = func() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "testdata", "payloads")
}()

// cmdHook is the testscript command
//
//	hook TEMPLATE [path=value | path:=json | -path]...
//
// It loads testdata/payloads/TEMPLATE.json, a payload exactly as Claude
// Code sent it, points its paths at $WORK, sets session_id to $SESSION,
// applies the overrides (dotted paths into the JSON; "\n" in a value is a
// newline; "path=@file" reads the value from a file in $WORK), and pipes it
// to `orch-hook hook EVENT`. Its stdout and stderr are kept for the next
// stdout/stderr checks; it fails unless orch-hook exits 0 (or, negated,
// unless it exits non-zero).
func cmdHook(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: hook TEMPLATE [path=value|path:=json|-path]...")
	}
	stdout, stderr, err := runHook(ts, args[0], args[1:]...)
	ts.Stdout().Write([]byte(stdout))
	ts.Stderr().Write([]byte(stderr))
	switch {
	case neg && err == nil:
		ts.Fatalf("hook %s: unexpected success", args[0])
	case !neg && err != nil:
		ts.Fatalf("hook %s: %v", args[0], err)
	}
}

// runHook builds the payload from a template and runs orch-hook hook on it.
func runHook(ts *testscript.TestScript, template string, overrides ...string) (string, string, error) {
	for i, o := range overrides {
		if k, v, ok := strings.Cut(o, "="); ok && strings.HasPrefix(v, "@") && !strings.HasSuffix(k, ":") {
			overrides[i] = k + "=" + ts.ReadFile(strings.TrimPrefix(v, "@"))
		}
	}
	input, err := buildPayload(template, ts.Getenv("WORK"), ts.Getenv("SESSION"), overrides...)
	ts.Check(err)
	env := map[string]string{"HOME": ts.Getenv("HOME")}
	for _, k := range []string{"CLAUDE_PROJECT_DIR", "ORCH_HOOK_STOP_CAP", "ORCH_HOOK_DEBUG", "ORCH_HOOK_NOW", "XDG_CONFIG_HOME", "CLAUDE_PLUGIN_DATA", "CLAUDE_CONFIG_DIR"} {
		env[k] = ts.Getenv(k)
	}
	stdout, stderr, err := execHook(ts.Getenv("WORK"), input, env)
	if stdout != "" {
		ts.Logf("[hook %s stdout]\n%s", template, stdout)
	}
	if stderr != "" {
		ts.Logf("[hook %s stderr]\n%s", template, stderr)
	}
	return stdout, stderr, err
}

// buildPayload builds a payload from the captured templates (see package
// payloads).
func buildPayload(template, work, session string, overrides ...string) ([]byte, error) {
	return payloads.Build(payloadDir, template, work, session, overrides...)
}

// execHook runs `orch-hook hook --budget 14s EVENT` on the payload in dir,
// as hooks.json does.
func execHook(dir string, input []byte, env map[string]string) (string, string, error) {
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	json.Unmarshal(input, &ev)
	bin, err := exec.LookPath("orch-hook")
	if err != nil {
		return "", "", err
	}
	cmd := exec.Command(bin, "hook", "--budget", "14s", ev.Name)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	for k, v := range env {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err
}
