package coordinate

import (
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// The supervisors' measured effects are recorded as the notes status shows
// (Workflow.ContextReduction, Workflow.TimeSavings). The numbers in them
// are what orch-hook measured; the readers below give them back, beside
// the formats that write them, so that what is derived from a finished
// workflow (its metrics line) uses the measurement, not a new guess.
const (
	contextReductionNote = "context reduction %.0f%% (%d report bytes -> %d characters of metadata)"
	timeSavingsNote      = "sequential %dms vs parallel %dms (%d%% saved)"
	// escalatedMark is in the reason of the record an escalation logs
	// (failed): a coordinate escalation is not a state of its own.
	escalatedMark  = " -> escalated: "
	abortedOutcome = "aborted by the user at "
)

var (
	reContextReductionNote = gates.LazyRegexp(`^context reduction -?\d+% \((\d+) report bytes -> (\d+) characters of metadata\)`)
	reTimeSavingsNote      = gates.LazyRegexp(`^sequential (-?\d+)ms vs parallel (-?\d+)ms \((-?\d+)% saved\)`)
)

// ContextReductionOf reads a ContextReduction note back: the bytes of the
// reports and the characters of the aggregated metadata it was measured
// on. ok is false for an empty note or one of another form.
func ContextReductionOf(note string) (reportBytes, metadataChars int, ok bool) {
	m := reContextReductionNote.FindStringSubmatch(note)
	if m == nil {
		return 0, 0, false
	}
	r, err1 := strconv.Atoi(m[1])
	a, err2 := strconv.Atoi(m[2])
	return r, a, err1 == nil && err2 == nil
}

// TimeSavingsOf reads a TimeSavings note back (see TimeSavings).
func TimeSavingsOf(note string) (sequential, parallel int64, percent int, ok bool) {
	m := reTimeSavingsNote.FindStringSubmatch(note)
	if m == nil {
		return 0, 0, 0, false
	}
	s, err1 := strconv.ParseInt(m[1], 10, 64)
	p, err2 := strconv.ParseInt(m[2], 10, 64)
	pct, err3 := strconv.Atoi(m[3])
	return s, p, pct, err1 == nil && err2 == nil && err3 == nil
}

// EscalationRecord reports whether a logged reason is that of an
// escalation (a work failed past its retries).
func EscalationRecord(reason string) bool { return strings.Contains(reason, escalatedMark) }

// Aborted reports whether the user aborted the workflow (it then sits in
// complete, as every finished coordinate workflow does).
func (c *Workflow) Aborted() bool { return strings.HasPrefix(c.Outcome, abortedOutcome) }

// TestsFailing reports whether the workflow's last test run failed and no
// run has passed since (it may end so: debug retries used up, or the
// debugging skipped).
func (c *Workflow) TestsFailing() bool { return c.FailedState == CTest && c.LastError != "" }
