package state

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// state files' types (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) {
	jsongen.Check(t, "json_gen.go", checkpointAlias{}, Marker{}, Event{}, Seal{}, LockHolder{}, chainProbe{}, prevProbe{})
}

// jsonSeeds are the files' shapes the corpus lacks, and the cases the fast
// path must give up on or read exactly as encoding/json does.
var jsonSeeds = []string{
	`{"root":"/p","lineage":"l","serial":3,"checkpoint_sha256":"c","commit":"x","log_size":10,"log_tail":"t","checkpoint_stamp":{"ino":1,"size":2,"time":3},"log_stamp":{"size":2,"time":3,"weak":true}}`,
	`{"log":"abc","mac":"def"}`,
	`{"pid":12,"command":"orch-hook hook","since":"2026-11-26T10:00:00Z"}`,
	`{"serial":-1}`, `{"serial":1.0}`, `{"serial":1e2}`, `{"serial":18446744073709551616}`, `{"Serial":2}`,
	`{"serial":2,"serial":3}`, `{"lineage":null}`, `{"phase_data":null}`, `{"phase_data":{"a":null,"a":1}}`,
	`{"error_state":{"last_error":null,"failed_state":"x"}}`, `{"lineage":"a\"b\\c\/d\n\u0041"}`, `{"lineage":"\ud800"}`,
	`{"metadata":{"created_at":null}}`, `{"metadata":{"created_at":"bad"}}`, `{"workflow":null}`, `{"workflow":[1, 2 ]}`,
	`{"unknown":{"nested":[1,{"a":"b"}]},"lineage":"x"}`, `null`, `[]`, `{"state_machine":{"completed_states":[]}}`,
	`{"checkpoint_stamp":{"time":-5},"log_stamp":null}`,
}

// TestJSONFastState: every checkpoint and log record orch-hook wrote in
// the real-CLI records is decoded by the fast path, exactly as
// encoding/json decodes it, and re-encoded byte for byte.
func TestJSONFastState(t *testing.T) {
	c := jsongen.Corpus(t)
	for _, b := range c["checkpoint"] {
		if !jsongen.Equivalent[checkpointAlias](t, b) {
			t.Errorf("the fast path gave up on a checkpoint orch-hook wrote:\n%s", b)
		}
	}
	for _, b := range c["checkpoint-fixture"] {
		jsongen.Equivalent[checkpointAlias](t, b)
	}
	for _, b := range c["event"] {
		if !jsongen.Equivalent[Event](t, b) || !jsongen.Equivalent[chainProbe](t, b) || !jsongen.Equivalent[prevProbe](t, b) {
			t.Errorf("the fast path gave up on a log record orch-hook wrote:\n%s", b)
		}
	}
	for _, s := range jsonSeeds {
		jsongen.Equivalent[checkpointAlias](t, []byte(s))
		jsongen.Equivalent[Marker](t, []byte(s))
		jsongen.Equivalent[Seal](t, []byte(s))
		jsongen.Equivalent[LockHolder](t, []byte(s))
	}
}

// FuzzJSONFast: on any input, the generated decoders agree with
// encoding/json or give up, and the encoders write its bytes.
func FuzzJSONFast(f *testing.F) {
	c := jsongen.Corpus(f)
	for _, kind := range []string{"checkpoint", "checkpoint-fixture", "event"} {
		for _, b := range c[kind] {
			f.Add(b)
		}
	}
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		jsongen.Equivalent[checkpointAlias](t, b)
		jsongen.Equivalent[Marker](t, b)
		jsongen.Equivalent[Event](t, b)
		jsongen.Equivalent[Seal](t, b)
		jsongen.Equivalent[LockHolder](t, b)
		jsongen.Equivalent[chainProbe](t, b)
	})
}

// TestJSONFastRandom: on inputs shaped like the checkpoint, the marker,
// the log's records, the seal and the lock's holder, with encoding/json's
// edge cases mixed in (jsongen.Random), the fast path decodes as
// encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[checkpointAlias](t, 2000, 1)
	jsongen.Random[Marker](t, 2000, 2)
	jsongen.Random[Event](t, 2000, 3)
	jsongen.Random[Seal](t, 2000, 4)
	jsongen.Random[LockHolder](t, 2000, 5)
	jsongen.Random[chainProbe](t, 2000, 6)
	jsongen.Random[prevProbe](t, 2000, 7)
}
