// Package state is the only part of orch-hook that touches the workflow's
// files (the state, the plan, the reports it writes): it keeps a project's
// workflow state in <root>/.orchestrator/state/ as a JSON snapshot
// (checkpoint.json, Checkpoint Schema v2.0 with serial and lineage) and an
// append-only event log (events.jsonl).
//
// Reads take no lock: every write replaces the snapshot by an atomic rename.
// Writes go through Store.Update, one read-modify-write under an exclusive
// flock on a sidecar file, bounded in time. Files are 0600 and directories
// 0700, but for the records a team may commit (MetricsFile: 0644, in a
// 0755 directory), and nothing here is ever run by a shell.
package state
