package hooks

import (
	"slices"
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// payload types (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) {
	jsongen.Check(t, "json_gen.go", Input{}, toolInput{}, agentResponse{})
}

// TestJSONFastPayloads: every captured payload is decoded by the fast
// path, as encoding/json decodes it, and so are its tool_input and
// tool_response.
func TestJSONFastPayloads(t *testing.T) {
	for _, b := range jsongen.Corpus(t)["payload"] {
		if !jsongen.Equivalent[Input](t, b) {
			t.Errorf("the fast path gave up on a captured payload:\n%s", b)
		}
		var in Input
		if err := jsonfastDecode(b, &in); err != nil {
			t.Fatal(err)
		}
		if len(in.ToolInput) > 0 && !jsongen.Equivalent[toolInput](t, in.ToolInput) {
			t.Errorf("the fast path gave up on a captured tool_input:\n%s", in.ToolInput)
		}
		if len(in.ToolResponse) > 0 && in.ToolResponse[0] == '{' {
			jsongen.Equivalent[agentResponse](t, in.ToolResponse)
		}
	}
}

// FuzzJSONFast: on any input, the generated decoders agree with
// encoding/json or give up, and the encoders write its bytes.
func FuzzJSONFast(f *testing.F) {
	for _, b := range jsongen.Corpus(f)["payload"] {
		f.Add(b)
	}
	f.Add([]byte(`{"a":1,"A":2,"a":3}`))
	f.Add([]byte(`{"Tool_Name":"x","k\u0041":1}`))
	// Keys that fold to a member's only by Unicode (ſ, ı, İ, the Kelvin
	// sign), nulls where a value stays or becomes nil.
	f.Add([]byte(`{"hook_event_name":"Stop","ſession_id":"s","agent_ıd":"x","tool_İnput":{},"cwd":"\u2028","agent_type":null,"background_tasks":[null,{"ID":"x"}],"is_interrupt":null}`))
	f.Add([]byte(`{"run_in_background":null,"content":null,"conTent":"x","replaKe_all":true,"command":"-0"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// checkKeys reads keys without the tokenizer where it can: the
		// same keys, in the same order.
		if fast, ok := jsonfast.ObjectKeys(b); ok {
			if slow, err := tokenKeys(b); err != nil || !slices.Equal(fast, slow) {
				t.Fatalf("jsonfast.ObjectKeys: %q; the tokenizer: %q (%v)\n%s", fast, slow, err, b)
			}
		}
		checkKeys(b, inputKey)
		jsongen.Equivalent[Input](t, b)
		jsongen.Equivalent[toolInput](t, b)
		jsongen.Equivalent[agentResponse](t, b)
	})
}

func jsonfastDecode(b []byte, in *Input) error {
	d, err := DecodeBytes(b, "")
	if err == nil {
		*in = *d
	}
	return err
}

// TestJSONFastRandom: on inputs shaped like Input, toolInput and agentResponse, with
// encoding/json's edge cases mixed in (jsongen.Random), the fast path
// decodes as encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[Input](t, 2000, 1)
	jsongen.Random[toolInput](t, 2000, 2)
	jsongen.Random[agentResponse](t, 2000, 3)
}
