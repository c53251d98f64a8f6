// Package hooks speaks Claude Code's hook wire protocol and nothing else:
// it decodes one hook event from stdin (Decode), normalizes it into the
// kernel's gates.Call (ToCall, paths confined to the project), and renders
// a Decision as the exit code and stdout JSON Claude Code reads (Render).
// Allow is always silent. What is decided, and against which state, is
// package internal/app's.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// MaxInput bounds what is read from stdin; real payloads are far smaller
// (a Write's content is the largest part).
const MaxInput = 64 << 20

// Input is one hook event as Claude Code 2.1.328 sends it (see the
// payloads in testdata). Fields absent from an event stay zero.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	PromptID       string `json:"prompt_id"`
	PermissionMode string `json:"permission_mode"`
	HookEventName  string `json:"hook_event_name"`

	// AgentID is set only inside a subagent; main-thread payloads have no
	// agent_id key. AgentType is a pointer because "" (compaction) differs
	// from absent.
	AgentID   string  `json:"agent_id"`
	AgentType *string `json:"agent_type"`

	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolResponse json.RawMessage `json:"tool_response"`
	ToolUseID    string          `json:"tool_use_id"`
	Error        string          `json:"error"`
	IsInterrupt  bool            `json:"is_interrupt"`

	Prompt        string `json:"prompt"`
	ExpansionType string `json:"expansion_type"`
	CommandName   string `json:"command_name"`
	CommandArgs   string `json:"command_args"`
	CommandSource string `json:"command_source"`

	Source string `json:"source"` // SessionStart
	Reason string `json:"reason"` // SessionEnd

	StopHookActive       bool             `json:"stop_hook_active"`
	LastAssistantMessage string           `json:"last_assistant_message"`
	AgentTranscriptPath  string           `json:"agent_transcript_path"`
	BackgroundTasks      []BackgroundTask `json:"background_tasks"`
}

// BackgroundTask is one entry of a Stop's background_tasks.
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Description string `json:"description"`
	AgentType   string `json:"agent_type"`
}

// InputError is a malformed hook event; its message is one line.
type InputError struct{ msg string }

func (e *InputError) Error() string { return "hook input: " + e.msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{msg: strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")}
}

// Decode reads one hook event. wantEvent, when not empty, is the event name
// hooks.json passed on the command line and must match the payload's.
func Decode(r io.Reader, wantEvent string) (*Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, inputErrorf("reading stdin: %v", err)
	}
	return DecodeBytes(data, wantEvent)
}

