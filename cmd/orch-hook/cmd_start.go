package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/hooks"
)

func startCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "start",
		Usage:        "start a workflow from the command line; the first Claude Code session whose prompt reaches it owns it",
		ArgsUsage:    `"<request>"`,
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.StringFlag{Name: "workflow", Value: "orchestrate", Usage: "the workflow to start (orchestrate)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.String("workflow") != "orchestrate" {
				return usagef("start: unknown workflow %q (available: orchestrate)", c.String("workflow"))
			}
			request := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if request == "" {
				return usagef(`start needs the request: orch-hook start "<what to build>"`)
			}
			store := projectStore(c)
			w, err := hooks.StartWorkflow(store, request, "", time.Now().UTC())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Started the orchestrate workflow in %s (step 0a).\nNext: %s.\n", store.Root, w.Next(nil))
			return nil
		},
	}
}
