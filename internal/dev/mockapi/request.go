package mockapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Headers Claude Code 2.1.328 sets: the session id on every request, the
// agent id on a subagent's requests only.
const (
	AgentIDHeader   = "X-Claude-Code-Agent-Id"
	SessionIDHeader = "X-Claude-Code-Session-Id"
)

// Request is one recorded HTTP request and what the mock did with it.
type Request struct {
	Seq      int // 1-based arrival order
	Time     time.Time
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
	// Messages is the parsed body of a POST /v1/messages request (nil for
	// other requests or an unparsable body).
	Messages *MessagesRequest
	// AgentID is the x-claude-code-agent-id header ("" on the main thread).
	AgentID string
	// SessionID is the x-claude-code-session-id header.
	SessionID string
	// Conversation is the name of the matched conversation ("" when none
	// matched), Turn the index served (-1 when none).
	Conversation string
	Turn         int
	// Overflow is set when the conversation had no turn left: the default
	// text was served instead.
	Overflow bool
	// Unknown is set for a request the mock does not implement (answered
	// 404).
	Unknown bool
	// Refused is set for a request that arrived after a limit stopped the
	// server (answered 400, not parsed).
	Refused bool
	// Status is the HTTP status answered.
	Status int
	// Served is the assistant message sent back (nil when none).
	Served *Turn
	// ToolUseIDs are the tool_use ids sent back, in block order.
	ToolUseIDs []string
}

// MessagesRequest is the body of POST /v1/messages (only the fields the
// mock looks at; Body keeps the rest).
type MessagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []Message       `json:"messages"`
	Tools     []Tool          `json:"tools"`
	Metadata  json.RawMessage `json:"metadata"`
}

// Tool is one entry of the request's tools list.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Message is one message of the request. Content may be a string on the
// wire; it is always decoded into blocks.
type Message struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// UnmarshalJSON accepts content as a string or an array of blocks.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	blocks, err := decodeContent(raw.Content)
	m.Content = blocks
	return err
}

// ContentBlock is one block of a request message (text, tool_use,
// tool_result, image, thinking, ...).
type ContentBlock struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string         `json:"tool_use_id,omitempty"`
	IsError   bool           `json:"is_error,omitempty"`
	Content   []ContentBlock `json:"-"`
}

// UnmarshalJSON decodes a block; a tool_result's content may be a string or
// an array of blocks.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	type plain ContentBlock
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = ContentBlock(raw.plain)
	blocks, err := decodeContent(raw.Content)
	b.Content = blocks
	return err
}

func decodeContent(raw json.RawMessage) ([]ContentBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []ContentBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []ContentBlock
	err := json.Unmarshal(raw, &blocks)
	return blocks, err
}

