// Package orchestrate is the orchestrate workflow (README, "The
// orchestrate workflow") as pure functions over its data: the table
// (table.go: states, triggers, rows with named guards, the seven gates),
// who may launch what (launches.go: per state, the agents and jobs allowed
// with their guards, as data), completions and their result lines
// (complete.go, results.go, tasklines.go), the user's decisions and Stop
// (user.go), plan writes and their binding to the approved plan (writes.go,
// binding.go, plan.go, planread.go, repair.go, diff.go), and the texts the
// model and the user are told (text.go). Decide answers one hook event;
// the caller (package internal/app) loads the workflow, reads the plan
// files into an Env, and saves what changed.
package orchestrate
