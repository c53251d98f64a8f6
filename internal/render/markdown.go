package render

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

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
	fmt.Fprintf(&b, "    title %s\n", ganttTitle(line("orch-hook: "+r.Request, 80)))
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
			label := fmt.Sprintf("%s. %s", a.ID(), a.Label()) + tokensSuffix(a)
			if a.Sub > 0 {
				label = "↳ " + label // a supervisor's worker, under it
			}
			fmt.Fprintf(&b, "    %s :%s, ag%s, %s, %s\n", ganttText(label), tag, strings.ReplaceAll(a.ID(), ".", "_"), a.Start.UTC().Format(tf), a.End.UTC().Format(tf))
		}
	}
	return b.String()
}

// tokensSuffix is an ended agent's known tokens for its timeline label
// (" · 33.1k tok"), "" when not known.
func tokensSuffix(a AgentRow) string {
	if a.Open || !a.Tokens.Known() {
		return ""
	}
	return " · " + a.TokensText() + " tok"
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
