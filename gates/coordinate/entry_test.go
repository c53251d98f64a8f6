package coordinate

import (
	"encoding/json"
	"testing"
)

// TestSupervisorEntry: the checkpoint's supervisor_state entry has
// aggregated_metadata {} before the supervisor aggregates, keeps only its
// kind's fields after, and a worker's duration even when it is 0; the
// state itself is not changed.
func TestSupervisorEntry(t *testing.T) {
	st := &SupervisorState{SupervisorID: "research_sub_supervisor_20261124_100000", SupervisorName: ResearchSupervisor, WorkerCount: 1,
		Workers: []WorkerRecord{{WorkerID: "research_specialist_1", Topic: "eviction", Status: WorkerCompleted}}}
	encode := func(v any) map[string]any {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	e := encode(st.Entry())
	if agg, ok := e["aggregated_metadata"].(map[string]any); !ok || len(agg) != 0 {
		t.Errorf("before aggregation: aggregated_metadata %v, want {}", e["aggregated_metadata"])
	}
	if w := e["workers"].([]any)[0].(map[string]any); w["duration_ms"] != 0.0 {
		t.Errorf("worker %v: duration_ms must be written, 0 included", w)
	}
	if st.AggregatedMetadata != nil {
		t.Error("Entry changed the state")
	}

	all := &SupervisorResult{SupervisorID: "x", Summary: "s", KeyFindings: []string{"k"}, TotalDurationMs: 5, ContextTokens: 9,
		PartialFailures: FailureList{"Failed: a (b)"}, Errors: []string{"e"},
		TopicsResearched: 3, ReportsCreated: []string{"r.md"},
		TracksCompleted: 2, FilesModified: 4, TotalLines: 10, ParallelDurationMs: 3, SequentialDurationMs: 6, TimeSavingsPercent: 50,
		TotalTests: 7, TestsPassed: 6, TestsFailed: 1, CoveragePercent: 80}
	common := []string{"supervisor_id", "summary", "key_findings", "total_duration_ms", "context_tokens", "partial_failures"}
	for _, c := range []struct {
		supervisor string
		own        []string
	}{
		{ResearchSupervisor, []string{"topics_researched", "reports_created"}},
		{ImplSupervisor, []string{"tracks_completed", "files_modified", "total_lines", "parallel_duration_ms", "sequential_duration_ms", "time_savings_percent"}},
		{TestSupervisor, []string{"total_tests", "tests_passed", "tests_failed", "coverage_percent"}},
	} {
		st := &SupervisorState{SupervisorName: c.supervisor, AggregatedMetadata: all}
		agg := encode(st.Entry())["aggregated_metadata"].(map[string]any)
		want := map[string]bool{}
		for _, k := range append(append([]string{}, common...), c.own...) {
			want[k] = true
			if _, ok := agg[k]; !ok {
				t.Errorf("%s: %s was dropped", c.supervisor, k)
			}
		}
		for k := range agg {
			if !want[k] {
				t.Errorf("%s: %s is not a field of its kind, and was kept", c.supervisor, k)
			}
		}
		if st.AggregatedMetadata != all || all.TotalTests != 7 || all.TopicsResearched != 3 {
			t.Errorf("%s: Entry changed the state", c.supervisor)
		}
	}
}
