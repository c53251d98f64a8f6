package mockapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const testScript = `A test script.

-- default.txt --
GENERIC ANSWER
-- main.conv.json --
{
  "match": {"user_contains": "[[MAIN]]", "thread": "main"},
  "turns": [
    [{"text": "Launching the worker. ✓ ünïcödé to split across chunks"},
     {"tool": "Agent", "input": {"description": "work", "prompt": "[[W1]] do it", "subagent_type": "p:worker"}},
     {"tool": "Bash", "input": {"command": "echo hi", "description": "hi"}, "id": "toolu_fixed"}],
    [{"text": "main done"}]
  ]
}
-- worker.conv.json --
{
  "match": {"system_contains": "WORKER-BODY", "thread": "subagent"},
  "turns": [
    [{"tool": "Write", "input": {"file_path": "PLAN.md", "content": "@file:plan.md"}}],
    {"blocks": [{"text": "worker report"}], "stop_reason": "end_turn"}
  ]
}
-- pinned.conv.json --
{"match": {"agent_id": "agent-pinned"}, "turns": [[{"text": "pinned"}]]}
-- plan.md --
# Plan
- step "one"
`

func startTest(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Script == nil {
		s, err := ParseTxtar([]byte(testScript))
		if err != nil {
			t.Fatal(err)
		}
		opts.Script = s
	}
	opts.Logf = t.Logf
	srv, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// body builds a messages request body: system prompt, then alternating
// user/assistant messages (given as plain strings; "" skips).
func body(stream bool, system string, msgs ...map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"model":      "claude-test",
		"max_tokens": 1000,
		"stream":     stream,
		"system":     []any{map[string]any{"type": "text", "text": system}},
		"messages":   msgs,
		"tools":      []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func user(text string) map[string]any {
	return map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>noise</system-reminder>"},
		map[string]any{"type": "text", "text": text},
	}}
}

func assistant(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}
}

func post(t *testing.T, srv *Server, agentID string, data []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL()+"/v1/messages?beta=true", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	if agentID != "" {
		req.Header.Set(AgentIDHeader, agentID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	name string
	data map[string]any
	raw  string
}

// parseSSE parses an event stream strictly as the Messages API sends it:
// "event: NAME" then "data: JSON" then a blank line, data.type == NAME.
func parseSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		name, ok := strings.CutPrefix(line, "event: ")
		if !ok {
			t.Fatalf("want an event: line, got %q", line)
		}
		if !sc.Scan() {
			t.Fatalf("event %s: no data line", name)
		}
		raw, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("event %s: want a data: line, got %q", name, sc.Text())
		}
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %s: data not followed by a blank line", name)
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(raw), &data); err != nil {
			t.Fatalf("event %s: data is not JSON: %v", name, err)
		}
		if data["type"] != name {
			t.Fatalf("event %s: data.type is %v", name, data["type"])
		}
		out = append(out, sseEvent{name, data, raw})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type block struct {
	typ, text, id, name, json string
}

// accumulate checks the event order and rebuilds the message like the SDK.
func accumulate(t *testing.T, events []sseEvent) (msg map[string]any, blocks []block, stop string) {
	t.Helper()
	if len(events) < 3 || events[0].name != "message_start" || events[len(events)-1].name != "message_stop" ||
		events[len(events)-2].name != "message_delta" {
		t.Fatalf("bad event order: %v", names(events))
	}
	msg = events[0].data["message"].(map[string]any)
	open := -1
	for _, e := range events[1 : len(events)-2] {
		switch e.name {
		case "ping":
		case "content_block_start":
			if open != -1 {
				t.Fatalf("block %d started inside block %d", len(blocks), open)
			}
			if idx := int(e.data["index"].(float64)); idx != len(blocks) {
				t.Fatalf("content_block_start index %d, want %d", idx, len(blocks))
			}
			cb := e.data["content_block"].(map[string]any)
			b := block{typ: cb["type"].(string)}
			switch b.typ {
			case "text":
				if cb["text"] != "" {
					t.Fatalf("text block starts with text %q", cb["text"])
				}
			case "tool_use":
				b.id, b.name = cb["id"].(string), cb["name"].(string)
				if in, ok := cb["input"].(map[string]any); !ok || len(in) != 0 {
					t.Fatalf("tool_use block starts with input %v, want {}", cb["input"])
				}
			default:
				t.Fatalf("unexpected block type %q", b.typ)
			}
			blocks = append(blocks, b)
			open = len(blocks) - 1
		case "content_block_delta":
			if idx := int(e.data["index"].(float64)); idx != open {
				t.Fatalf("delta for block %d while block %d is open", idx, open)
			}
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				if blocks[open].typ != "text" {
					t.Fatalf("text_delta in a %s block", blocks[open].typ)
				}
				blocks[open].text += d["text"].(string)
			case "input_json_delta":
				if blocks[open].typ != "tool_use" {
					t.Fatalf("input_json_delta in a %s block", blocks[open].typ)
				}
				blocks[open].json += d["partial_json"].(string)
			default:
				t.Fatalf("unexpected delta %v", d)
			}
		case "content_block_stop":
			if idx := int(e.data["index"].(float64)); idx != open {
				t.Fatalf("stop for block %d while block %d is open", idx, open)
			}
			open = -1
		default:
			t.Fatalf("unexpected event %s", e.name)
		}
	}
	if open != -1 {
		t.Fatalf("block %d never stopped", open)
	}
	md := events[len(events)-2].data
	stop = md["delta"].(map[string]any)["stop_reason"].(string)
	if _, ok := md["usage"].(map[string]any)["output_tokens"].(float64); !ok {
		t.Fatalf("message_delta without usage.output_tokens: %s", events[len(events)-2].raw)
	}
	return msg, blocks, stop
}

