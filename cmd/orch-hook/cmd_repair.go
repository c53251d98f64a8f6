package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/state"
)

func repairCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "repair",
		Usage:        "restore the last state orch-hook wrote (after a change made outside it, or damage), or with --accept seal the state as it now is",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{projectFlag, &cli.BoolFlag{Name: "accept",
			Usage: "accept a state changed outside orch-hook as it is, and seal it again (the same as typing /orch-hook:resolve accept-state)"}},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("repair takes no arguments")
			}
			store := projectStore(c)
			repair := store.Repair
			if c.Bool("accept") {
				repair = func() (string, error) { return store.AcceptState("the user (orch-hook repair --accept)") }
			}
			msg, err := repair()
			if errors.Is(err, state.ErrNoState) {
				fmt.Fprintf(e.stdout, "No workflow state in %s; nothing to repair.\n", store.Root)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, msg)
			return nil
		},
	}
}
