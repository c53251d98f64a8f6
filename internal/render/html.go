package render

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// The timeline's geometry, in pixels.
const (
	svgWidth  = 1100
	labelW    = 330 // the label column
	chartX    = labelW + 10
	chartW    = svgWidth - chartX - 70 // room on the right for a duration
	axisH     = 28
	bandH     = 26 // the steps and phases bands
	rowH      = 22 // one agent launch
	barH      = 14
	svgBottom = 12
)

// agentColors: one colour per workflow agent.
var agentColors = map[string]string{
	gates.Analyst:     "#8e7cc3",
	gates.Researcher:  "#6fa8dc",
	gates.Explorer:    "#45818e",
	gates.Planner:     "#e69138",
	gates.Implementer: "#6aa84f",
	gates.Quality:     "#cc4125",
	gates.UXDX:        "#c27ba0",
}

const otherColor = "#999999"

// stepColor colours a step by the part of the workflow it belongs to.
func stepColor(s string) string {
	switch s {
	case gates.S0a, gates.S1, gates.S0b:
		return "#d9d2e9"
	case gates.S2, gates.S3:
		return "#fce5cd"
	case gates.S4a, gates.S4b, gates.S4c:
		return "#d9ead3"
	case gates.SF1, gates.SF2:
		return "#f4cccc"
	case gates.S5a, gates.S5b, gates.S6:
		return "#cfe2f3"
	case gates.Escalated:
		return "#ea9999"
	}
	return "#eeeeee"
}

func agentColor(a string) string {
	if c, ok := agentColors[a]; ok {
		return c
	}
	return otherColor
}

