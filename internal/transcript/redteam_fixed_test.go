package transcript

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Red team (holes): a transcript the agent wrote itself (same OS user, no
// sandbox) makes the SubagentStop hook read it for far longer than the
// README's "for at most a second", past the hook's 14 s budget.

// TestRedTeamTranscriptTextBlocksFixed (a hole, fixed on wt-red2: lastText
// is now cut only at twice its bound): summer.last joined every
// text block of the last response into lastText and trims it to its last
// 64 KiB after each block, so once it is 64 KiB long each further block
// copies 64 KiB: one 4 MiB line (half of MaxLine) of empty text blocks
// ({"type":"text"}, 16 bytes each) costs 260k × 64 KiB ≈ 17 GB of copying
// (4.5 s measured); the 16 lines of 8 MiB that fit in MaxBytes, minutes.
func TestRedTeamTranscriptTextBlocksFixed(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"type":"assistant","message":{"id":"m1","stop_reason":"tool_use","usage":{"input_tokens":1},"content":[{"type":"text","text":"`)
	b.WriteString(strings.Repeat("x", maxLastText+1))
	b.WriteString(`"}`)
	for b.Len() < 4<<20 {
		b.WriteString(`,{"type":"text"}`)
	}
	b.WriteString("]}}\n")
	p := agentDir(t, "a1", b.Bytes())
	start := time.Now()
	u, err := ReadFinal(p, "a1", "", 10*time.Millisecond)
	took := time.Since(start)
	if err != nil || u.Responses != 1 {
		t.Fatalf("ReadFinal = %+v, %v", counted(u), err)
	}
	if took > time.Second {
		t.Errorf("a 4 MiB transcript line of empty text blocks took %v to read (want well under 1 s: lastText is rebuilt for each block)", took.Round(time.Millisecond))
	}
}

// TestRedTeamFixedTranscriptReadNotBounded: ReadFinal's wait is bounded,
// but not the read: 128 MiB of small assistant records (each one decoded,
// each a distinct response) is read to its end after the wait ran out
// (5 s measured under `go test` here), and read again in full at each
// size change while the wait lasts. The README says "at most 128 MiB of
// it and for at most a second".
func TestRedTeamFixedTranscriptReadNotBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 128 MiB")
	}
	var b bytes.Buffer
	b.Grow(MaxBytes + 100)
	for i := 0; b.Len() < MaxBytes-100; i++ {
		fmt.Fprintf(&b, `{"type":"assistant","message":{"id":"m%d","usage":{"input_tokens":1}}}`+"\n", i)
	}
	p := agentDir(t, "a1", nil)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Buffer{}
	wait := 100 * time.Millisecond
	start := time.Now()
	u, err := ReadFinal(p, "a1", "never said", wait)
	took := time.Since(start)
	t.Logf("read %d responses in %v", u.Responses, took.Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if took > wait+time.Second {
		t.Errorf("ReadFinal(wait %v) on a 128 MiB transcript took %v: the read itself is not bounded in time", wait, took.Round(time.Millisecond))
	}
}
