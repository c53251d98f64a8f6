package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/render"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

func reportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write the workflow's report (timeline, durations, parallel time saved, fix iterations or supervisors and retries, denials, artifacts) as Markdown or HTML",
		Description: "--format md (default) gives Markdown with a Mermaid gantt timeline (renders on GitHub);\n" +
			"--format html gives one self-contained page with an inline SVG timeline, one row per agent\n" +
			"launch, and no script or external resource. Times are UTC.",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.StringFlag{Name: "format", Value: "md", Usage: "`md` or html"},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write the report to `FILE` instead of stdout"},
			&cli.StringFlag{Name: "now", Hidden: true, Usage: "the clock, RFC 3339 (tests)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("report takes no arguments")
			}
			format := c.String("format")
			if format != "md" && format != "html" {
				return usagef("report --format: want md or html, got %q", format)
			}
			now := time.Now()
			if v := c.String("now"); v != "" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return usagef("report --now: %v", err)
				}
				now = t
			}
			in, err := reportInput(e, projectStore(c), now)
			if err != nil {
				return err
			}
			r := render.BuildReport(*in)
			var out string
			if format == "html" {
				out = render.HTML(r)
			} else {
				out = render.Markdown(r)
			}
			if path := c.String("o"); path != "" && path != "-" {
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "orch-hook: report written to %s\n", path)
				return nil
			}
			fmt.Fprint(e.stdout, shorten.Terminal(out, false))
			return nil
		},
	}
}

// reportInput reads what the report is made of: the checkpoint, its
// workflow, the event log, the files under .orchestrator/ and whether the
// plan's declared files (for coordinate, the verified artifacts) exist.
func reportInput(e *env, store *state.Store, now time.Time) (*render.ReportInput, error) {
	cp, err := store.Load()
	if errors.Is(err, state.ErrNoState) {
		return nil, fmt.Errorf("no workflow in %s: nothing to report (start one with /orch-hook:orchestrate)", store.Root)
	}
	if err != nil {
		return nil, err
	}
	events, rep, err := store.Events()
	if err != nil {
		return nil, err
	}
	if len(rep.BadLines) > 0 {
		fmt.Fprintf(e.stderr, "orch-hook: warning: %s: skipped unreadable line(s) %v\n", store.LogPath(), rep.BadLines)
	}
	sm := cp.StateMachine
	in := &render.ReportInput{
		Command: sm.WorkflowConfig.Command, Request: sm.WorkflowConfig.Description,
		State: sm.CurrentState, Created: cp.Metadata.CreatedAt,
		Events: events, Now: now,
	}
	if sm.WorkflowConfig.Command == "coordinate" {
		c, err := app.LoadCoord(cp)
		if err != nil {
			return nil, err
		}
		in.Coordinate = c
		in.Exists = map[string]bool{}
		for _, p := range render.CoordinateArtifactPaths(c) {
			in.Exists[p] = projectFileExists(store.Root, p)
		}
	}
	if sm.WorkflowConfig.Command == "orchestrate" {
		w, err := app.LoadWorkflow(cp)
		if err != nil {
			return nil, err
		}
		in.Workflow = w
		if w.Plan != nil {
			in.Exists = map[string]bool{}
			for _, ph := range w.Plan.Phases {
				for _, t := range ph.Tasks {
					for _, f := range t.Files {
						in.Exists[f] = projectFileExists(store.Root, f)
					}
				}
			}
		}
	}
	in.Artifacts, err = workflowFiles(store.Root)
	if err != nil {
		return nil, err
	}
	return in, nil
}

// workflowFiles lists the regular files under <root>/.orchestrator, the
// state and records directories (orch-hook's own) excluded, sorted.
// Symlinks are not followed.
func workflowFiles(root string) ([]render.Artifact, error) {
	base := filepath.Join(root, ".orchestrator")
	stateDir, recordsDir := filepath.Join(root, state.Dir), filepath.Join(root, state.RecordsDir)
	var out []render.Artifact
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && (path == stateDir || path == recordsDir) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out = append(out, render.Artifact{Path: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// projectFileExists reports whether a file the plan declares exists inside
// the project (a path leaving the project counts as missing).
func projectFileExists(root, rel string) bool {
	rel = filepath.FromSlash(strings.TrimSpace(rel))
	if rel == "" || filepath.IsAbs(rel) {
		return false
	}
	p := filepath.Join(root, rel)
	if r, err := filepath.Rel(root, p); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return false
	}
	fi, err := os.Lstat(p)
	return err == nil && !fi.IsDir()
}