func names(events []sseEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.name)
	}
	return out
}

func TestStreamIsTheAPIEventStream(t *testing.T) {
	srv := startTest(t, Options{ChunkSize: 5})
	if u, _ := url.Parse(srv.URL()); u.Hostname() != "127.0.0.1" {
		t.Fatalf("URL %s is not loopback", srv.URL())
	}
	resp := post(t, srv, "", body(true, "You are the main agent.", user("[[MAIN]] go")))
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := parseSSE(t, resp.Body)
	msg, blocks, stop := accumulate(t, events)
	if msg["role"] != "assistant" || msg["type"] != "message" || msg["model"] != "claude-test" ||
		!strings.HasPrefix(msg["id"].(string), "msg_") || len(msg["content"].([]any)) != 0 || msg["stop_reason"] != nil {
		t.Errorf("message_start message: %v", msg)
	}
	if u, ok := msg["usage"].(map[string]any); !ok || u["input_tokens"] == nil || u["output_tokens"] == nil {
		t.Errorf("message_start usage: %v", msg["usage"])
	}
	if stop != "tool_use" {
		t.Errorf("stop_reason %q, want tool_use", stop)
	}
	if len(blocks) != 3 || blocks[0].typ != "text" || blocks[1].name != "Agent" || blocks[2].name != "Bash" {
		t.Fatalf("blocks: %+v", blocks)
	}
	if want := "Launching the worker. ✓ ünïcödé to split across chunks"; blocks[0].text != want {
		t.Errorf("text %q, want %q", blocks[0].text, want)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(blocks[1].json), &in); err != nil || in["prompt"] != "[[W1]] do it" {
		t.Errorf("Agent input %q: %v", blocks[1].json, err)
	}
	if blocks[2].id != "toolu_fixed" || blocks[1].id == "" || !strings.HasPrefix(blocks[1].id, "toolu_") {
		t.Errorf("tool ids %q %q", blocks[1].id, blocks[2].id)
	}
	deltas := 0
	for _, e := range events {
		if e.name == "content_block_delta" {
			deltas++
		}
	}
	if deltas < 10 {
		t.Errorf("only %d deltas with ChunkSize 5", deltas)
	}

	r := srv.Requests()[0]
	if r.Conversation != "main" || r.Turn != 0 || len(r.ToolUseIDs) != 2 || r.ToolUseIDs[0] != blocks[1].id {
		t.Errorf("recorded %s ids %v", r, r.ToolUseIDs)
	}

	// The second turn ends the conversation.
	resp = post(t, srv, "", body(true, "You are the main agent.", user("[[MAIN]] go"), assistant("x"), user("result")))
	_, blocks, stop = accumulate(t, parseSSE(t, resp.Body))
	if stop != "end_turn" || len(blocks) != 1 || blocks[0].text != "main done" {
		t.Errorf("turn 1: stop %q blocks %+v", stop, blocks)
	}
}

