package app

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/orch-hook/orch-hook/state"
)

// Stats summarises the metrics lines of a project (`orch-hook stats`,
// schema orch-hook.stats/1 with the fields the command adds). Averages are
// over the runs that were not aborted: a run the user stopped measures
// the stop, not the pattern; aborted runs are counted all the same.
type Stats struct {
	// Workflows is the number of metrics lines read.
	Workflows int `json:"workflows"`
	// Aborted is how many of them were aborted.
	Aborted int `json:"aborted"`
	// SkippedLines are the line numbers of lines that are not a metrics
	// line of this schema (not JSON, another schema): skipped, never fatal.
	SkippedLines []int `json:"skipped_lines"`
	// TornLastLine: the file ends in an unfinished line (an append in
	// progress or interrupted), ignored; the next append cuts it.
	TornLastLine bool `json:"torn_last_line"`

	Patterns      []PatternStats    `json:"patterns"`
	FixIterations []PhaseCountStats `json:"fix_iterations_by_phases"`
	Outcomes      map[string]int    `json:"outcomes"`
	Escalations   int               `json:"escalations"`
	KnownIssues   int               `json:"known_issues"`
}

// PatternStats is one kind of run: workflow, scope and pattern. An average
// is null when no run of the group counts for it.
type PatternStats struct {
	Kind    string `json:"kind"`
	Scope   string `json:"scope"` // "" for orchestrate
	Pattern string `json:"pattern"`
	Runs    int    `json:"runs"`
	Aborted int    `json:"aborted"`
	// Averaged is the runs the averages are over (Runs - Aborted).
	Averaged        int      `json:"averaged"`
	AvgDurationMs   *int64   `json:"avg_duration_ms"`
	AvgAgents       *float64 `json:"avg_agents"`
	AvgDebugRetries *float64 `json:"avg_debug_retries"` // coordinate
	// ContextReduction and TimeSavings average the runs that measured one.
	ContextReduction *MeasuredStats `json:"context_reduction"`
	TimeSavings      *MeasuredStats `json:"time_savings"`
	// Tokens averages the tokens the agents used over the runs that read
	// any agent's (a lower bound where some were unknown: TokensUnknown
	// counts those runs).
	Tokens   *TokenStats    `json:"tokens"`
	Outcomes map[string]int `json:"outcomes"`
}

// TokenStats averages the tokens of the runs that measured them.
type TokenStats struct {
	Runs int   `json:"runs"`
	Avg  int64 `json:"avg"`
	// Partial is how many of those runs had agents whose tokens are unknown.
	Partial int `json:"partial"`
}

// MeasuredStats averages a percentage over the runs that measured it.
type MeasuredStats struct {
	Runs       int     `json:"runs"`
	AvgPercent float64 `json:"avg_percent"` // to one decimal
}

// PhaseCountStats is the orchestrate runs (not aborted) of one plan size.
type PhaseCountStats struct {
	Phases                        int     `json:"phases"`
	Runs                          int     `json:"runs"`
	AvgFixIterations              float64 `json:"avg_fix_iterations"`
	AvgFinalValidationFailures    float64 `json:"avg_final_validation_failures"`
	totalFixes, totalFinalFailure int
}

