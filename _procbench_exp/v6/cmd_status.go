package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-json"
	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/state"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "status",
		Usage:        "show where the workflow stands",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("status takes no arguments")
			}
			store := projectStore(c)
			cp, err := store.Load()
			if err != nil && !errors.Is(err, state.ErrNoState) {
				return err
			}
			if c.Bool("json") {
				return printStatusJSON(e, store, cp)
			}
			printStatusText(e, store, cp)
			return nil
		},
	}
}

// statusJSON is the machine-readable form of status.
type statusJSON struct {
	Active     bool              `json:"active"`
	Project    string            `json:"project"`
	StateDir   string            `json:"state_dir"`
	Checkpoint *state.Checkpoint `json:"checkpoint,omitempty"`
}

func printStatusJSON(e *env, store *state.Store, cp *state.Checkpoint) error {
	out := statusJSON{Active: cp != nil && !cp.Finished(), Project: store.Root, StateDir: store.Dir, Checkpoint: cp}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(b))
	return nil
}

func printStatusText(e *env, store *state.Store, cp *state.Checkpoint) {
	w := e.stdout
	if cp == nil {
		fmt.Fprintf(w, "No workflow is active in %s.\nStart one in Claude Code with /orch-hook:orchestrate <request>.\n", store.Root)
		return
	}
	sm := cp.StateMachine
	cfg := sm.WorkflowConfig
	fmt.Fprintf(w, "%s workflow: %s\n", cfg.Command, oneLine(cfg.Description, 100))
	switch {
	case sm.CurrentState == "complete":
		fmt.Fprintf(w, "  state:     complete (finished; nothing is gated)\n")
	case sm.CurrentState == "aborted":
		fmt.Fprintf(w, "  state:     aborted (finished; nothing is gated)\n")
	default:
		fmt.Fprintf(w, "  state:     %s (next allowed: %s)\n", sm.CurrentState, orNone(strings.Join(cp.Successors(sm.CurrentState), ", ")))
	}
	fmt.Fprintf(w, "  completed: %s\n", orNone(strings.Join(sm.CompletedStates, ", ")))
	if cfg.Scope != "" {
		fmt.Fprintf(w, "  scope:     %s\n", cfg.Scope)
	}
	if cp.ErrorState.LastError != nil {
		fmt.Fprintf(w, "  error:     %s (retries %d)\n", *cp.ErrorState.LastError, cp.ErrorState.RetryCount)
	}
	fmt.Fprintf(w, "  started:   %s, updated %s\n", cp.Metadata.CreatedAt.Format(time.RFC3339), cp.Metadata.UpdatedAt.Format(time.RFC3339))
	fmt.Fprintf(w, "  serial:    %d, lineage %s\n", cp.Serial, cp.Lineage)
	fmt.Fprintf(w, "  state dir: %s\n", store.Dir)
}

func orNone(s string) string {
	if s == "" {
		return "none"
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