func TestMatching(t *testing.T) {
	srv := startTest(t, Options{})
	cases := []struct {
		agent, system, user string
		conv                string
	}{
		{"", "main prompt", "[[MAIN]] go", "main"},
		{"agent-1", "main prompt", "[[MAIN]] go", ""},              // thread main only
		{"agent-1", "You are WORKER-BODY.", "[[W1]] do", "worker"}, // binds agent-1
		{"agent-1", "no marker", "no marker", "worker"},            // bound
		{"", "You are WORKER-BODY.", "[[W1]] do", ""},              // thread subagent only
		{"agent-pinned", "x", "[[MAIN]]", "pinned"},                // agent_id wins
		{"", "title generation", "make a title", ""},
	}
	for i, c := range cases {
		resp := post(t, srv, c.agent, body(true, c.system, user(c.user)))
		_, blocks, _ := accumulate(t, parseSSE(t, resp.Body))
		r := srv.Requests()[i]
		if r.Conversation != c.conv {
			t.Errorf("case %d (%+v): matched %q", i, c, r.Conversation)
		}
		if c.conv == "" && (len(blocks) != 1 || blocks[0].text != "GENERIC ANSWER") {
			t.Errorf("case %d: unmatched got %+v", i, blocks)
		}
	}
	if got := len(srv.Unmatched()); got != 3 {
		t.Errorf("Unmatched: %d, want 3", got)
	}
	if ids := srv.AgentIDs(); ids["agent-1"] != "worker" || ids["agent-pinned"] != "pinned" {
		t.Errorf("AgentIDs %v", ids)
	}
}

func TestTurnIndexByAssistantMessages(t *testing.T) {
	srv := startTest(t, Options{})
	sys := "You are WORKER-BODY."
	// Two agents of one conversation at different stages, in any order.
	reqs := []struct {
		agent string
		msgs  []map[string]any
		turn  int
		text  string
	}{
		{"b", []map[string]any{user("[[W1]]"), assistant("a"), user("r")}, 1, "worker report"},
		{"a", []map[string]any{user("[[W1]]")}, 0, ""},
		// system messages between assistant messages do not split a turn
		{"a", []map[string]any{user("[[W1]]"), assistant("a"), {"role": "system", "content": "ctx"}, assistant("b"), user("r")}, 1, "worker report"},
		{"a", []map[string]any{user("[[W1]]"), assistant("a"), user("r"), assistant("b"), user("r")}, 2, "GENERIC ANSWER"},
	}
	for i, c := range reqs {
		resp := post(t, srv, c.agent, body(true, sys, c.msgs...))
		_, blocks, _ := accumulate(t, parseSSE(t, resp.Body))
		r := srv.Requests()[i]
		if r.Turn != c.turn {
			t.Errorf("request %d: turn %d, want %d", i, r.Turn, c.turn)
		}
		if c.text != "" && blocks[0].text != c.text {
			t.Errorf("request %d: got %+v", i, blocks)
		}
		if c.turn == 0 && (blocks[0].name != "Write" || !strings.Contains(blocks[0].json, `step \"one\"`)) {
			t.Errorf("request %d: turn 0 got %+v", i, blocks)
		}
	}
	if o := srv.Overflows(); len(o) != 1 || o[0].Seq != 4 {
		t.Errorf("Overflows: %v", o)
	}
}

func TestNonStreamingAndOtherEndpoints(t *testing.T) {
	srv := startTest(t, Options{})
	resp := post(t, srv, "", body(false, "x", user("[[MAIN]] go")))
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "tool_use" || len(msg.Content) != 3 || msg.Content[1].Type != "tool_use" {
		t.Errorf("non-streaming message: %+v", msg)
	}

	do := func(method, path, data string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL()+path, strings.NewReader(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do(http.MethodHead, "/", ""); code != 200 {
		t.Errorf("HEAD /: %d", code)
	}
	if code, b := do(http.MethodPost, "/v1/messages/count_tokens?beta=true", `{"messages":[]}`); code != 200 || !strings.Contains(b, `"input_tokens"`) {
		t.Errorf("count_tokens: %d %s", code, b)
	}
	if code, b := do(http.MethodGet, "/v1/models", ""); code != 404 || !strings.Contains(b, `"not_found_error"`) {
		t.Errorf("unknown: %d %s", code, b)
	}
	if code, _ := do(http.MethodPost, "/v1/messages", "{not json"); code != 400 {
		t.Errorf("bad body: %d", code)
	}
	if u := srv.Unknown(); len(u) != 1 || u[0].Path != "/v1/models" {
		t.Errorf("Unknown: %v", u)
	}
}

func TestRequestLimit(t *testing.T) {
	srv := startTest(t, Options{MaxRequests: 2, Grace: 200 * time.Millisecond})
	for i := 0; i < 2; i++ {
		if resp := post(t, srv, "", body(true, "x", user("hi"))); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, resp.StatusCode)
		}
	}
	for i := 0; i < 2; i++ {
		resp := post(t, srv, "", body(true, "x", user("hi")))
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), "invalid_request_error") {
			t.Fatalf("request past the limit: %d %s", resp.StatusCode, b)
		}
	}
	if srv.Err() != ErrRequestLimit {
		t.Errorf("Err: %v", srv.Err())
	}
	select {
	case <-srv.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server still open after the grace period")
	}
	if _, err := http.Post(srv.URL()+"/v1/messages", "application/json", bytes.NewReader(body(true, "x", user("hi")))); err == nil {
		t.Error("port still accepts connections")
	}
	if got := len(srv.Requests()); got != 4 {
		t.Errorf("recorded %d requests, want 4:\n%s", got, srv.Summary())
	}
}

