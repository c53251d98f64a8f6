package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
