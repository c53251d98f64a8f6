package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/dev/payloads"
	"github.com/orch-hook/orch-hook/state"
)

var payloadDir = filepath.Join("..", "..", payloads.Dir)

// recordRun drives a short coordinate workflow (research-only, two
// topics) through app.Run as the hooks do, with one refused launch, and
// returns the record it leaves.
func recordRun(t *testing.T) *app.Record {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	hook := func(template string, overrides ...string) string {
		t.Helper()
		in, err := payloads.Build(payloadDir, template, root, "session-1", overrides...)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Name string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(in, &ev)
		env := app.EnvFrom(func(k string) string {
			switch k {
			case "CLAUDE_PROJECT_DIR":
				return root
			case "HOME", "XDG_CONFIG_HOME":
				return os.Getenv(k)
			}
			return ""
		}, &bytes.Buffer{})
		env.Budget = 14 * time.Second
		var out bytes.Buffer
		if err := app.Run(env, bytes.NewReader(in), &out, ev.Name); err != nil {
			t.Fatalf("hook %s: %v", template, err)
		}
		return out.String()
	}
	write := func(rel, content string) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Agent a-1's transcript is the real CLI's (internal/transcript's
	// testdata), its last response's text made a-1's report; a-2's is
	// missing, and not waited for: no transcript is kept where it points.
	home := t.TempDir()
	transcripts := filepath.Join(home, ".claude", "projects", "-p", "session-1", "subagents")
	captured, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "subagent-transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	topic := "specs/001_authentication_patterns"
	captured = bytes.Replace(captured, []byte(`"text":"WORKER REPORT: echo ran."`), []byte(`"text":"REPORT_CREATED: `+topic+`/reports/001_sessions.md"`), 1)
	if err := os.MkdirAll(transcripts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(transcripts, "agent-a-1.jsonl"), captured, 0o644); err != nil {
		t.Fatal(err)
	}
	transcriptOf := map[string]string{"1": filepath.Join(transcripts, "agent-a-1.jsonl"), "2": filepath.Join(home, "elsewhere", "-p", "session-1", "subagents", "agent-a-2.jsonl")}
	hook("user-prompt", "prompt=/orch-hook:coordinate --scope research-only Research authentication patterns", "prompt_id=p-1")
	if out := hook("pre-agent", "tool_use_id=t-x", "tool_input.subagent_type=orch-hook:plan-architect", "tool_input.prompt=Plan"); !strings.Contains(out, `"deny"`) {
		t.Fatalf("plan-architect in research was not refused: %s", out)
	}
	for i, name := range []string{"001_sessions.md", "002_tokens.md"} {
		id := string(rune('1' + i))
		hook("pre-agent", "tool_use_id=t-"+id, "tool_input.subagent_type=orch-hook:research-specialist", "tool_input.run_in_background:=false", "tool_input.prompt=Topic "+id)
		write(topic+"/reports/"+name, "# Report "+id+"\n")
		hook("post-write-sub", "agent_id=a-"+id, "agent_type=orch-hook:research-specialist", "tool_input.file_path=$WORK/"+topic+"/reports/"+name)
		hook("subagent-stop", "agent_id=a-"+id, "agent_type=orch-hook:research-specialist", "last_assistant_message=REPORT_CREATED: "+topic+"/reports/"+name,
			"agent_transcript_path="+transcriptOf[id])
		hook("post-agent-fg", "tool_use_id=t-"+id, "tool_response.agentId=a-"+id)
	}
	paths, _ := filepath.Glob(filepath.Join(root, state.RecordsDir, "*.json"))
	if len(paths) != 1 {
		t.Fatalf("records %v, want one", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec app.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

// rechain recomputes every prev from line from on: what someone who can
// write the log (and the record) but not the gates would do.
func rechain(t *testing.T, rec *app.Record, from int) {
	t.Helper()
	for i := max(from, 1); i < len(rec.Log); i++ {
		var m map[string]any
		if err := json.Unmarshal([]byte(rec.Log[i]), &m); err != nil {
			t.Fatal(err)
		}
		m["prev"] = state.LineHash([]byte(rec.Log[i-1]))
		b, _ := json.Marshal(m)
		rec.Log[i] = string(b)
	}
}

func editLine(t *testing.T, rec *app.Record, i int, edit func(m map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(rec.Log[i]), &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.Marshal(m)
	rec.Log[i] = string(b)
}

// lineOf is the index of the first log line of type typ whose reason
// holds part.
func lineOf(t *testing.T, rec *app.Record, typ, part string) int {
	t.Helper()
	for i, l := range rec.Log {
		var ev state.Event
		_ = json.Unmarshal([]byte(l), &ev)
		if ev.Type == typ && strings.Contains(ev.Reason, part) {
			return i
		}
	}
	t.Fatalf("no %s line with %q", typ, part)
	return -1
}

func clone(t *testing.T, rec *app.Record) *app.Record {
	t.Helper()
	b, _ := json.Marshal(rec)
	var c app.Record
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func wantFail(t *testing.T, rec *app.Record, line int, part string) {
	t.Helper()
	_, err := app.Verify(rec)
	var ve *app.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("verify: %v, want a VerifyError", err)
	}
	if ve.Line != line || !strings.Contains(ve.Error(), part) {
		t.Errorf("verify: %v; want line %d and %q", err, line, part)
	}
}

// A record of a real run verifies: every decision replays, the refusal
// included; every way of changing it after the fact fails, naming the
// first line that does.
func TestVerifyRecord(t *testing.T) {
	rec := recordRun(t)
	sum, err := app.Verify(rec)
	if err != nil {
		t.Fatalf("the record of a real run does not verify: %v", err)
	}
	if rec.Outcome != "complete" || sum.Refused != 1 || sum.Replayed < 6 || len(sum.Accepted) != 0 || sum.ChainTail != state.LineHash([]byte(rec.Log[len(rec.Log)-1])) {
		t.Errorf("outcome %s, summary %+v", rec.Outcome, sum)
	}

	t.Run("reordered", func(t *testing.T) {
		r := clone(t, rec)
		r.Log[3], r.Log[4] = r.Log[4], r.Log[3]
		wantFail(t, r, 4, "the hash chain breaks here")
	})
	t.Run("edited", func(t *testing.T) {
		r := clone(t, rec)
		editLine(t, r, 5, func(m map[string]any) { m["reason"] = "edited" })
		wantFail(t, r, 7, "the hash chain breaks here")
	})
	t.Run("cut", func(t *testing.T) {
		r := clone(t, rec)
		r.Log = r.Log[:len(r.Log)-3]
		if _, err := app.Verify(r); err == nil || !strings.Contains(err.Error(), "ended complete; its log ends it running") {
			t.Errorf("verify of a cut log: %v", err)
		}
		r = clone(t, rec)
		r.Log = append(r.Log[:4], r.Log[5:]...)
		wantFail(t, r, 5, "the hash chain breaks here")
	})
	t.Run("a refusal re-chained as allowed", func(t *testing.T) {
		r := clone(t, rec)
		i := lineOf(t, r, state.EventDeny, "plan-architect does not run in state research")
		editLine(t, r, i, func(m map[string]any) { m["reason"] = "orch-hook: something else." })
		rechain(t, r, i+1)
		wantFail(t, r, i+1, "replayed, the call is not refused the way the log says")
	})
	t.Run("an illegal transition inserted and re-chained", func(t *testing.T) {
		r := clone(t, rec)
		// The first report's verification, made to complete the workflow.
		i := lineOf(t, r, state.EventAgentDone, "verified")
		for !strings.Contains(r.Log[i], `"checkpoint"`) {
			i++
		}
		editLine(t, r, i, func(m map[string]any) {
			cp := m["checkpoint"].(map[string]any)
			cp["state_machine"].(map[string]any)["current_state"] = "complete"
			m["state_after"] = "complete"
		})
		rechain(t, r, i+1)
		wantFail(t, r, i+1, "replayed through the gates, the call does not lead to the checkpoint the log holds (the gates lead to research, the log to complete)")
	})
	t.Run("a change with its call removed", func(t *testing.T) {
		r := clone(t, rec)
		i := lineOf(t, r, state.EventAgentDone, "verified")
		for !strings.Contains(r.Log[i], `"checkpoint"`) {
			i++
		}
		editLine(t, r, i, func(m map[string]any) { delete(m, "call") })
		rechain(t, r, i+1)
		wantFail(t, r, i+1, "with no recorded call: it cannot have been made by a hook")
	})
	t.Run("a forged call", func(t *testing.T) {
		r := clone(t, rec)
		i := lineOf(t, r, state.EventAgentDone, "verified")
		for !strings.Contains(r.Log[i], `"checkpoint"`) {
			i++
		}
		editLine(t, r, i, func(m map[string]any) {
			m["call"].(map[string]any)["text"] = "Nothing to report."
		})
		rechain(t, r, i+1)
		wantFail(t, r, i+1, "does not lead to the checkpoint the log holds")
	})
	t.Run("summary", func(t *testing.T) {
		r := clone(t, rec)
		r.Summary.Refused = 0
		if _, err := app.Verify(r); err == nil || !strings.Contains(err.Error(), "summary is not what its log says") {
			t.Errorf("verify of a forged summary: %v", err)
		}
	})
	t.Run("rules version", func(t *testing.T) {
		r := clone(t, rec)
		r.Rules["coordinate"] = 99
		if _, err := app.Verify(r); err == nil || !strings.Contains(err.Error(), "rules version 99") {
			t.Errorf("verify of another rules version: %v", err)
		}
	})
}

// A stopping agent's tokens are read from its transcript, kept with its
// launch, listed in the record's summary, and replayed from what the
// decision read: forged in the log, they no longer lead to its checkpoint.
func TestRecordTokens(t *testing.T) {
	rec := recordRun(t)
	if _, err := app.Verify(rec); err != nil {
		t.Fatal(err)
	}
	want := gates.Tokens{Input: 4403, Output: 103, CacheRead: 15403, CacheWrite: 13203, Responses: 2}
	var got []string
	for _, a := range rec.Summary.Agents {
		got = append(got, a.Work+": "+a.Tokens.Short())
	}
	if len(rec.Summary.Agents) != 2 || rec.Summary.Agents[0].Tokens == nil || *rec.Summary.Agents[0].Tokens != want ||
		rec.Summary.Agents[1].Tokens == nil || rec.Summary.Agents[1].Tokens.Unknown != "transcript missing" {
		t.Fatalf("summary agents: %q, want the captured transcript's %+v, then unknown", got, want)
	}
	i := lineOf(t, rec, state.EventAgentDone, "verified")
	for !strings.Contains(rec.Log[i], `"checkpoint"`) {
		i++
	}
	if !strings.Contains(rec.Log[i], `"tokens":{"input":4403,"output":103,"cache_read":15403,"cache_write":13203,"responses":2}`) {
		t.Fatalf("the stop's reads hold no tokens: %.400s", rec.Log[i])
	}
	r := clone(t, rec)
	editLine(t, r, i, func(m map[string]any) {
		m["reads"].(map[string]any)["tokens"].(map[string]any)["output"] = 1
	})
	rechain(t, r, i+1)
	wantFail(t, r, i+1, "does not lead to the checkpoint the log holds (workflow differs)")
}

// The records of the end-to-end runs of the real Claude Code CLI against
// the mock API (internal/dev/e2e: TestFlow, TestCoordinateResearchAndPlan;
// kept with ORCH_HOOK_KEEP_RECORD=1, see testdata/README.md) verify.
func TestVerifyRealCLIRecords(t *testing.T) {
	for _, name := range []string{"record_e2e_orchestrate.json", "record_e2e_coordinate.json"} {
		t.Run(name, func(t *testing.T) {
			rec := e2eRecord(t, name)
			sum, err := app.Verify(rec)
			if err != nil {
				t.Fatalf("%v (after a change to the gates or the record, produce it again: testdata/README.md)", err)
			}
			if rec.Outcome != "complete" || sum.Replayed == 0 {
				t.Errorf("outcome %s, %d decisions replayed", rec.Outcome, sum.Replayed)
			}
			// Every agent's tokens, read from its real transcript and
			// replayed from what its SubagentStop read.
			for _, a := range sum.Agents {
				if !a.Tokens.Known() || a.Tokens.Unread != "" || a.Tokens.Responses == 0 {
					t.Errorf("agent %s (%s): tokens %+v", a.Agent, a.Work, a.Tokens)
				}
			}
			if name == "record_e2e_orchestrate.json" {
				// The requirements-analyst's one response, as TestFlow's mock
				// scripted it.
				want := gates.Tokens{Input: 3101, Output: 41, CacheRead: 7101, CacheWrite: 5101, Responses: 1}
				if a := sum.Agents[0]; a.Agent != "requirements-analyst" || *a.Tokens != want {
					t.Errorf("first agent %s: tokens %+v, want %+v", a.Agent, a.Tokens, want)
				}
			}
			// Its log, cut short of the end, no longer says so.
			rec.Log = rec.Log[:len(rec.Log)-1]
			if _, err := app.Verify(rec); err == nil {
				t.Error("a cut record verifies")
			}
		})
	}
}
