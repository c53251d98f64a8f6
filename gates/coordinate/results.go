package coordinate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Result lines of the coordinate workflow's agents (README, "Verification"
// and "Supervisors").
const (
	// LineReportCreated ends every research worker: "REPORT_CREATED: <path>".
	LineReportCreated = "REPORT_CREATED:"
	// LinePlanCreated ends plan-architect: "PLAN_CREATED: <path>" naming
	// the plan it wrote (the pre-calculated plans/001_<topic>_plan.md).
	LinePlanCreated = "PLAN_CREATED:"
	// LineSupervisorComplete ends a supervisor that succeeded, followed by
	// its aggregated metadata as JSON (on the same line or the next ones).
	LineSupervisorComplete = "SUPERVISOR_COMPLETE:"
	// LineSupervisorFailed ends a supervisor whose workers all failed,
	// followed by {"errors": [...]}.
	LineSupervisorFailed = "SUPERVISOR_FAILED:"
	// LineTestsPass and LineTestsFail end test-specialist: a run of the
	// suite, or the execution stage (with the counts in parentheses).
	LineTestsPass = "TESTS: PASS"
	LineTestsFail = "TESTS: FAIL"
	// LineTestsCreated ends the generation stage's test-specialist:
	// "TESTS_CREATED: <count> in <file>, <file>" (stages.go).
	LineTestsCreated = "TESTS_CREATED:"
	// LineValidationPass and LineValidationFail end the validation stage's
	// test-specialist.
	LineValidationPass = "VALIDATION: PASS"
	LineValidationFail = "VALIDATION: FAIL"
)

// Worker statuses as stored in supervisor_state.
const (
	WorkerCompleted  = "completed"
	WorkerFailed     = "failed"
	WorkerInProgress = "in_progress"
)

// Keys of supervisor_state in checkpoint v2.0 (README, "Supervisors").
const (
	SupervisorKeyResearch       = "research_supervisor"
	SupervisorKeyImplementation = "implementation_supervisor"
	SupervisorKeyTesting        = "testing_supervisor"
)