// BlockText is the text of a block: its text, or for a tool_result the
// text of its content blocks joined by newlines.
func (b ContentBlock) BlockText() string {
	if b.Type != "tool_result" {
		return b.Text
	}
	var parts []string
	for _, c := range b.Content {
		if c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResult is a tool_result block found in a request.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	Text      string
}

// SystemText is the system prompt (the "system" field's text blocks joined
// by newlines; see SystemTexts for system messages too).
func (r *Request) SystemText() string {
	if r.Messages == nil {
		return ""
	}
	return systemText(r.Messages.System)
}

func systemText(raw json.RawMessage) string {
	blocks, _ := decodeContent(raw)
	var parts []string
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// FirstUserText is the text of the user messages before the first
// assistant message (for a subagent, the Agent call's prompt; for the main
// thread the first prompt, after the CLI's <system-reminder> blocks).
func (r *Request) FirstUserText() string {
	if r.Messages == nil {
		return ""
	}
	var parts []string
	for _, m := range r.Messages.Messages {
		if m.Role == "assistant" {
			break
		}
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if t := b.BlockText(); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// AssistantTurns counts the assistant messages the request holds (a run of
// assistant messages with only "system" messages between them counts
// once): the index of the turn the request asks for.
func (r *Request) AssistantTurns() int {
	if r.Messages == nil {
		return 0
	}
	n, prev := 0, ""
	for _, m := range r.Messages.Messages {
		if m.Role == "system" {
			continue
		}
		if m.Role == "assistant" && prev != "assistant" {
			n++
		}
		prev = m.Role
	}
	return n
}

// SystemTexts are the system prompt's text blocks and the text of every
// message with role "system" (Claude Code 2.1.328 sends its environment
// block and hook additional context as such messages), in order.
func (r *Request) SystemTexts() []string {
	if r.Messages == nil {
		return nil
	}
	blocks, _ := decodeContent(r.Messages.System)
	var out []string
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	for _, m := range r.Messages.Messages {
		if m.Role != "system" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// UserTexts are the text blocks of every user message, in order (not
// tool_result contents; see ToolResults).
func (r *Request) UserTexts() []string {
	if r.Messages == nil {
		return nil
	}
	var out []string
	for _, m := range r.Messages.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// LastUserTexts are the text blocks (user or system role) of the messages
// after the last assistant message: what is new in this request.
func (r *Request) LastUserTexts() []string {
	if r.Messages == nil {
		return nil
	}
	msgs := r.Messages.Messages
	i := len(msgs)
	for i > 0 && msgs[i-1].Role != "assistant" {
		i--
	}
	var out []string
	for _, m := range msgs[i:] {
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// NewText is everything the request adds after its last assistant message
// (the whole conversation when there is none): text blocks of user and
// system messages and tool_result contents, joined by newlines.
func (r *Request) NewText() string {
	if r.Messages == nil {
		return ""
	}
	msgs := r.Messages.Messages
	i := len(msgs)
	for i > 0 && msgs[i-1].Role != "assistant" {
		i--
	}
	var out []string
	for _, m := range msgs[i:] {
		for _, b := range m.Content {
			if t := b.BlockText(); t != "" {
				out = append(out, t)
			}
		}
	}
	return strings.Join(out, "\n")
}

// ToolResults are the tool_result blocks of the request, in order.
func (r *Request) ToolResults() []ToolResult {
	if r.Messages == nil {
		return nil
	}
	var out []ToolResult
	for _, m := range r.Messages.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: b.BlockText()})
			}
		}
	}
	return out
}

// ToolNames are the names in the request's tools list.
func (r *Request) ToolNames() []string {
	if r.Messages == nil {
		return nil
	}
	out := make([]string, 0, len(r.Messages.Tools))
	for _, t := range r.Messages.Tools {
		out = append(out, t.Name)
	}
	return out
}

// HasText reports whether the system prompt, a system message or a user
// text block contains substr (tool results are not searched; see
// ToolResults).
func (r *Request) HasText(substr string) bool {
	for _, t := range r.SystemTexts() {
		if strings.Contains(t, substr) {
			return true
		}
	}
	for _, t := range r.UserTexts() {
		if strings.Contains(t, substr) {
			return true
		}
	}
	return false
}

// String is a one-line summary for logs.
func (r *Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", r.Seq, r.Method, r.Path)
	if r.RawQuery != "" {
		b.WriteString("?" + r.RawQuery)
	}
	fmt.Fprintf(&b, " -> %d", r.Status)
	if r.AgentID != "" {
		fmt.Fprintf(&b, " agent=%s", r.AgentID)
	}
	if r.Messages != nil {
		conv := r.Conversation
		if conv == "" {
			conv = "(unmatched)"
		}
		fmt.Fprintf(&b, " conv=%s turn=%d msgs=%d tools=%d", conv, r.Turn, len(r.Messages.Messages), len(r.Messages.Tools))
		if r.Overflow {
			b.WriteString(" OVERFLOW")
		}
		if r.Served != nil {
			for _, blk := range r.Served.Blocks {
				if blk.isTool() {
					fmt.Fprintf(&b, " [tool %s]", blk.Tool)
				} else {
					fmt.Fprintf(&b, " [text %q]", clip(blk.Text, 40))
				}
			}
		}
		if last := r.LastUserTexts(); len(last) > 0 {
			fmt.Fprintf(&b, " new-user=%q", clip(last[len(last)-1], 60))
		}
	}
	if r.Unknown {
		b.WriteString(" UNKNOWN")
	}
	if r.Refused {
		fmt.Fprintf(&b, " REFUSED (%d bytes)", len(r.Body))
	}
	return b.String()
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
