// Package app is orch-hook's application layer, the one way the hook path
// and the CLI reach a workflow (README, "Layout"): it loads the workflow a
// checkpoint holds (LoadWorkflow, LoadCoord), applies one hook call to it
// in one transaction (Handle: decide on the lock-free snapshot, and only
// when something changes or is refused, decide again under the lock and
// persist with its events), starts workflows and follows them up for the
// CLI (StartWorkflow, StartCoordinate), writes the escalation file, and
// repairs the plan. Package hooks is the wire protocol it speaks; package
// state holds the files; the workflows themselves are gates/orchestrate and
// gates/coordinate.
package app
