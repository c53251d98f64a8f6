package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/install"
)

// initSchema names init --json's schema; it changes only when a field's
// meaning does.
const initSchema = "orch-hook.init/1"

// initReport is init --json (README, "Without plugins: orch-hook init").
type initReport struct {
	Schema  string       `json:"schema"`
	Project string       `json:"project"`
	DryRun  bool         `json:"dry_run"`
	Changes []initChange `json:"changes"`
	// Diff is the patch of a dry run (git apply takes it), else "".
	Diff string `json:"diff"`
}

type initChange struct {
	Path string `json:"path"`
	// Action is create, update (a file init wrote, or the settings
	// merge) or replace (a file of the user's, with --force).
	Action string `json:"action"`
	Backup string `json:"backup,omitempty"` // where replace kept the old content
}

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "init",
		Usage:        "install orch-hook into a project's own .claude/ (for Claude Code without plugins)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the changes as a patch (git apply takes it); write nothing"},
			&cli.BoolFlag{Name: "force", Usage: "replace files of your own (or that you changed) that init would write, keeping each old one as <file>.bak"},
			&cli.BoolFlag{Name: "protect", Usage: "also turn Claude Code's Bash sandbox on for the project (.claude/settings.local.json), so the model's shell cannot change orch-hook's state"},
			&cli.BoolFlag{Name: "shared", Usage: "with --protect: write the sandbox settings to .claude/settings.json (committed, for the whole team)"},
			jsonFlag(initSchema),
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
			// Every file is checked before any is written.
			if c.Bool("force") {
				if changes, err = install.Force(root, changes); err != nil {
					return err
				}
			} else if err := install.Conflicts(changes); err != nil {
				return err
			}
			dry := c.Bool("dry-run")
			report := initReport{Schema: initSchema, Project: root, DryRun: dry, Changes: []initChange{}}
			for _, ch := range changes {
				action := "update"
				switch {
				case ch.Old == nil:
					action = "create"
				case ch.Theirs:
					action = "replace"
				}
				report.Changes = append(report.Changes, initChange{Path: ch.Path, Action: action, Backup: ch.Backup})
			}
			if dry {
				report.Diff = install.Patch(changes)
			} else if err := install.Apply(root, changes); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e, report)
			}
			if len(changes) == 0 {
				fmt.Fprintf(e.stdout, "orch-hook is already installed in %s; nothing to change.\n", root)
				return nil
			}
			if dry {
				fmt.Fprint(e.stdout, report.Diff)
				if c.Bool("protect") {
					// After the patch, which git apply reads up to its
					// last hunk: the rest is for the person.
					fmt.Fprint(e.stdout, "What the sandbox settings mean:\n"+install.ProtectConsequences())
				}
				return nil
			}
			for _, ch := range report.Changes {
				verb := map[string]string{"create": "created", "update": "updated", "replace": "replaced"}[ch.Action]
				line := verb + " " + ch.Path
				if ch.Backup != "" {
					line += " (your file is kept as " + ch.Backup + ")"
				}
				fmt.Fprintln(e.stdout, line)
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
