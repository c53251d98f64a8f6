package jsongen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// Equivalent checks data against T's generated codec: when the fast path
// decodes data (leniently and strictly) it must give exactly what
// encoding/json gives, and when it encodes a value encoding/json decoded,
// it must write exactly encoding/json's bytes (without HTML escaping). It
// reports whether the lenient fast path decoded data.
func Equivalent[T any](t testing.TB, data []byte) bool {
	t.Helper()
	var want T
	wantErr := json.Unmarshal(data, &want)
	var got T
	fast := jsonfast.Decode(data, any(&got).(jsonfast.FastDecoder), false)
	if fast {
		if wantErr != nil {
			t.Fatalf("%T: the fast path decoded what encoding/json refuses (%v):\n%s", got, wantErr, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%T: the fast path decoded\n%#v\nencoding/json\n%#v\nfrom:\n%s", got, got, want, data)
		}
		// DeepEqual takes -0.0 for 0: their encodings tell them apart.
		if g, w := mustMarshal(&got), mustMarshal(&want); !bytes.Equal(g, w) {
			t.Fatalf("%T: the fast path decoded what encodes as\n%s\nencoding/json's value\n%s\nfrom:\n%s", got, g, w, data)
		}
	}

	var strictWant T
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	strictErr := dec.Decode(&strictWant)
	if strictErr == nil && len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) != 0 {
		strictErr = fmt.Errorf("data after the value")
	}
	var strictGot T
	if jsonfast.Decode(data, any(&strictGot).(jsonfast.FastDecoder), true) {
		if strictErr != nil {
			t.Fatalf("%T: the strict fast path decoded what a strict encoding/json refuses (%v):\n%s", strictGot, strictErr, data)
		}
		if !reflect.DeepEqual(strictGot, strictWant) {
			t.Fatalf("%T: the strict fast path decoded\n%#v\nencoding/json\n%#v\nfrom:\n%s", strictGot, strictGot, strictWant, data)
		}
	}

	if wantErr == nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		encErr := enc.Encode(&want)
		if b, ok := jsonfast.Append(nil, any(&want).(jsonfast.FastAppender)); ok {
			if encErr != nil {
				t.Fatalf("%T: the fast path encoded what encoding/json refuses (%v)", want, encErr)
			}
			if !bytes.Equal(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
				t.Fatalf("%T: the fast path wrote\n%s\nencoding/json\n%s", want, b, buf.Bytes())
			}
		}
	}
	return fast
}

// mustMarshal is encoding/json's encoding of v, or its error's text.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("error: " + err.Error())
	}
	return b
}

// Corpus is what orch-hook and Claude Code really write, by kind, for
// seeds and the equivalence tests: "event" (log records), "checkpoint"
// (each record's checkpoint), "workflow:orchestrate",
// "workflow:coordinate" (their sections), "payload" (Claude Code's hook
// payloads) and "checkpoint-fixture" (hand-written checkpoints, some of
// them malformed on purpose).
func Corpus(t testing.TB) map[string][][]byte {
	t.Helper()
	root := moduleRoot(t)
	out := map[string][][]byte{}
	for _, name := range []string{"record_e2e_orchestrate.json", "record_e2e_coordinate.json"} {
		b, err := os.ReadFile(filepath.Join(root, "internal", "app", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Log []string `json:"log"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		for _, line := range rec.Log {
			out["event"] = append(out["event"], []byte(line))
			var ev struct {
				Checkpoint json.RawMessage `json:"checkpoint"`
			}
			if json.Unmarshal([]byte(line), &ev) != nil || len(ev.Checkpoint) == 0 {
				continue
			}
			out["checkpoint"] = append(out["checkpoint"], ev.Checkpoint)
			var cp struct {
				Workflow json.RawMessage `json:"workflow"`
			}
			if json.Unmarshal(ev.Checkpoint, &cp) == nil && len(cp.Workflow) > 0 {
				var kind struct {
					Kind string `json:"kind"`
				}
				json.Unmarshal(cp.Workflow, &kind)
				out["workflow:"+kind.Kind] = append(out["workflow:"+kind.Kind], cp.Workflow)
			}
		}
	}
	for kind, glob := range map[string]string{
		"payload":            filepath.Join(root, "cmd", "orch-hook", "testdata", "payloads", "*.json"),
		"checkpoint-fixture": filepath.Join(root, "state", "testdata", "*.json"),
	} {
		files, _ := filepath.Glob(glob)
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[kind] = append(out[kind], b)
		}
	}
	for kind, samples := range out {
		if len(samples) == 0 && !strings.HasPrefix(kind, "workflow:") {
			t.Fatalf("no %s samples", kind)
		}
	}
	return out
}

func moduleRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Sections checks T, a workflow's section, on every section of that kind
// the real-CLI records hold: each decodes by the fast path, exactly as
// encoding/json decodes it, and encodes back byte for byte.
func Sections[T any](t *testing.T, kind string) {
	t.Helper()
	samples := Corpus(t)["workflow:"+kind]
	if len(samples) == 0 {
		t.Fatalf("the records hold no %s section", kind)
	}
	for _, b := range samples {
		if !Equivalent[T](t, b) {
			t.Errorf("the fast path gave up on a %s section orch-hook wrote:\n%s", kind, b)
		}
	}
}

// FuzzSections fuzzes T, a workflow's section, from the records' sections
// of that kind and seeds.
func FuzzSections[T any](f *testing.F, kind string, seeds ...string) {
	for _, b := range Corpus(f)["workflow:"+kind] {
		f.Add(b)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		Equivalent[T](t, b)
	})
}