// DecodeBytes is Decode on a buffer.
func DecodeBytes(data []byte, wantEvent string) (*Input, error) {
	if len(data) > MaxInput {
		return nil, inputErrorf("larger than %d MiB", MaxInput>>20)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, inputErrorf("stdin is empty; Claude Code sends one JSON object per hook call")
	}
	if data[0] != '{' {
		return nil, inputErrorf("not a JSON object (starts with %q)", shorten.Bytes(string(data), 20, "..."))
	}
	var in Input
	if err := jsonfast.Unmarshal(data, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, inputErrorf("field %s: got JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return nil, inputErrorf("invalid JSON: %v", err)
	}
	if in.HookEventName == "" {
		return nil, inputErrorf("hook_event_name is missing")
	}
	if err := checkKeys(data, inputKey); err != nil {
		return nil, err
	}
	if len(in.ToolInput) > 0 && in.ToolInput[0] == '{' {
		if err := checkKeys(in.ToolInput, toolInputKey); err != nil {
			return nil, inputErrorf("tool_input: %s", err.(*InputError).msg)
		}
	}
	if wantEvent != "" && wantEvent != in.HookEventName {
		return nil, inputErrorf("hooks.json passed event %q but the payload is %q", wantEvent, in.HookEventName)
	}
	switch in.HookEventName {
	case gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure:
		if in.ToolName == "" {
			return nil, inputErrorf("%s without tool_name", in.HookEventName)
		}
		if len(in.ToolInput) > 0 && in.ToolInput[0] != '{' {
			return nil, inputErrorf("%s: tool_input is not an object", in.HookEventName)
		}
	case gates.SubagentStop, gates.SubagentStart:
		if in.AgentID == "" {
			return nil, inputErrorf("%s without agent_id", in.HookEventName)
		}
	}
	return &in, nil
}

// inputKey and toolInputKey map a lower-cased key to the key orch-hook
// decides on ("" for others): the json tags of Input and toolInput
// (TestKnownKeys keeps them in step). Switches, not maps: nothing to build
// at start-up, on every hook call.
func inputKey(folded string) string {
	switch folded {
	case "session_id":
		return "session_id"
	case "transcript_path":
		return "transcript_path"
	case "cwd":
		return "cwd"
	case "prompt_id":
		return "prompt_id"
	case "permission_mode":
		return "permission_mode"
	case "hook_event_name":
		return "hook_event_name"
	case "agent_id":
		return "agent_id"
	case "agent_type":
		return "agent_type"
	case "tool_name":
		return "tool_name"
	case "tool_input":
		return "tool_input"
	case "tool_response":
		return "tool_response"
	case "tool_use_id":
		return "tool_use_id"
	case "error":
		return "error"
	case "is_interrupt":
		return "is_interrupt"
	case "prompt":
		return "prompt"
	case "expansion_type":
		return "expansion_type"
	case "command_name":
		return "command_name"
	case "command_args":
		return "command_args"
	case "command_source":
		return "command_source"
	case "source":
		return "source"
	case "reason":
		return "reason"
	case "stop_hook_active":
		return "stop_hook_active"
	case "last_assistant_message":
		return "last_assistant_message"
	case "agent_transcript_path":
		return "agent_transcript_path"
	case "background_tasks":
		return "background_tasks"
	}
	return ""
}

func toolInputKey(folded string) string {
	switch folded {
	case "prompt":
		return "prompt"
	case "description":
		return "description"
	case "subagent_type":
		return "subagent_type"
	case "run_in_background":
		return "run_in_background"
	case "isolation":
		return "isolation"
	case "file_path":
		return "file_path"
	case "notebook_path":
		return "notebook_path"
	case "content":
		return "content"
	case "old_string":
		return "old_string"
	case "new_string":
		return "new_string"
	case "replace_all":
		return "replace_all"
	case "command":
		return "command"
	case "dangerouslydisablesandbox":
		return "dangerouslyDisableSandbox"
	case "skill":
		return "skill"
	case "args":
		return "args"
	case "to":
		return "to"
	}
	return ""
}

// checkKeys refuses an object with a key given twice, or with a spelling of
// a known key in other letter case. encoding/json would accept both
// silently (the last duplicate wins, and keys match case-insensitively), so
// a payload could say one thing to orch-hook and another to a reader that
// takes the first key.
func checkKeys(obj []byte, known func(folded string) string) error {
	keys, ok := jsonfast.ObjectKeys(obj)
	var readErr error
	if !ok {
		keys, readErr = tokenKeys(obj)
	}
	seen := make(map[string]bool, len(keys))
	for _, key := range keys {
		if seen[key] {
			return inputErrorf("key %q appears twice; refusing an ambiguous payload", key)
		}
		seen[key] = true
		if canonical := known(foldKey(key)); canonical != "" && canonical != key {
			return inputErrorf("key %q is not %q; refusing a key in another letter case", key, canonical)
		}
	}
	return readErr
}

// tokenKeys lists obj's keys with encoding/json's tokenizer, for what
// jsonfast.ObjectKeys does not read (an escaped key, invalid JSON): the
// keys read before any error, and the error.
func tokenKeys(obj []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, inputErrorf("invalid JSON: %v", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, inputErrorf("invalid JSON: %v", err)
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys, inputErrorf("invalid JSON: %v", err)
		}
	}
	return keys, nil
}

// IsSubagent reports whether the event fired inside a subagent.
func (in *Input) IsSubagent() bool { return in.AgentID != "" }

// foldKey lower-cases a key by Unicode case folding, as encoding/json
// matches keys: "ſ" (U+017F) folds to "s" and the Kelvin sign to "k", which
// strings.ToLower leaves alone.
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		return unicode.ToLower(low)
	}, key)
}
