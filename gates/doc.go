// Package gates is the kernel both workflows share (README, "Layout"): one
// hook event as a Call and its answer as an Outcome with Records, a
// rule's refusal as a value (Refusal: gate, task, rule, where the
// workflow stands, next step; its Text is the one rendering of what the
// model is told, and the log record keeps the parts); a state
// machine as data (Machine: rows with named guards, one Fire that returns
// a *TransitionError naming the state, the trigger and the failed guard,
// one compiler of the stored table); the rules that hold whatever the
// workflow (StaticRules: the model may not run the binary's user
// decisions, forge hooks or disable the sandbox); the Bash reader
// (shell.go) and what the rules ask of a command (bash.go); the
// result-line grammar (resultline.go); notifications, kept reports, launch
// statuses and project paths.
//
// Each workflow is its own package below: gates/orchestrate and
// gates/coordinate. Like them, this package does no I/O: the caller
// (package internal/app) reads the state and the files and passes them
// in.
package gates
