package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/render"
	"github.com/orch-hook/orch-hook/state"
)

func graphCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "graph",
		Usage: "print the workflow definition (states, transitions, guards, gates) as Mermaid or Graphviz, the current state highlighted",
		Description: "The Mermaid output is a stateDiagram-v2 that GitHub renders inside a ```mermaid block;\n" +
			"the dot output is for Graphviz (dot -Tsvg). While a workflow is active in the project, its\n" +
			"current state is highlighted and the states it went through are shaded. The abort rows (every\n" +
			"unfinished state -> aborted) are drawn as one note unless --all is given.",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.StringFlag{Name: "format", Value: "mermaid", Usage: "`mermaid` or dot"},
			&cli.BoolFlag{Name: "all", Usage: "draw every row of the table, each abort row included"},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("graph takes no arguments")
			}
			format := c.String("format")
			if format != "mermaid" && format != "dot" {
				return usagef("graph --format: want mermaid or dot, got %q", format)
			}
			opt := render.GraphOptions{AllRows: c.Bool("all")}
			store := projectStore(c)
			cp, err := store.Load()
			switch {
			case errors.Is(err, state.ErrNoState):
			case err != nil:
				// The definition does not depend on the state: draw it
				// anyway, without a highlight.
				fmt.Fprintf(e.stderr, "orch-hook: warning: the current state is not shown: %v\n", err)
			case cp.StateMachine.WorkflowConfig.Command == "orchestrate" && !cp.Finished():
				opt.Current = cp.StateMachine.CurrentState
				opt.Visited = cp.StateMachine.CompletedStates
			}
			if format == "dot" {
				fmt.Fprint(e.stdout, render.DOT(gates.Transitions, opt))
			} else {
				fmt.Fprint(e.stdout, render.Mermaid(gates.Transitions, opt))
			}
			return nil
		},
	}
}
