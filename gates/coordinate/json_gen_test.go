package coordinate

import (
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the hot path's JSON codecs for the
// workflow's section of the checkpoint (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) { jsongen.Check(t, "json_gen.go", Workflow{}) }

// TestJSONFastWorkflow: the sections orch-hook wrote in the real-CLI
// record read and write by the fast path, as encoding/json does.
func TestJSONFastWorkflow(t *testing.T) { jsongen.Sections[Workflow](t, "coordinate") }

// FuzzJSONFast: on any input, the generated codec agrees with
// encoding/json or gives up. Seeds: a supervisor's workers, omitzero's
// empty list, a float, partial_failures (its own UnmarshalJSON) in each
// form, integer keys.
func FuzzJSONFast(f *testing.F) {
	jsongen.FuzzSections[Workflow](f, "coordinate",
		`{"supervisors":[{"workers":[{"worker_id":"w","files_modified":[],"coverage_percent":87.5,"tests_passed":0}]}],"plan_scale":null}`,
		`{"launches":[{"duration_ms":-1,"started":"2026-01-01T00:00:00Z"}],"retries":{"a":1,"a":2}}`,
		`{"supervisors":{"research":{"aggregated_metadata":{"partial_failures":"Failed: a (x); b","coverage_percent":-0}},"x":null},"track_dependencies":{"01":[1],"+2":null," 3":[]},"phase_titles":{"-0":"a","0":"b"}}`,
		`{"supervisors":{"research":{"aggregated_metadata":{"partial_failures":null}},"testing":{"aggregated_metadata":{"partial_failures":["a",null]}}}}`)
}

// TestJSONFastRandom: on inputs shaped like the workflow, with
// encoding/json's edge cases mixed in (jsongen.Random), the fast path
// decodes as encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[Workflow](t, 4000, 1)
}
