package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/state"
)

func migrateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "migrate",
		Usage:        "convert a v1.3 checkpoint to v2.0 (printed, or with --write replaced in place)",
		ArgsUsage:    "FILE",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "write", Aliases: []string{"w"}, Usage: "replace FILE, keeping the original as FILE.v1.3"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("migrate takes exactly one argument, the checkpoint FILE")
			}
			path := c.Args().First()
			out, migrated, err := state.MigrateFile(path, c.Bool("write"))
			if err != nil {
				return err
			}
			if c.Bool("write") {
				if migrated {
					fmt.Fprintf(e.stdout, "%s: migrated to v2.0; the original is kept as %s.v1.3\n", path, path)
				} else {
					fmt.Fprintf(e.stdout, "%s: already v2.0; unchanged\n", path)
				}
				return nil
			}
			_, err = e.stdout.Write(out)
			return err
		},
	}
}
