package app

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/state"
)

// gates names the copies of the plan, and their bound, in what it tells
// the model; state keeps them: the two must agree.
func TestRecordedCopiesAgree(t *testing.T) {
	if orchestrate.RecordedDir != state.RecordedDir {
		t.Errorf("orchestrate.RecordedDir %q, state.RecordedDir %q", orchestrate.RecordedDir, state.RecordedDir)
	}
	if orchestrate.MaxRecordedCopy != state.MaxRecordedSize {
		t.Errorf("orchestrate.MaxRecordedCopy %d, state.MaxRecordedSize %d", orchestrate.MaxRecordedCopy, state.MaxRecordedSize)
	}
}
