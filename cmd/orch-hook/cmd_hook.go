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
			if c.NArg() > 1 {
				return usagef("hook takes at most one argument, the event name; got %d", c.NArg())
			}
			env := hooks.EnvFrom(e.getenv, e.stderr)
			if c.Args().First() == hooks.SessionStart {
				env.Notice = bootstrap.CheckVersion(e.getenv("CLAUDE_PLUGIN_ROOT"), version)
			}
			return hooks.Run(env, e.stdin, e.stdout, c.Args().First())
		},
	}
}
