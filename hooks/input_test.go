package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// The payloads in testdata/payloads are copies of what Claude Code 2.1.328
// sent to a test plugin's hooks (paths rewritten), one folder per scenario.
// File names are NNN-<event>[-<tool>][-sub].json; "-sub" marks a payload
// that fired inside a subagent.

// payloadFile is one recorded payload.
type payloadFile struct {
	rel   string // relative to testdata/payloads
	event string // from the file name
	sub   bool   // fired inside a subagent
	data  []byte
}

func loadPayloads(tb testing.TB) []payloadFile {
	tb.Helper()
	root := filepath.Join("testdata", "payloads")
	var out []payloadFile
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		parts := strings.Split(base, "-")
		if len(parts) < 2 {
			tb.Fatalf("%s: name is not NNN-<event>...", rel)
		}
		out = append(out, payloadFile{rel: rel, event: parts[1], sub: parts[len(parts)-1] == "sub", data: data})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) == 0 {
		tb.Fatal("no payloads in testdata/payloads")
	}
	return out
}

func payload(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "payloads", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodePayload(t *testing.T, rel string) *Input {
	t.Helper()
	in, err := DecodeBytes(payload(t, rel), "")
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return in
}

func TestDecodeEveryPayload(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range loadPayloads(t) {
		t.Run(p.rel, func(t *testing.T) {
			// Through the reader, with the event hooks.json would pass.
			in, err := Decode(bytes.NewReader(p.data), p.event)
			if err != nil {
				t.Fatal(err)
			}
			seen[p.event] = true
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(p.data, &raw); err != nil {
				t.Fatal(err)
			}
			if in.HookEventName != p.event {
				t.Errorf("HookEventName %q, file says %q", in.HookEventName, p.event)
			}
			if in.SessionID == "" || in.Cwd == "" || in.TranscriptPath == "" {
				t.Errorf("common fields missing: %+v", in)
			}
			_, hasID := raw["agent_id"]
			if hasID != p.sub || in.IsSubagent() != p.sub {
				t.Errorf("agent_id key %v, IsSubagent %v; the file name says subagent=%v", hasID, in.IsSubagent(), p.sub)
			}
			_, hasType := raw["agent_type"]
			if (in.AgentType != nil) != hasType {
				t.Errorf("AgentType %v but agent_type key present=%v", in.AgentType, hasType)
			}
			if ti, ok := raw["tool_input"]; ok && !bytes.Equal(in.ToolInput, ti) {
				t.Errorf("tool_input not kept raw:\n got %s\nwant %s", in.ToolInput, ti)
			}
			if tr, ok := raw["tool_response"]; ok && !bytes.Equal(in.ToolResponse, tr) {
				t.Errorf("tool_response not kept raw")
			}
			// The string fields Input knows carry the payload's values.
			v := reflect.ValueOf(in).Elem()
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				key := strings.Split(f.Tag.Get("json"), ",")[0]
				r, ok := raw[key]
				if !ok || f.Type.Kind() != reflect.String {
					continue
				}
				var want string
				if err := json.Unmarshal(r, &want); err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				if got := v.Field(i).String(); got != want {
					t.Errorf("%s = %q, want %q", key, got, want)
				}
			}
		})
	}
	// The copied set covers every event orch-hook handles, and the others
	// Claude Code sends around them.
	for _, ev := range []string{gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure, gates.SubagentStart, gates.SubagentStop, gates.Stop,
		gates.UserPromptSubmit, gates.UserPromptExpansion, gates.SessionStart, gates.SessionEnd, "PostToolBatch", "PreCompact", "PostCompact"} {
		if !seen[ev] {
			t.Errorf("no %s payload in testdata/payloads", ev)
		}
	}
}

