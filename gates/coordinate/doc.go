// Package coordinate is the coordinate workflow (README, "The coordinate
// workflow"): the 8-state /coordinate orchestrator and its hierarchical
// supervisors. Like the kernel (package gates) it does no I/O: it is
// functions over strings and data, and the caller (package internal/app,
// also for `orch-hook start --workflow coordinate`) reads the files, the
// directory listings and the hook events and passes them in. Decide
// answers one hook event (decide.go); the table per scope is table.go;
// launches.go, complete.go, supervisors.go and stages.go say who may run
// and what a returning agent must have written; user.go answers Stop and the user's
// prompts; text.go holds what the model is told.
//
//   - Initialization (README, "Scope detection", "Topic names"): DetectScope picks
//     the workflow scope from the description; TopicName sanitizes the
//     description into the topic name; NextTopicNumber and TopicDir give
//     the idempotent NNN_<topic> directory; ArtifactPaths pre-calculates the
//     report, plan, debug and summary paths once.
//   - Research (README, "Research complexity"): Complexity
//     counts the research topics and Hierarchical says whether they go
//     through research-sub-supervisor (>= 4) or research-specialists
//     directly.
//   - Result lines: ParseReportCreated (REPORT_CREATED: <path>),
//     ParseSupervisor (SUPERVISOR_COMPLETE / SUPERVISOR_FAILED: {json}),
//     ParseTests (TESTS: PASS|FAIL).
//   - Artifacts tied to their writer (writes.go): recordWrite notes
//     each subagent Write/Edit under the topic directory (agent id, path,
//     SHA-256 of the file as written, which the caller reads through
//     Env.Hash); checkWriter accepts a reported artifact only when
//     its own agent (or a supervisor's worker) wrote it and it is
//     unchanged since.
//   - Supervisors (README, "Supervisors"): SupervisorState, WorkerRecord and
//     SupervisorResult in the checkpoint v2.0 supervisor_state schema
//     (SupervisorState.Entry is an entry as the checkpoint stores it);
//     CheckAggregation (the aggregation rules), ContextReduction,
//     PartialFailure, TimeSavings, TrackDependencies and TrackBlockedBy;
//     a track's files_modified (its worker's own project writes) and
//     TrackMetadata.
//   - Test stages (stages.go): the testing supervisor's generation ->
//     execution -> validation, in order. ReadStage reads a worker's stage
//     from its prompt; ParseTestsCreated, ParseExecution and
//     ParseValidation read each stage's result line; the stages and the
//     testing totals are recorded from the workers' own lines and writes.
//
// Every word list and threshold these functions use is an exported,
// documented variable or constant, so the README and the status output can
// quote them.
package coordinate
