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
		Usage:        "rebuild a damaged checkpoint.json from events.jsonl and cut a torn log tail",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("repair takes no arguments")
			}
			store := projectStore(c)
			msg, err := store.Repair()
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
