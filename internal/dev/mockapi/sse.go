package mockapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// The wire format follows the Messages API streaming documentation: each
// event is "event: TYPE\ndata: JSON\n\n", in the order message_start, ping,
// then per content block content_block_start, content_block_delta...,
// content_block_stop, then message_delta (stop_reason, usage) and
// message_stop.

func stopReason(t Turn) string {
	if t.StopReason != "" {
		return t.StopReason
	}
	for _, b := range t.Blocks {
		if b.isTool() {
			return "tool_use"
		}
	}
	return "end_turn"
}

// Token counts are small and fixed-ish on purpose: large input counts would
// make the CLI think its context is full and compact.
func estimateTokens(bodyLen int) int {
	n := bodyLen / 4
	if n > 2000 {
		n = 2000
	}
	if n < 1 {
		n = 1
	}
	return n
}

func outputTokens(t Turn) int {
	n := 1
	for _, b := range t.Blocks {
		n += (len(b.Text) + len(b.Input)) / 4
	}
	return n
}

func usage(inTokens, outTokens int) map[string]any {
	return map[string]any{
		"input_tokens":                inTokens,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
		"output_tokens":               outTokens,
	}
}

// turnUsage is the usage t reports: its scripted Usage, else the
// estimate. start is message_start's (output_tokens 1, as the API sends
// before any output); otherwise the output count is the turn's.
func turnUsage(t Turn, bodyLen int, start bool) map[string]any {
	if u := t.Usage; u != nil {
		out := u.OutputTokens
		if start {
			out = 1
		}
		return map[string]any{
			"input_tokens":                u.InputTokens,
			"cache_creation_input_tokens": u.CacheCreationInputTokens,
			"cache_read_input_tokens":     u.CacheReadInputTokens,
			"output_tokens":               out,
		}
	}
	if start {
		return usage(estimateTokens(bodyLen), 1)
	}
	return usage(estimateTokens(bodyLen), outputTokens(t))
}

// deltaOutputTokens is message_delta's output count.
func deltaOutputTokens(t Turn) int {
	if t.Usage != nil {
		return t.Usage.OutputTokens
	}
	return outputTokens(t)
}

func compactInput(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// message is the non-streaming response body.
func message(id, model string, t Turn, ids []string, bodyLen int) map[string]any {
	content := make([]any, 0, len(t.Blocks))
	for i, b := range t.Blocks {
		if b.isTool() {
			content = append(content, map[string]any{
				"type": "tool_use", "id": ids[i], "name": b.Tool, "input": json.RawMessage(compactInput(b.Input)),
			})
		} else {
			content = append(content, map[string]any{"type": "text", "text": b.Text})
		}
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason(t), "stop_sequence": nil,
		"usage": turnUsage(t, bodyLen, false),
	}
}

func writeStream(w http.ResponseWriter, id, model string, t Turn, ids []string, bodyLen, chunk int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(typ string, data map[string]any) {
		data["type"] = typ
		b, err := json.Marshal(data)
		if err != nil {
			panic(err) // our own maps always marshal
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": turnUsage(t, bodyLen, true),
	}})
	send("ping", map[string]any{})
	for i, b := range t.Blocks {
		if b.isTool() {
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "tool_use", "id": ids[i], "name": b.Tool, "input": map[string]any{},
			}})
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{
				"type": "input_json_delta", "partial_json": "",
			}})
			for _, part := range chunks(string(compactInput(b.Input)), chunk) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{
					"type": "input_json_delta", "partial_json": part,
				}})
			}
		} else {
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{
				"type": "text", "text": "",
			}})
			for _, part := range chunks(b.Text, chunk) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{
					"type": "text_delta", "text": part,
				}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(t), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": deltaOutputTokens(t)},
	})
	send("message_stop", map[string]any{})
}

// chunks splits s into pieces of about n bytes, never inside a UTF-8
// sequence.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"type":"error","error":{"type":"api_error","message":"mockapi: marshal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers with the API's error shape.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": msg},
	})
}
