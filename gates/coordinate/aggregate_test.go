package coordinate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const seedReports = "/home/user/.config/.claude/specs/042_auth/reports/"

// seedWorkers are the four research workers of seedAggregated.
func seedWorkers() []WorkerRecord {
	return []WorkerRecord{
		{WorkerID: "research_specialist_1", Topic: "authentication patterns", Status: WorkerCompleted, OutputPath: seedReports + "001_authentication_patterns.md", DurationMs: 12000},
		{WorkerID: "research_specialist_2", Topic: "authorization patterns", Status: WorkerCompleted, OutputPath: seedReports + "002_authorization_patterns.md", DurationMs: 10500},
		{WorkerID: "research_specialist_3", Topic: "session management", Status: WorkerCompleted, OutputPath: seedReports + "003_session_management.md", DurationMs: 11200},
		{WorkerID: "research_specialist_4", Topic: "password security", Status: WorkerCompleted, OutputPath: seedReports + "004_password_security.md", DurationMs: 9800},
	}
}

func seedReportBytes() map[string]int {
	m := map[string]int{}
	for _, w := range seedWorkers() {
		m[w.OutputPath] = 10000 // ~2,500 tokens each
	}
	return m
}

// seedResult is seedAggregated with context_tokens set to the
// characters/4 estimate (its 950 is not one; see
// TestCheckAggregationSeedExample).
func seedResult(t *testing.T) *SupervisorResult {
	t.Helper()
	res, _, err := ParseSupervisor("SUPERVISOR_COMPLETE: " + strings.Replace(seedAggregated, `"context_tokens": 950`, `"context_tokens": 290`, 1))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCheckAggregationSeedExample(t *testing.T) {
	if v := CheckAggregation(seedResult(t), seedWorkers(), seedReportBytes()); v != nil {
		t.Errorf("the example with context_tokens 290: %q", v)
	}
	// The example's own numbers: the duration (the sum, 43500) holds; 950
	// tokens for ~1,150 characters does not.
	res, _, err := ParseSupervisor("SUPERVISOR_COMPLETE: " + seedAggregated)
	if err != nil {
		t.Fatal(err)
	}
	chars := res.AggregatedChars()
	if chars < 1100 || chars > 1200 {
		t.Fatalf("aggregated chars %d", chars)
	}
	v := CheckAggregation(res, seedWorkers(), seedReportBytes())
	est := (chars + 3) / 4
	want := fmt.Sprintf("context_tokens is 950 but the aggregated metadata has %d characters, about %d tokens (characters/4); it must be between %d and %d.", chars, est, est/2, est*2)
	if !reflect.DeepEqual(v, []string{want}) {
		t.Errorf("violations %q\nwant %q", v, want)
	}
}

func TestCheckAggregationRules(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	findings := func(n int) []string {
		var f []string
		for i := range n {
			f = append(f, fmt.Sprintf("finding %d", i+1))
		}
		return f
	}
	cases := []struct {
		name    string
		edit    func(r *SupervisorResult, w *[]WorkerRecord, b map[string]int)
		want    []string // fragments, one per violation, in order
		noBytes bool
	}{
		{"valid", nil, nil, false},
		{"summary at 100 words", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.Summary = words(100) }, nil, false},
		{"summary over 100 words", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.Summary = words(101) },
			[]string{"summary has 101 words; at most 100 are allowed."}, false},
		{"summary empty", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.Summary = "  \n " },
			[]string{"summary is empty; it must integrate the workers' findings in at most 100 words."}, false},
		{"12 key findings", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.KeyFindings = findings(12) }, nil, false},
		{"13 key findings", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.KeyFindings = findings(13) },
			[]string{"key_findings has 13 entries; at most 12 are allowed."}, false},
		{"no key findings", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.KeyFindings = nil }, nil, false},
		{"duration: the max (wall clock)", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 12000 }, nil, false},
		{"duration: sum +10%", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 47850 }, nil, false},
		{"duration: sum -10%", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 39150 }, nil, false},
		{"duration: max +10%", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 13200 }, nil, false},
		{"duration: just above sum +10%", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 47851 },
			[]string{"total_duration_ms is 47851 but the workers' recorded durations sum to 43500 ms and the longest took 12000 ms; it must be within 10% of the sum or of the longest."}, false},
		{"duration: between max and sum", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 25000 },
			[]string{"total_duration_ms is 25000 but"}, false},
		{"duration: missing", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.TotalDurationMs = 0 },
			[]string{"total_duration_ms is missing; the workers' recorded durations sum to 43500 ms (the longest took 12000 ms)."}, false},
		{"duration: no worker durations observed", func(r *SupervisorResult, w *[]WorkerRecord, _ map[string]int) {
			r.TotalDurationMs = 999
			for i := range *w {
				(*w)[i].DurationMs = 0
			}
		}, nil, false},
		{"duration: sum of the completed workers only", func(r *SupervisorResult, w *[]WorkerRecord, _ map[string]int) {
			(*w)[3].Status, (*w)[3].DurationMs = WorkerFailed, 60000
			r.TotalDurationMs = 33700 // 12000+10500+11200
		}, nil, false},
		{"duration: sum including a failed worker", func(r *SupervisorResult, w *[]WorkerRecord, _ map[string]int) {
			(*w)[3].Status = WorkerFailed
		}, nil, false},
		{"duration: implementation form", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) {
			r.TotalDurationMs, r.SequentialDurationMs, r.ParallelDurationMs = 0, 43000, 12000
		}, nil, false},
		{"duration: implementation form off", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) {
			r.TotalDurationMs, r.SequentialDurationMs = 0, 70000
		}, []string{"sequential_duration_ms is 70000 but the workers' recorded durations sum to 43500 ms; it must be within 10% of the sum."}, false},
		{"context_tokens missing", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.ContextTokens = 0; r.Raw = "" },
			[]string{"context_tokens is missing; the aggregated metadata has"}, false},
		{"context_tokens far too low", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.ContextTokens = 10; r.Raw = "" },
			[]string{"context_tokens is 10 but the aggregated metadata has"}, false},
		{"context_tokens far too high", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) { r.ContextTokens = 5000; r.Raw = "" },
			[]string{"context_tokens is 5000 but"}, false},
		{"report no worker listed", func(r *SupervisorResult, _ *[]WorkerRecord, b map[string]int) {
			r.ReportsCreated = append(r.ReportsCreated, seedReports+"005_invented.md")
			b[seedReports+"005_invented.md"] = 100
		}, []string{"reports_created lists " + seedReports + "005_invented.md, which no worker reported (no worker ended with REPORT_CREATED: " + seedReports + "005_invented.md)."}, false},
		{"report listed twice", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) {
			r.ReportsCreated = append(r.ReportsCreated, r.ReportsCreated[0])
		}, []string{"reports_created lists " + seedReports + "001_authentication_patterns.md more than once."}, false},
		{"report paths compare cleaned", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) {
			r.ReportsCreated[0] = "/home/user/.config/.claude/specs/042_auth/./reports//001_authentication_patterns.md"
		}, nil, false},
		{"report empty", func(_ *SupervisorResult, _ *[]WorkerRecord, b map[string]int) {
			b[seedReports+"002_authorization_patterns.md"] = 0
		},
			[]string{"report " + seedReports + "002_authorization_patterns.md is missing or empty."}, false},
		{"report size unknown", func(_ *SupervisorResult, _ *[]WorkerRecord, b map[string]int) {
			delete(b, seedReports+"003_session_management.md")
		},
			[]string{"report " + seedReports + "003_session_management.md is missing or empty."}, false},
		{"no sizes: rule 6 skipped", func(_ *SupervisorResult, _ *[]WorkerRecord, b map[string]int) {
			delete(b, seedReports+"003_session_management.md")
		}, nil, true},
		{"no workers observed", func(_ *SupervisorResult, w *[]WorkerRecord, _ map[string]int) { *w = nil },
			[]string{"001_authentication_patterns.md, which no worker reported", "002_", "003_", "004_"}, false},
		{"several at once, in rule order", func(r *SupervisorResult, _ *[]WorkerRecord, _ map[string]int) {
			r.Summary, r.KeyFindings, r.TotalDurationMs, r.ContextTokens = words(120), findings(20), 1, 5
		}, []string{"summary has 120 words", "key_findings has 20 entries", "total_duration_ms is 1 but", "context_tokens is 5 but"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, workers, sizes := seedResult(t), seedWorkers(), seedReportBytes()
			if tc.edit != nil {
				tc.edit(res, &workers, sizes)
			}
			if tc.noBytes {
				sizes = nil
			}
			got := CheckAggregation(res, workers, sizes)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d = %q, want %q in it", i, got[i], w)
				}
			}
		})
	}
	if got := CheckAggregation(nil, nil, nil); len(got) != 1 {
		t.Errorf("nil result: %q", got)
	}
}

