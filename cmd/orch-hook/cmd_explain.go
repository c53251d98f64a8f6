package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/state"
)

func explainCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "explain",
		Usage:        "say why a tool call was denied (or that no rule refused it)",
		ArgsUsage:    "TOOL_USE_ID | last",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("explain takes one argument: a tool_use_id (see `orch-hook log`), or last")
			}
			id := c.Args().First()
			events, _, err := projectStore(c).Events()
			if err != nil {
				return err
			}
			var deny, other *state.Event
			for i := len(events) - 1; i >= 0; i-- {
				ev := &events[i]
				if id == "last" {
					if ev.Type == state.EventDeny {
						deny = ev
						break
					}
					continue
				}
				if ev.ToolUseID != id {
					continue
				}
				if ev.Type == state.EventDeny && deny == nil {
					deny = ev
				} else if ev.Type != state.EventDeny {
					other = ev // scanning backwards: ends at its first record
				}
			}
			w := e.stdout
			switch {
			case deny != nil:
				fmt.Fprintf(w, "%s was denied at %s (%s hook, session %s, state serial %d).\n", orWord(deny.ToolUseID, "The last denied call"), deny.Time.Local().Format(time.DateTime), orWord(deny.HookEvent, "a"), orWord(deny.Session, "unknown"), deny.Serial)
				fmt.Fprintf(w, "State then: %s", orDash(deny.StateBefore))
				if deny.Phase > 0 {
					fmt.Fprintf(w, ", plan phase %d", deny.Phase)
				}
				if deny.AgentType != "" {
					fmt.Fprintf(w, "; the call: launch %s", deny.AgentType)
					if deny.Task > 0 {
						fmt.Fprintf(w, " for Task %02d", deny.Task)
					}
				}
				fmt.Fprintln(w, ".")
				fmt.Fprintf(w, "Rule: %s\n", strings.TrimPrefix(deny.Reason, "orch-hook: "))
				if g, ok := gates.Gates[deny.Gate]; ok {
					fmt.Fprintf(w, "Gate %d (after %s): allowed: %s; forbidden: %s.\n", deny.Gate, g.After, strings.Join(g.Allowed, ", "), strings.Join(g.Forbidden, ", "))
				}
			case other != nil:
				fmt.Fprintf(w, "%s was allowed: no rule refused it. It is logged as %s at %s (state %s -> %s).\n", id, other.Type, other.Time.Local().Format(time.DateTime), orDash(other.StateBefore), orDash(other.StateAfter))
			case id == "last":
				fmt.Fprintln(w, "No call has been denied in this workflow.")
			default:
				fmt.Fprintf(w, "%s left no record, so it was allowed because no rule applied to it: orch-hook logs every denial and every state change. If you expected a denial, check that the hooks run (`orch-hook status`, hook health; `orch-hook doctor`).\n", id)
			}
			return nil
		},
	}
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
