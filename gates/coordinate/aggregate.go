package coordinate

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Supervisor aggregation rules and thresholds (README, "Supervisors").
const (
	// MaxSummaryWords bounds the aggregated summary ("50-100 words").
	MaxSummaryWords = 100
	// MaxKeyFindings bounds key_findings ("top 8-12 findings", "max 12").
	MaxKeyFindings = 12
	// DurationTolerance is how far total_duration_ms may be from the
	// workers' observed durations (10%).
	DurationTolerance = 0.10
	// CharsPerToken is the token estimate: characters / 4.
	CharsPerToken = 4
	// ContextTokensFactor is how far context_tokens may be from the
	// estimate: between estimate/2 and estimate*2.
	ContextTokensFactor = 2
	// ContextReductionTarget is the context reduction (percent) below which
	// orch-hook warns. It is a warning only, not a rule of
	// CheckAggregation.
	ContextReductionTarget = 90.0
	// MinSuccessfulWorkers is how many workers must succeed for a
	// supervisor with failed workers to continue (two of three workers
	// succeeding is enough).
	MinSuccessfulWorkers = 2
)

// CheckAggregation checks a supervisor's SUPERVISOR_COMPLETE metadata
// against what orch-hook observed and returns the rules it violates, each a
// sentence (nil when it keeps them all). workers are the supervisor's
// workers as recorded from their own hook events; reportBytes maps report
// paths to their sizes (nil skips the last rule). The rules:
//
//  1. summary is not empty and has at most MaxSummaryWords words.
//  2. key_findings has at most MaxKeyFindings entries.
//  3. total_duration_ms is within DurationTolerance (10%) of the sum of the
//     workers' recorded durations or of the longest one (the wall-clock
//     time of a parallel run),
//     over the completed workers or over every worker with a recorded
//     duration. An implementation result that reports
//     sequential_duration_ms instead must have it within 10% of the sum.
//     Skipped when no worker has a recorded duration.
//  4. context_tokens is within a factor ContextTokensFactor (2) of the
//     estimate: the characters of the result's JSON, without the
//     whitespace between tokens, divided by CharsPerToken (4), rounded up:
//     characters / 4 of the whole aggregated metadata, not of the summary
//     alone.
//  5. every reports_created path is the output path of a worker (its
//     REPORT_CREATED line), listed once; paths compare after
//     filepath.Clean, so pass both in the same form (absolute).
//  6. with reportBytes, every reports_created path has a size above 0.
//  7. an implementation result's files_modified, when given, is the number
//     of distinct files the workers' records list as modified (their own
//     writes); skipped when no worker has such a list.
//
// It is meant for SUPERVISOR_COMPLETE; SUPERVISOR_FAILED goes to
// PartialFailure.
func CheckAggregation(res *SupervisorResult, workers []WorkerRecord, reportBytes map[string]int) []string {
	if res == nil {
		return []string{"there is no aggregated metadata to check."}
	}
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }

	// 1. Summary.
	switch n := len(strings.Fields(res.Summary)); {
	case n == 0:
		add("summary is empty; it must integrate the workers' findings in at most %d words.", MaxSummaryWords)
	case n > MaxSummaryWords:
		add("summary has %d words; at most %d are allowed.", n, MaxSummaryWords)
	}

	// 2. Key findings.
	if n := len(res.KeyFindings); n > MaxKeyFindings {
		add("key_findings has %d entries; at most %d are allowed.", n, MaxKeyFindings)
	}

	// 3. Durations.
	var done, all []int64
	for _, w := range workers {
		if w.DurationMs <= 0 {
			continue
		}
		all = append(all, w.DurationMs)
		if w.Status == WorkerCompleted {
			done = append(done, w.DurationMs)
		}
	}
	if len(all) > 0 {
		shown := done
		if len(shown) == 0 {
			shown = all
		}
		sum, longest := durSum(shown), durMax(shown)
		if res.TotalDurationMs == 0 && res.SequentialDurationMs > 0 {
			if !withinAny(res.SequentialDurationMs, durSum(done), durSum(all)) {
				add("sequential_duration_ms is %d but the workers' recorded durations sum to %d ms; it must be within %d%% of the sum.",
					res.SequentialDurationMs, sum, percentOf(DurationTolerance))
			}
		} else if res.TotalDurationMs <= 0 {
			add("total_duration_ms is missing; the workers' recorded durations sum to %d ms (the longest took %d ms).", sum, longest)
		} else if !withinAny(res.TotalDurationMs, durSum(done), durMax(done), durSum(all), durMax(all)) {
			add("total_duration_ms is %d but the workers' recorded durations sum to %d ms and the longest took %d ms; it must be within %d%% of the sum or of the longest.",
				res.TotalDurationMs, sum, longest, percentOf(DurationTolerance))
		}
	}

	// 4. Context tokens.
	chars := res.AggregatedChars()
	est := (chars + CharsPerToken - 1) / CharsPerToken
	lo, hi := est/ContextTokensFactor, est*ContextTokensFactor
	switch {
	case res.ContextTokens <= 0:
		add("context_tokens is missing; the aggregated metadata has %d characters, about %d tokens (characters/%d).", chars, est, CharsPerToken)
	case res.ContextTokens < lo || res.ContextTokens > hi:
		add("context_tokens is %d but the aggregated metadata has %d characters, about %d tokens (characters/%d); it must be between %d and %d.",
			res.ContextTokens, chars, est, CharsPerToken, lo, hi)
	}

	// 5. Reports listed by workers.
	listed := map[string]bool{}
	for _, w := range workers {
		if w.OutputPath != "" {
			listed[filepath.Clean(w.OutputPath)] = true
		}
	}
	seen := map[string]bool{}
	for _, r := range res.ReportsCreated {
		c := filepath.Clean(r)
		if seen[c] {
			add("reports_created lists %s more than once.", r)
			continue
		}
		seen[c] = true
		if !listed[c] {
			add("reports_created lists %s, which no worker reported (no worker ended with REPORT_CREATED: %s).", r, r)
		}
		// 6. Sizes.
		if reportBytes != nil {
			size, ok := reportBytes[r]
			if !ok {
				size, ok = reportBytes[c]
			}
			if !ok || size <= 0 {
				add("report %s is missing or empty.", r)
			}
		}
	}

	// 7. Files modified.
	if slices.ContainsFunc(workers, func(w WorkerRecord) bool { return w.FilesModified != nil }) {
		files := distinctFiles(workers)
		if res.FilesModified != 0 && res.FilesModified != len(files) {
			shown := files
			if len(shown) > 8 {
				shown = append(append([]string{}, shown[:8]...), "…")
			}
			add("files_modified is %d, but your tracks' workers wrote %d distinct files with their write tools (%s).", res.FilesModified, len(files), gates.OrText(strings.Join(shown, ", "), "none"))
		}
	}
	return v
}