func TestContextTokensTolerance(t *testing.T) {
	res := &SupervisorResult{Summary: "s", Raw: `{"summary": "` + strings.Repeat("x", 386) + `"}`} // 400 chars compact -> 100 tokens
	if c := res.AggregatedChars(); c != 400 {
		t.Fatalf("chars %d", c)
	}
	for tokens, ok := range map[int]bool{49: false, 50: true, 100: true, 200: true, 201: false} {
		res.ContextTokens = tokens
		v := CheckAggregation(res, nil, nil)
		if (len(v) == 0) != ok {
			t.Errorf("context_tokens %d: %q", tokens, v)
		}
	}
	// Whitespace between tokens does not count; characters are runes.
	pretty := &SupervisorResult{Raw: "{\n    \"summary\":   \"é\"\n}"}
	if c := pretty.AggregatedChars(); c != len([]rune(`{"summary":"é"}`)) {
		t.Errorf("pretty chars %d", c)
	}
	// Without Raw, the encoding counts (no HTML escaping of < > &).
	enc := &SupervisorResult{Summary: "a<b"}
	if c := enc.AggregatedChars(); c != len(`{"summary":"a<b"}`) {
		t.Errorf("encoded chars %d", c)
	}
}

func TestContextReduction(t *testing.T) {
	cases := []struct {
		name  string
		sizes map[string]int
		agg   int
		want  float64
	}{
		{"10,000 -> 500 tokens", map[string]int{"a": 10000, "b": 10000, "c": 10000, "d": 10000}, 2000, 95},
		{"exactly the target", map[string]int{"a": 1000}, 100, 90},
		{"below the target", map[string]int{"a": 1000}, 500, 50},
		{"no reports", nil, 100, 0},
		{"empty reports", map[string]int{"a": 0, "b": -5}, 100, 0},
		{"metadata larger than the reports", map[string]int{"a": 100}, 150, -50},
	}
	for _, tc := range cases {
		if got := ContextReduction(tc.sizes, tc.agg); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if ContextReduction(map[string]int{"a": 1000}, 100) < ContextReductionTarget || ContextReduction(map[string]int{"a": 1000}, 101) >= ContextReductionTarget {
		t.Error("target boundary")
	}
}

func TestPartialFailure(t *testing.T) {
	ok := func(topic string) WorkerRecord { return WorkerRecord{Topic: topic, Status: WorkerCompleted} }
	bad := func(topic, err string) WorkerRecord {
		return WorkerRecord{Topic: topic, Status: WorkerFailed, Error: err}
	}
	cases := []struct {
		name     string
		workers  []WorkerRecord
		proceed  bool
		failures []string
	}{
		{"all succeed", []WorkerRecord{ok("a"), ok("b"), ok("c")}, true, nil},
		{"a single worker succeeds", []WorkerRecord{ok("a")}, true, nil},
		{"2/3 succeed", []WorkerRecord{ok("a"), bad("b", "timeout"), ok("c")}, true, []string{"Failed: b (timeout)"}},
		{"2/4 succeed", []WorkerRecord{bad("a", "x"), ok("b"), ok("c"), bad("d", "y")}, true, []string{"Failed: a (x)", "Failed: d (y)"}},
		{"1/3 succeed", []WorkerRecord{ok("a"), bad("b", "timeout"), bad("c", "no report")}, false, []string{"Failed: b (timeout)", "Failed: c (no report)"}},
		{"1/2 succeed", []WorkerRecord{bad("a", "x"), ok("b")}, false, []string{"Failed: a (x)"}},
		{"all fail", []WorkerRecord{bad("a", "permission denied"), bad("b", "disk full")}, false, []string{"Failed: a (permission denied)", "Failed: b (disk full)"}},
		{"no error recorded", []WorkerRecord{{WorkerID: "research_specialist_2", Status: WorkerFailed}}, false, []string{"Failed: research_specialist_2 (no error recorded)"}},
		{"still running", []WorkerRecord{ok("a"), ok("b"), {TrackName: "Backend", Status: WorkerInProgress}}, true, []string{"Failed: Backend (did not finish: status in_progress)"}},
		{"no status", []WorkerRecord{{AgentID: "agent-7"}}, false, []string{"Failed: agent-7 (did not finish)"}},
		{"unnamed", []WorkerRecord{{Status: WorkerFailed, Error: "boom"}}, false, []string{"Failed: unnamed worker (boom)"}},
		{"no workers", nil, false, []string{"no workers were recorded"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proceed, failures := PartialFailure(tc.workers)
			if proceed != tc.proceed || !reflect.DeepEqual(failures, tc.failures) {
				t.Errorf("PartialFailure = %v, %q; want %v, %q", proceed, failures, tc.proceed, tc.failures)
			}
		})
	}
}

func TestTimeSavings(t *testing.T) {
	cases := []struct {
		name      string
		durations []int64
		wall      int64
		seq, par  int64
		percent   int
	}{
		{"implementation: 57%", []int64{25000, 30000, 15000}, 0, 70000, 30000, 57},
		{"research: max as parallel", []int64{12000, 10500, 11200, 9800}, 0, 43500, 12000, 72},
		{"observed wall clock", []int64{25000, 30000, 15000}, 35000, 70000, 35000, 50},
		{"one track", []int64{5000}, 0, 5000, 5000, 0},
		{"no tracks", nil, 0, 0, 0, 0},
		{"slower than sequential", []int64{1000, 1000}, 3000, 2000, 3000, -50},
		{"negative durations count as 0", []int64{-5, 4000}, 0, 4000, 4000, 0},
		{"rounding", []int64{1, 1, 1}, 0, 3, 1, 67},
	}
	for _, tc := range cases {
		seq, par, pct := TimeSavings(tc.durations, tc.wall)
		if seq != tc.seq || par != tc.par || pct != tc.percent {
			t.Errorf("%s: %d %d %d%%, want %d %d %d%%", tc.name, seq, par, pct, tc.seq, tc.par, tc.percent)
		}
	}
}

// seedPlan is the shape of a coordinate plan with implementation tracks:
// phases with dependencies lines, checklists mentioning other phases, and
// code blocks.
const seedPlan = "# Plan\n\n## Implementation Phases\n\n" +
	"### Phase 1: State Machine Foundation Library\ndependencies: []\n\n**Objective**: x\n\n```bash\n### Phase 9: not a phase\ndependencies: [1]\n```\n\n" +
	"### Phase 2: Checkpoint Schema v2.0 Integration\ndependencies: [1]\n\n- [ ] **Phase 3**: mentioned in a checklist\n**Phase 1 Completion Requirements**:\n\n" +
	"### Phase 3: State Persistence Library\ndependencies: [1]\n\n" +
	"### Phase 4: Hierarchical Supervisors\ndependencies: [2, 3]\ndependencies: [1]\n\n" +
	"### Phase 5: Orchestrator Migration\ndependencies: [1, 2, 3]\n\n" +
	"### Phase 6: State-Aware Hierarchical Supervisors\ndependencies: [4, 5]\n\n" +
	"### Phase 7: Documentation\ndependencies: [5, 6]\n"

func TestTrackDependencies(t *testing.T) {
	want := map[int][]int{1: {}, 2: {1}, 3: {1}, 4: {2, 3}, 5: {1, 2, 3}, 6: {4, 5}, 7: {5, 6}}
	if got := TrackDependencies(seedPlan); !reflect.DeepEqual(got, want) {
		t.Errorf("seed plan: %v, want %v", got, want)
	}
	cases := []struct {
		name, plan string
		want       map[int][]int
	}{
		{"tracks and decoration", "## Track 1 - Backend\n- **Dependencies**: [ ]\n## Track 2 - Frontend\n* dependencies: [1]\n## **Track 3**: Tests\n**dependencies:** [phase 1, track 2]\n",
			map[int][]int{1: {}, 2: {1}, 3: {1, 2}}},
		{"no dependencies line", "### Phase 1: A\n\n### Phase 2: B\n", map[int][]int{1: {}, 2: {}}},
		{"unsorted, duplicate, self", "### Phase 3: C\ndependencies: [2, 1, 2, 3]\n", map[int][]int{3: {1, 2}}},
		{"leading zeros and parentheses", "### Phase 02 (parallel)\ndependencies: [01]\n", map[int][]int{2: {1}}},
		{"dependencies before any phase", "dependencies: [1]\n### Phase 1: A\n", map[int][]int{1: {}}},
		{"not a list", "### Phase 1: A\ndependencies: none\ndependencies: [2]\n", map[int][]int{1: {2}}},
		{"empty text", "", map[int][]int{}},
		{"a phase heading repeated keeps its first list", "### Phase 1: A\ndependencies: [2]\n### Phase 2: B\n### Phase 1: A again\n", map[int][]int{1: {2}, 2: {}}},
	}
	for _, tc := range cases {
		if got := TrackDependencies(tc.plan); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTrackBlockedBy(t *testing.T) {
	deps := TrackDependencies(seedPlan)
	cases := []struct {
		track int
		done  []int
		want  []int
	}{
		{1, nil, nil},
		{2, nil, []int{1}},
		{2, []int{1}, nil},
		{4, []int{1, 2}, []int{3}},
		{5, []int{3}, []int{1, 2}},
		{7, []int{1, 2, 3, 4, 5, 6}, nil},
		{9, nil, nil}, // unknown track: nothing declared
	}
	for _, tc := range cases {
		if got := TrackBlockedBy(tc.track, deps, tc.done); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("TrackBlockedBy(%d, done %v) = %v, want %v", tc.track, tc.done, got, tc.want)
		}
	}
}

func TestCheckTrackDependencies(t *testing.T) {
	if got := CheckTrackDependencies(TrackDependencies(seedPlan)); got != nil {
		t.Errorf("seed plan: %q", got)
	}
	got := CheckTrackDependencies(map[int][]int{1: {2}, 2: {3}, 3: {1}, 4: {9}})
	want := []string{
		"phase 4 depends on phase 9, which the plan does not have.",
		"phases 1 -> 2 -> 3 -> 1 depend on each other in a cycle.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := CheckTrackDependencies(map[int][]int{1: {}, 2: {1}, 3: {1, 2}}); got != nil {
		t.Errorf("acyclic: %q", got)
	}
}
