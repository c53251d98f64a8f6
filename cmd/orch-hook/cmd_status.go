package main

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/internal/status"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "status",
		Usage:        "show where the workflow stands (--json: the documented schema orch-hook.status/1)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			jsonFlag(status.Schema),
			&cli.StringFlag{Name: "now", Hidden: true, Usage: "the clock, RFC 3339 (tests)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("status takes no arguments")
			}
			now := time.Now()
			if v := c.String("now"); v != "" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return usagef("status --now: %v", err)
				}
				now = t
			}
			store := projectStore(c)
			r, err := status.Build(store, now)
			if err != nil {
				return err
			}
			r.ApplyStopCapEnv(app.EnvFrom(e.getenv, nil).StopCap)
			p := install.CheckProtection(store.Root, e.getenv, nil)
			r.Protection = &p
			if c.Bool("json") {
				return printJSON(e, r)
			}
			// Agents' work, plan titles and reasons are the model's words:
			// only orch-hook's own colours reach the terminal.
			var b strings.Builder
			color := useColor(e)
			status.Text(&b, r, color)
			_, err = io.WriteString(e.stdout, shorten.Terminal(b.String(), color))
			return err
		},
	}
}

// useColor: colour on a terminal, never with NO_COLOR or when piped.
func useColor(e *env) bool {
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