func TestDecodePayloadFields(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		file  string
		check func(t *testing.T, in *Input)
	}{
		{"02-subagent-fg/004-PreToolUse-Agent.json", func(t *testing.T, in *Input) {
			// Main thread: no agent_id key at all, agent_type absent (nil).
			if in.AgentID != "" || in.AgentType != nil || in.IsSubagent() {
				t.Errorf("main-thread Agent call: agent_id %q agent_type %v", in.AgentID, in.AgentType)
			}
			var ti struct {
				SubagentType    string `json:"subagent_type"`
				RunInBackground *bool  `json:"run_in_background"`
			}
			json.Unmarshal(in.ToolInput, &ti)
			if in.ToolName != "Agent" || ti.SubagentType != "orch-probe:code-implementer" || ti.RunInBackground == nil || *ti.RunInBackground {
				t.Errorf("foreground Agent input %s", in.ToolInput)
			}
			if in.ToolUseID != "toolu_main_464f6fd7_t0_b1" {
				t.Errorf("tool_use_id %q", in.ToolUseID)
			}
		}},
		{"02b-subagent-bg/003-PreToolUse-Agent.json", func(t *testing.T, in *Input) {
			// Background is the default: the key is not sent.
			if in.ToolName != "Agent" || bytes.Contains(in.ToolInput, []byte("run_in_background")) {
				t.Errorf("background Agent input %s", in.ToolInput)
			}
		}},
		{"02-subagent-fg/013-PostToolUse-Agent.json", func(t *testing.T, in *Input) {
			var tr struct{ Status, AgentID string }
			json.Unmarshal(in.ToolResponse, &tr)
			if tr.Status != "completed" || tr.AgentID != "acff43aea4bcde8d8" {
				t.Errorf("foreground tool_response %+v", tr)
			}
		}},
		{"02b-subagent-bg/005-PostToolUse-Agent.json", func(t *testing.T, in *Input) {
			var tr struct{ Status, AgentID, OutputFile string }
			json.Unmarshal(in.ToolResponse, &tr)
			if tr.Status != "async_launched" || tr.AgentID != "a2f03c94f3c85c69d" || tr.OutputFile == "" {
				t.Errorf("background tool_response %+v", tr)
			}
		}},
		{"02-subagent-fg/006-PreToolUse-Write-sub.json", func(t *testing.T, in *Input) {
			if in.AgentID != "acff43aea4bcde8d8" || !reflect.DeepEqual(in.AgentType, str("orch-probe:code-implementer")) || !in.IsSubagent() {
				t.Errorf("subagent Write: agent_id %q agent_type %v", in.AgentID, in.AgentType)
			}
			want := `{
    "file_path": "/home/user/project/impl.txt",
    "content": "impl\n"
  }`
			if string(in.ToolInput) != want {
				t.Errorf("tool_input %q, want the payload's bytes %q", in.ToolInput, want)
			}
		}},
		{"02-subagent-fg/005-SubagentStart-sub.json", func(t *testing.T, in *Input) {
			if in.AgentID != "acff43aea4bcde8d8" || in.AgentType == nil || *in.AgentType != "orch-probe:code-implementer" {
				t.Errorf("SubagentStart %q %v", in.AgentID, in.AgentType)
			}
		}},
		{"02-subagent-fg/012-SubagentStop-sub.json", func(t *testing.T, in *Input) {
			if in.AgentID != "acff43aea4bcde8d8" || in.AgentType == nil || *in.AgentType != "orch-probe:code-implementer" ||
				in.LastAssistantMessage != "IMPLEMENTER-FINAL-REPORT: created impl.txt (5 bytes)." ||
				!strings.HasSuffix(in.AgentTranscriptPath, "agent-acff43aea4bcde8d8.jsonl") {
				t.Errorf("SubagentStop %+v", in)
			}
		}},
		{"08-session-lifecycle/009-SubagentStop-sub.json", func(t *testing.T, in *Input) {
			// /compact: agent_type is present and empty, not absent.
			if in.AgentType == nil || *in.AgentType != "" || in.AgentID != "a8a99c0131729b98d" {
				t.Errorf("compaction SubagentStop: agent_id %q agent_type %v", in.AgentID, in.AgentType)
			}
			if !strings.Contains(in.LastAssistantMessage, "MOCK-COMPACT-SUMMARY") {
				t.Errorf("last_assistant_message %q", in.LastAssistantMessage)
			}
		}},
		{"02b-subagent-bg/008-Stop.json", func(t *testing.T, in *Input) {
			want := []BackgroundTask{{ID: "a2f03c94f3c85c69d", Type: "subagent", Status: "running",
				Description: "Implement feature X", AgentType: "orch-probe:code-implementer"}}
			if !reflect.DeepEqual(in.BackgroundTasks, want) {
				t.Errorf("background_tasks %+v", in.BackgroundTasks)
			}
			if in.StopHookActive || in.AgentType != nil || in.LastAssistantMessage == "" {
				t.Errorf("Stop %+v", in)
			}
		}},
		{"02b-subagent-bg/015-Stop.json", func(t *testing.T, in *Input) {
			if in.BackgroundTasks == nil || len(in.BackgroundTasks) != 0 {
				t.Errorf("background_tasks %#v, want empty", in.BackgroundTasks)
			}
		}},
		{"06-stop-block/012-Stop.json", func(t *testing.T, in *Input) {
			if !in.StopHookActive {
				t.Error("stop_hook_active not read")
			}
		}},
		{"02b-subagent-bg/013-UserPromptSubmit.json", func(t *testing.T, in *Input) {
			if in.IsSubagent() || !strings.HasPrefix(in.Prompt, "<task-notification>\n<task-id>a2f03c94f3c85c69d</task-id>") ||
				!strings.Contains(in.Prompt, "<status>completed</status>") {
				t.Errorf("task notification prompt %q", in.Prompt)
			}
		}},
		{"07-slash-command/003-UserPromptExpansion.json", func(t *testing.T, in *Input) {
			if in.ExpansionType != "slash_command" || in.CommandName != "orch-probe:orchestrate" ||
				in.CommandArgs != "build the widget" || in.CommandSource != "plugin" || in.Prompt != "/orch-probe:orchestrate build the widget" {
				t.Errorf("expansion %+v", in)
			}
		}},
		{"07c-skill-tool/003-PreToolUse-Skill.json", func(t *testing.T, in *Input) {
			var ti struct{ Skill, Args string }
			json.Unmarshal(in.ToolInput, &ti)
			if in.ToolName != "Skill" || ti.Skill != "orch-probe:orchestrate" || ti.Args != "build the widget" {
				t.Errorf("Skill %s %s", in.ToolName, in.ToolInput)
			}
		}},
		{"02c-subagent-type-names/004-PostToolUseFailure-Agent.json", func(t *testing.T, in *Input) {
			if in.ToolName != "Agent" || !strings.HasPrefix(in.Error, "Agent type 'code-implementer' not found") || in.IsInterrupt || in.ToolResponse != nil {
				t.Errorf("failure %+v", in)
			}
		}},
		{"01-write-bash/011-PostToolUseFailure-Bash.json", func(t *testing.T, in *Input) {
			if in.ToolName != "Bash" || in.Error == "" {
				t.Errorf("failure %+v", in)
			}
		}},
		{"08-session-lifecycle/010-SessionStart.json", func(t *testing.T, in *Input) {
			if in.Source != "compact" {
				t.Errorf("source %q", in.Source)
			}
		}},
		{"08-session-lifecycle/015-SessionEnd.json", func(t *testing.T, in *Input) {
			if in.Reason != "clear" {
				t.Errorf("reason %q", in.Reason)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) { tt.check(t, decodePayload(t, tt.file)) })
	}
}

