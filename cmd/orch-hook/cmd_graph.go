package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
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
			&cli.StringFlag{Name: "workflow", Usage: "`orchestrate` or coordinate (default: the active workflow's, else orchestrate)"},
			&cli.StringFlag{Name: "scope", Usage: "coordinate only: draw this scope's path (default: the active workflow's, else every scope)"},
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
			workflow, scope := c.String("workflow"), c.String("scope")
			if workflow != "" && workflow != "orchestrate" && workflow != "coordinate" {
				return usagef("graph --workflow: want orchestrate or coordinate, got %q", workflow)
			}
			if err := app.CheckScope(scope); err != nil {
				return usagef("graph --scope: %v", err)
			}
			opt := render.GraphOptions{AllRows: c.Bool("all")}
			store := projectStore(c)
			cp, err := store.Load()
			active := ""
			switch {
			case errors.Is(err, state.ErrNoState):
			case err != nil:
				// The definition does not depend on the state: draw it
				// anyway, without a highlight.
				fmt.Fprintf(e.stderr, "orch-hook: warning: the current state is not shown: %v\n", err)
			default:
				active = cp.StateMachine.WorkflowConfig.Command
			}
			if workflow == "" {
				workflow = active
			}
			if scope != "" {
				workflow = "coordinate"
			}
			if workflow == "coordinate" && scope == "" && active == "coordinate" {
				scope = cp.StateMachine.WorkflowConfig.Scope
			}
			rows := app.Rows(workflow, scope)
			if active != "" && active == orText(workflow, "orchestrate") && !cp.Finished() &&
				(workflow != "coordinate" || scope == cp.StateMachine.WorkflowConfig.Scope) {
				opt.Current = cp.StateMachine.CurrentState
				opt.Visited = cp.StateMachine.CompletedStates
			}
			if format == "dot" {
				fmt.Fprint(e.stdout, render.DOT(rows, opt))
			} else {
				fmt.Fprint(e.stdout, render.Mermaid(rows, opt))
			}
			return nil
		},
	}
}

func orText(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
