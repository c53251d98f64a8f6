package jsonfast_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
	"github.com/orch-hook/orch-hook/state"
)

// TestUnmarshalGivesUpCleanly: where the fast path gives up half-way, the
// result is encoding/json's alone (the partial decode is thrown away),
// error included.
func TestUnmarshalGivesUpCleanly(t *testing.T) {
	for _, in := range []string{
		`{"root":"r","serial":"3","lineage":"l"}`,
		`{"root":"r","Root":"s"}`,
		`{"root":"r","root":"s"}`,
		`{"root":"a\u0041","serial":2}`,
		`{"root":"r","checkpoint_stamp":{"size":1,"size":2}}`,
		`{"root":"r"} x`,
	} {
		var fast, want state.Marker
		fastErr := jsonfast.Unmarshal([]byte(in), &fast)
		wantErr := json.Unmarshal([]byte(in), &want)
		if (fastErr == nil) != (wantErr == nil) || fastErr != nil && fastErr.Error() != wantErr.Error() || !reflect.DeepEqual(fast, want) {
			t.Errorf("%s: got %+v (%v), encoding/json %+v (%v)", in, fast, fastErr, want, wantErr)
		}
	}
}

// TestDecodeTakesTheFastPath: what orch-hook writes is read without
// encoding/json (or the hot path would silently pay for it again).
func TestDecodeTakesTheFastPath(t *testing.T) {
	var m state.Marker
	in := `{"root":"/p","lineage":"l","serial":3,"checkpoint_sha256":"c","commit":"x","log_size":10,"log_tail":"t","checkpoint_stamp":{"ino":1,"size":2,"time":3},"log_stamp":{"size":2,"time":3}}`
	if !jsonfast.Decode([]byte(in), &m, true) || m.Serial != 3 || m.LogStamp.Time != 3 {
		t.Fatalf("the fast path did not read a marker: %+v", m)
	}
}
