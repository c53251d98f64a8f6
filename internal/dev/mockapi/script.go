package mockapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// Thread values for Match.Thread.
const (
	ThreadAny  = ""         // any request
	ThreadMain = "main"     // requests without an x-claude-code-agent-id header
	ThreadSub  = "subagent" // requests with an x-claude-code-agent-id header
)

// FileRefPrefix marks a string in a txtar script that is replaced by the
// content of another file of the same archive: "@file:plan.md".
const FileRefPrefix = "@file:"

// Script is what the mock answers: a list of conversations, tried in order,
// and the text served to requests that match none of them.
type Script struct {
	// DefaultText answers requests that match no conversation (title
	// generation, compaction, ...) and turns past a conversation's end.
	// Empty means "OK.".
	DefaultText   string          `json:"default_text,omitempty"`
	Conversations []*Conversation `json:"conversations"`
}

// Conversation is one scripted thread (the main session, or one subagent).
type Conversation struct {
	Name  string `json:"name"`
	Match Match  `json:"match"`
	// Turns are served by index: a request whose messages already hold k
	// assistant messages gets Turns[k].
	Turns []Turn `json:"turns"`
}

// Match says which requests belong to a conversation. Every field that is
// set must hold; at least one of UserContains, SystemContains and AgentID
// must be set.
type Match struct {
	// UserContains must occur in the first user message (all user text
	// before the first assistant message). For a subagent that is the
	// prompt of the Agent call that launched it.
	UserContains string `json:"user_contains,omitempty"`
	// SystemContains must occur in the system prompt (for a subagent, it
	// holds the agent's markdown body).
	SystemContains string `json:"system_contains,omitempty"`
	// AgentID must equal the x-claude-code-agent-id request header.
	AgentID string `json:"agent_id,omitempty"`
	// Thread restricts the match to the main thread or to subagents (see
	// ThreadMain, ThreadSub); empty matches both.
	Thread string `json:"thread,omitempty"`
}

// Turn is one assistant message.
type Turn struct {
	Blocks []Block
	// StopReason overrides the stop reason ("tool_use" when the turn holds
	// a tool_use block, else "end_turn").
	StopReason string
	// When, if set, serves this turn to a request whose new content (what
	// follows its last assistant message: tool results, hook context, a
	// notification) contains the text, whatever the turn's index. When
	// several match, the last one listed wins (the furthest step). This
	// makes a script robust to how background completions interleave.
	When string
	// Usage, if set, is the token usage reported for this turn instead of
	// the estimate (see Usage).
	Usage *Usage
}

