// Package gates is the orchestrate workflow (README, "The orchestrate
// workflow") as pure functions:
// its states and transitions declared as data with named guards (table.go),
// the seven gates, the limits, who may launch and write what, and the
// checkpoint lines and reasons the model is told. It does no I/O: package
// hooks reads the state and the plan files, calls Decide, and writes back.
package gates