func TestTimeLimit(t *testing.T) {
	srv := startTest(t, Options{Timeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond})
	select {
	case <-srv.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop")
	}
	if srv.Err() != ErrTimeLimit {
		t.Errorf("Err: %v", srv.Err())
	}
}

func TestCloseIsClean(t *testing.T) {
	srv := startTest(t, Options{})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if srv.Err() != nil {
		t.Errorf("Err after Close: %v", srv.Err())
	}
	<-srv.Done()
	_ = srv.Close() // twice is fine
}

func TestFindHelpers(t *testing.T) {
	srv := startTest(t, Options{})
	msgs := []map[string]any{
		user("[[MAIN]] go"),
		{"role": "system", "content": "# Environment"},
		{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "Agent", "input": map[string]any{}}}},
		{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "is_error": true,
			"content": "PreToolUse:Agent hook error: plan not approved"}}},
		{"role": "system", "content": []any{map[string]any{"type": "text", "text": "PostToolUse:Agent hook additional context: [STEP 0a] next"}}},
		assistant("ok"),
		{"role": "user", "content": "Stop hook feedback:\nrun 4b"},
	}
	post(t, srv, "", body(true, "sys", msgs...))
	r, tr, ok := srv.FindToolResult("PreToolUse:Agent hook error: ")
	if !ok || tr.ToolUseID != "t1" || !tr.IsError || r.Seq != 1 {
		t.Errorf("FindToolResult: %v %+v", ok, tr)
	}
	for _, s := range []string{"[STEP 0a] next", "Stop hook feedback:\nrun 4b", "# Environment", "sys", "[[MAIN]]"} {
		if _, ok := srv.FindText(s); !ok {
			t.Errorf("FindText(%q) found nothing", s)
		}
	}
	if _, ok := srv.FindText("plan not approved"); ok {
		t.Error("FindText searched tool results")
	}
	if got := r.LastUserTexts(); len(got) != 1 || got[0] != "Stop hook feedback:\nrun 4b" {
		t.Errorf("LastUserTexts: %q", got)
	}
	if got := r.AssistantTurns(); got != 2 {
		t.Errorf("AssistantTurns: %d", got)
	}
	if !strings.Contains(r.FirstUserText(), "[[MAIN]] go") || strings.Contains(r.FirstUserText(), "Environment") {
		t.Errorf("FirstUserText: %q", r.FirstUserText())
	}
	if got := r.ToolNames(); len(got) != 1 || got[0] != "Bash" {
		t.Errorf("ToolNames: %v", got)
	}
}

