package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/state"
)

// version is stamped by the Makefile with -ldflags.
var version = "dev"

// benchCommands are added by build tags (bench_tag.go); none by default.
var benchCommands []func(*env) *cli.Command

// env is what the subcommands take from the process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Main runs orch-hook with args and returns the exit code. Errors are printed
// here, once, with the "orch-hook: " prefix.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, extra ...*cli.Command) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if err := refuseFromModelShell(args, getenv); err != nil {
		// As a hook, a gating event is refused on stdout (exit 0): were the
		// tripwire wrong about a real hook, the call is denied where the
		// user sees it, instead of let through by an exit code.
		if event := hookEvent(args); event == gates.PreToolUse || event == gates.UserPromptSubmit {
			var forged *app.ForgedError
			errors.As(err, &forged)
			if rerr := hooks.Render(stdout, event, hooks.Decision{Deny: true, Reason: "orch-hook: " + forged.Error() + "; " + forged.Hint() + ". If this is Claude Code's own hook, its environment carries a variable only the Bash tool's commands should (unset it where Claude Code is started)."}); rerr == nil {
				return exitOK
			}
		}
		printError(stderr, err)
		printJSONError(stdout, args, newMainApp(e, extra).Commands, err)
		return exitCode(err)
	}
	if len(args) >= 2 && args[1] == "hook" && !hasFlag(args[2:]) {
		// The hot path, on every tool call: straight to the handler, without
		// building the command line (the hook subcommand does the same;
		// flags such as --help go to it).
		err := handleHook(e, args[2:])
		if err != nil {
			printError(stderr, err)
		}
		return exitCode(err)
	}
	app := newMainApp(e, extra)
	err := app.Run(args)
	if err != nil {
		printError(stderr, err)
		printJSONError(stdout, args, app.Commands, err)
	}
	return exitCode(err)
}

// newMainApp is the command line Main runs: NewApp with the commands the
// build tags add and extra (the tests').
func newMainApp(e *env, extra []*cli.Command) *cli.App {
	app := NewApp(e)
	for _, mk := range benchCommands {
		app.Commands = append(app.Commands, mk(e))
	}
	app.Commands = append(app.Commands, extra...)
	return app
}

// refuseFromModelShell: a subcommand that changes anything (hook, start,
// repair, ...) refuses to run in the environment of Claude Code's Bash
// tool, where only the model runs it: a tripwire (README, "Threat model").
// A person's terminal, and Claude Code's hooks, are not refused.
func refuseFromModelShell(args []string, getenv func(string) string) error {
	if len(args) < 2 || gates.ReadOnlyArgs(args[1:]) {
		return nil
	}
	why := app.Tripwire(getenv)
	if why == "" {
		return nil
	}
	what := strings.Join(args[1:], " ")
	app.LogForgery(what, why)
	return &app.ForgedError{Command: what, Why: why}
}

// hookEvent is EVENT in `orch-hook [--project DIR] hook EVENT`, else "".
func hookEvent(args []string) string {
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--project" || a == "-project":
			i++
		case strings.HasPrefix(a, "-"):
		case a == "hook":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}

// hasFlag reports a flag other than the hook's own --budget (whose value is
// skipped, whatever it looks like).
func hasFlag(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case isBudgetFlag(a):
			if !strings.Contains(a, "=") {
				i++
			}
		case strings.HasPrefix(a, "-"):
			return true
		}
	}
	return false
}

// NewApp builds the command line; tests call it directly.
func NewApp(e *env) *cli.App {
	return &cli.App{
		Name:      "orch-hook",
		Usage:     "enforce a multi-agent workflow in Claude Code through hooks",
		Version:   version,
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Flags:     []cli.Flag{projectFlag},
		// A --project that does not exist is a usage error, not an empty
		// project.
		Before: func(c *cli.Context) error { return checkProject(c) },
		Commands: []*cli.Command{
			hookCommand(e),
			statusCommand(e),
			logCommand(e),
			migrateCommand(e),
			repairCommand(e),
			startCommand(e),
			generateCommand(e),
			initCommand(e),
			doctorCommand(e),
			graphCommand(e),
			reportCommand(e),
			explainCommand(e),
			verifyCommand(e),
			statuslineCommand(e),
			subagentStatuslineCommand(e),
			statsCommand(e),
			configCommand(e),
		},
		// Errors are printed and mapped to exit codes by Main alone.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usagef("%v", err)
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// projectFlag is accepted before the command and after it.
var projectFlag = &cli.StringFlag{Name: "project", Usage: "project root (default: the nearest directory upward holding .orchestrator/state, else the current one)"}

// projectDir is --project, given before the command or after it.
func projectDir(c *cli.Context) string {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet("project") {
			return ctx.String("project")
		}
	}
	return ""
}

// projectStore is the state of the project the CLI is pointed at. Its
// reads also decode the workflow's own section, so that status, doctor
// and repair call a state healthy only if the hooks can read it.
func projectStore(c *cli.Context) *state.Store {
	st := state.Open(projectRoot(c))
	st.Check = app.CheckWorkflow
	return st
}

func projectRoot(c *cli.Context) string {
	if dir := projectDir(c); dir != "" {
		abs, err := filepath.Abs(dir)
		if err == nil {
			dir = abs
		}
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return state.FindRoot(wd)
}

// jsonFlag is --json on the commands a script reads: one object of a
// versioned schema on stdout, and an error as one too (printJSONError).
func jsonFlag(schema string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON (the documented schema " + schema + jsonErrorUsage}
}

// jsonErrorUsage ends jsonFlag's usage: the help's promise that an error
// comes as an errorSchema object, by which printJSONError knows a JSON
// command (jsonCommand).
const jsonErrorUsage = "; an error as " + errorSchema + ")"

// printJSON prints v as indented JSON.
func printJSON(e *env, v any) error {
	b, err := jsonenc.Indent(v)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(b))
	return nil
}

// usageOnCommand turns a subcommand's flag errors into usage errors.
func usageOnCommand(c *cli.Context, err error, _ bool) error {
	return usagef("%s: %v", c.Command.Name, err)
}

// checkProject refuses a --project directory that does not exist.
func checkProject(c *cli.Context) error {
	dir := projectDir(c)
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("--project %s: not a directory", dir)
	}
	return nil
}
