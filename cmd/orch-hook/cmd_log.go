package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/goccy/go-json"
	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/state"
)

func logCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "log",
		Usage:        "print the workflow's event log (state changes and denials)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON record a line (without the embedded checkpoints)"},
			&cli.IntFlag{Name: "n", Usage: "print only the last `N` events (0: all)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("log takes no arguments")
			}
			if c.Int("n") < 0 {
				return usagef("log: -n must be 0 or more, got %d", c.Int("n"))
			}
			store := projectStore(c)
			events, rep, err := store.Events()
			if err != nil {
				return err
			}
			if len(rep.BadLines) > 0 {
				fmt.Fprintf(e.stderr, "orch-hook: warning: %s: skipped unreadable line(s) %v\n", store.LogPath(), rep.BadLines)
			}
			if len(events) == 0 {
				if _, err := store.Load(); errors.Is(err, state.ErrNoState) {
					fmt.Fprintf(e.stdout, "No workflow is active in %s; the log is empty.\n", store.Root)
				}
				return nil
			}
			if n := c.Int("n"); n > 0 && n < len(events) {
				events = events[len(events)-n:]
			}
			for i := range events {
				if c.Bool("json") {
					ev := events[i]
					ev.Checkpoint = nil
					b, err := json.Marshal(&ev)
					if err != nil {
						return err
					}
					fmt.Fprintln(e.stdout, string(b))
				} else {
					writeEventLine(e.stdout, &events[i])
				}
			}
			return nil
		},
	}
}

// writeEventLine prints one event for people: time, serial, type, the
// state change, and the reason.
func writeEventLine(w io.Writer, ev *state.Event) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s #%-4d %-14s", ev.Time.Local().Format(time.DateTime), ev.Serial, ev.Type)
	if ev.StateBefore != ev.StateAfter && ev.StateAfter != "" {
		fmt.Fprintf(&b, " %s -> %s", orDash(ev.StateBefore), ev.StateAfter)
	} else if ev.StateBefore != "" {
		fmt.Fprintf(&b, " at %s", ev.StateBefore)
	}
	if ev.Gate != 0 {
		fmt.Fprintf(&b, " [Gate %d]", ev.Gate)
	}
	if ev.AgentType != "" {
		fmt.Fprintf(&b, " %s", ev.AgentType)
	}
	if ev.Reason != "" {
		fmt.Fprintf(&b, ": %s", oneLine(ev.Reason, 160))
	}
	fmt.Fprintln(w, b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
