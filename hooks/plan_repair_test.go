package hooks

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/state"
)

// gates names the copies of the plan, and their bound, in what it tells
// the model; state keeps them: the two must agree.
func TestRecordedCopiesAgree(t *testing.T) {
	if gates.RecordedDir != state.RecordedDir {
		t.Errorf("gates.RecordedDir %q, state.RecordedDir %q", gates.RecordedDir, state.RecordedDir)
	}
	if gates.MaxRecordedCopy != state.MaxRecordedSize {
		t.Errorf("gates.MaxRecordedCopy %d, state.MaxRecordedSize %d", gates.MaxRecordedCopy, state.MaxRecordedSize)
	}
}
