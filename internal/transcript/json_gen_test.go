package transcript

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/orch-hook/orch-hook/internal/dev/jsongen"
)

// TestJSONGenerated: json_gen.go holds the codec of the transcript's
// records (internal/dev/jsongen).
func TestJSONGenerated(t *testing.T) {
	jsongen.Check(t, "json_gen.go", record{})
}

// capturedLines are the lines of the real CLI's subagent transcript.
func capturedLines(t testing.TB) [][]byte {
	b, err := os.ReadFile("testdata/subagent-transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// TestJSONFastTranscript: the captured transcript's assistant records are
// decoded by the fast path, exactly as encoding/json decodes them.
func TestJSONFastTranscript(t *testing.T) {
	fast := 0
	for _, l := range capturedLines(t) {
		if jsongen.Equivalent[record](t, l) && bytes.Contains(l, usageKey) {
			fast++
		}
	}
	if fast == 0 {
		t.Error("the fast path decoded none of the captured assistant records")
	}
}

// FuzzJSONFast: on any input, the generated decoder agrees with
// encoding/json or gives up.
func FuzzJSONFast(f *testing.F) {
	for _, l := range capturedLines(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		jsongen.Equivalent[record](t, b)
	})
}

// TestJSONFastRandom: on inputs shaped like a transcript record, with
// encoding/json's edge cases mixed in (jsongen.Random), the fast path
// decodes as encoding/json does or gives up.
func TestJSONFastRandom(t *testing.T) {
	jsongen.Random[record](t, 4000, 1)
}
