// Package jsonenc encodes JSON without HTML escaping (the standard
// library's encoder escapes <, > and &, which would make shell lines in
// settings.json and "->" in reasons hard to read) and without the trailing
// newline of json.Encoder.
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