// HTML draws the report as one self-contained page: inline CSS and an
// inline SVG timeline with one row per agent launch (each a <g> with
// data-row="launch"). It has no script and refers to nothing outside itself.
func HTML(r *Report) string {
	var b strings.Builder
	e := html.EscapeString
	title := "orch-hook report: " + shorten.Bytes(shorten.OneLine(r.Request), 120, "…")
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", e(title))
	b.WriteString("<style>\n" + css + "</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", e(title))

	b.WriteString("<table class=\"facts\">\n")
	fmt.Fprintf(&b, "<tr><th>workflow</th><td>%s, step <strong>%s</strong></td></tr>\n", e(r.Command), e(r.State))
	fmt.Fprintf(&b, "<tr><th>started</th><td>%s</td></tr>\n", e(stamp(r.Start)))
	if r.Finished {
		fmt.Fprintf(&b, "<tr><th>ended</th><td>%s (wall time %s)</td></tr>\n", e(stamp(r.End)), Duration(r.End.Sub(r.Start)))
	} else {
		fmt.Fprintf(&b, "<tr><th>running</th><td>as of %s (%s so far)</td></tr>\n", e(stamp(r.Now)), Duration(r.End.Sub(r.Start)))
	}
	fmt.Fprintf(&b, "<tr><th>agents</th><td>%s</td></tr>\n", e(agentSummary(r)))
	fmt.Fprintf(&b, "<tr><th>denials</th><td>%d</td></tr>\n", r.DenialsTotal)
	b.WriteString("</table>\n")

	b.WriteString("<h2>Timeline</h2>\n<p class=\"note\">Times are UTC. Hover a bar for its details.</p>\n")
	b.WriteString(Timeline(r))
	b.WriteString(legend(r))

	b.WriteString("<h2>Steps</h2>\n")
	if len(r.Steps) == 0 {
		b.WriteString("<p>No state change is logged.</p>\n")
	} else {
		b.WriteString("<table>\n<thead><tr><th>step</th><th>started</th><th>ended</th><th class=\"num\">duration</th></tr></thead>\n<tbody>\n")
		for _, s := range r.Steps {
			end := r.clock(s.End)
			if s.Open {
				end = "(now)"
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%s</td></tr>\n", e(stepLabel(s)), r.clock(s.Start), end, Duration(s.Duration()))
		}
		b.WriteString("</tbody>\n</table>\n")
	}

	b.WriteString("<h2>Agents</h2>\n")
	if len(r.Agents) == 0 {
		b.WriteString("<p>No agent was launched.</p>\n")
	} else {
		b.WriteString("<table>\n<thead><tr><th class=\"num\">#</th><th>agent</th><th>task</th><th>job</th><th>step</th><th>started</th><th>ended</th><th class=\"num\">duration</th><th>status</th><th>result</th></tr></thead>\n<tbody>\n")
		for _, a := range r.Agents {
			task := ""
			if a.Task != 0 {
				task = fmt.Sprintf("%02d", a.Task)
			}
			end := r.clock(a.End)
			if a.Open {
				end = "(running)"
			}
			fmt.Fprintf(&b, "<tr><td class=\"num\">%d</td><td><span class=\"swatch\" style=\"background:%s\"></span>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%s</td><td>%s</td><td>%s</td></tr>\n",
				a.N, agentColor(a.Agent), e(a.Agent), task, e(a.Job), e(a.State), r.clock(a.Start), end,
				Duration(a.Duration()), e(statusText(a)), e(shorten.Bytes(shorten.OneLine(a.Result), 80, "…")))
		}
		b.WriteString("</tbody>\n</table>\n")
	}

	b.WriteString("<h2>Parallel vs sequential</h2>\n<ul>\n")
	fmt.Fprintf(&b, "<li>Sequential (sum of the agents' durations): %s</li>\n", Duration(r.Sequential))
	fmt.Fprintf(&b, "<li>Parallel (wall time during which at least one agent ran): %s</li>\n", Duration(r.Parallel))
	fmt.Fprintf(&b, "<li>Saved by running agents in parallel: <strong>%s</strong> (%s of the sequential time)</li>\n</ul>\n", Duration(r.Saved()), percent(r.Saved(), r.Sequential))

	b.WriteString("<h2>Fix iterations per phase</h2>\n")
	if len(r.Phases) == 0 {
		b.WriteString("<p>No plan phase has started.</p>\n")
	} else {
		fmt.Fprintf(&b, "<p class=\"note\">A fix iteration is a quality-gate FAIL (4b) of the phase, which starts a fix cycle (F1 failure analysis, F2 fixes); the %s escalates.</p>\n", ordinal(gates.MaxFixIterations))
		b.WriteString("<table>\n<thead><tr><th>phase</th><th>started</th><th>ended</th><th class=\"num\">duration</th><th class=\"num\">fix iterations</th><th class=\"num\">escalations</th><th class=\"num\">launches</th></tr></thead>\n<tbody>\n")
		for _, p := range r.Phases {
			start, end, dur := "", "", ""
			if !p.Start.IsZero() {
				start, end, dur = r.clock(p.Start), r.clock(p.End), Duration(p.Duration())
				if r.phaseOpen(p) {
					end = "(now)"
				}
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%d</td><td class=\"num\">%d</td><td class=\"num\">%d</td></tr>\n", e(phaseLabel(p)), start, end, dur, p.FixIterations, p.Escalations, p.Launches)
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	fmt.Fprintf(&b, "<p>Final-validation failures (5a/5b FAIL): %d of %d allowed.</p>\n", r.FinalFailures, gates.MaxFinalFailures)

	b.WriteString("<h2>Denials by gate</h2>\n")
	if len(r.Denials) == 0 {
		b.WriteString("<p>No call was denied.</p>\n")
	} else {
		b.WriteString("<table>\n<thead><tr><th>gate</th><th class=\"num\">denials</th><th>last reason</th></tr></thead>\n<tbody>\n")
		for _, d := range r.Denials {
			fmt.Fprintf(&b, "<tr><td>%s</td><td class=\"num\">%d</td><td>%s</td></tr>\n", e(gateName(d.Gate)), d.Count, e(shorten.Bytes(shorten.OneLine(d.Last), 160, "…")))
		}
		b.WriteString("</tbody>\n</table>\n")
	}

	b.WriteString("<h2>Artifacts</h2>\n<h3>Workflow files (.orchestrator/, state excluded)</h3>\n")
	if len(r.Artifacts) == 0 {
		b.WriteString("<p>None.</p>\n")
	} else {
		b.WriteString("<table>\n<thead><tr><th>file</th><th class=\"num\">bytes</th></tr></thead>\n<tbody>\n")
		for _, a := range r.Artifacts {
			fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td class=\"num\">%d</td></tr>\n", e(a.Path), a.Size)
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	b.WriteString("<h3>Project files</h3>\n")
	fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", strings.ReplaceAll(e(projectFilesNote), "`Files:`", "<code>Files:</code>"))
	if len(r.ProjectFiles) == 0 {
		if r.PlanKnown {
			b.WriteString("<p>The plan's tasks declare no files.</p>\n")
		} else {
			b.WriteString("<p>No plan yet.</p>\n")
		}
	} else {
		b.WriteString("<table>\n<thead><tr><th>file</th><th>declared by</th><th>implemented by</th><th>exists now</th></tr></thead>\n<tbody>\n")
		for _, f := range r.ProjectFiles {
			fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>\n", e(f.Path), tasks(f.Tasks), tasks(f.Implemented), existsText(f))
		}
		b.WriteString("</tbody>\n</table>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

const css = `:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 24px; color: #222; background: #fff; max-width: 1160px; }
h1 { font-size: 1.5em; margin: 0 0 12px; }
h2 { font-size: 1.2em; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 1em; margin: 16px 0 6px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; }
table.facts th { background: #f3f3f3; width: 7em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 13px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; vertical-align: baseline; }
.legend { list-style: none; padding: 0; margin: 6px 0; font-size: 12px; display: flex; flex-wrap: wrap; gap: 14px; }
svg.timeline { display: block; border: 1px solid #ddd; background: #fff; font-family: inherit; }
svg.timeline text { font-size: 11px; fill: #222; }
svg.timeline .axis text { fill: #666; }
svg.timeline .grid { stroke: #eee; }
svg.timeline .bandlabel { font-weight: 600; }
svg.timeline .dur { fill: #555; }
svg.timeline .running { stroke: #222; stroke-dasharray: 3 2; }
svg.timeline .failed { stroke: #900; stroke-width: 2; }
`

// tickSteps are the axis's candidate tick intervals.
var tickSteps = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// Timeline draws the inline SVG: an axis, the steps and phases bands, and
// one row per agent launch.
func Timeline(r *Report) string {
	e := html.EscapeString
	start := r.Start
	total := r.End.Sub(start)
	if total <= 0 {
		total = time.Second
	}
	x := func(t time.Time) float64 {
		d := t.Sub(start)
		if d < 0 {
			d = 0
		}
		if d > total {
			d = total
		}
		return chartX + float64(d)/float64(total)*chartW
	}
	width := func(a, b time.Time) float64 {
		w := x(b) - x(a)
		if w < 2 {
			w = 2
		}
		return w
	}
	started := 0
	for _, p := range r.Phases {
		if !p.Start.IsZero() {
			started++
		}
	}
	bands := 0
	if len(r.Steps) > 0 {
		bands++
	}
	if started > 0 {
		bands++
	}
	height := axisH + bands*bandH + len(r.Agents)*rowH + svgBottom

	var b strings.Builder
	fmt.Fprintf(&b, "<svg class=\"timeline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
		svgWidth, height, svgWidth, height, e(fmt.Sprintf("Timeline: %d steps, %d agent launches", len(r.Steps), len(r.Agents))))

	// Axis and grid.
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if total/s <= 8 {
			step = s
			break
		}
	}
	format := "15:04"
	if step < time.Minute {
		format = "15:04:05"
	}
	if !sameDay(r.Start, r.End) {
		format = "01-02 " + format
	}
	b.WriteString("<g class=\"axis\">\n")
	first := start.Truncate(step)
	if first.Before(start) {
		first = first.Add(step)
	}
	for t := first; !t.After(start.Add(total)); t = t.Add(step) {
		fmt.Fprintf(&b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x(t), axisH-6, x(t), height-svgBottom)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x(t), axisH-10, t.UTC().Format(format))
	}
	b.WriteString("</g>\n")

	y := axisH
	if len(r.Steps) > 0 {
		b.WriteString("<g class=\"band\" data-band=\"steps\">\n")
		fmt.Fprintf(&b, "<text class=\"bandlabel\" x=\"8\" y=\"%d\">Steps</text>\n", y+17)
		for _, s := range r.Steps {
			x0, w := x(s.Start), width(s.Start, s.End)
			fmt.Fprintf(&b, "<g><title>%s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" stroke=\"#fff\"/>",
				e(fmt.Sprintf("%s: %s to %s, %s", stepLabel(s), r.clock(s.Start), r.clock(s.End), Duration(s.Duration()))), x0, y+3, w, bandH-6, stepColor(s.State))
			if w >= float64(7*len(s.State)+6) {
				fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x0+w/2, y+17, e(s.State))
			}
			b.WriteString("</g>\n")
		}
		b.WriteString("</g>\n")
		y += bandH
	}
	if started > 0 {
		b.WriteString("<g class=\"band\" data-band=\"phases\">\n")
		fmt.Fprintf(&b, "<text class=\"bandlabel\" x=\"8\" y=\"%d\">Plan phases</text>\n", y+17)
		for _, p := range r.Phases {
			if p.Start.IsZero() {
				continue
			}
			x0, w := x(p.Start), width(p.Start, p.End)
			fmt.Fprintf(&b, "<g><title>%s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#b7b7b7\" stroke=\"#fff\"/>",
				e(fmt.Sprintf("%s: %s to %s, %s, %d fix iteration(s)", phaseLabel(p), r.clock(p.Start), r.clock(p.End), Duration(p.Duration()), p.FixIterations)), x0, y+3, w, bandH-6)
			label := fmt.Sprintf("Phase %d", p.Number)
			if w >= float64(7*len(label)+6) {
				fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x0+w/2, y+17, e(label))
			}
			b.WriteString("</g>\n")
		}
		b.WriteString("</g>\n")
		y += bandH
	}

	for _, a := range r.Agents {
		class := ""
		switch {
		case a.Open:
			class = " class=\"running\""
		case a.Status != gates.Returned:
			class = " class=\"failed\""
		}
		x0, w := x(a.Start), width(a.Start, a.End)
		fmt.Fprintf(&b, "<g class=\"row\" data-row=\"launch\" data-agent=\"%s\" data-status=\"%s\">", e(a.Agent), e(a.Status))
		end := r.clock(a.End)
		if a.Open {
			end = "now (running)"
		}
		fmt.Fprintf(&b, "<title>%s</title>", e(fmt.Sprintf("%d. %s: %s to %s, %s, %s", a.N, a.Label(), r.clock(a.Start), end, Duration(a.Duration()), statusText(a))))
		fmt.Fprintf(&b, "<text x=\"8\" y=\"%d\">%s</text>", y+15, e(shorten.Bytes(shorten.OneLine(fmt.Sprintf("%d. %s", a.N, a.Label())), 52, "…")))
		fmt.Fprintf(&b, "<rect%s x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>", class, x0, y+(rowH-barH)/2, w, barH, agentColor(a.Agent))
		fmt.Fprintf(&b, "<text class=\"dur\" x=\"%.1f\" y=\"%d\">%s</text>", x0+w+4, y+15, Duration(a.Duration()))
		b.WriteString("</g>\n")
		y += rowH
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// legend names the colours of the agents that appear.
func legend(r *Report) string {
	seen := map[string]bool{}
	var names []string
	for _, n := range gates.WorkflowAgents {
		for _, a := range r.Agents {
			if a.Agent == n && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	for _, a := range r.Agents {
		if !seen[a.Agent] {
			seen[a.Agent] = true
			names = append(names, a.Agent)
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<ul class=\"legend\">\n")
	for _, n := range names {
		fmt.Fprintf(&b, "<li><span class=\"swatch\" style=\"background:%s\"></span>%s</li>\n", agentColor(n), html.EscapeString(n))
	}
	b.WriteString("<li>dashed outline: running; red outline: failed, unrecognized or stale</li>\n")
	b.WriteString("</ul>\n")
	return b.String()
}
