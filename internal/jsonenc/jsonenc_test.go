package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/state"
)

// TestMarshalAsEncodingJSON: the shortcuts (a Marshaler's own bytes, a
// generated encoder) write what encoding/json writes, byte for byte.
func TestMarshalAsEncodingJSON(t *testing.T) {
	cp, _, err := state.Decode([]byte(`{"schema_version":"2.0","lineage":"l","serial":1,` +
		`"state_machine":{"current_state":"a","completed_states":[],"transition_table":{"a":""},"workflow_config":{"command":"c","description":"<d> & e"}},` +
		`"phase_data":{},"supervisor_state":{},"error_state":{"last_error":null,"retry_count":0,"failed_state":null},` +
		`"metadata":{"checkpoint_id":"x","project_name":"p","created_at":"2026-11-26T10:00:00Z","updated_at":"2026-11-26T10:00:00Z"},` +
		`"zz_extra": [ 1, {"a" : "<b>"} ]}`))
	if err != nil {
		t.Fatal(err)
	}
	var nilCheckpoint *state.Checkpoint
	var nilMarker *state.Marker
	for _, v := range []any{
		cp,
		nilCheckpoint,
		nilMarker, // a generated encoder's nil receiver: null, not a panic
		json.RawMessage(` { "a" : [1, 2] } `),
		json.RawMessage(nil),
		&state.Event{Type: "deny", Reason: "a -> b & <c>", Checkpoint: json.RawMessage(`{ "x": 1 }`)},
		&state.Marker{Root: "/p&q", Serial: 2},
		map[string]int{"b": 1, "a": 2},
	} {
		got, gotErr := jsonenc.Marshal(v)
		want, wantErr := jsonenc.MarshalReflect(v)
		if (gotErr != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%T: Marshal wrote\n%s (%v)\nencoding/json\n%s (%v)", v, got, gotErr, want, wantErr)
		}
	}
	if !bytes.Contains(mustMarshal(t, cp), []byte(`"zz_extra":[1,{"a":"<b>"}]`)) {
		t.Errorf("the checkpoint's extra member was not kept, compacted: %s", mustMarshal(t, cp))
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
