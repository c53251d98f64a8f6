package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/internal/status"
	"github.com/orch-hook/orch-hook/state"
)

// statusLineInput is what Claude Code passes a statusLine command on
// stdin (observed: internal/dev/e2e/testdata/observed); only the project
// is read.
type statusLineInput struct {
	Cwd       string `json:"cwd"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
}

func statuslineCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "statusline",
		Usage: "print one line for Claude Code's status line: the workflow's step, what runs, protection, and whether you are waited on (nothing without a workflow)",
		Description: "Run by Claude Code as the statusLine command (README, \"Status line\"): it reads Claude Code's JSON\n" +
			"on stdin for the project, takes no lock, writes nothing and always exits 0 (a failing status\n" +
			"line command shows nothing).",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag},
		Action: func(c *cli.Context) error {
			root := projectDir(c)
			if root == "" {
				var in statusLineInput
				if b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20)); err == nil {
					_ = json.Unmarshal(b, &in)
				}
				root = firstNonEmpty(in.Workspace.ProjectDir, e.getenv("CLAUDE_PROJECT_DIR"), in.Cwd)
				if root == "" {
					root, _ = os.Getwd()
				}
				root = state.FindRoot(root)
			}
			if abs, err := filepath.Abs(root); err == nil {
				root = abs
			}
			store := state.Open(root)
			var protected *bool
			if _, err := os.Stat(store.CheckpointPath()); err == nil {
				p := install.CheckProtection(root, e.getenv, nil).Protected
				protected = &p
			}
			if line := status.Line(store, protected); line != "" {
				fmt.Fprintln(e.stdout, shorten.Terminal(line, false))
			}
			return nil
		},
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
