package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// workflow's section of the checkpoint (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) {
	jsongen.Check(t, "json_gen.go", Workflow{})
}

// TestJSONFastWorkflow: every orchestrate section orch-hook wrote in the
// real-CLI record is decoded by the fast path, exactly as encoding/json
// decodes it, and re-encoded byte for byte.
func TestJSONFastWorkflow(t *testing.T) {
	samples := jsongen.Corpus(t)["workflow:orchestrate"]
	if len(samples) == 0 {
		t.Fatal("the record holds no orchestrate section")
	}
	for _, b := range samples {
		if !jsongen.Equivalent[Workflow](t, b) {
			t.Errorf("the fast path gave up on a section orch-hook wrote:\n%s", b)
		}
	}
}

// FuzzJSONFast: on any input, the generated decoders agree with
// encoding/json or give up, and the encoders write its bytes.
func FuzzJSONFast(f *testing.F) {
	for _, b := range jsongen.Corpus(f)["workflow:orchestrate"] {
		f.Add(b)
	}
	f.Add([]byte(`{"tasks":{"1":{"status":"x"},"01":null,"-1":{},"+2":{"launches":1}},"launches":[null,{"tokens":null}],"plan_hashes":{"a":"b","a":"c"}}`))
	f.Add([]byte(`{"tasks":{"1":{},"2":{},"10":{}},"plan_hashes":{"b":"1","a":"2","A":"3"}}`))
	f.Add([]byte(`{"tasks":{"1e2":{}},"launches":[{"started":"2026-01-01T00:00:00Z","ended":null}],"failures":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		jsongen.Equivalent[Workflow](t, b)
	})
}
