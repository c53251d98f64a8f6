package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
	"github.com/orch-hook/orch-hook/templates"
)

// configSchema names config --json's schema.
const configSchema = "orch-hook.config/1"

// configReport is config --json (README, "Team configuration").
type configReport struct {
	Schema string `json:"schema"`
	// File is the configuration file ("" when there is none: the
	// defaults); Git whether git has it as it is; SHA256 its hash.
	File   string            `json:"file"`
	Git    string            `json:"git,omitempty"`
	SHA256 string            `json:"sha256,omitempty"`
	Values []app.ConfigValue `json:"values"`
	// Agents are the mapped agents' definitions as --check read them.
	Agents []app.AgentCheck `json:"agents,omitempty"`
	// Active is the active workflow's own configuration, when it differs
	// from the file's (it keeps the one it started with).
	Active   []app.ConfigValue `json:"active,omitempty"`
	Problems []string          `json:"problems"`
	Text     string            `json:"text"`
}

// configProblemsError: --check found problems (listed on stdout).
type configProblemsError struct{ n int }

func (e *configProblemsError) Error() string {
	return fmt.Sprintf("config: %d problem(s) found (listed above)", e.n)
}

func (e *configProblemsError) Hint() string {
	return "fix them; README, \"Team configuration\""
}

func configCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "show the team configuration (" + gates.ConfigFile + ") the next workflow starts with; --check also checks the mapped agents' definitions; read-only",
		Description: "Each value is listed with its source: the default, the file, or $ORCH_HOOK_STOP_CAP.\n" +
			"A workflow keeps the configuration it started with: an edit applies to the next one.\n" +
			"--check exits 1 when the file does not read (the line is quoted), or a mapped agent's\n" +
			"definition is missing or does not name its role's result lines.",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag, jsonFlag(configSchema), &cli.BoolFlag{Name: "check", Usage: "also check each mapped agent's definition; exit 1 on any problem"}},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("config takes no arguments")
			}
			root := projectRoot(c)
			stopCap := app.EnvFrom(e.getenv, nil).StopCap
			r := &configReport{Schema: configSchema, Problems: []string{}}
			snap, err := app.ReadConfig(root)
			var cfgErr *app.ConfigError
			switch {
			case errors.As(err, &cfgErr) && (c.Bool("check") || c.Bool("json")):
				r.File = gates.ConfigFile
				r.Problems = append(r.Problems, cfgErr.Error())
				r.Text = "orch-hook: " + cfgErr.Error() + "\n"
				return finishConfig(e, c, r)
			case err != nil:
				return err
			}
			r.File, r.Git, r.SHA256 = snap.File, snap.Git, snap.Hash
			r.Values = app.EffectiveValues(snap, stopCap)
			var b strings.Builder
			if snap.File == "" {
				fmt.Fprintf(&b, "No %s: the next workflow runs by the defaults.\n", gates.ConfigFile)
			} else {
				fmt.Fprintf(&b, "%s (%s, sha256 %s): the next workflow runs by it.\n", snap.File, snap.Git, snap.Hash[:12])
			}
			writeValues(&b, r.Values)
			if c.Bool("check") {
				home := e.getenv("HOME")
				r.Agents = app.CheckAgents(root, home, snap.Settings, func(role string) ([]string, error) {
					lines, _, err := templates.PromisedLines(role)
					return lines, err
				})
				for _, a := range r.Agents {
					switch {
					case a.Problem != "":
						r.Problems = append(r.Problems, "agents."+a.Role+": "+a.Problem)
					case a.Unchecked != "":
						fmt.Fprintf(&b, "agents.%s: %s not checked: %s.\n", a.Role, a.Agent, a.Unchecked)
					default:
						fmt.Fprintf(&b, "agents.%s: %s (%s) names its result lines.\n", a.Role, a.Agent, a.File)
					}
				}
				if snap.File != "" && snap.Git != gates.GitCommitted {
					fmt.Fprintf(&b, "Note: git does not have %s as it is (%s): a teammate's workflow runs by another configuration.\n", snap.File, snap.Git)
				}
			}
			if active := activeConfig(root); active != nil && active.Hash != snap.Hash {
				r.Active = app.EffectiveValues(active, stopCap)
				fmt.Fprintf(&b, "The active workflow keeps the configuration it started with (%s); `orch-hook status` shows it.\n", describeSnapshot(active))
			}
			r.Text = b.String()
			return finishConfig(e, c, r)
		},
	}
}

func finishConfig(e *env, c *cli.Context, r *configReport) error {
	text := r.Text
	for _, p := range r.Problems {
		if !strings.Contains(text, p) {
			text += "problem: " + p + "\n"
		}
	}
	r.Text = text
	if c.Bool("json") {
		if err := printJSON(e, r); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, text)
	}
	if len(r.Problems) > 0 {
		return &configProblemsError{n: len(r.Problems)}
	}
	return nil
}

// writeValues prints the settings, one a line, with their sources.
func writeValues(b *strings.Builder, values []app.ConfigValue) {
	width := 0
	for _, v := range values {
		width = max(width, len(v.Key))
	}
	for _, v := range values {
		fmt.Fprintf(b, "  %-*s  %-12s %s\n", width, v.Key, v.Value, v.Source)
	}
}

// activeConfig is the active workflow's snapshot (nil: none, or none kept).
func activeConfig(root string) *gates.ConfigSnapshot {
	cp, err := state.Open(root).Load()
	if err != nil || cp.Finished() {
		return nil
	}
	return app.ConfigOf(cp)
}

func describeSnapshot(c *gates.ConfigSnapshot) string {
	if c.File == "" {
		return "the defaults"
	}
	return fmt.Sprintf("%s at sha256 %s", c.File, c.Hash[:min(12, len(c.Hash))])
}
