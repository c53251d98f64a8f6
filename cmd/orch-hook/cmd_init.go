package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/install"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "init",
		Usage:        "install orch-hook into a project's own .claude/ (for Claude Code without plugins)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show the changes as a diff; write nothing"},
			&cli.BoolFlag{Name: "protect", Usage: "also turn Claude Code's Bash sandbox on for the project (.claude/settings.local.json), so the model's shell cannot change orch-hook's state"},
			&cli.BoolFlag{Name: "shared", Usage: "with --protect: write the sandbox settings to .claude/settings.json (committed, for the whole team)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			// The project is named as for every other command: a
			// positional DIR was taken for one once, and created.
			if c.NArg() > 0 {
				return usagef("init takes no arguments: name the project with --project DIR (orch-hook init --project %s)", c.Args().First())
			}
			root := projectRoot(c)
			if c.Bool("shared") && !c.Bool("protect") {
				return usagef("init --shared goes with --protect")
			}
			changes, err := install.Plan(root)
			if err != nil {
				return err
			}
			if c.Bool("protect") {
				change, err := install.PlanProtect(root, c.Bool("shared"))
				if err != nil {
					return err
				}
				if change != nil {
					changes = mergeChange(changes, *change)
				}
			}
			if len(changes) == 0 {
				fmt.Fprintf(e.stdout, "orch-hook is already installed in %s; nothing to change.\n", root)
				return nil
			}
			if c.Bool("dry-run") {
				for _, ch := range changes {
					fmt.Fprint(e.stdout, install.Diff(ch))
				}
				if c.Bool("protect") {
					fmt.Fprint(e.stdout, "What the sandbox settings mean:\n"+install.ProtectConsequences())
				}
				return nil
			}
			if err := install.Apply(root, changes); err != nil {
				return err
			}
			for _, ch := range changes {
				verb := "updated"
				if ch.Old == nil {
					verb = "created"
				}
				fmt.Fprintf(e.stdout, "%s %s\n", verb, ch.Path)
			}
			fmt.Fprintf(e.stdout, "Installed. The hooks run `orch-hook` from PATH: keep it there (%s).\nStart a workflow in Claude Code with /orch-hook-orchestrate <request> or /orch-hook-coordinate <description>.\n", buildFromClone)
			return nil
		},
	}
}

// mergeChange adds a change to the list, or applies it on top of a change
// to the same file (init's settings.json and --protect --shared).
func mergeChange(changes []install.Change, c install.Change) []install.Change {
	for i, have := range changes {
		if have.Path == c.Path {
			merged, err := install.MergeSandbox(have.New)
			if err == nil {
				changes[i].New = merged
			}
			return changes
		}
	}
	return append(changes, c)
}