// bigReader serves n bytes without writing them (io.ReadAll's buffer is
// zeroed already, and the size is checked before the content), so that the
// race detector does not make this test slow.
type bigReader struct{ n, off int }

func (r *bigReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(len(p), r.n-r.off)
	r.off += k
	return k, nil
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("pipe broke\nbadly") }

func TestDecodeMalformed(t *testing.T) {
	stop := string(payload(t, "01-write-bash/014-Stop.json"))
	pre := string(payload(t, "01-write-bash/007-PreToolUse-Bash.json"))
	subStop := string(payload(t, "02-subagent-fg/012-SubagentStop-sub.json"))
	tests := []struct {
		name  string
		in    string
		event string
		want  string
	}{
		{"empty", "", "", "stdin is empty"},
		{"blank", " \n\t\r\n", "", "stdin is empty"},
		{"array", `[{"hook_event_name":"Stop"}]`, "", `not a JSON object (starts with "[{\"hook_event_name\":...")`},
		{"string", `"Stop"`, "", "not a JSON object"},
		{"null", `null`, "", "not a JSON object"},
		{"number", `42`, "", "not a JSON object"},
		{"truncated", stop[:len(stop)/2], "", "invalid JSON"},
		{"truncated in a string", pre[:strings.Index(pre, "hello.txt")], "", "invalid JSON"},
		{"trailing garbage", `{"hook_event_name":"Stop"} {}`, "", "invalid JSON"},
		{"hook_event_name a number", `{"hook_event_name": 5}`, "", "field hook_event_name: got JSON number, want string"},
		{"stop_hook_active a string", strings.Replace(stop, `"stop_hook_active": false`, `"stop_hook_active": "no"`, 1), "", "field stop_hook_active"},
		{"background_tasks an object", strings.Replace(stop, `"background_tasks": []`, `"background_tasks": {}`, 1), "", "field background_tasks"},
		{"agent_type a number", strings.Replace(subStop, `"agent_type": "orch-probe:code-implementer"`, `"agent_type": 3`, 1), "", "field agent_type"},
		{"tool_input a string", strings.Replace(pre, `"tool_input": {`, `"tool_input": "ls", "x": {`, 1), "", "PreToolUse: tool_input is not an object"},
		{"tool_input an array", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":[1]}`, "", "PostToolUse: tool_input is not an object"},
		{"missing hook_event_name", strings.Replace(stop, `"hook_event_name": "Stop",`, ``, 1), "", "hook_event_name is missing"},
		{"empty hook_event_name", `{"hook_event_name": ""}`, "", "hook_event_name is missing"},
		{"PreToolUse without tool_name", strings.Replace(pre, `"tool_name": "Bash",`, ``, 1), "", "PreToolUse without tool_name"},
		{"PostToolUse without tool_name", `{"hook_event_name":"PostToolUse","tool_input":{}}`, "", "PostToolUse without tool_name"},
		{"PostToolUseFailure without tool_name", `{"hook_event_name":"PostToolUseFailure","error":"x"}`, "", "PostToolUseFailure without tool_name"},
		{"SubagentStop without agent_id", strings.Replace(subStop, `"agent_id": "acff43aea4bcde8d8",`, ``, 1), "", "SubagentStop without agent_id"},
		{"SubagentStart without agent_id", `{"hook_event_name":"SubagentStart","agent_type":"x"}`, "", "SubagentStart without agent_id"},
		{"event mismatch", stop, gates.PreToolUse, `hooks.json passed event "PreToolUse" but the payload is "Stop"`},
		{"event case mismatch", stop, "stop", `hooks.json passed event "stop" but the payload is "Stop"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Decode(strings.NewReader(tt.in), tt.event)
			checkInputError(t, in, err, tt.want)
			in, err = DecodeBytes([]byte(tt.in), tt.event)
			checkInputError(t, in, err, tt.want)
		})
	}
	t.Run("larger than MaxInput", func(t *testing.T) {
		in, err := DecodeBytes(make([]byte, MaxInput+1), "")
		checkInputError(t, in, err, "larger than 64 MiB")
		if raceEnabled() {
			// Reading 64 MiB through io.ReadAll takes seconds under the
			// race detector, and one goroutine has no race to find.
			t.Skip("stdin variant skipped under -race")
		}
		r := &bigReader{n: 4 * MaxInput}
		in, err = Decode(r, "")
		checkInputError(t, in, err, "larger than 64 MiB")
		if r.off > MaxInput+1 {
			t.Errorf("read %d bytes of an oversized input, want at most %d", r.off, MaxInput+1)
		}
	})
	t.Run("read error", func(t *testing.T) {
		in, err := Decode(failingReader{}, "")
		checkInputError(t, in, err, "reading stdin: pipe broke badly")
	})
}

func checkInputError(t *testing.T, in *Input, err error, want string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T), want *InputError", err, err)
	}
	if in != nil {
		t.Errorf("an Input came back with the error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "hook input: ") || !strings.Contains(msg, want) {
		t.Errorf("message %q, want %q", msg, want)
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("message is not one line: %q", msg)
	}
}

func TestDecodeLenient(t *testing.T) {
	tests := []struct {
		name, in, event string
	}{
		{"unknown event", `{"hook_event_name":"Notification","message":"hi"}`, ""},
		{"unknown fields", `{"hook_event_name":"Stop","future_field":{"a":[1,2]},"effort":{"level":"high"}}`, gates.Stop},
		{"tool event without tool_input", `{"hook_event_name":"PreToolUse","tool_name":"ListAgents"}`, gates.PreToolUse},
		{"leading whitespace", "\n\t {\"hook_event_name\":\"SessionEnd\"}\n", gates.SessionEnd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := DecodeBytes([]byte(tt.in), tt.event)
			if err != nil {
				t.Fatal(err)
			}
			if in.HookEventName == "" {
				t.Error("no event name")
			}
		})
	}
}

// FuzzDecode: Decode never panics; what it accepts has an event name (the
// one hooks.json passed, if any), and what it refuses is an *InputError
// with a one-line message.
func FuzzDecode(f *testing.F) {
	for _, p := range loadPayloads(f) {
		f.Add(p.data, "")
		f.Add(p.data, p.event)
	}
	for _, s := range []string{``, `[]`, `{`, `{"hook_event_name":5}`, `{"hook_event_name":"SubagentStop"}`, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"x"}`} {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, data []byte, event string) {
		in, err := DecodeBytes(data, event)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is a %T, not an *InputError", err, err)
			}
			if in != nil {
				t.Fatal("an Input came back with the error")
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("message is not one line: %q", err.Error())
			}
			return
		}
		if in == nil || in.HookEventName == "" {
			t.Fatalf("accepted an input without hook_event_name: %+v", in)
		}
		if event != "" && in.HookEventName != event {
			t.Fatalf("accepted event %q when %q was passed", in.HookEventName, event)
		}
		switch in.HookEventName {
		case gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure:
			if in.ToolName == "" {
				t.Fatal("accepted a tool event without tool_name")
			}
		case gates.SubagentStart, gates.SubagentStop:
			if in.AgentID == "" {
				t.Fatal("accepted a subagent event without agent_id")
			}
		}
	})
}