// AggregatedChars is the size of a supervisor result for the context
// estimates: the characters of its JSON (Raw when set, else its encoding)
// without the whitespace between tokens.
func (r *SupervisorResult) AggregatedChars() int { return r.aggregatedChars() }

func durSum(ds []int64) int64 {
	var s int64
	for _, d := range ds {
		s += d
	}
	return s
}

func durMax(ds []int64) int64 {
	var m int64
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// withinAny reports whether x is within DurationTolerance of one of the
// positive candidates.
func withinAny(x int64, candidates ...int64) bool {
	for _, c := range candidates {
		if c > 0 && math.Abs(float64(x-c)) <= DurationTolerance*float64(c) {
			return true
		}
	}
	return false
}

func percentOf(f float64) int { return int(math.Round(f * 100)) }

// ContextReduction is the context reduction of a supervisor in percent
// (README, "Supervisors"): (reports - aggregated) /
// reports * 100, where reports is the sum of reportBytes (the full worker
// outputs the orchestrator did not read) and aggregatedChars the size of
// the aggregated metadata it did (SupervisorResult.AggregatedChars). Both
// are measured in characters (bytes), so the ratio is the same in tokens.
// 0 when there are no reports; negative when the metadata is larger than
// the reports. Below ContextReductionTarget is a warning only.
func ContextReduction(reportBytes map[string]int, aggregatedChars int) float64 {
	total := 0
	for _, n := range reportBytes {
		total += max(n, 0)
	}
	if total == 0 {
		return 0
	}
	return float64(total-aggregatedChars) / float64(total) * 100
}

// PartialFailure decides what a supervisor's worker outcomes allow
// (README, "Supervisors"). Every worker not completed is a failure,
// described as "Failed: <topic> (<error>)" (a worker
// still in progress when the supervisor returned did not finish). proceed
// is true when no worker failed, or when at least MinSuccessfulWorkers
// completed (the failures are then recorded as partial_failures); it is
// false when fewer completed (none, or one beside failures: a supervisor
// continues only from 2 successes) or when no worker was recorded, and failures
// are then the state's errors.
func PartialFailure(workers []WorkerRecord) (proceed bool, failures []string) {
	if len(workers) == 0 {
		return false, []string{"no workers were recorded"}
	}
	succeeded := 0
	for _, w := range workers {
		if w.Status == WorkerCompleted {
			succeeded++
			continue
		}
		why := w.Error
		switch {
		case why != "":
		case w.Status == WorkerFailed:
			why = "no error recorded"
		default:
			why = "did not finish"
			if w.Status != "" {
				why += ": status " + w.Status
			}
		}
		failures = append(failures, fmt.Sprintf("Failed: %s (%s)", w.label(), why))
	}
	if len(failures) == 0 {
		return true, nil
	}
	return succeeded >= MinSuccessfulWorkers, failures
}

// TimeSavings compares parallel and sequential execution of implementation
// tracks (70000 ms sequential, 30000 ms parallel: 57%).
// sequential is the sum of the tracks' durations; parallel is wallMs, the
// observed wall-clock time from the first launch to the last return, or
// the longest duration when wallMs is 0 or less; percent is (sequential -
// parallel) / sequential, rounded (0 when sequential is 0; negative when
// the parallel run took longer). Negative durations count as 0.
func TimeSavings(durations []int64, wallMs int64) (sequential, parallel int64, percent int) {
	for _, d := range durations {
		d = max(d, 0)
		sequential += d
		parallel = max(parallel, d)
	}
	if wallMs > 0 {
		parallel = wallMs
	}
	if sequential > 0 {
		percent = int(math.Round(float64(sequential-parallel) * 100 / float64(sequential)))
	}
	return sequential, parallel, percent
}

var (
	reTrackHeader = gates.LazyRegexp(`(?i)^\s*(?:#{1,6}\s*(?:\*\*)?|\*\*)\s*(?:phase|track)\s+(\d+)\s*(?:\*\*)?\s*(?:[:\-—–(]|$)`)
	reTrackDeps   = gates.LazyRegexp(`(?i)^\s*(?:[-*]\s+)?(?:\*\*)?dependencies(?:\*\*)?\s*:\s*(?:\*\*)?\s*\[([^\]]*)\]`)
	reTrackNumber = gates.LazyRegexp(`\d+`)
)

// TrackDependencies reads the phases or tracks of a plan and their
// dependencies (README, "Supervisors": implementation tracks are the
// plan's phases): a heading "### Phase N: Title" (or
// "## Track N - Title", "**Phase N**:") followed, before the next heading
// of a phase or track, by a line "dependencies: [N, M]" ("[]" for none;
// "**Dependencies**: [phase 1]" reads as [1]). Every phase or track found
// is a key, with an empty list when it declares none; numbers are sorted
// and unique, and a phase naming itself is dropped. Fenced code blocks are
// skipped. Only the first dependencies line of a phase counts.
func TrackDependencies(planText string) map[int][]int {
	out := map[int][]int{}
	current, declared, fence := -1, false, false
	for _, line := range strings.Split(planText, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := reTrackHeader.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			current, declared = n, false
			if _, ok := out[n]; !ok {
				out[n] = []int{}
			}
			continue
		}
		if current < 0 || declared {
			continue
		}
		if m := reTrackDeps.FindStringSubmatch(line); m != nil {
			declared = true
			set := map[int]bool{}
			for _, s := range reTrackNumber.FindAllString(m[1], -1) {
				if d, err := strconv.Atoi(s); err == nil && d != current {
					set[d] = true
				}
			}
			deps := []int{}
			for d := range set {
				deps = append(deps, d)
			}
			sort.Ints(deps)
			out[current] = deps
		}
	}
	return out
}

