package render

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Markdown draws the report as GitHub-flavoured Markdown with a Mermaid
// gantt timeline.
func Markdown(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# orch-hook report: %s\n\n", mdText(shorten.Bytes(shorten.OneLine(r.Request), 200, "…")))
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| workflow | %s, step **%s** |\n", mdText(r.Command), mdText(r.State))
	fmt.Fprintf(&b, "| started | %s |\n", stamp(r.Start))
	if r.Finished {
		fmt.Fprintf(&b, "| ended | %s (wall time %s) |\n", stamp(r.End), Duration(r.End.Sub(r.Start)))
	} else {
		fmt.Fprintf(&b, "| running | as of %s (%s so far) |\n", stamp(r.Now), Duration(r.End.Sub(r.Start)))
	}
	fmt.Fprintf(&b, "| agents | %s |\n", agentSummary(r))
	fmt.Fprintf(&b, "| denials | %d |\n", r.DenialsTotal)
	b.WriteString("\n")

	b.WriteString("## Timeline\n\n")
	b.WriteString("Times are UTC.\n\n")
	b.WriteString("```mermaid\n")
	b.WriteString(Gantt(r))
	b.WriteString("```\n\n")

	b.WriteString("## Steps\n\n")
	if len(r.Steps) == 0 {
		b.WriteString("No state change is logged.\n\n")
	} else {
		b.WriteString("| step | started | ended | duration |\n|---|---|---|---:|\n")
		for _, s := range r.Steps {
			end := r.clock(s.End)
			if s.Open {
				end = "(now)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(stepLabel(s)), r.clock(s.Start), end, Duration(s.Duration()))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Agents\n\n")
	if len(r.Agents) == 0 {
		b.WriteString("No agent was launched.\n\n")
	} else {
		b.WriteString("| # | agent | task | job | step | started | ended | duration | status | result |\n|---:|---|---|---|---|---|---|---:|---|---|\n")
		for _, a := range r.Agents {
			task := ""
			if a.Task != 0 {
				task = fmt.Sprintf("%02d", a.Task)
			}
			end := r.clock(a.End)
			if a.Open {
				end = "(running)"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				a.N, mdText(a.Agent), task, mdText(a.Job), mdText(a.State), r.clock(a.Start), end,
				Duration(a.Duration()), mdText(statusText(a)), mdText(shorten.Bytes(shorten.OneLine(a.Result), 80, "…")))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Parallel vs sequential\n\n")
	fmt.Fprintf(&b, "- Sequential (sum of the agents' durations): %s\n", Duration(r.Sequential))
	fmt.Fprintf(&b, "- Parallel (wall time during which at least one agent ran): %s\n", Duration(r.Parallel))
	fmt.Fprintf(&b, "- Saved by running agents in parallel: %s (%s of the sequential time)\n\n", Duration(r.Saved()), percent(r.Saved(), r.Sequential))

	b.WriteString("## Fix iterations per phase\n\n")
	if len(r.Phases) == 0 {
		b.WriteString("No plan phase has started.\n\n")
	} else {
		fmt.Fprintf(&b, "A fix iteration is a quality-gate FAIL (4b) of the phase, which starts a fix cycle (F1 failure analysis, F2 fixes); the %s escalates.\n\n", ordinal(gates.MaxFixIterations))
		b.WriteString("| phase | started | ended | duration | fix iterations | escalations | launches |\n|---|---|---|---:|---:|---:|---:|\n")
		for _, p := range r.Phases {
			start, end, dur := "", "", ""
			if !p.Start.IsZero() {
				start, end, dur = r.clock(p.Start), r.clock(p.End), Duration(p.Duration())
				if r.phaseOpen(p) {
					end = "(now)"
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %d |\n", mdText(phaseLabel(p)), start, end, dur, p.FixIterations, p.Escalations, p.Launches)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Final-validation failures (5a/5b FAIL): %d of %d allowed.\n\n", r.FinalFailures, gates.MaxFinalFailures)

	b.WriteString("## Denials by gate\n\n")
	if len(r.Denials) == 0 {
		b.WriteString("No call was denied.\n\n")
	} else {
		b.WriteString("| gate | denials | last reason |\n|---|---:|---|\n")
		for _, d := range r.Denials {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", gateName(d.Gate), d.Count, mdText(shorten.Bytes(shorten.OneLine(d.Last), 160, "…")))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Artifacts\n\n")
	b.WriteString("### Workflow files (.orchestrator/, state excluded)\n\n")
	if len(r.Artifacts) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| file | bytes |\n|---|---:|\n")
		for _, a := range r.Artifacts {
			fmt.Fprintf(&b, "| %s | %d |\n", mdCode(a.Path), a.Size)
		}
		b.WriteString("\n")
	}
	b.WriteString("### Project files\n\n")
	b.WriteString(projectFilesNote + "\n\n")
	if len(r.ProjectFiles) == 0 {
		if r.PlanKnown {
			b.WriteString("The plan's tasks declare no files.\n")
		} else {
			b.WriteString("No plan yet.\n")
		}
	} else {
		b.WriteString("| file | declared by | implemented by | exists now |\n|---|---|---|---|\n")
		for _, f := range r.ProjectFiles {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCode(f.Path), tasks(f.Tasks), tasks(f.Implemented), existsText(f))
		}
	}
	return b.String()
}

// projectFilesNote says what the project files section is made of.
const projectFilesNote = "orch-hook does not log each write: this lists the files the plan's tasks declare (`Files:`), the tasks whose code-implementer returned (only a code-implementer may write project files), and whether each file exists now."

func existsText(f ProjectFile) string {
	switch {
	case !f.Known:
		return "unknown"
	case f.Exists:
		return "yes"
	}
	return "no"
}

func agentSummary(r *Report) string {
	running := 0
	for _, a := range r.Agents {
		if a.Open {
			running++
		}
	}
	s := fmt.Sprintf("%d launches", len(r.Agents))
	if running > 0 {
		s += fmt.Sprintf(" (%d running)", running)
	}
	return s + fmt.Sprintf(", sequential %s, parallel %s, saved %s", Duration(r.Sequential), Duration(r.Parallel), Duration(r.Saved()))
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

// mdText escapes s for a Markdown table cell or heading.
func mdText(s string) string {
	s = shorten.OneLine(s)
	return strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`).Replace(s)
}

// mdCode is s as inline code (file paths).
func mdCode(s string) string {
	s = shorten.OneLine(s)
	if strings.Contains(s, "`") {
		return mdText(s)
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// Gantt draws the timeline as a Mermaid gantt chart: the steps, the plan's
// phases and one row per agent launch. Times are UTC.
func Gantt(r *Report) string {
	var b strings.Builder
	b.WriteString("gantt\n")
	fmt.Fprintf(&b, "    title %s\n", ganttTitle(shorten.Bytes(shorten.OneLine("orch-hook: "+r.Request), 80, "…")))
	b.WriteString("    dateFormat YYYY-MM-DD HH:mm:ss\n")
	if sameDay(r.Start, r.End) {
		b.WriteString("    axisFormat %H:%M\n")
	} else {
		b.WriteString("    axisFormat %m-%d %H:%M\n")
	}
	b.WriteString("    todayMarker off\n")
	const tf = "2006-01-02 15:04:05"
	if len(r.Steps) > 0 {
		b.WriteString("    section Steps\n")
		for i, s := range r.Steps {
			tag := "done"
			if s.Open {
				tag = "active"
			}
			fmt.Fprintf(&b, "    %s :%s, st%d, %s, %s\n", ganttText(stepLabel(s)), tag, i+1, s.Start.UTC().Format(tf), s.End.UTC().Format(tf))
		}
	}
	var started []PhaseRow
	for _, p := range r.Phases {
		if !p.Start.IsZero() {
			started = append(started, p)
		}
	}
	if len(started) > 0 {
		b.WriteString("    section Phases\n")
		for _, p := range started {
			tag := "done"
			if r.phaseOpen(p) {
				tag = "active"
			}
			fmt.Fprintf(&b, "    %s :%s, ph%d, %s, %s\n", ganttText(phaseLabel(p)), tag, p.Number, p.Start.UTC().Format(tf), p.End.UTC().Format(tf))
		}
	}
	if len(r.Agents) > 0 {
		b.WriteString("    section Agents\n")
		for _, a := range r.Agents {
			tag := "done"
			switch {
			case a.Open:
				tag = "active"
			case a.Status != gates.Returned:
				tag = "crit"
			}
			fmt.Fprintf(&b, "    %s :%s, ag%d, %s, %s\n", ganttText(fmt.Sprintf("%d. %s", a.N, a.Label())), tag, a.N, a.Start.UTC().Format(tf), a.End.UTC().Format(tf))
		}
	}
	return b.String()
}

// ganttText makes s safe as a gantt task name or section: those end at '#',
// ':' or ';' and a line break. Angle brackets become look-alikes so that no
// text from the workflow can pass for markup.
func ganttText(s string) string {
	return strings.NewReplacer(":", "∶", ";", ",", "#", "№", "\n", " ", "\r", " ", "<", "‹", ">", "›").Replace(s)
}

// ganttTitle makes s safe as the gantt's title, which ends at '#', ';' or a
// line break (a colon is kept).
func ganttTitle(s string) string {
	return strings.NewReplacer(";", ",", "#", "№", "\n", " ", "\r", " ", "<", "‹", ">", "›").Replace(s)
}
