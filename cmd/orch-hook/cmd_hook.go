package main

import (
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/bootstrap"
)

// hookCommand is what Claude Code runs: one event on stdin, the decision on
// stdout. It must stay cheap: it runs on every tool call.
func hookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "hook",
		Usage:        "handle one Claude Code hook event (JSON on stdin); run by hooks.json",
		ArgsUsage:    "[--budget DURATION] [EVENT]",
		Description:  "--budget is the time Claude Code gives the hook (hooks.json's timeout, less a second): a completion waits that long for the state lock rather than be dropped.",
		OnUsageError: usageOnCommand,
		// Parsed by handleHook, the same as on the hot path.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return handleHook(e, c.Args().Slice())
		},
	}
}

// hookBudget takes --budget DURATION (or --budget=DURATION) out of the hook
// subcommand's arguments.
func hookBudget(args []string) (rest []string, budget time.Duration, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "budget" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, 0, usagef("hook: --budget needs a duration, such as 14s")
			}
			i++
			value = args[i]
		}
		budget, err = time.ParseDuration(value)
		if err != nil || budget <= 0 {
			return nil, 0, usagef("hook: --budget %q is not a positive duration (such as 14s)", value)
		}
	}
	return rest, budget, nil
}

// isBudgetFlag: the hot path takes --budget; any other flag (--help) goes
// to the command line.
func isBudgetFlag(a string) bool {
	return a == "--budget" || a == "-budget" || strings.HasPrefix(a, "--budget=") || strings.HasPrefix(a, "-budget=")
}

// handleHook handles one event; Main calls it directly for `orch-hook hook
// [EVENT]`, before the command line is built.
func handleHook(e *env, args []string) error {
	args, budget, err := hookBudget(args)
	if err != nil {
		return err
	}
	if len(args) == 1 && strings.HasPrefix(args[0], "-") {
		return usagef("hook: unknown flag %s (hook takes --budget DURATION and the event name)", args[0])
	}
	if len(args) > 1 {
		return usagef("hook takes at most one argument, the event name; got %d", len(args))
	}
	event := ""
	if len(args) == 1 {
		event = args[0]
	}
	env := app.EnvFrom(e.getenv, e.stderr)
	env.Budget = budget
	if event == gates.SessionStart {
		exe, _ := os.Executable()
		env.Notice = bootstrap.TakeNotice(exe)
	}
	return app.Run(env, e.stdin, e.stdout, event)
}