func TestMCPPathKeys(t *testing.T) {
	for key, want := range map[string]bool{
		"path": true, "file_path": true, "filePath": true, "targetDir": true, "paths": true,
		"destination": true, "source-file": true, "URI": true,
		"security": false, "profile": false, "content": false, "query": false, "": false,
	} {
		if got := pathKey(key); got != want {
			t.Errorf("pathKey(%q) = %v, want %v", key, got, want)
		}
	}
	got := mcpPaths(json.RawMessage(`{"edits":[{"file_path":"a.go","text":"x"},{"path":"file:///b.go"}],"options":{"targetDir":"c"},"security":"high","n":5}`))
	if want := []string{"/b.go", "a.go", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("mcpPaths = %q, want %q", got, want)
	}
}

// The key switches name exactly the json tags of Input and toolInput.
func TestKnownKeys(t *testing.T) {
	for _, tc := range []struct {
		v     any
		known func(string) string
	}{{Input{}, inputKey}, {toolInput{}, toolInputKey}} {
		typ := reflect.TypeOf(tc.v)
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name != "" && tc.known(strings.ToLower(name)) != name {
				t.Errorf("%s: key %q is not known", typ.Name(), name)
			}
		}
		if tc.known("") != "" || tc.known("bogus") != "" {
			t.Errorf("%s: unexpected key known", typ.Name())
		}
	}
	// A camel-case key in another case is refused too: Claude Code reads
	// the exact key, encoding/json the last case-insensitive match.
	_, err := DecodeBytes([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":true,"DangerouslyDisableSandbox":false}}`), "")
	if err == nil || !strings.Contains(err.Error(), `key "DangerouslyDisableSandbox" is not "dangerouslyDisableSandbox"`) {
		t.Errorf("case variant of dangerouslyDisableSandbox: %v", err)
	}
	// ſ (U+017F) folds to s for encoding/json, not for strings.ToLower.
	_, err = DecodeBytes([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":true,"dangerou\u017flyDi\u017fableSandbox":false}}`), "")
	if err == nil || !strings.Contains(err.Error(), "is not \"dangerouslyDisableSandbox\"") {
		t.Errorf("a U+017F spelling of dangerouslyDisableSandbox: %v", err)
	}
}

// FINDING (denial of service, fail-open by the threat model's rule that a
// hook Claude Code kills lets the call through): checkKeys's fast path
// found a key given twice with slices.Contains over the keys before it,
// quadratic in the keys of tool_input, which the model writes (an
// mcp__ tool's input goes through PreToolUse as the model sent it).
// 100,000 distinct keys (1.3 MB) took ~12 s (the tokenizer it replaced,
// with a map, ~90 ms); ~150,000 outlast the hooks' 15 s timeout. The
// verdict must stay the tokenizer's, message included.
func TestDecodeManyKeysLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"hook_event_name":"PreToolUse","tool_name":"mcp__fs__write","tool_input":{"path":"x"`)
	for i := range 100000 {
		fmt.Fprintf(&b, `,"k%07d":0`, i)
	}
	b.WriteString(`}}`)
	payload := []byte(b.String())
	start := time.Now()
	if _, err := DecodeBytes(payload, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("decoding a %d-byte payload whose tool_input has 100,000 keys took %v (quadratic in the keys)", len(payload), d)
	}
	dup := append(payload[:len(payload)-2:len(payload)-2], `,"k0000007":1}}`...)
	_, err := DecodeBytes(dup, "")
	if err == nil || !strings.Contains(err.Error(), `tool_input: key "k0000007" appears twice`) {
		t.Errorf("a key given twice among many: %v", err)
	}
	// The first problem is reported, read with or without the tokenizer
	// (an escaped key sends the read to it).
	for _, obj := range []string{`{"content":"","k1":0,"k1":0,"Content":1}`, `{"content":"","k\u0031":0,"k1":0,"Content":1}`} {
		if err := checkKeys([]byte(obj), toolInputKey); err == nil || !strings.Contains(err.Error(), `key "k1" appears twice`) {
			t.Errorf("%s: %v", obj, err)
		}
	}
}
