package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

func logCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "log",
		Usage:        "print the workflow's event log (state changes and denials)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "json", Usage: "print one JSON record a line (without the embedded checkpoints)"},
			&cli.IntFlag{Name: "n", Usage: "print only the last `N` matching events (0: all)"},
			&cli.StringFlag{Name: "since", Usage: "only events at or after `WHEN`: a duration ago (10m, 2h) or an RFC 3339 time"},
			&cli.StringSliceFlag{Name: "type", Usage: "only events of this `TYPE` (transition, deny, agent_launch, agent_complete, user_decision, error, ...); repeatable"},
			&cli.IntFlag{Name: "phase", Usage: "only events of plan phase `N`"},
			&cli.IntFlag{Name: "gate", Usage: "only events under gate `N` (1-7)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new events as they are logged (Ctrl-C to stop)"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("log takes no arguments")
			}
			if c.Int("n") < 0 {
				return usagef("log: -n must be 0 or more, got %d", c.Int("n"))
			}
			match, err := eventFilter(c, time.Now())
			if err != nil {
				return err
			}
			store := projectStore(c)
			events, rep, err := store.Events()
			if err != nil {
				return err
			}
			if len(rep.BadLines) > 0 {
				fmt.Fprintf(e.stderr, "orch-hook: warning: %s: skipped unreadable line(s) %v\n", store.LogPath(), rep.BadLines)
			}
			if len(events) == 0 && !c.Bool("follow") {
				if _, err := store.Load(); errors.Is(err, state.ErrNoState) {
					fmt.Fprintf(e.stdout, "No workflow is active in %s; the log is empty.\n", store.Root)
				}
				return nil
			}
			var shown []state.Event
			for _, ev := range events {
				if match(&ev) {
					shown = append(shown, ev)
				}
			}
			if n := c.Int("n"); n > 0 && n < len(shown) {
				shown = shown[len(shown)-n:]
			}
			for i := range shown {
				if err := printEvent(e.stdout, &shown[i], c.Bool("json")); err != nil {
					return err
				}
			}
			if !c.Bool("follow") {
				return nil
			}
			last := uint64(0)
			seen := len(events)
			if len(events) > 0 {
				last = events[len(events)-1].Serial
			}
			for {
				time.Sleep(250 * time.Millisecond)
				all, _, err := store.Events()
				if err != nil {
					return err
				}
				if len(all) < seen || (len(all) > 0 && all[len(all)-1].Serial < last) {
					seen = 0 // a new workflow replaced the log
				}
				for i := seen; i < len(all); i++ {
					if match(&all[i]) {
						if err := printEvent(e.stdout, &all[i], c.Bool("json")); err != nil {
							return err
						}
					}
				}
				seen = len(all)
				if seen > 0 {
					last = all[seen-1].Serial
				}
			}
		},
	}
}

// eventFilter builds the predicate of log's filter flags.
func eventFilter(c *cli.Context, now time.Time) (func(*state.Event) bool, error) {
	var since time.Time
	if v := c.String("since"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, v); err == nil {
			since = t
		} else {
			return nil, usagef("log --since %q: want a duration (10m, 2h) or an RFC 3339 time", v)
		}
	}
	types := map[string]bool{}
	for _, t := range c.StringSlice("type") {
		for _, part := range strings.Split(t, ",") {
			part = strings.TrimSpace(part)
			if !knownEventTypes[part] {
				return nil, usagef("log --type %q: not an event type (one of %s)", part, strings.Join(eventTypeNames(), ", "))
			}
			types[part] = true
		}
	}
	phase, gate := c.Int("phase"), c.Int("gate")
	if gate < 0 || gate > 7 {
		return nil, usagef("log --gate %d: gates are numbered 1 to 7", gate)
	}
	return func(ev *state.Event) bool {
		return (since.IsZero() || !ev.Time.Before(since)) &&
			(len(types) == 0 || types[ev.Type]) &&
			(phase == 0 || ev.Phase == phase) &&
			(gate == 0 || ev.Gate == gate)
	}, nil
}

func printEvent(w io.Writer, ev *state.Event, asJSON bool) error {
	if !asJSON {
		// The reason may quote what the model wrote: no control
		// characters reach the terminal (shorten.Terminal).
		var b strings.Builder
		writeEventLine(&b, ev)
		_, err := io.WriteString(w, shorten.Terminal(b.String(), false))
		return err
	}
	cp := *ev
	cp.Checkpoint, cp.Call, cp.Reads = nil, nil, nil // bookkeeping: a record keeps them (README, "Records")
	b, err := jsonenc.Marshal(&cp)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
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
		fmt.Fprintf(&b, ": %s", shorten.Bytes(shorten.OneLine(ev.Reason), 160, "..."))
	}
	fmt.Fprintln(w, b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var knownEventTypes = map[string]bool{
	state.EventStart: true, state.EventTransition: true, state.EventUpdate: true, state.EventDeny: true,
	state.EventAgentLaunch: true, state.EventAgentDone: true, state.EventUserDecision: true,
	state.EventError: true, state.EventMigrate: true, state.EventRepair: true, state.EventRecover: true, state.EventAccept: true,
}

func eventTypeNames() []string {
	names := make([]string, 0, len(knownEventTypes))
	for n := range knownEventTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
