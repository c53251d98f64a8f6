package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/state"
)

func migrateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "continue a v1.3 checkpoint: print the v2.0 checkpoint it becomes, or with --write adopt it as the project's workflow",
		Description: "FILE defaults to the project's own .orchestrator/state/checkpoint.json. Without --write the v2.0\n" +
			"checkpoint is printed and nothing is written. With --write the project's checkpoint is adopted in\n" +
			"place, or FILE is imported (in place of a finished workflow, never an active one); the v1.3\n" +
			"original is kept as .orchestrator/state/checkpoint.json.v1.3. /orch-hook:resume does the same.",
		ArgsUsage:    "[FILE]",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "write", Aliases: []string{"w"}, Usage: "adopt the checkpoint as the project's workflow"},
			&cli.StringFlag{Name: "scope", Usage: "a coordinate workflow's `SCOPE` when the checkpoint records none (or the wrong one)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef("migrate takes at most one argument, the checkpoint FILE")
			}
			if err := app.CheckScope(c.String("scope")); err != nil {
				return usagef("migrate --scope: %v", err)
			}
			store := projectStore(c)
			path := c.Args().First()
			own := path == "" || sameFile(path, store.CheckpointPath())
			if path == "" {
				path = store.CheckpointPath()
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			opt := app.Adoption{Scope: c.String("scope")}
			if !c.Bool("write") {
				cp, _, _, err := app.PreviewV13(store, raw, opt)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				b, err := jsonenc.Indent(cp)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, string(b))
				return nil
			}
			var imported []byte
			if !own {
				imported = raw
			}
			cp, where, err := app.AdoptV13(store, imported, opt, "the user (orch-hook migrate --write)")
			if errors.Is(err, state.ErrNotV13) {
				fmt.Fprintf(e.stdout, "%s: already v2.0; unchanged\n", path)
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			rel, _ := filepath.Rel(store.Root, store.CheckpointPath())
			fmt.Fprintf(e.stdout, "%s: adopted as the project's %s workflow (%s, serial %d): it %s. The v1.3 original is kept as %s.v1.3.\n", path, cp.StateMachine.WorkflowConfig.Command, rel, cp.Serial, where, rel)
			return nil
		},
	}
}
