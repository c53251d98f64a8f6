package main

import (
	"fmt"
	"github.com/orch-hook/orch-hook/gates"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
)

// startSchema names start --json's schema; it changes only when a field's
// meaning does.
const startSchema = "orch-hook.start/1"

// startReport is start --json (README, "Seeing the workflow").
type startReport struct {
	Schema   string `json:"schema"`
	Project  string `json:"project"`
	Workflow string `json:"workflow"` // orchestrate or coordinate
	Request  string `json:"request"`
	State    string `json:"state"` // the step it starts at
	Serial   uint64 `json:"serial"`
	Lineage  string `json:"lineage"`
	Next     string `json:"next"`
	// Coordinate is the coordinate workflow's set-up; null for orchestrate.
	Coordinate *startCoordinate `json:"coordinate"`
	Text       string           `json:"text"` // what start prints without --json
}

type startCoordinate struct {
	Scope          string   `json:"scope"`
	ScopeWhy       string   `json:"scope_why"`
	Topic          string   `json:"topic"`
	TopicPath      string   `json:"topic_path"`
	ResearchTopics int      `json:"research_topics"`
	Hierarchical   bool     `json:"hierarchical"`
	ReportPaths    []string `json:"report_paths"`
	PlanPath       string   `json:"plan_path"`
}

func startCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "start",
		Usage:        "start a workflow from the command line; the first Claude Code session whose prompt reaches it owns it",
		ArgsUsage:    `"<request>"`,
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.StringFlag{Name: "workflow", Value: "orchestrate", Usage: "the workflow to start: orchestrate or coordinate"},
			&cli.StringFlag{Name: "scope", Usage: "coordinate only: research-only, research-and-plan, research-and-revise, full-implementation or debug-only (default: detected from the description)"},
			jsonFlag(startSchema),
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			workflow := c.String("workflow")
			if workflow != "orchestrate" && workflow != "coordinate" {
				return usagef("start: unknown workflow %q (orchestrate or coordinate)", workflow)
			}
			if c.String("scope") != "" && workflow != "coordinate" {
				return usagef("start: --scope applies to the coordinate workflow")
			}
			// urfave/cli stops reading flags at the request: one of start's
			// own flags after it would become words of the request.
			for _, a := range c.Args().Slice() {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if strings.HasPrefix(a, "-") && isFlagOf(c.Command, name) {
					return usagef("start: %s comes after the request, where it would be part of it: put the flags first (orch-hook start %s \"<request>\")", a, a)
				}
			}
			request := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
			if request == "" {
				return usagef(`start needs the request: orch-hook start "<what to build>"`)
			}
			store := projectStore(c)
			r := startReport{Schema: startSchema, Project: store.Root, Workflow: workflow, Request: request}
			if workflow == "coordinate" {
				if err := app.CheckScope(c.String("scope")); err != nil {
					return usagef("start: %v", err)
				}
				co, err := app.StartCoordinate(store, request, c.String("scope"), "", time.Now().UTC())
				if err != nil {
					return err
				}
				r.Text = app.CoordStartContext(co) + "\n"
				if notice := app.StartNotice(store.Root, e.getenv("HOME"), co.Config); notice != "" {
					r.Text += notice + "\n"
				}
				r.Next = gates.TeamAgents(co.Settings().Agents).Text(co.Next())
				r.Coordinate = &startCoordinate{Scope: co.Scope, ScopeWhy: co.ScopeWhy, Topic: co.Topic, TopicPath: co.Paths.TopicPath,
					ResearchTopics: co.Topics, Hierarchical: co.Hierarchical, ReportPaths: co.Paths.ReportPaths, PlanPath: co.Paths.PlanPath}
			} else {
				w, err := app.StartWorkflow(store, request, "", time.Now().UTC())
				if err != nil {
					return err
				}
				r.Next = gates.TeamAgents(w.Settings().Agents).Text(w.Next(nil))
				r.Text = fmt.Sprintf("Started the orchestrate workflow in %s (step 0a).\nNext: %s.\n", store.Root, r.Next)
				if notice := app.StartNotice(store.Root, e.getenv("HOME"), w.Config); notice != "" {
					r.Text += notice + "\n"
				}
			}
			if !c.Bool("json") {
				fmt.Fprint(e.stdout, r.Text)
				return nil
			}
			// The state as written: where it starts, its serial and lineage.
			if cp, err := store.Load(); err == nil {
				r.State, r.Serial, r.Lineage = cp.StateMachine.CurrentState, cp.Serial, cp.Lineage
			}
			return printJSON(e, r)
		},
	}
}

// isFlagOf reports whether name is one of cmd's flags.
func isFlagOf(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
