package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

// forge makes the record a forger holding the binary would write for the
// log lines: chained again from line 2 on, with the summary and outcome
// BuildRecord derives, so that only the replay can tell.
func forge(t *testing.T, orig *app.Record, lines []string) *app.Record {
	t.Helper()
	r := &app.Record{Log: lines}
	rechain(t, r, 1)
	b := make([][]byte, len(r.Log))
	for i, l := range r.Log {
		b[i] = []byte(l)
	}
	rec, err := app.BuildRecord(b, func(id string) ([]byte, error) {
		return []byte(orig.Blobs[id]), nil
	})
	if err != nil {
		t.Fatalf("BuildRecord: %v", err)
	}
	return rec
}

func lineMap(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func lineOfMap(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func e2eRecord(t *testing.T, name string) *app.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var rec app.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

// A forger who can write the log and run the binary, but not make the
// gates say otherwise: each of these records is consistent (chain,
// summary, outcome) but holds a state change no gate made.
func TestVerifyForgedStateChanges(t *testing.T) {
	rec := recordRun(t)
	last := lineOf(t, rec, state.EventTransition, "complete")
	for !strings.Contains(rec.Log[last], `"checkpoint"`) {
		last++
	}
	final := lineMap(t, rec.Log[last])["checkpoint"]

	t.Run("a start at the end state", func(t *testing.T) {
		m := lineMap(t, rec.Log[0])
		m["checkpoint"], m["state_after"] = final, "complete"
		r := forge(t, rec, []string{lineOfMap(m)})
		wantFail(t, r, 1, "not the checkpoint a start writes")
	})
	for _, typ := range []string{state.EventStart, state.EventRecover, state.EventMigrate} {
		t.Run("a "+typ+" inserted to jump to the end", func(t *testing.T) {
			m := lineMap(t, rec.Log[1])
			for k := range m {
				if k != "time" && k != "serial" && k != "session" {
					delete(m, k)
				}
			}
			m["type"], m["state_after"], m["checkpoint"] = typ, "complete", final
			r := forge(t, rec, []string{rec.Log[0], lineOfMap(m)})
			wantFail(t, r, 2, "")
		})
	}
	t.Run("a start with a call at the end state", func(t *testing.T) {
		m := lineMap(t, rec.Log[0])
		m["checkpoint"], m["state_after"] = final, "complete"
		m["call"] = lineMap(t, rec.Log[1])["call"]
		r := forge(t, rec, []string{lineOfMap(m)})
		wantFail(t, r, 1, "not the checkpoint a start writes")
	})
	t.Run("an adoption is listed as the user's", func(t *testing.T) {
		m := lineMap(t, rec.Log[0])
		m["type"], m["checkpoint"], m["state_after"] = state.EventMigrate, final, "complete"
		r := forge(t, rec, []string{lineOfMap(m)})
		if sum, err := app.Verify(r); err != nil || len(sum.Accepted) != 1 || !strings.HasPrefix(sum.Accepted[0], "migrate at serial") {
			t.Errorf("a record adopted at its end: %v %+v", err, sum)
		}
	})
	t.Run("a repair that changes the state", func(t *testing.T) {
		m := lineMap(t, rec.Log[1])
		for k := range m {
			if k != "time" && k != "serial" && k != "session" {
				delete(m, k)
			}
		}
		m["type"], m["state_after"], m["checkpoint"] = state.EventRepair, "complete", final
		r := forge(t, rec, []string{rec.Log[0], lineOfMap(m)})
		wantFail(t, r, 2, "a repair puts back the state before it")
		// A repair that restores the state as it was is the user's.
		m["checkpoint"] = lineMap(t, rec.Log[0])["checkpoint"]
		m["state_after"] = lineMap(t, rec.Log[0])["state_after"]
		r = forge(t, rec, []string{rec.Log[0], lineOfMap(m)})
		if sum, err := app.Verify(r); err != nil || len(sum.Accepted) != 1 {
			t.Errorf("a repair to the same state: %v %+v", err, sum)
		}
	})
	t.Run("a launch logged as changing nothing", func(t *testing.T) {
		i := lineOf(t, rec, state.EventAgentLaunch, "")
		m := lineMap(t, rec.Log[i])
		if m["checkpoint"] == nil || m["call"] == nil {
			t.Fatalf("line %d: %s", i+1, rec.Log[i])
		}
		delete(m, "checkpoint")
		m["type"] = state.EventError
		r := forge(t, rec, append(append([]string{}, rec.Log[:i]...), lineOfMap(m)))
		wantFail(t, r, i+1, "the call changes the state")
	})
	t.Run("a refused launch logged as allowed", func(t *testing.T) {
		i := lineOf(t, rec, state.EventDeny, "plan-architect does not run in state research")
		m := lineMap(t, rec.Log[i])
		m["type"], m["reason"] = state.EventError, "nothing"
		r := forge(t, rec, append(append([]string{}, rec.Log[:i]...), lineOfMap(m)))
		wantFail(t, r, i+1, "the gates refuse it")
	})
}

// The orchestrate record, started at 4a: the plan's approval (a decision
// only the user makes) skipped by a start that already holds it.
func TestVerifyForgedStartPastApproval(t *testing.T) {
	rec := e2eRecord(t, "record_e2e_orchestrate.json")
	i := lineOf(t, rec, state.EventUserDecision, "approve")
	m := lineMap(t, rec.Log[0])
	m["checkpoint"] = lineMap(t, rec.Log[i])["checkpoint"]
	m["state_after"] = "4a"
	lines := append([]string{lineOfMap(m)}, rec.Log[i+1:]...)
	r := forge(t, rec, lines)
	if len(r.Summary.Decisions) != 0 {
		t.Fatalf("decisions %+v", r.Summary.Decisions)
	}
	wantFail(t, r, 1, "not the checkpoint a start writes")
}
