package orchestrate

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// workflow's section of the checkpoint (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) { jsongen.Check(t, "json_gen.go", Workflow{}) }

// TestJSONFastWorkflow: the sections orch-hook wrote in the real-CLI
// record read and write by the fast path, as encoding/json does.
func TestJSONFastWorkflow(t *testing.T) { jsongen.Sections[Workflow](t, "orchestrate") }

// FuzzJSONFast: on any input, the generated codec agrees with
// encoding/json or gives up. Seeds: integer keys (sorted by their text),
// nulls, a key given twice.
func FuzzJSONFast(f *testing.F) {
	jsongen.FuzzSections[Workflow](f, "orchestrate",
		`{"tasks":{"1":{"status":"x"},"01":null,"-1":{},"+2":{"launches":1}},"launches":[null,{"tokens":null}],"plan_hashes":{"a":"b","a":"c"}}`,
		`{"tasks":{"1":{},"2":{},"10":{}},"plan_hashes":{"b":"1","a":"2","A":"3"}}`,
		`{"tasks":{"1e2":{}},"launches":[{"started":"2026-01-01T00:00:00Z","ended":null}],"failures":{}}`)
}

// TestJSONFastRandom: on inputs shaped like the workflow, with
// encoding/json's edge cases mixed in (jsongen.Random), the fast path
// decodes as encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[Workflow](t, 4000, 1)
}