func TestScriptErrors(t *testing.T) {
	conv := func(s string) string { return "-- c.conv.json --\n" + s + "\n" }
	cases := map[string]string{
		"no conversation":   "-- x.txt --\nhi\n",
		"no match":          conv(`{"match": {}, "turns": [[{"text": "x"}]]}`),
		"no turns":          conv(`{"match": {"user_contains": "x"}, "turns": []}`),
		"empty turn":        conv(`{"match": {"user_contains": "x"}, "turns": [[]]}`),
		"bad thread":        conv(`{"match": {"user_contains": "x", "thread": "sub"}, "turns": [[{"text": "x"}]]}`),
		"duplicate id":      conv(`{"match": {"user_contains": "x"}, "turns": [[{"tool": "A", "input": {}, "id": "i"}, {"tool": "B", "input": {}, "id": "i"}]]}`),
		"input not object":  conv(`{"match": {"user_contains": "x"}, "turns": [[{"tool": "A", "input": [1]}]]}`),
		"no input":          conv(`{"match": {"user_contains": "x"}, "turns": [[{"tool": "A"}]]}`),
		"text and tool":     conv(`{"match": {"user_contains": "x"}, "turns": [[{"tool": "A", "input": {}, "text": "t"}]]}`),
		"missing file":      conv(`{"match": {"user_contains": "x"}, "turns": [[{"text": "@file:nope.md"}]]}`),
		"unknown field":     conv(`{"match": {"user_contains": "x"}, "turnz": [[{"text": "x"}]]}`),
		"unknown block key": conv(`{"match": {"user_contains": "x"}, "turns": [[{"txt": "x"}]]}`),
		"bad json":          conv(`{"match": `),
	}
	for name, src := range cases {
		if _, err := ParseTxtar([]byte(src)); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func TestScriptRoundTrip(t *testing.T) {
	s, err := ParseTxtar([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	if s.DefaultText != "GENERIC ANSWER" || len(s.Conversations) != 3 || s.Conversations[0].Name != "main" {
		t.Fatalf("parsed %+v", s)
	}
	w := s.Conversation("worker")
	var in struct{ Content string }
	if err := json.Unmarshal(w.Turns[0].Blocks[0].Input, &in); err != nil || in.Content != "# Plan\n- step \"one\"\n" {
		t.Errorf("@file: not resolved: %q %v", in.Content, err)
	}
	if w.Turns[1].StopReason != "end_turn" {
		t.Errorf("stop_reason: %q", w.Turns[1].StopReason)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseJSON(data)
	if err != nil {
		t.Fatalf("ParseJSON of the marshalled script: %v\n%s", err, data)
	}
	if fmt.Sprint(s2.Conversations[2].Turns) != fmt.Sprint(s.Conversations[2].Turns) {
		t.Errorf("round trip differs")
	}
	built := &Script{Conversations: []*Conversation{{
		Name:  "go",
		Match: Match{UserContains: "x"},
		Turns: []Turn{NewTurn(Text("hi"), ToolUse("Bash", map[string]string{"command": "ls"}))},
	}}}
	if err := built.Validate(); err != nil {
		t.Error(err)
	}
}

// TestScriptedUsage: a turn's "usage" is what the reply reports, the input
// and cache counts in message_start and the output count in message_delta
// (all four in a non-streaming reply); a turn without one keeps the
// estimate, and the usage survives a JSON round trip.
func TestScriptedUsage(t *testing.T) {
	s, err := ParseTxtar([]byte(`-- main.conv.json --
{"match": {"user_contains": "[[U]]"}, "turns": [
  {"blocks": [{"text": "counted"}],
   "usage": {"input_tokens": 1101, "output_tokens": 21, "cache_creation_input_tokens": 3301, "cache_read_input_tokens": 4401}},
  [{"text": "estimated"}]
]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := startTest(t, Options{Script: s})
	events := parseSSE(t, post(t, srv, "", body(true, "x", user("[[U]] go"))).Body)
	msg, _, _ := accumulate(t, events)
	want := map[string]any{"input_tokens": 1101.0, "output_tokens": 1.0, "cache_creation_input_tokens": 3301.0, "cache_read_input_tokens": 4401.0}
	if got := msg["usage"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("message_start usage %v, want %v", got, want)
	}
	if got := events[len(events)-2].data["usage"]; fmt.Sprint(got) != fmt.Sprint(map[string]any{"output_tokens": 21.0}) {
		t.Errorf("message_delta usage %v, want output_tokens 21", got)
	}

	var whole struct{ Usage map[string]any }
	if err := json.NewDecoder(post(t, srv, "", body(false, "x", user("[[U]] go"))).Body).Decode(&whole); err != nil {
		t.Fatal(err)
	}
	want["output_tokens"] = 21.0
	if fmt.Sprint(whole.Usage) != fmt.Sprint(want) {
		t.Errorf("non-streaming usage %v, want %v", whole.Usage, want)
	}

	second := body(true, "x", user("[[U]] go"), assistant("counted"), user("more"))
	msg, _, _ = accumulate(t, parseSSE(t, post(t, srv, "", second).Body))
	if u := msg["usage"].(map[string]any); u["input_tokens"] != float64(estimateTokens(len(second))) || u["cache_read_input_tokens"] != 0.0 {
		t.Errorf("unscripted turn usage %v, want the estimate", u)
	}

	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseJSON(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if u := s2.Conversations[0].Turns[0].Usage; u == nil || *u != *s.Conversations[0].Turns[0].Usage {
		t.Errorf("usage after a round trip: %+v", u)
	}
}
