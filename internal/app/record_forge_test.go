package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		// (Its log is cut short: only that fails.)
		wantFail(t, r, 0, "leaves the workflow running")
		if len(r.Summary.Accepted) != 1 {
			t.Errorf("accepted %v", r.Summary.Accepted)
		}
	})
	t.Run("cut short, its summary derived again", func(t *testing.T) {
		r := forge(t, rec, rec.Log[:len(rec.Log)-3])
		if r.Outcome != "running" {
			t.Fatalf("outcome %s", r.Outcome)
		}
		wantFail(t, r, 0, "leaves the workflow running")
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

// Every way a workflow starts writes the checkpoint verify expects of a
// start: orchestrate, coordinate with its scope given or detected, and a
// revision of an existing plan.
func TestVerifyStartsAsWritten(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	starts := map[string]func(store *state.Store) error{
		"orchestrate": func(store *state.Store) error {
			_, err := app.StartWorkflow(store, "Add a CSV export", "s-1", time.Now().UTC())
			return err
		},
		"coordinate, scope detected": func(store *state.Store) error {
			_, err := app.StartCoordinate(store, "Research authentication patterns and plan the change", "", "s-1", time.Now().UTC())
			return err
		},
		"coordinate, scope given": func(store *state.Store) error {
			_, err := app.StartCoordinate(store, "Implement rate limiting", "full-implementation", "", time.Now().UTC())
			return err
		},
		"coordinate, revision": func(store *state.Store) error {
			dir := filepath.Join(store.Root, "specs", "004_auth_system", "plans")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "001_auth_system_plan.md"), []byte("# Plan\n"), 0o644); err != nil {
				return err
			}
			_, err := app.StartCoordinate(store, "Revise the auth system plan to use OAuth", "research-and-revise", "", time.Now().UTC())
			return err
		},
	}
	for name, start := range starts {
		t.Run(name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			store := state.Open(root)
			if err := start(store); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(store.LogPath())
			if err != nil {
				t.Fatal(err)
			}
			var lines [][]byte
			for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
				lines = append(lines, l)
			}
			rec, err := app.BuildRecord(lines, func(string) ([]byte, error) { return nil, os.ErrNotExist })
			if err != nil {
				t.Fatal(err)
			}
			// Its log leaves the workflow running: only that fails.
			_, err = app.Verify(rec)
			var ve *app.VerifyError
			if !errors.As(err, &ve) || ve.Line != 0 || !strings.Contains(err.Error(), "leaves the workflow running") {
				t.Errorf("the start does not verify: %v", err)
			}
		})
	}
}

// A record whose decisions name one content over and over (each name is a
// few bytes of the record, each read a whole content) stops replaying at
// verify's budget instead of running for hours.
func TestVerifyReplayBudget(t *testing.T) {
	rec := e2eRecord(t, "record_e2e_orchestrate.json")
	i, big := -1, ""
	for j, l := range rec.Log {
		m := lineMap(t, l)
		reads, _ := m["reads"].(map[string]any)
		if plan, ok := reads["plan"].(map[string]any); ok && len(plan) > 0 {
			for _, id := range plan {
				if s := id.(string); big == "" || len(rec.Blobs[s]) > len(rec.Blobs[big]) {
					big = s
				}
			}
			i = j
			break
		}
	}
	if i < 0 {
		t.Fatal("no decision read the plan")
	}
	m := lineMap(t, rec.Log[i])
	plan := m["reads"].(map[string]any)["plan"].(map[string]any)
	for k := 0; k < 400; k++ {
		plan[fmt.Sprintf("copy-%03d.md", k)] = big
	}
	r := forge(t, rec, append(append([]string{}, rec.Log[:i]...), lineOfMap(m)))
	defer app.SetMaxReplayBytes(int64(100 * len(rec.Blobs[big])))()
	wantFail(t, r, i+1, "not replayed further")
}

// A Stop cap (or project root) that changes within a workflow is the
// record's word, which replay takes as recorded: it is listed with the
// state changes no gate made, which --strict fails.
func TestVerifyListsEnvironmentChanges(t *testing.T) {
	rec := recordRun(t)
	lines := append([]string(nil), rec.Log...)
	i := len(lines) - 1
	for !strings.Contains(lines[i], `"reads"`) {
		i--
	}
	m := lineMap(t, lines[i])
	reads := m["reads"].(map[string]any)
	reads["stop_cap"] = 1
	reads["root"] = "/elsewhere"
	lines[i] = lineOfMap(m)
	forged := forge(t, rec, lines)
	sum, err := app.Verify(forged)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	joined := strings.Join(sum.Accepted, ", ")
	if !strings.Contains(joined, "stop cap 0 -> 1 at serial") || !strings.Contains(joined, "project root changed at serial") {
		t.Errorf("accepted %v", sum.Accepted)
	}
	if s, err := app.Verify(rec); err != nil || len(s.Accepted) != 0 {
		t.Errorf("the real record: %v, accepted %v", err, s.Accepted)
	}
}