// WorkerRecord is one worker of a supervisor as orch-hook observed it from
// the worker's own hook events (stored as workers[] of a research
// supervisor, tracks[] of an implementation supervisor, stages[].workers[]
// of a testing supervisor). Research workers set Topic; implementation
// tracks TrackID, TrackName, FilesModified and Metadata; test stage
// workers their stage's counts.
type WorkerRecord struct {
	WorkerID   string `json:"worker_id"`
	AgentID    string `json:"agent_id,omitempty"` // the agent_id its hook events carry
	Topic      string `json:"topic,omitempty"`
	TrackID    string `json:"track_id,omitempty"`
	TrackName  string `json:"track_name,omitempty"`
	Status     string `json:"status"`
	OutputPath string `json:"output_path,omitempty"`
	// FilesModified: a track's project files its worker wrote with its
	// write tools; omitzero writes [] for a track that wrote none (seed
	// 003 requires the list of a completed track) and nothing for others.
	FilesModified []string `json:"files_modified,omitzero"`
	DurationMs    int64    `json:"duration_ms"` // even 0: seed 003 requires it of a completed worker
	// A test stage's worker (seed 003's example): tests_created from the
	// generation line, tests_passed and tests_failed from the execution
	// line; pointers, so that an observed 0 is written.
	TestsCreated *int `json:"tests_created,omitempty"`
	TestsPassed  *int `json:"tests_passed,omitempty"`
	TestsFailed  *int `json:"tests_failed,omitempty"`
	// TestFiles are the test files a generation worker named and wrote;
	// CoveragePercent is what an execution or validation line reported.
	TestFiles       []string        `json:"test_files,omitempty"`
	CoveragePercent *float64        `json:"coverage_percent,omitempty"`
	Error           string          `json:"error,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
}

// label names a worker in messages: its topic, track or id.
func (w WorkerRecord) label() string {
	for _, s := range []string{w.Topic, w.TrackName, w.TrackID, w.WorkerID, w.AgentID} {
		if s != "" {
			return s
		}
	}
	return "unnamed worker"
}

// SupervisorStage is one sequential stage of a testing supervisor
// (generation -> execution -> validation), its workers parallel; orch-hook
// lists the stages that started (stages.go).
type SupervisorStage struct {
	StageID    string         `json:"stage_id"`
	StageName  string         `json:"stage_name"`
	Workers    []WorkerRecord `json:"workers"`
	Status     string         `json:"status"`
	DurationMs int64          `json:"duration_ms"` // 0 until the stage ended
}

// SupervisorState is one entry of checkpoint v2.0's supervisor_state
// (README, "Supervisors"), keyed by SupervisorKeyResearch, SupervisorKeyImplementation
// or SupervisorKeyTesting: the supervisor, the workers orch-hook recorded,
// and the aggregated metadata the supervisor returned.
type SupervisorState struct {
	// SupervisorID is seed 003's form, the agent's name and launch time
	// (research_sub_supervisor_20251107_143030); AgentID is Claude Code's
	// agent_id, which its workers' hook events carry.
	SupervisorID   string `json:"supervisor_id"`
	AgentID        string `json:"agent_id,omitempty"`
	SupervisorName string `json:"supervisor_name"`
	WorkerCount    int    `json:"worker_count"`
	// WorkerStatus is each worker's status, in the order they returned
	// (seed 003's worker_status).
	WorkerStatus       []string          `json:"worker_status,omitempty"`
	Workers            []WorkerRecord    `json:"workers,omitempty"`
	Tracks             []WorkerRecord    `json:"tracks,omitempty"`
	Stages             []SupervisorStage `json:"stages,omitempty"`
	AggregatedMetadata *SupervisorResult `json:"aggregated_metadata,omitempty"`
}

// SupervisorResult is the JSON a supervisor ends with after
// SUPERVISOR_COMPLETE: (or SUPERVISOR_FAILED:), stored as
// aggregated_metadata: the fields of the research, implementation and
// testing supervisors' aggregated metadata, each set by the supervisors it applies
// to. Raw is the JSON as the supervisor wrote it (not stored).
type SupervisorResult struct {
	SupervisorID     string   `json:"supervisor_id,omitempty"`
	SupervisorName   string   `json:"supervisor_name,omitempty"`
	WorkerCount      int      `json:"worker_count,omitempty"`
	TopicsResearched int      `json:"topics_researched,omitempty"`
	ReportsCreated   []string `json:"reports_created,omitempty"`
	Summary          string   `json:"summary,omitempty"`
	KeyFindings      []string `json:"key_findings,omitempty"`
	TotalDurationMs  int64    `json:"total_duration_ms,omitempty"`
	ContextTokens    int      `json:"context_tokens,omitempty"`
	// PartialFailures lists the failed workers when at least two succeeded
	// (a list, or one string "Failed: <topic> (<error>); ..."; both forms
	// are read).
	PartialFailures FailureList `json:"partial_failures,omitempty"`
	// Errors are the workers' errors of SUPERVISOR_FAILED.
	Errors []string `json:"errors,omitempty"`

	// Implementation supervisor.
	TracksCompleted      int   `json:"tracks_completed,omitempty"`
	FilesModified        int   `json:"files_modified,omitempty"`
	TotalLines           int   `json:"total_lines,omitempty"`
	ParallelDurationMs   int64 `json:"parallel_duration_ms,omitempty"`
	SequentialDurationMs int64 `json:"sequential_duration_ms,omitempty"`
	TimeSavingsPercent   int   `json:"time_savings_percent,omitempty"`

	// Testing supervisor.
	TotalTests      int     `json:"total_tests,omitempty"`
	TestsPassed     int     `json:"tests_passed,omitempty"`
	TestsFailed     int     `json:"tests_failed,omitempty"`
	CoveragePercent float64 `json:"coverage_percent,omitempty"`

	Raw string `json:"-"`
}

// FailureList is a list of failure descriptions that also reads a single
// string joined with "; ".
type FailureList []string

// UnmarshalJSON reads an array of strings, or one string split at "; ".
func (f *FailureList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*f = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return fmt.Errorf("partial_failures must be a string or an array of strings")
	}
	*f = nil
	for _, part := range strings.Split(one, ";") {
		if part = strings.TrimSpace(part); part != "" {
			*f = append(*f, part)
		}
	}
	return nil
}

// artifactPath trims the decoration around a reported path: bold, code
// marks, quotes, angle brackets.
func artifactPath(rest string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(rest), "*`\"'<>"))
}