// PhaseTitles reads the title of each phase or track heading of a plan,
// as TrackDependencies finds them ("### Phase 2: Config" -> 2: "Config"),
// decoration trimmed and clipped to 120 characters; the first heading of a
// number wins, and a heading without a title has none.
func PhaseTitles(planText string) map[int]string {
	out := map[int]string{}
	fence := false
	for _, line := range strings.Split(planText, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		loc := reTrackHeader.Regexp().FindStringSubmatchIndex(line)
		if fence || loc == nil {
			continue
		}
		n, err := strconv.Atoi(line[loc[2]:loc[3]])
		if _, seen := out[n]; err != nil || seen {
			continue
		}
		rest := line[loc[1]:]
		if loc[1] > 0 && line[loc[1]-1] == '(' {
			rest = "(" + rest // "Phase 1 (backend): ..." keeps its parenthesis
		}
		if title := strings.Trim(strings.TrimSpace(rest), "*_`#:-—– \t"); title != "" {
			out[n] = shorten.Runes(title, 120)
		}
	}
	return out
}

// TrackBlockedBy lists, sorted, the tracks that track depends on (deps as
// from TrackDependencies) and that are not in completed: a launch of track
// is refused while the list is not empty.
func TrackBlockedBy(track int, deps map[int][]int, completed []int) []int {
	done := map[int]bool{}
	for _, c := range completed {
		done[c] = true
	}
	var out []int
	for _, d := range deps[track] {
		if !done[d] {
			out = append(out, d)
		}
	}
	sort.Ints(out)
	return out
}

