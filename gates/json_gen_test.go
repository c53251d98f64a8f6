package gates

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// kernel's types the workflows keep in the checkpoint
// (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) {
	jsongen.Check(t, "json_gen.go", Tokens{}, ConfigSnapshot{}, KeptReport{}, Attempt{}, Failures{})
}

// FuzzJSONFast: on any input, the generated decoders agree with
// encoding/json or give up, and the encoders write its bytes (the
// workflows' tests cover these types inside their sections).
func FuzzJSONFast(f *testing.F) {
	f.Add([]byte(`{"input":1,"output":2,"cache_read":3,"cache_creation":4,"partial":true}`))
	f.Add([]byte(`{"settings":{"limits":{"fix_iterations":2}},"sha256":"x","committed":true}`))
	f.Add([]byte(`{"agent":"a","text":"t","prior":"p"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		jsongen.Equivalent[Tokens](t, b)
		jsongen.Equivalent[ConfigSnapshot](t, b)
		jsongen.Equivalent[KeptReport](t, b)
		jsongen.Equivalent[Attempt](t, b)
		jsongen.Equivalent[Failures](t, b)
	})
}

// TestJSONFastRandom: on inputs shaped like the workflows' shared sections, with
// encoding/json's edge cases mixed in (jsongen.Random), the fast path
// decodes as encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[Tokens](t, 2000, 1)
	jsongen.Random[ConfigSnapshot](t, 2000, 2)
	jsongen.Random[KeptReport](t, 2000, 3)
	jsongen.Random[Attempt](t, 2000, 4)
	jsongen.Random[Failures](t, 2000, 5)
}