// Usage is the token usage a turn reports, as the API names it. The
// input and cache counts go in message_start, the output count in
// message_delta (and all four in a non-streaming reply). Keep the input
// counts well below the model's context window, or the CLI compacts.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Block is one content block of an assistant message: a text block when
// Tool is empty, else a tool_use block.
type Block struct {
	Text string `json:"text,omitempty"`
	// Tool is the tool name of a tool_use block ("Bash", "Agent", ...).
	Tool string `json:"tool,omitempty"`
	// Input is the tool input, a JSON object.
	Input json.RawMessage `json:"input,omitempty"`
	// ID is the tool_use id; empty means generated (unique per server).
	ID string `json:"id,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Text: s} }

// ToolUse returns a tool_use block; input is marshalled to JSON (a string
// or []byte is taken as JSON text). It panics on a marshal error.
func ToolUse(name string, input any) Block {
	var raw []byte
	switch v := input.(type) {
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	case json.RawMessage:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("mockapi.ToolUse(%s): %v", name, err))
		}
		raw = b
	}
	return Block{Tool: name, Input: raw}
}

// NewTurn returns a turn holding blocks.
func NewTurn(blocks ...Block) Turn { return Turn{Blocks: blocks} }

func (b Block) isTool() bool { return b.Tool != "" }

// UnmarshalJSON accepts a turn as an array of blocks or as an object
// {"blocks": [...], "stop_reason": "...", "when": "...", "usage": {...}}.
func (t *Turn) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if len(data) > 0 && data[0] == '[' {
		t.StopReason = ""
		return dec.Decode(&t.Blocks)
	}
	var obj struct {
		Blocks     []Block `json:"blocks"`
		StopReason string  `json:"stop_reason"`
		When       string  `json:"when"`
		Usage      *Usage  `json:"usage"`
	}
	if err := dec.Decode(&obj); err != nil {
		return err
	}
	t.Blocks, t.StopReason, t.When, t.Usage = obj.Blocks, obj.StopReason, obj.When, obj.Usage
	return nil
}

// MarshalJSON writes a turn as an array of blocks unless it has a
// StopReason, a When or a Usage.
func (t Turn) MarshalJSON() ([]byte, error) {
	if t.StopReason == "" && t.When == "" && t.Usage == nil {
		return json.Marshal(t.Blocks)
	}
	return json.Marshal(struct {
		Blocks     []Block `json:"blocks"`
		StopReason string  `json:"stop_reason,omitempty"`
		When       string  `json:"when,omitempty"`
		Usage      *Usage  `json:"usage,omitempty"`
	}{t.Blocks, t.StopReason, t.When, t.Usage})
}

// Validate checks the script: unique non-empty conversation names, a match
// criterion per conversation, non-empty turns, tool inputs that are JSON
// objects, and tool_use ids unique within a turn.
func (s *Script) Validate() error {
	if s == nil {
		return errors.New("mockapi: nil script")
	}
	var errs []error
	seen := map[string]bool{}
	for i, c := range s.Conversations {
		if c == nil {
			errs = append(errs, fmt.Errorf("conversation %d: nil", i))
			continue
		}
		where := fmt.Sprintf("conversation %q", c.Name)
		if c.Name == "" {
			where = fmt.Sprintf("conversation %d", i)
			errs = append(errs, fmt.Errorf("%s: no name", where))
		} else if seen[c.Name] {
			errs = append(errs, fmt.Errorf("%s: duplicate name", where))
		}
		seen[c.Name] = true
		m := c.Match
		if m.UserContains == "" && m.SystemContains == "" && m.AgentID == "" {
			errs = append(errs, fmt.Errorf("%s: match needs user_contains, system_contains or agent_id", where))
		}
		switch m.Thread {
		case ThreadAny, ThreadMain, ThreadSub:
		default:
			errs = append(errs, fmt.Errorf("%s: thread %q is not %q or %q", where, m.Thread, ThreadMain, ThreadSub))
		}
		if len(c.Turns) == 0 {
			errs = append(errs, fmt.Errorf("%s: no turns", where))
		}
		for ti, t := range c.Turns {
			if len(t.Blocks) == 0 {
				errs = append(errs, fmt.Errorf("%s turn %d: no blocks", where, ti))
			}
			ids := map[string]bool{}
			for bi, b := range t.Blocks {
				bw := fmt.Sprintf("%s turn %d block %d", where, ti, bi)
				if !b.isTool() {
					if b.Text == "" {
						errs = append(errs, fmt.Errorf("%s: needs text or tool", bw))
					}
					if len(b.Input) > 0 || b.ID != "" {
						errs = append(errs, fmt.Errorf("%s: input or id without tool", bw))
					}
					continue
				}
				if b.Text != "" {
					errs = append(errs, fmt.Errorf("%s: both text and tool (use two blocks)", bw))
				}
				in := bytes.TrimSpace(b.Input)
				if len(in) == 0 {
					errs = append(errs, fmt.Errorf("%s: tool %s has no input (use {})", bw, b.Tool))
				} else if in[0] != '{' || !json.Valid(in) {
					errs = append(errs, fmt.Errorf("%s: tool %s input is not a JSON object", bw, b.Tool))
				}
				if b.ID != "" {
					if ids[b.ID] {
						errs = append(errs, fmt.Errorf("%s: duplicate tool_use id %q", bw, b.ID))
					}
					ids[b.ID] = true
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("mockapi: invalid script: %w", errors.Join(errs...))
	}
	return nil
}

// Conversation returns the conversation named name, or nil.
func (s *Script) Conversation(name string) *Conversation {
	for _, c := range s.Conversations {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ParseJSON parses a script written as one JSON document (the Script
// struct: {"default_text": ..., "conversations": [...]}) and validates it.
func ParseJSON(data []byte) (*Script, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mockapi: parse script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// ParseTxtar parses a script written as a txtar archive:
//
//   - the archive comment is free text (describe the scenario there);
//   - "default.txt" (optional) is the DefaultText, trailing newline removed;
//   - each "NAME.conv.json" is one conversation named NAME, in archive
//     order: {"match": {...}, "turns": [[block, ...], ...]};
//   - any other file is an attachment: a JSON string anywhere in a
//     conversation that is exactly "@file:FILENAME" is replaced by that
//     file's content (use it for Write contents, long prompts, reports).
func ParseTxtar(data []byte) (*Script, error) {
	ar := txtar.Parse(data)
	files := map[string][]byte{}
	for _, f := range ar.Files {
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("mockapi: txtar: duplicate file %q", f.Name)
		}
		files[f.Name] = f.Data
	}
	s := &Script{}
	if d, ok := files["default.txt"]; ok {
		s.DefaultText = strings.TrimSuffix(string(d), "\n")
	}
	for _, f := range ar.Files {
		name, ok := strings.CutSuffix(f.Name, ".conv.json")
		if !ok {
			continue
		}
		var raw any
		rd := json.NewDecoder(bytes.NewReader(f.Data))
		rd.UseNumber()
		if err := rd.Decode(&raw); err != nil {
			return nil, fmt.Errorf("mockapi: txtar %s: %w", f.Name, err)
		}
		raw, err := resolveRefs(raw, files)
		if err != nil {
			return nil, fmt.Errorf("mockapi: txtar %s: %w", f.Name, err)
		}
		resolved, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("mockapi: txtar %s: %w", f.Name, err)
		}
		c := &Conversation{}
		dec := json.NewDecoder(bytes.NewReader(resolved))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c); err != nil {
			return nil, fmt.Errorf("mockapi: txtar %s: %w", f.Name, err)
		}
		if c.Name != "" && c.Name != name {
			return nil, fmt.Errorf("mockapi: txtar %s: name %q differs from the file name", f.Name, c.Name)
		}
		c.Name = name
		s.Conversations = append(s.Conversations, c)
	}
	if len(s.Conversations) == 0 {
		return nil, errors.New("mockapi: txtar: no NAME.conv.json file")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

func resolveRefs(v any, files map[string][]byte) (any, error) {
	switch x := v.(type) {
	case string:
		name, ok := strings.CutPrefix(x, FileRefPrefix)
		if !ok {
			return x, nil
		}
		data, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%s%s: no such file in the archive", FileRefPrefix, name)
		}
		return string(data), nil
	case []any:
		for i := range x {
			r, err := resolveRefs(x[i], files)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case map[string]any:
		for k := range x {
			r, err := resolveRefs(x[k], files)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	}
	return v, nil
}

// Load reads a script file: ".txtar" files with ParseTxtar, ".json" files
// with ParseJSON.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mockapi: %w", err)
	}
	var s *Script
	switch filepath.Ext(path) {
	case ".txtar":
		s, err = ParseTxtar(data)
	case ".json":
		s, err = ParseJSON(data)
	default:
		return nil, fmt.Errorf("mockapi: %s: want a .txtar or .json script", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
