package render

import (
	"fmt"
	"strings"
	"time"
)

func taskName(n int) string { return fmt.Sprintf("Task %02d", n) }

// Duration formats d for people, to the second: "45s", "2m05s", "1h02m05s".
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	h, m, sec := s/3600, s/60%60, s%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// clock formats a time of the report (UTC): the time of day when the whole
// report lies within one day, else with the date.
func (r *Report) clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	if sameDay(r.Start, r.End) {
		return t.Format("15:04:05")
	}
	return t.Format("01-02 15:04:05")
}

func sameDay(a, b time.Time) bool {
	a, b = a.UTC(), b.UTC()
	return a.Year() == b.Year() && a.YearDay() == b.YearDay()
}

// stamp is a full UTC time.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// percent is part of whole, rounded, as "28%" ("0%" when whole is 0).
func percent(part, whole time.Duration) string {
	if whole <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%d%%", int64((float64(part)/float64(whole))*100+0.5))
}

// tasks lists task numbers as "01, 03".
func tasks(list []int) string {
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = fmt.Sprintf("%02d", n)
	}
	return strings.Join(parts, ", ")
}

// stepLabel names a span: "4b quality gate", with its phase when it has one.
func stepLabel(s Span) string {
	l := StateTitle(s.State)
	if s.Phase != 0 {
		l += fmt.Sprintf(" (phase %d)", s.Phase)
	}
	return l
}

func phaseLabel(p PhaseRow) string {
	l := fmt.Sprintf("Phase %d", p.Number)
	if p.Title != "" {
		l += " " + p.Title
	}
	return l
}

func gateName(g int) string {
	if g == 0 {
		return "no gate (other rules)"
	}
	return fmt.Sprintf("Gate %d", g)
}

// status of a launch for people.
func statusText(a AgentRow) string {
	s := a.Status
	if a.Background {
		s += ", background"
	}
	return s
}

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