// ParseReportCreated returns the paths of the REPORT_CREATED: lines of a
// worker's text, in order and without duplicates. Decoration around the
// marker and the path (list dashes, **bold**, `code`, quotes, <angle
// brackets>) is removed; a path may contain spaces.
func ParseReportCreated(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := gates.Marker(line, LineReportCreated)
		if !ok {
			continue
		}
		p := artifactPath(rest)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// ErrNoSupervisorLine is ParseSupervisor's error when the text has neither
// SUPERVISOR_COMPLETE: nor SUPERVISOR_FAILED:.
var ErrNoSupervisorLine = errors.New("no SUPERVISOR_COMPLETE: or SUPERVISOR_FAILED: line")

// ParseSupervisor reads the last SUPERVISOR_COMPLETE: or SUPERVISOR_FAILED:
// marker of a supervisor's text (at the start of a line, decoration
// allowed) and the JSON object that follows it, on the same line or the
// next ones, optionally inside a ``` fence; the object may span lines.
// failed is true for SUPERVISOR_FAILED. Text after the object is ignored.
// The error says what is wrong: no marker (ErrNoSupervisorLine), no object
// after the last marker, or JSON that does not decode into the schema.
func ParseSupervisor(text string) (res *SupervisorResult, failed bool, err error) {
	lines := strings.SplitAfter(text, "\n")
	at, rest := -1, ""
	for i := len(lines) - 1; i >= 0 && at < 0; i-- {
		for _, m := range []string{LineSupervisorComplete, LineSupervisorFailed} {
			if r, ok := gates.Marker(strings.TrimRight(lines[i], "\r\n"), m); ok {
				at, rest, failed = i, r, m == LineSupervisorFailed
				break
			}
		}
	}
	if at < 0 {
		return nil, false, ErrNoSupervisorLine
	}
	marker := LineSupervisorComplete
	if failed {
		marker = LineSupervisorFailed
	}
	body := strings.TrimSpace(rest + "\n" + strings.Join(lines[at+1:], ""))
	if strings.HasPrefix(body, "```") { // ```json fence
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = strings.TrimSpace(body[nl+1:])
		} else {
			body = ""
		}
	}
	if !strings.HasPrefix(body, "{") {
		return nil, failed, fmt.Errorf("%s is not followed by a JSON object (found %q)", marker, shorten.Runes(strings.SplitN(body, "\n", 2)[0], 40))
	}
	var raw json.RawMessage
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&raw); err != nil {
		return nil, failed, fmt.Errorf("the JSON after %s does not parse: %v", marker, err)
	}
	res = &SupervisorResult{}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, failed, fmt.Errorf("the JSON after %s does not fit the supervisor schema: %v", marker, err)
	}
	res.Raw = string(raw)
	return res, failed, nil
}

// ParseTests reads test-specialist's "TESTS: PASS" or "TESTS: FAIL" line
// by the result-line grammar (the last TESTS line decides; "(42/42)" may
// follow the verdict). ok is false when there is none or it is read two
// ways.
func ParseTests(text string) (pass bool, ok bool) {
	switch gates.FindResult(text, []string{LineTestsPass, LineTestsFail}) {
	case LineTestsPass:
		return true, true
	case LineTestsFail:
		return false, true
	}
	return false, false
}

// aggregatedChars counts the characters of a result's JSON with the
// whitespace between tokens removed (Raw when set, else its encoding).
func (r *SupervisorResult) aggregatedChars() int {
	raw := []byte(r.Raw)
	if len(raw) == 0 {
		raw, _ = jsonenc.Marshal(r)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err == nil {
		raw = b.Bytes()
	}
	return len([]rune(string(raw)))
}
