package gates

// The result lines that end an implementer in both workflows
// (code-implementer, implementation-executor).
const (
	LineImplComplete = "IMPLEMENTATION STATUS: COMPLETE"
	LineImplBlocked  = "IMPLEMENTATION STATUS: BLOCKED"
)

// Launch statuses.
const (
	Running      = "running"
	Returned     = "returned" // finished with its result line (or any text when none is owed)
	Unrecognized = "unrecognized"
	Failed       = "failed"
	Stale        = "stale"
)

// KeptReport is a nudged agent's report, kept (its end, bounded) until its
// next message arrives.
type KeptReport struct {
	AgentID string `json:"agent_id"`
	Text    string `json:"text"`
}

// Bounds of the kept reports: each one's size, and how many are kept.
const (
	maxKeptText    = 6000
	maxKeptReports = 16
)

// Keep stores a nudged agent's report.
func Keep(list []KeptReport, agentID, text string) []KeptReport {
	if r := []rune(text); len(r) > maxKeptText {
		text = "…" + string(r[len(r)-maxKeptText+1:])
	}
	out := list[:0]
	for _, k := range list {
		if k.AgentID != agentID {
			out = append(out, k)
		}
	}
	if len(out) >= maxKeptReports {
		out = append(out[:0], out[len(out)-maxKeptReports+1:]...)
	}
	return append(out, KeptReport{AgentID: agentID, Text: text})
}

// TakeKept removes and returns the report kept for agentID ("" if none).
func TakeKept(list *[]KeptReport, agentID string) string {
	if agentID == "" {
		return ""
	}
	for i, k := range *list {
		if k.AgentID == agentID {
			*list = append((*list)[:i], (*list)[i+1:]...)
			return k.Text
		}
	}
	return ""
}

// JoinKept reads a kept report and the agent's next message as one text:
// the next message's lines come last, so they win.
func JoinKept(kept, text string) string {
	if kept == "" {
		return text
	}
	return kept + "\n\n" + text
}

// Find returns the first element of list for which match holds, or nil:
// how both workflows find a launch by its tool_use_id or agent_id.
func Find[T any](list []*T, match func(*T) bool) *T {
	for _, v := range list {
		if match(v) {
			return v
		}
	}
	return nil
}
