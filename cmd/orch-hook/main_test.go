package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/urfave/cli/v2"
)

// TestMain makes the test binary double as orch-hook: testscript puts it on
// PATH under that name, with the test-only test-bump subcommand added.
func TestMain(m *testing.M) {
	// Keep the active-workflow markers of the Go tests' subprocesses out of
	// the user's cache (scripts set their own in Setup).
	r := &mainRunner{m: m}
	if filepath.Base(os.Args[0]) != "orch-hook" { // the test process, not a command run by a script
		if dir, err := os.MkdirTemp("", "orch-hook-test-config-"); err == nil {
			os.Setenv("XDG_CONFIG_HOME", dir)
			r.dir = dir
		}
	}
	testscript.Main(r, map[string]func(){
		"orch-hook": func() {
			os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv, testCommands()...))
		},
	})
}

// mainRunner runs the tests, then removes TestMain's config directory
// (testscript.Main ends in os.Exit, so a defer in TestMain would not run).
type mainRunner struct {
	m   *testing.M
	dir string
}

func (r *mainRunner) Run() int {
	if r.dir != "" {
		defer os.RemoveAll(r.dir)
	}
	return r.m.Run()
}

func testCommands() []*cli.Command {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	return []*cli.Command{testBumpCommand(e)}
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// Scripts write beside $WORK ($WORK/../outside, a symlink to
		// $WORK): under a directory of the test's own, all of it is
		// removed, where testscript's default root would be left behind.
		WorkdirRoot:         t.TempDir(),
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			// runstatusline SETTINGS [KEY] runs the statusLine command of
			// a settings file (or KEY's: subagentStatusLine) as Claude Code
			// does: through sh, on the stdin a stdin command gave; it must
			// exit 0 (Claude Code shows nothing of a command that fails).
			"runstatusline": cmdRunStatusLine,
			"hook":          cmdHook,
			"reach":         cmdReach,
			// sandboxed CMD ARGS... runs a command as Claude Code's Bash
			// sandbox would: bubblewrap, the whole file system read-only
			// but the project, and in the project .orchestrator and the
			// user's cache (the active-workflow marker) read-only.
			"sandboxed": cmdSandboxed,
			// longpath N writes long.txt: a path of N bytes inside $WORK
			// ($WORK/././.../x).
			"longpath": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.Atoi(args[0])
				ts.Check(err)
				p := ts.Getenv("WORK") + "/"
				p += strings.Repeat("./", (n-len(p))/2) + "x"
				ts.Check(os.WriteFile(ts.MkAbs("long.txt"), []byte(p), 0o644))
			},
		},
		// [bwrap]: bubblewrap is installed. Without it, a script guarded by
		// [!bwrap] skip is skipped, unless ORCH_HOOK_E2E_REQUIRED=1 (CI
		// installs it), where the missing tool fails the script.
		Condition: func(cond string) (bool, error) {
			if cond != "bwrap" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			if _, err := exec.LookPath("bwrap"); err != nil {
				if os.Getenv("ORCH_HOOK_E2E_REQUIRED") == "1" {
					return false, fmt.Errorf("bwrap not found and ORCH_HOOK_E2E_REQUIRED=1 (apt-get install bubblewrap)")
				}
				return false, nil
			}
			return true, nil
		},
		Setup: func(env *testscript.Env) error {
			// Hooks must not pick up the developer's own Claude Code session.
			env.Setenv("CLAUDE_PROJECT_DIR", "")
			env.Setenv("SESSION", "session-1")
			// The marker and the workflow keys live in the user's config directory.
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/.config")
			// $TESTBIN is the directory holding the orch-hook command alone
			// (testscript puts it first on PATH), for PATHs without the rest.
			env.Setenv("TESTBIN", strings.SplitN(env.Getenv("PATH"), string(os.PathListSeparator), 2)[0])
			return nil
		},
	})
}

// cmdExits runs "exits CODE PROG ARGS..." and fails unless PROG exits with
// CODE; stdout and stderr are kept for the next stdout/stderr checks.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdRunStatusLine runs a settings file's statusLine command (see
// TestScripts).
func cmdRunStatusLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: runstatusline SETTINGS [KEY]")
	}
	key := "statusLine"
	if len(args) == 2 {
		key = args[1]
	}
	var settings map[string]json.RawMessage
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &settings))
	var s struct {
		Command string `json:"command"`
	}
	if raw, ok := settings[key]; ok {
		ts.Check(json.Unmarshal(raw, &s))
	}
	if s.Command == "" {
		ts.Fatalf("%s sets no %s command", args[0], key)
	}
	if err := ts.Exec("sh", "-c", s.Command); err != nil {
		ts.Fatalf("the status line failed (Claude Code would show nothing): %v", err)
	}
}

// cmdSandboxed runs its arguments under bubblewrap (see TestScripts).
func cmdSandboxed(ts *testscript.TestScript, neg bool, args []string) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		ts.Fatalf("sandboxed: bwrap not found (apt-get install bubblewrap); guard the script with [!bwrap] skip")
	}
	work := ts.Getenv("WORK")
	cache := ts.Getenv("XDG_CONFIG_HOME")
	keys := filepath.Join(cache, "orch-hook", "keys")
	ts.Check(os.MkdirAll(keys, 0o700))
	ts.Check(os.MkdirAll(filepath.Join(work, ".orchestrator"), 0o700))
	full := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--bind", work, work,
		"--ro-bind", filepath.Join(work, ".orchestrator"), filepath.Join(work, ".orchestrator"),
		"--ro-bind", cache, cache,
		// sandbox.filesystem.denyRead on the keys, as Claude Code applies
		// it: an empty directory over them.
		"--tmpfs", keys,
		"--chdir", ts.MkAbs("."), "--"}
	if p, err := exec.LookPath(args[0]); err == nil && !strings.Contains(args[0], "/") {
		args = append([]string{p}, args[1:]...)
	}
	err = ts.Exec(bwrap, append(full, args...)...)
	switch {
	case neg && err == nil:
		ts.Fatalf("sandboxed %s: unexpected success", args[0])
	case !neg && err != nil:
		ts.Fatalf("sandboxed %s: %v", args[0], err)
	}
}
