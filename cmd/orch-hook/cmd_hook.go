package main

import (
	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/bootstrap"
)

// hookCommand is what Claude Code runs: one event on stdin, the decision on
// stdout. It must stay cheap: it runs on every tool call.
func hookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "hook",
		Usage:        "handle one Claude Code hook event (JSON on stdin); run by hooks.json",
		ArgsUsage:    "[EVENT]",
		OnUsageError: usageOnCommand,
		Action: func(c *cli.Context) error {
			return handleHook(e, c.Args().Slice())
		},
	}
}

// handleHook handles one event; Main calls it directly for `orch-hook hook
// [EVENT]`, before the command line is built.
func handleHook(e *env, args []string) error {
	if len(args) > 1 {
		return usagef("hook takes at most one argument, the event name; got %d", len(args))
	}
	event := ""
	if len(args) == 1 {
		event = args[0]
	}
	env := hooks.EnvFrom(e.getenv, e.stderr)
	if event == hooks.SessionStart {
		env.Notice = bootstrap.CheckVersion(e.getenv("CLAUDE_PLUGIN_ROOT"), version)
	}
	return hooks.Run(env, e.stdin, e.stdout, event)
}
