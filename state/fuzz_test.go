package state

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeCheckpoint: Decode never panics, and any checkpoint it accepts
// re-encodes to JSON that Decode accepts again as the same value (equal
// canonical encodings: the encoder sorts maps and compacts raw sections).
func FuzzDecodeCheckpoint(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == filepath.Join("testdata", "fuzz") {
				return filepath.SkipDir // the fuzzer's own corpus
			}
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f.Add(b)
		// Each log record's checkpoint is a v2.0 seed of its own.
		if strings.HasSuffix(path, ".jsonl") {
			for _, line := range bytes.Split(b, []byte("\n")) {
				var ev Event
				if json.Unmarshal(line, &ev) == nil && len(ev.Checkpoint) > 0 {
					f.Add([]byte(ev.Checkpoint))
				}
			}
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	// The version spelled again as null: the one-pass decoder must read it
	// as the long way's probe does (TestDecodeOnePassAgreesWithTheLongWay).
	if b, err := os.ReadFile(filepath.Join("testdata", "v20-valid.json")); err == nil {
		i := bytes.LastIndexByte(b, '}')
		f.Add(append(append(b[:i:i], `,"schema_version":null`...), b[i:]...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The one-pass decode reads what the long way reads.
		if fast, ok := decodeCurrent(b); ok {
			long, migrated, lerr := decodeAny(b)
			ferr := fast.Validate()
			if migrated || long == nil || !reflect.DeepEqual(fast, long) || (lerr == nil) != (ferr == nil) {
				t.Fatalf("decodeCurrent and decodeAny differ: %+v (%v) and %+v (%v, migrated %v)", fast, ferr, long, lerr, migrated)
			}
		}
		cp, _, err := Decode(b)
		if err != nil {
			if cp != nil && cp.Validate() == nil {
				t.Fatalf("Decode returned a valid checkpoint and an error: %v", err)
			}
			return
		}
		if cp == nil {
			t.Fatal("Decode returned neither a checkpoint nor an error")
		}
		out, err := json.Marshal(cp)
		if err != nil {
			t.Fatalf("accepted checkpoint does not encode: %v", err)
		}
		// A clone encodes as the original does.
		if c, err := json.Marshal(cp.Clone()); err != nil || !bytes.Equal(c, out) {
			t.Fatalf("the clone encodes otherwise (%v):\n%s\n%s", err, c, out)
		}
		cp2, migrated, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded checkpoint is refused: %v\n%s", err, out)
		}
		if migrated {
			t.Fatalf("re-encoded checkpoint decodes as v1.3:\n%s", out)
		}
		out2, err := json.Marshal(cp2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the checkpoint:\nfirst:  %s\nsecond: %s", out, out2)
		}
		if cp2.Serial != cp.Serial || cp2.Lineage != cp.Lineage || cp2.StateMachine.CurrentState != cp.StateMachine.CurrentState ||
			!cp2.Metadata.CreatedAt.Equal(cp.Metadata.CreatedAt) {
			t.Fatalf("round trip changed a field: %+v -> %+v", cp.StateMachine, cp2.StateMachine)
		}
	})
}
