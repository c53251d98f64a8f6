package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// TestReverseLines: every complete line once, last first, across chunk
// boundaries; a torn last line is skipped; fn can stop early.
func TestReverseLines(t *testing.T) {
	for _, lineLen := range []int{1, 10, 1000, 70000} {
		var want []string
		var b strings.Builder
		for i := 0; i < 50; i++ {
			line := fmt.Sprintf("%03d%s", i, strings.Repeat("x", lineLen))
			want = append(want, line)
			b.WriteString(line + "\n")
		}
		b.WriteString("torn-without-newline")
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := reverseLines(f, func(line []byte) bool {
			got = append(got, strings.TrimSuffix(string(line), "\n"))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if len(got) != len(want) {
			t.Fatalf("line length %d: got %d lines, want %d", lineLen, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[len(want)-1-i] {
				t.Fatalf("line length %d: line %d = %.10q, want %.10q", lineLen, i, got[i], want[len(want)-1-i])
			}
		}
	}
}

func TestTailOf(t *testing.T) {
	s := Open(t.TempDir())
	if err := s.Create(minimalCheckpointForTail()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		typ := EventDeny
		if i%10 == 0 {
			typ = EventError
		}
		if err := s.Append(Event{Type: typ, Reason: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.Tail(3)
	if err != nil || len(last) != 3 || last[2].Reason != "29" || last[0].Reason != "27" {
		t.Fatalf("Tail(3) = %+v, %v", last, err)
	}
	errs, err := s.TailOf(10, EventError)
	if err != nil || len(errs) != 3 || errs[0].Reason != "0" || errs[2].Reason != "20" {
		t.Fatalf("TailOf(error) = %+v, %v", errs, err)
	}
	starts, _ := s.TailOf(5, EventStart)
	if len(starts) != 1 {
		t.Fatalf("TailOf(start) found %d records, want 1", len(starts))
	}
}

func minimalCheckpointForTail() *Checkpoint {
	return &Checkpoint{
		SchemaVersion: SchemaVersion,
		StateMachine: StateMachine{
			CurrentState:    "research",
			TransitionTable: map[string]string{"research": "complete", "complete": ""},
			WorkflowConfig:  WorkflowConfig{Command: "test"},
		},
		Metadata: Metadata{CheckpointID: "tail"},
	}
}

// TestReverseLinesShapes checks reverseLines against a forward split on
// logs of every shape: empty lines, lines longer than its chunk, a torn
// last line longer than its chunk, no newline at all; and that fn may stop
// at any line.
func TestReverseLinesShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 100_000))
	lengths := []int{0, 1, 2, 150, 4000, 256<<10 - 1, 256 << 10, 256<<10 + 1, 700_000}
	for round := 0; round < 60; round++ {
		var b strings.Builder
		for i, n := 0, rng.IntN(40); i < n; i++ {
			l := lengths[rng.IntN(len(lengths))]
			if rng.IntN(3) > 0 {
				l = rng.IntN(300)
			}
			fmt.Fprintf(&b, "%s\n", strings.Repeat(string(rune('a'+i%26)), l))
		}
		if rng.IntN(2) == 0 { // a torn last line
			b.WriteString(strings.Repeat("t", lengths[rng.IntN(len(lengths))]+1))
		}
		content := b.String()

		var want []string
		if i := strings.LastIndexByte(content, '\n'); i >= 0 {
			for _, l := range strings.SplitAfter(content[:i+1], "\n") {
				if len(l) > 1 {
					want = append(want, l)
				}
			}
		}
		slices.Reverse(want)

		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		stop := len(want) + 1
		if len(want) > 0 && rng.IntN(2) == 0 {
			stop = 1 + rng.IntN(len(want))
		}
		var got []string
		err = reverseLines(f, func(line []byte) bool {
			got = append(got, string(line))
			return len(got) < stop
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if stop <= len(want) {
			want = want[:stop]
		}
		if len(got) != len(want) {
			t.Fatalf("round %d (%d bytes): got %d lines, want %d", round, len(content), len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: line %d = %.20q (%d bytes), want %.20q (%d bytes)", round, i, got[i], len(got[i]), want[i], len(want[i]))
			}
		}
	}
}

// TestHasType: a record as the encoder writes it is read at its place, any
// other line is searched in its head, with the same answers.
func TestHasType(t *testing.T) {
	enc, err := jsonenc.Marshal(&Event{Time: time.Date(2026, 11, 26, 1, 2, 3, 4, time.UTC), Serial: 12345, Type: EventTransition,
		Input: json.RawMessage(`{"type":"deny"}`), Checkpoint: json.RawMessage(`{"type":"deny"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := typeAt(enc); !ok {
		t.Fatalf("typeAt does not read the encoder's record %s", enc)
	}
	for _, c := range []struct {
		line string
		want bool // has type transition or start
	}{
		{string(enc), true},
		{`{"time":"0001-01-01T00:00:00Z","serial":0,"type":"start"}`, true},
		{`{"time":"2026-11-26T00:00:00Z","serial":7,"type":"deny","reason":"x","input":{"type":"transition"}}`, false},
		{`{"time":"2026-11-26T00:00:00Z","serial":7,"type":"transitions"}`, false},
		{`{"time":"2026-11-26T00:00:00Z","serial":7,"type":"transition"`, true},
		{`{"time":"2026-11-26T00:00:00Z","serial":7,"type":"transition`, false},
		// Not the encoder's shape: searched.
		{`{"time": "2026-11-26T00:00:00Z", "serial": 7, "type":"transition"}`, true},
		{`{"serial":7,"type":"start","time":"2026-11-26T00:00:00Z"}`, true},
		{`{"time":"2026-11-26T00:00:00Z","serial":-1,"type":"start"}`, true},
		{`{"type" : "start"}`, false},
		{`{"time":"2026-11-26T00:00:00Z","serial":7,"reason":"` + strings.Repeat("x", 200) + `","type":"start"}`, false},
		{``, false},
		{`{"time":"`, false},
	} {
		if got := hasType([]byte(c.line), []string{EventTransition, EventStart}); got != c.want {
			t.Errorf("hasType(%.60q) = %v, want %v", c.line, got, c.want)
		}
	}
}
