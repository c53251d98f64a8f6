// Package jsonenc encodes JSON with the standard library, without HTML
// escaping. orch-hook decodes with goccy/go-json, but it encodes each type
// about once per process (a hook call is a fresh process), and goccy
// compiles a codec for every type on first use: measured by
// internal/procbench, that first encode of the workflow cost ~0.5 ms,
// against tens of µs for encoding/json's reflection.
package jsonenc

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping (shell lines and "->" stay
// readable).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Indent is Marshal with two-space indentation, for files and output people
// read.
func Indent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
