//go:build !orchhook_mutant_gate3

package orchestrate

// gate3Enforced is false only in the mutant build (-tags
// orchhook_mutant_gate3) that the end-to-end suite runs to prove it can see
// a broken gate.
const gate3Enforced = true
