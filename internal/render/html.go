package render

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
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
	orchestrate.Analyst:     "#8e7cc3",
	orchestrate.Researcher:  "#6fa8dc",
	orchestrate.Explorer:    "#45818e",
	orchestrate.Planner:     "#e69138",
	orchestrate.Implementer: "#6aa84f",
	orchestrate.Quality:     "#cc4125",
	orchestrate.UXDX:        "#c27ba0",

	coordinate.ResearchSpecialist: "#6fa8dc",
	coordinate.ResearchSupervisor: "#3d85c6",
	coordinate.PlanArchitect:      "#e69138",
	coordinate.ImplSupervisor:     "#38761d",
	coordinate.ImplementationExec: "#6aa84f",
	coordinate.TestSupervisor:     "#990000",
	coordinate.TestSpecialist:     "#cc4125",
	coordinate.DebugAnalyst:       "#8e7cc3",
	coordinate.DocWriter:          "#c27ba0",
}

const otherColor = "#999999"

// stepColor colours a step by the part of the workflow it belongs to.
func stepColor(s string) string {
	switch s {
	case orchestrate.S0a, orchestrate.S1, orchestrate.S0b:
		return "#d9d2e9"
	case orchestrate.S2, orchestrate.S3:
		return "#fce5cd"
	case orchestrate.S4a, orchestrate.S4b, orchestrate.S4c:
		return "#d9ead3"
	case orchestrate.SF1, orchestrate.SF2:
		return "#f4cccc"
	case orchestrate.S5a, orchestrate.S5b, orchestrate.S6:
		return "#cfe2f3"
	case orchestrate.Escalated:
		return "#ea9999"
	case coordinate.CResearch:
		return "#d9d2e9"
	case coordinate.CPlan:
		return "#fce5cd"
	case coordinate.CImplement, coordinate.CTest:
		return "#d9ead3"
	case coordinate.CDebug:
		return "#f4cccc"
	case coordinate.CDocument:
		return "#cfe2f3"
	}
	return "#eeeeee"
}

func agentColor(a string) string {
	if c, ok := agentColors[a]; ok {
		return c
	}
	return otherColor
}

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
		// A supervisor's worker is drawn indented under it.
		parent, labelX, label := "", 8, fmt.Sprintf("%s. %s", a.ID(), a.Label())
		if a.Sub > 0 {
			parent, labelX = fmt.Sprintf(" data-parent=\"%d\"", a.N), 22
			label = "↳ " + label
		}
		fmt.Fprintf(&b, "<g class=\"row\" data-row=\"launch\" data-agent=\"%s\" data-status=\"%s\"%s>", e(a.Agent), e(a.Status), parent)
		end := r.clock(a.End)
		if a.Open {
			end = "now (running)"
		}
		tok := ""
		if !a.Open {
			tok = ", tokens " + a.TokensText()
		}
		fmt.Fprintf(&b, "<title>%s</title>", e(fmt.Sprintf("%s. %s: %s to %s, %s, %s%s", a.ID(), a.Label(), r.clock(a.Start), end, Duration(a.Duration()), statusText(a), tok)))
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">%s</text>", labelX, y+15, e(line(label, 52)))
		fmt.Fprintf(&b, "<rect%s x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>", class, x0, y+(rowH-barH)/2, w, barH, agentColor(a.Agent))
		fmt.Fprintf(&b, "<text class=\"dur\" x=\"%.1f\" y=\"%d\">%s</text>", x0+w+4, y+15, e(Duration(a.Duration())+tokensSuffix(a)))
		b.WriteString("</g>\n")
		y += rowH
	}
	b.WriteString("</svg>\n")
	return b.String()
}
