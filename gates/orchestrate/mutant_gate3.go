//go:build orchhook_mutant_gate3

package orchestrate

// gate3Enforced: this mutant build lets a code-implementer run before
// FAILURE_ANALYSIS. Never ship it; `make ci` builds it to prove the
// end-to-end suite catches a broken gate.
const gate3Enforced = false
