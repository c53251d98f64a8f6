package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

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
			&cli.BoolFlag{Name: "no-statusline", Usage: "leave Claude Code's status line as it is (by default init adds orch-hook's line to .claude/settings.local.json, after your own status line if you have one)"},
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
				if changes, err = mergeInto(root, changes, install.SettingsFile(c.Bool("shared")), install.MergeSandbox); err != nil {
					return err
				}
			}
			dry := c.Bool("dry-run")
			var statusLine *install.StatusLineResult
			statusNote := ""
			if !c.Bool("no-statusline") {
				statusLine, statusNote, changes, err = planStatusLine(e, root, changes, dry)
				if err != nil {
					return err
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
			statusSummary := ""
			if statusLine != nil {
				statusSummary = "Status line: " + statusLine.Summary("/orch-hook-statusline", false) + "\n"
				if statusNote != "" {
					statusSummary += "Note: " + statusNote + ".\n"
				}
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
			fmt.Fprintf(e.stdout, "Installed. The hooks run `orch-hook` from PATH: keep it there (%s).\n%sStart a workflow in Claude Code with /orch-hook-orchestrate <request> or /orch-hook-coordinate <description>.\n", buildFromClone, statusSummary)
			return nil
		},
	}
}

// planStatusLine adds orch-hook's status line to init's changes (README,
// "Status line"): in .claude/settings.local.json, chained after the user's
// own, running this binary by its path.
func planStatusLine(e *env, root string, changes []install.Change, dry bool) (*install.StatusLineResult, string, []install.Change, error) {
	bin, note, err := install.StatusLineBinary(e.getenv, dry)
	if err != nil {
		return nil, "", nil, err
	}
	others, err := install.OtherStatusLines(root, e.getenv)
	if err != nil {
		return nil, "", nil, &hintError{err: err, hint: "fix that file, or run init with --no-statusline"}
	}
	var res install.StatusLineResult
	changes, err = mergeInto(root, changes, install.SettingsFile(false), func(b []byte) ([]byte, error) {
		merged, r, err := install.MergeStatusLine(b, others, bin, false)
		res = r
		return merged, err
	})
	if err != nil {
		return nil, "", nil, &hintError{err: err, hint: "fix that file, or run init with --no-statusline"}
	}
	return &res, note, changes, nil
}

// hintError is an error with its way forward.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Hint() string  { return e.hint }
func (e *hintError) Unwrap() error { return e.err }

// mergeInto applies merge to the settings file at rel: on top of the
// change already planned for it (init's settings.json and --protect
// --shared), else on the file as it is; the changes stay sorted by path.
func mergeInto(root string, changes []install.Change, rel string, merge func([]byte) ([]byte, error)) ([]install.Change, error) {
	for i, have := range changes {
		if have.Path == rel {
			merged, err := merge(have.New)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			changes[i].New = merged
			return changes, nil
		}
	}
	old, err := os.ReadFile(filepath.Join(root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	merged, err := merge(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if bytes.Equal(old, merged) {
		return changes, nil
	}
	changes = append(changes, install.Change{Path: rel, Old: old, New: merged})
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}
