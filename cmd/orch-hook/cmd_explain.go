package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/internal/status"
	"github.com/orch-hook/orch-hook/state"
)

// explainSchema names explain --json's schema; it changes only when a
// field's meaning does.
const explainSchema = "orch-hook.explain/1"

// explainReport is explain --json (README, "Seeing the workflow").
type explainReport struct {
	Schema string `json:"schema"`
	Query  string `json:"query"` // the tool_use_id asked about, or "last"
	// Outcome: denied (Denial says why), allowed (logged; Record), unknown
	// (no record: no rule applied), or none (last, and nothing was denied).
	Outcome string         `json:"outcome"`
	Denial  *explainDenial `json:"denial"`
	Record  *explainRecord `json:"record"`
	Text    string         `json:"text"` // what explain prints without --json
}

type explainDenial struct {
	ToolUseID string       `json:"tool_use_id"`
	Time      time.Time    `json:"time"`
	HookEvent string       `json:"hook_event"`
	Session   string       `json:"session"`
	Serial    uint64       `json:"serial"`
	State     string       `json:"state"`
	Phase     int          `json:"phase"`      // 0 when none
	AgentType string       `json:"agent_type"` // the launch refused, if one
	Task      int          `json:"task"`       // 0 when none
	Rule      string       `json:"rule"`       // the reason as told, without "orch-hook: "
	Gate      *explainGate `json:"gate"`       // null when no gate applied
	// Refusal is the refusal as the decision made it, read from the log
	// record's parts; null for a record that has none (written before
	// refusals were values, or a refusal not made by a rule).
	Refusal *explainRefusal `json:"refusal"`
}

// explainRefusal is a logged refusal's parts (gates.Refusal).
type explainRefusal struct {
	Gate  int    `json:"gate"`  // 0 when none
	Task  int    `json:"task"`  // 0 when none
	Via   string `json:"via"`   // the MCP tool a refused write came through, "" when none
	Rule  string `json:"rule"`  // what was refused and why
	Where string `json:"where"` // where the workflow stood, "" when not said
	Next  string `json:"next"`  // the next step the model was told, "" when not said
}

type explainGate struct {
	Number    int      `json:"number"`
	After     string   `json:"after"`
	Allowed   []string `json:"allowed"`
	Forbidden []string `json:"forbidden"`
}

type explainRecord struct {
	Type        string    `json:"type"`
	Time        time.Time `json:"time"`
	StateBefore string    `json:"state_before"`
	StateAfter  string    `json:"state_after"`
}

func explainCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "explain",
		Usage:        "say why a tool call was denied (or that no rule refused it)",
		ArgsUsage:    "TOOL_USE_ID | last",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag, jsonFlag(explainSchema)},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			// urfave/cli stops reading flags at the first argument.
			if args := c.Args().Slice(); len(args) > 1 && strings.HasPrefix(args[1], "-") {
				return usagef("explain: flags go before the tool_use_id: orch-hook explain %s %s", strings.Join(args[1:], " "), args[0])
			}
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
			r := explainReport{Schema: explainSchema, Query: id}
			var w bytes.Buffer
			switch {
			case deny != nil:
				r.Outcome = "denied"
				r.Denial = explainDeny(&w, deny)
			case other != nil:
				r.Outcome = "allowed"
				r.Record = &explainRecord{Type: string(other.Type), Time: other.Time, StateBefore: other.StateBefore, StateAfter: other.StateAfter}
				fmt.Fprintf(&w, "%s was allowed: no rule refused it. It is logged as %s at %s (state %s -> %s).\n", id, other.Type, other.Time.Local().Format(time.DateTime), orDash(other.StateBefore), orDash(other.StateAfter))
			case id == "last":
				r.Outcome = "none"
				fmt.Fprintln(&w, "No call has been denied in this workflow.")
			default:
				r.Outcome = "unknown"
				fmt.Fprintf(&w, "%s left no record, so it was allowed because no rule applied to it: orch-hook logs every denial and every state change. If you expected a denial, check that the hooks run (`orch-hook status`, hook health; `orch-hook doctor`).\n", id)
			}
			if c.Bool("json") {
				r.Text = w.String()
				return printJSON(e, r)
			}
			_, err = io.WriteString(e.stdout, shorten.Terminal(w.String(), false))
			return err
		},
	}
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// explainDeny explains a deny record: the call, the state then, the
// refusal and its gate. A record with the refusal's parts (Rule) is told
// from them; an older one from its reason, as it was then.
func explainDeny(w io.Writer, deny *state.Event) *explainDenial {
	d := &explainDenial{ToolUseID: deny.ToolUseID, Time: deny.Time, HookEvent: deny.HookEvent, Session: deny.Session, Serial: deny.Serial,
		State: deny.StateBefore, Phase: deny.Phase, AgentType: deny.AgentType, Task: deny.Task, Rule: strings.TrimPrefix(deny.Reason, "orch-hook: ")}
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
	if deny.Rule == "" {
		fmt.Fprintf(w, "Rule: %s\n", d.Rule)
	} else {
		f := &explainRefusal{Gate: deny.Gate, Task: deny.Task, Via: deny.Via, Rule: deny.Rule, Where: deny.Where, Next: deny.Next}
		d.Refusal = f
		fmt.Fprintf(w, "Rule: %s\n", status.DeniedRule(*deny))
		if f.Where != "" {
			fmt.Fprintf(w, "Where the workflow stood: %s.\n", f.Where)
		}
		if f.Next != "" {
			fmt.Fprintf(w, "Next step the model was told: %s.\n", f.Next)
		}
	}
	if g, ok := app.Gate(deny.Gate); ok {
		d.Gate = &explainGate{Number: deny.Gate, After: g.After, Allowed: g.Allowed, Forbidden: g.Forbidden}
		fmt.Fprintf(w, "Gate %d (after %s): allowed: %s; forbidden: %s.\n", deny.Gate, g.After, strings.Join(g.Allowed, ", "), strings.Join(g.Forbidden, ", "))
	}
	return d
}