// SummarizeMetrics reads each line of log as a MetricsLine and summarises
// them. A line that does not decode, or is of another schema, is skipped
// and its number listed.
func SummarizeMetrics(log *state.MetricsLog) *Stats {
	st := &Stats{SkippedLines: []int{}, Patterns: []PatternStats{}, FixIterations: []PhaseCountStats{}, Outcomes: map[string]int{}, TornLastLine: log.Torn}
	type acc struct {
		PatternStats
		duration              float64 // float: many lines never wrap a sum
		agents, retries       int
		reductions, savings   float64
		nReductions, nSavings int
		tokens                float64
		nTokens, partial      int
		coordinate            bool
	}
	groups := map[[3]string]*acc{}
	phases := map[int]*PhaseCountStats{}
	for i, raw := range log.Lines {
		var m MetricsLine
		if json.Unmarshal(raw, &m) != nil || m.Schema != MetricsSchema || m.Kind == "" || !plausible(&m) {
			st.SkippedLines = append(st.SkippedLines, log.Numbers[i])
			continue
		}
		st.Workflows++
		st.Outcomes[m.Outcome]++
		st.Escalations += m.Escalations
		st.KnownIssues += m.KnownIssues
		key := [3]string{m.Kind, m.Scope, m.Pattern}
		g := groups[key]
		if g == nil {
			g = &acc{PatternStats: PatternStats{Kind: m.Kind, Scope: m.Scope, Pattern: m.Pattern, Outcomes: map[string]int{}}}
			groups[key] = g
		}
		g.Runs++
		g.Outcomes[m.Outcome]++
		if m.Outcome == OutcomeAborted {
			g.Aborted++
			st.Aborted++
			continue
		}
		g.Averaged++
		g.duration += float64(m.DurationMs)
		g.agents += m.Agents
		if m.DebugRetries != nil {
			g.coordinate = true
			g.retries += *m.DebugRetries
		}
		if r := m.ContextReduction; r != nil {
			g.nReductions++
			g.reductions += r.Percent
		}
		if s := m.TimeSavings; s != nil {
			g.nSavings++
			g.savings += float64(s.Percent)
		}
		if m.Tokens != nil {
			g.nTokens++
			g.tokens += float64(*m.Tokens)
			if m.TokensUnknown > 0 {
				g.partial++
			}
		}
		if m.Phases != nil && m.FixIterations != nil {
			p := phases[*m.Phases]
			if p == nil {
				p = &PhaseCountStats{Phases: *m.Phases}
				phases[*m.Phases] = p
			}
			p.Runs++
			p.totalFixes += *m.FixIterations
			if m.FinalValidationFailures != nil {
				p.totalFinalFailure += *m.FinalValidationFailures
			}
		}
	}
	for _, g := range groups {
		ps := g.PatternStats
		if n := g.Averaged; n > 0 {
			d := int64(math.Round(g.duration / float64(n)))
			a := tenths(float64(g.agents) / float64(n))
			ps.AvgDurationMs, ps.AvgAgents = &d, &a
			if g.coordinate {
				r := tenths(float64(g.retries) / float64(n))
				ps.AvgDebugRetries = &r
			}
		}
		if g.nReductions > 0 {
			ps.ContextReduction = &MeasuredStats{Runs: g.nReductions, AvgPercent: tenths(g.reductions / float64(g.nReductions))}
		}
		if g.nSavings > 0 {
			ps.TimeSavings = &MeasuredStats{Runs: g.nSavings, AvgPercent: tenths(g.savings / float64(g.nSavings))}
		}
		if g.nTokens > 0 {
			ps.Tokens = &TokenStats{Runs: g.nTokens, Avg: int64(math.Round(g.tokens / float64(g.nTokens))), Partial: g.partial}
		}
		st.Patterns = append(st.Patterns, ps)
	}
	sort.Slice(st.Patterns, func(i, j int) bool {
		a, b := st.Patterns[i], st.Patterns[j]
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // orchestrate first
		}
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		return a.Pattern < b.Pattern
	})
	for _, p := range phases {
		p.AvgFixIterations = tenths(float64(p.totalFixes) / float64(p.Runs))
		p.AvgFinalValidationFailures = tenths(float64(p.totalFinalFailure) / float64(p.Runs))
		st.FixIterations = append(st.FixIterations, *p)
	}
	sort.Slice(st.FixIterations, func(i, j int) bool { return st.FixIterations[i].Phases < st.FixIterations[j].Phases })
	return st
}

// tenths rounds to one decimal.
func tenths(f float64) float64 { return math.Round(f*10) / 10 }

// maxPercent bounds a measured percentage a line may hold: a sum of them
// stays finite (JSON has no infinity, so one would fail the whole
// summary).
const maxPercent = 1e9

// plausible: the line's measured percentages are finite numbers within
// maxPercent (orch-hook writes percentages of what it measured; anything
// else was not written by it).
func plausible(m *MetricsLine) bool {
	if r := m.ContextReduction; r != nil && !(math.Abs(r.Percent) <= maxPercent) {
		return false
	}
	// Tokens sum without overflow over any number of lines.
	if t := m.Tokens; t != nil && (*t < 0 || *t > maxTokens) {
		return false
	}
	return true
}

// maxTokens bounds one line's tokens (a thousand times what any session
// spends; a sum of 9,000 such lines fits an int64).
const maxTokens = 1e15
