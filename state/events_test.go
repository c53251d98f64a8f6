package state

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// TestEventRefusalParts: a deny record keeps its refusal's parts beside
// its reason, and the chain covers them; a record without parts is
// written byte for byte as before they existed, and an older line reads
// (so old logs decode, and hash, as they did).
func TestEventRefusalParts(t *testing.T) {
	// Without parts: the bytes of a record from before.
	plain := Event{Time: tstEpoch, Serial: 3, Type: EventDeny, HookEvent: "PreToolUse", ToolUseID: "t-1", Gate: 3,
		Reason: "orch-hook: [Gate 3] x is refused. Now: phase 1, step F1. Next: launch task-planner.", Prev: "00112233445566778899aabbccddeeff"}
	b, err := jsonenc.Marshal(&plain)
	if err != nil {
		t.Fatal(err)
	}
	const before = `{"time":"2025-04-01T12:00:00Z","serial":3,"type":"deny","hook_event":"PreToolUse","tool_use_id":"t-1","gate":3,"reason":"orch-hook: [Gate 3] x is refused. Now: phase 1, step F1. Next: launch task-planner.","prev":"00112233445566778899aabbccddeeff"}`
	if string(b) != before {
		t.Errorf("a record without parts is written\n%s\nnot as before\n%s", b, before)
	}
	var old Event
	if err := json.Unmarshal([]byte(before), &old); err != nil || old.Reason != plain.Reason || old.Rule != "" || old.Where != "" || old.Next != "" || old.Via != "" {
		t.Errorf("an older line reads as %+v, %v", old, err)
	}

	// With parts: kept, after the reason (the type stays in the line's
	// head, where TailOf looks for it).
	s := tstCreate(t, "research")
	deny := Event{Type: EventDeny, ToolUseID: "t-2", Gate: 3, Task: 2,
		Reason: "orch-hook: (MCP tool mcp__fs__write_file) [Gate 3] x is refused. Now: phase 1, step F1. Next: launch task-planner.",
		Rule:   "x is refused.", Where: "phase 1, step F1", Next: "launch task-planner", Via: "mcp__fs__write_file"}
	if err := s.Append(deny); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(Event{Type: EventError, Reason: "after the deny"}); err != nil {
		t.Fatal(err)
	}
	events, _, err := s.Events()
	if err != nil {
		t.Fatal(err)
	}
	var got *Event
	for i := range events {
		if events[i].ToolUseID == "t-2" {
			got = &events[i]
		}
	}
	if got == nil || got.Rule != deny.Rule || got.Where != deny.Where || got.Next != deny.Next || got.Via != deny.Via || got.Reason != deny.Reason {
		t.Fatalf("the deny reads back as %+v", got)
	}
	if tail, err := s.TailOf(5, EventDeny); err != nil || len(tail) != 1 || tail[0].Next != deny.Next {
		t.Errorf("TailOf(deny) = %+v, %v", tail, err)
	}
	lines := tstLines(t, s.LogPath())
	at := -1
	for i, line := range lines {
		if strings.Contains(line, `"tool_use_id":"t-2"`) {
			at = i
		}
	}
	if at < 0 || !strings.Contains(lines[at], `"reason":"orch-hook: (MCP tool`) || !strings.Contains(lines[at], `","rule":"x is refused.","where":"phase 1, step F1","next":"launch task-planner","via":"mcp__fs__write_file","prev":"`) {
		t.Fatalf("the deny's line: %s", lines[at])
	}
	for i := 1; i < len(lines); i++ {
		var p struct {
			Prev string `json:"prev"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &p); err != nil || p.Prev != lineHash([]byte(lines[i-1])) {
			t.Fatalf("line %d does not chain onto line %d", i+1, i)
		}
	}

	// A part edited afterwards (same length) is a change made outside
	// orch-hook, and refused.
	log := string(tstRead(t, s.LogPath()))
	edited := strings.Replace(log, `"next":"launch task-planner"`, `"next":"launch task-PLANNER"`, 1)
	if edited == log {
		t.Fatal("no next to edit")
	}
	if err := os.WriteFile(s.LogPath(), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	var te *TamperError
	if err := s.Append(Event{Type: EventError, Reason: "after the edit"}); !errors.As(err, &te) {
		t.Errorf("after editing a refusal's next step: %v, want a *TamperError", err)
	}
}
