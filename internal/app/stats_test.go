package app

import (
	"encoding/json"
	"testing"

	"github.com/orch-hook/orch-hook/state"
)

// The summary groups by workflow, scope and pattern; averages the runs
// not aborted (a measured percentage over the runs that measured it);
// groups orchestrate's fix iterations by the plan's phase count; and skips
// lines that are not metrics lines of this schema, by line number.
func TestSummarizeMetrics(t *testing.T) {
	lines := []string{
		`{"schema":"orch-hook.metrics/1","lineage":"a","kind":"coordinate","scope":"full-implementation","pattern":"hierarchical","duration_ms":60000,"agents":10,"debug_retries":1,"context_reduction":{"percent":95.5,"report_bytes":1,"metadata_chars":1},"time_savings":{"sequential_ms":1,"parallel_ms":1,"percent":57},"escalations":1,"known_issues":0,"tokens":30000,"tokens_unknown_agents":1,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"b","kind":"coordinate","scope":"full-implementation","pattern":"hierarchical","duration_ms":120001,"agents":13,"debug_retries":0,"context_reduction":null,"time_savings":{"sequential_ms":1,"parallel_ms":1,"percent":40},"escalations":0,"known_issues":2,"tokens":10001,"outcome":"tests_failing"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"c","kind":"coordinate","scope":"full-implementation","pattern":"hierarchical","duration_ms":5,"agents":1,"debug_retries":0,"time_savings":{"sequential_ms":1,"parallel_ms":1,"percent":-100},"outcome":"aborted"}`,
		`not json`,
		`{"schema":"orch-hook.metrics/2","lineage":"d","kind":"orchestrate"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"e","kind":"orchestrate","pattern":"flat","duration_ms":1000,"agents":4,"phases":2,"fix_iterations":3,"final_validation_failures":1,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"f","kind":"orchestrate","pattern":"flat","duration_ms":3000,"agents":6,"phases":2,"fix_iterations":0,"final_validation_failures":0,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"g","kind":"orchestrate","pattern":"flat","duration_ms":2000,"agents":2,"phases":1,"fix_iterations":1,"final_validation_failures":0,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"h","kind":"orchestrate","pattern":"flat","duration_ms":9,"agents":0,"phases":0,"fix_iterations":0,"final_validation_failures":0,"tokens":999999,"outcome":"aborted"}`,
	}
	log := &state.MetricsLog{Torn: true}
	for i, l := range lines {
		log.Lines = append(log.Lines, []byte(l))
		log.Numbers = append(log.Numbers, i+2) // a blank first line
	}
	st := SummarizeMetrics(log)
	got, _ := json.Marshal(st)
	want := `{"workflows":7,"aborted":2,"skipped_lines":[5,6],"torn_last_line":true,"patterns":[` +
		`{"kind":"orchestrate","scope":"","pattern":"flat","runs":4,"aborted":1,"averaged":3,"avg_duration_ms":2000,"avg_agents":4,"avg_debug_retries":null,"context_reduction":null,"time_savings":null,"tokens":null,"outcomes":{"aborted":1,"completed":3}},` +
		`{"kind":"coordinate","scope":"full-implementation","pattern":"hierarchical","runs":3,"aborted":1,"averaged":2,"avg_duration_ms":90001,"avg_agents":11.5,"avg_debug_retries":0.5,"context_reduction":{"runs":1,"avg_percent":95.5},"time_savings":{"runs":2,"avg_percent":48.5},"tokens":{"runs":2,"avg":20001,"partial":1},"outcomes":{"aborted":1,"completed":1,"tests_failing":1}}],` +
		`"fix_iterations_by_phases":[{"phases":1,"runs":1,"avg_fix_iterations":1,"avg_final_validation_failures":0},{"phases":2,"runs":2,"avg_fix_iterations":1.5,"avg_final_validation_failures":0.5}],` +
		`"outcomes":{"aborted":2,"completed":4,"tests_failing":1},"escalations":1,"known_issues":2}`
	if string(got) != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}

	empty, _ := json.Marshal(SummarizeMetrics(&state.MetricsLog{}))
	if string(empty) != `{"workflows":0,"aborted":0,"skipped_lines":[],"torn_last_line":false,"patterns":[],"fix_iterations_by_phases":[],"outcomes":{},"escalations":0,"known_issues":0}` {
		t.Errorf("empty summary: %s", empty)
	}
}

// A line with tokens no session spends (or below zero) is skipped: sums
// of them stay exact.
func TestSummarizeMetricsImplausibleTokens(t *testing.T) {
	log := &state.MetricsLog{}
	for i, l := range []string{
		`{"schema":"orch-hook.metrics/1","lineage":"a","kind":"orchestrate","pattern":"flat","tokens":9223372036854775807,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"b","kind":"orchestrate","pattern":"flat","tokens":-5,"outcome":"completed"}`,
		`{"schema":"orch-hook.metrics/1","lineage":"c","kind":"orchestrate","pattern":"flat","tokens":5,"outcome":"completed"}`,
	} {
		log.Lines, log.Numbers = append(log.Lines, []byte(l)), append(log.Numbers, i+1)
	}
	st := SummarizeMetrics(log)
	if len(st.SkippedLines) != 2 || st.Patterns[0].Tokens == nil || st.Patterns[0].Tokens.Avg != 5 {
		t.Errorf("skipped %v, tokens %+v", st.SkippedLines, st.Patterns[0].Tokens)
	}
}

// A line no orch-hook wrote, with a percentage JSON's numbers allow but a
// sum of which is infinite, is skipped: the summary still encodes.
func TestSummarizeMetricsImplausiblePercent(t *testing.T) {
	line := func(lineage string) []byte {
		return []byte(`{"schema":"orch-hook.metrics/1","lineage":"` + lineage + `","kind":"coordinate","scope":"research-only","pattern":"flat","duration_ms":1,"agents":1,"debug_retries":0,"context_reduction":{"percent":1e308,"report_bytes":1,"metadata_chars":1},"outcome":"completed"}`)
	}
	st := SummarizeMetrics(&state.MetricsLog{Lines: [][]byte{line("a"), line("b")}, Numbers: []int{1, 2}})
	if _, err := json.Marshal(st); err != nil {
		t.Fatalf("the summary does not encode: %v", err)
	}
	if len(st.SkippedLines) != 2 || st.Workflows != 0 {
		t.Errorf("skipped %v, %d workflows", st.SkippedLines, st.Workflows)
	}
}
