package coordinate

// Entry is the supervisor's entry in the checkpoint's supervisor_state, in
// seed 003's form (state/checkpoint-v2.0.schema.json): a copy whose
// aggregated_metadata is {} until the supervisor has aggregated (the seed
// requires it of every entry, and the entry exists from the first worker's
// return, a testing supervisor's from its first stage worker's launch)
// and holds only the fields of the supervisor's kind, whatever
// else the supervisor's SUPERVISOR_COMPLETE said. The workflow section
// keeps the state as it is.
func (st *SupervisorState) Entry() *SupervisorState {
	e := *st
	agg := SupervisorResult{}
	if st.AggregatedMetadata != nil {
		agg = st.AggregatedMetadata.ofKind(st.SupervisorName)
	}
	e.AggregatedMetadata = &agg
	return &e
}

// ofKind keeps the fields of the aggregated metadata that seed 003 defines
// for the supervisor (research, implementation or testing), and those
// orch-hook reads of every supervisor (README, "Supervisors"): its
// identity as it gave it, summary, key_findings, total_duration_ms,
// context_tokens, and the partial failures orch-hook observed. errors
// belongs to SUPERVISOR_FAILED, which is never stored.
func (r *SupervisorResult) ofKind(supervisor string) SupervisorResult {
	out := SupervisorResult{
		SupervisorID:    r.SupervisorID,
		SupervisorName:  r.SupervisorName,
		WorkerCount:     r.WorkerCount,
		Summary:         r.Summary,
		KeyFindings:     r.KeyFindings,
		TotalDurationMs: r.TotalDurationMs,
		ContextTokens:   r.ContextTokens,
		PartialFailures: r.PartialFailures,
	}
	switch supervisor {
	case ResearchSupervisor:
		out.TopicsResearched, out.ReportsCreated = r.TopicsResearched, r.ReportsCreated
	case ImplSupervisor:
		out.TracksCompleted, out.FilesModified, out.TotalLines = r.TracksCompleted, r.FilesModified, r.TotalLines
		out.ParallelDurationMs, out.SequentialDurationMs, out.TimeSavingsPercent = r.ParallelDurationMs, r.SequentialDurationMs, r.TimeSavingsPercent
	case TestSupervisor:
		out.TotalTests, out.TestsPassed, out.TestsFailed, out.CoveragePercent = r.TotalTests, r.TestsPassed, r.TestsFailed, r.CoveragePercent
	}
	return out
}
