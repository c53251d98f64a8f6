package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/hooks"
)

func followUpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "follow-up",
		Usage:        "reopen a complete workflow for a follow-up request (phase 7): lightweight, partial or full",
		ArgsUsage:    `lightweight|partial|full "<request>"`,
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return usagef(`follow-up needs a kind and the request: orch-hook follow-up lightweight|partial|full "<request>"`)
			}
			kind := c.Args().First()
			switch kind {
			case "lightweight", "partial", "full":
			default:
				return usagef("follow-up: unknown kind %q (lightweight, partial or full)", kind)
			}
			msg, err := hooks.FollowUp(projectStore(c), kind, strings.Join(c.Args().Tail(), " "), time.Now().UTC())
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, "orch-hook: "+msg)
			return nil
		},
	}
}
