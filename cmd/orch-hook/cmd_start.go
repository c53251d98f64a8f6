package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
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
			&cli.StringFlag{Name: "workflow", Value: "orchestrate", Usage: "the workflow to start: orchestrate or coordinate"},
			&cli.StringFlag{Name: "scope", Usage: "coordinate only: research-only, research-and-plan, research-and-revise, full-implementation or debug-only (default: detected from the description)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			workflow := c.String("workflow")
			if workflow != "orchestrate" && workflow != "coordinate" {
				return usagef("start: unknown workflow %q (orchestrate or coordinate)", workflow)
			}
			if c.String("scope") != "" && workflow != "coordinate" {
				return usagef("start: --scope applies to the coordinate workflow")
			}
			request := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if request == "" {
				return usagef(`start needs the request: orch-hook start "<what to build>"`)
			}
			store := projectStore(c)
			if workflow == "coordinate" {
				if s := c.String("scope"); s != "" && !gates.ValidScope(s) {
					return usagef("start: unknown scope %q (%s)", s, strings.Join(gates.Scopes, ", "))
				}
				co, err := hooks.StartCoordinate(store, request, c.String("scope"), "", time.Now().UTC())
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, co.StartContext())
				return nil
			}
			w, err := hooks.StartWorkflow(store, request, "", time.Now().UTC())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Started the orchestrate workflow in %s (step 0a).\nNext: %s.\n", store.Root, w.Next(nil))
			return nil
		},
	}
}
