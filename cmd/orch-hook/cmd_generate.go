package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
	"github.com/orch-hook/orch-hook/templates"
)

func generateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "generate",
		Usage:        "render the plugin's commands/, agents/, hooks/hooks.json and settings.json from templates/ (run in the repository root)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Value: ".", Usage: "the plugin root (holding .claude-plugin/)"},
			&cli.BoolFlag{Name: "check", Usage: "change nothing; fail if a rendered file is stale"},
		},
		Action: func(c *cli.Context) error {
			root := c.String("root")
			if _, err := os.Stat(filepath.Join(root, ".claude-plugin", "plugin.json")); err != nil {
				return fmt.Errorf("%s is not the plugin root (no .claude-plugin/plugin.json)", root)
			}
			version, err := bootstrap.PluginVersion(root)
			if err != nil {
				return err
			}
			files, err := templates.Render(templates.Plugin(version))
			if err != nil {
				return err
			}
			paths := make([]string, 0, len(files))
			for p := range files {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			var stale []string
			for _, p := range paths {
				full := filepath.Join(root, p)
				old, _ := os.ReadFile(full)
				if bytes.Equal(old, files[p]) {
					continue
				}
				stale = append(stale, p)
				if c.Bool("check") {
					continue
				}
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(full, files[p], 0o644); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "wrote %s\n", p)
			}
			if c.Bool("check") && len(stale) > 0 {
				return fmt.Errorf("rendered files are stale: %v; run make generate", stale)
			}
			if len(stale) == 0 {
				fmt.Fprintln(e.stdout, "all rendered files are up to date")
			}
			return nil
		},
	}
}
