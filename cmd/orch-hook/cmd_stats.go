package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/render"
	"github.com/orch-hook/orch-hook/state"
)

// statsSchema names stats --json's schema; it changes only when a field's
// meaning does.
const statsSchema = "orch-hook.stats/1"

// statsReport is stats --json (README, "Statistics across workflows").
type statsReport struct {
	Schema string `json:"schema"`
	File   string `json:"file"`   // the metrics file, relative to the project
	Exists bool   `json:"exists"` // false: no workflow has finished here yet
	*app.Stats
	Text string `json:"text"` // what stats prints without --json
}

func statsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "summarise the finished workflows' metrics (" + state.MetricsFile + ") by pattern; read-only",
		Description: "One line per finished workflow is appended to " + state.MetricsFile + " when it completes or\n" +
			"is aborted. stats groups them by workflow, scope and pattern (flat or hierarchical) and\n" +
			"averages duration, agents, debug retries, context reduction and time savings over the\n" +
			"runs not aborted; for orchestrate, fix iterations by the plan's phase count. Lines that\n" +
			"do not read are skipped and reported.",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag, jsonFlag(statsSchema)},
		Before:       checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("stats takes no arguments")
			}
			r := &statsReport{Schema: statsSchema, File: state.MetricsFile}
			log, err := state.ReadMetrics(projectRoot(c))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				r.Stats = app.SummarizeMetrics(&state.MetricsLog{})
				r.Text = fmt.Sprintf("No workflow has finished here yet: %s does not exist (a line is added when a workflow completes or is aborted).\n", state.MetricsFile)
			case err != nil:
				return err
			default:
				r.Exists = true
				r.Stats = app.SummarizeMetrics(log)
				r.Text = statsText(r)
			}
			if c.Bool("json") {
				return printJSON(e, r)
			}
			fmt.Fprint(e.stdout, r.Text)
			return nil
		},
	}
}

// statsText is what stats prints.
func statsText(r *statsReport) string {
	var b strings.Builder
	s := r.Stats
	fmt.Fprintf(&b, "%s: %s finished", r.File, plural(s.Workflows, "workflow"))
	if s.Aborted > 0 {
		fmt.Fprintf(&b, " (%d aborted)", s.Aborted)
	}
	b.WriteString("\n")
	if n := len(s.SkippedLines); n > 0 {
		nums := make([]string, n)
		for i, l := range s.SkippedLines {
			nums[i] = fmt.Sprint(l)
		}
		fmt.Fprintf(&b, "Skipped %s that %s not a metrics line: %s\n", plural(n, "line"), map[bool]string{true: "is", false: "are"}[n == 1], strings.Join(nums, ", "))
	}
	if s.TornLastLine {
		b.WriteString("Ignored an unfinished last line (an append in progress or interrupted; the next append cuts it)\n")
	}
	if s.Workflows == 0 {
		return b.String()
	}

	b.WriteString("\nBy pattern (averages over the runs not aborted):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pattern\truns\taborted\tduration\tagents\tdebug retries\tcontext reduction\ttime savings\ttokens")
	for _, p := range s.Patterns {
		label := p.Kind
		if p.Scope != "" {
			label += " " + p.Scope
		}
		label += " " + p.Pattern
		dur, agents, retries := "-", "-", "-"
		if p.AvgDurationMs != nil {
			dur = render.Duration(time.Duration(*p.AvgDurationMs) * time.Millisecond)
		}
		if p.AvgAgents != nil {
			agents = fmt.Sprintf("%.1f", *p.AvgAgents)
		}
		if p.AvgDebugRetries != nil {
			retries = fmt.Sprintf("%.1f", *p.AvgDebugRetries)
		}
		tokens := "-"
		if t := p.Tokens; t != nil {
			tokens = gates.CompactTokens(t.Avg) + fmt.Sprintf(" (%d)", t.Runs)
			if t.Partial > 0 {
				tokens = "≥" + tokens
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", label, p.Runs, p.Aborted, dur, agents, retries, measured(p.ContextReduction), measured(p.TimeSavings), tokens)
	}
	tw.Flush()
	if len(s.FixIterations) > 0 {
		b.WriteString("\nOrchestrate fix iterations by the plan's phase count (runs not aborted):\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "phases\truns\tfix iterations\tfinal-validation failures")
		for _, p := range s.FixIterations {
			fmt.Fprintf(tw, "%d\t%d\t%.1f\t%.1f\n", p.Phases, p.Runs, p.AvgFixIterations, p.AvgFinalValidationFailures)
		}
		tw.Flush()
	}
	b.WriteString("\nOutcomes:")
	for _, o := range []string{app.OutcomeCompleted, app.OutcomeTestsFailing, app.OutcomeAborted} {
		fmt.Fprintf(&b, " %s %d", o, s.Outcomes[o])
		if o != app.OutcomeAborted {
			b.WriteString(",")
		}
	}
	fmt.Fprintf(&b, "\nEscalations: %d; known issues: %d\n", s.Escalations, s.KnownIssues)
	return b.String()
}

// measured is an averaged percentage with the runs that measured it, or
// "-" when none did.
func measured(m *app.MeasuredStats) string {
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%% (%s)", m.AvgPercent, plural(m.Runs, "run"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