// CheckTrackDependencies lists the problems of a dependency map that would
// block tracks forever, each a sentence: a dependency on a track the plan
// does not have, and cycles.
func CheckTrackDependencies(deps map[int][]int) []string {
	var out []string
	keys := make([]int, 0, len(deps))
	for k := range deps {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		for _, d := range deps[k] {
			if _, ok := deps[d]; !ok {
				out = append(out, fmt.Sprintf("phase %d depends on phase %d, which the plan does not have.", k, d))
			}
		}
	}
	// Cycles: a depth-first search from the smallest track, reporting the
	// cycle each back edge closes.
	const (
		white = iota
		grey
		black
	)
	color := map[int]int{}
	var stack []int
	var visit func(n int)
	visit = func(n int) {
		color[n] = grey
		stack = append(stack, n)
		for _, d := range deps[n] {
			if _, ok := deps[d]; !ok {
				continue
			}
			switch color[d] {
			case white:
				visit(d)
			case grey:
				i := len(stack) - 1
				for stack[i] != d {
					i--
				}
				cycle := append([]int{}, stack[i:]...)
				parts := make([]string, 0, len(cycle)+1)
				for _, c := range append(cycle, d) {
					parts = append(parts, strconv.Itoa(c))
				}
				out = append(out, fmt.Sprintf("phases %s depend on each other in a cycle.", strings.Join(parts, " -> ")))
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, k := range keys {
		if color[k] == white {
			visit(k)
		}
	}
	return out
}
