package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

func repairCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "repair",
		Usage:        "restore the last state orch-hook wrote (after a change made outside it, or damage), or with --accept seal the state as it now is; with --plan, write back plan files changed outside orch-hook",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{projectFlag, &cli.BoolFlag{Name: "accept",
			Usage: "accept a state changed outside orch-hook as it is, and seal it again (the same as typing /orch-hook:resolve accept-state)"},
			&cli.BoolFlag{Name: "plan",
				Usage: "write back the plan files (.orchestrator/tasks) changed outside orch-hook from orch-hook's copies of them as it recorded them, each checked against the recorded hash; files it never recorded are left for you to remove"}},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("repair takes no arguments")
			}
			if c.Bool("accept") && c.Bool("plan") {
				return usagef("repair: --accept and --plan do not go together (repair the state first)")
			}
			store := projectStore(c)
			repair := store.Repair
			switch {
			case c.Bool("accept"):
				repair = func() (string, error) { return store.AcceptState("the user (orch-hook repair --accept)") }
			case c.Bool("plan"):
				repair = func() (string, error) { return app.RepairPlan(store) }
			}
			msg, err := repair()
			if errors.Is(err, state.ErrNoState) {
				fmt.Fprintf(e.stdout, "No workflow state in %s; nothing to repair.\n", store.Root)
				return nil
			}
			var left *app.PlanStillChangedError
			if errors.As(err, &left) {
				fmt.Fprintln(e.stdout, msg)
				return err
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, msg)
			if !c.Bool("plan") {
				if changed := app.PlanChanged(store); len(changed) > 0 {
					fmt.Fprintf(e.stdout, "The plan changed outside orch-hook (%s under .orchestrator/tasks): `orch-hook repair --plan` writes back what it can from orch-hook's copies, or type /orch-hook:resolve accept-plan in Claude Code to accept it.\n", strings.Join(changed, ", "))
				}
			}
			return nil
		},
	}
}
