// Package jsonenc encodes JSON without HTML escaping (the standard
// library's encoder escapes <, > and &, which would make shell lines in
// settings.json and "->" in reasons hard to read) and without the trailing
// newline of json.Encoder.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// Marshal is json.Marshal without HTML escaping (shell lines and "->" stay
// readable). A type with a generated encoder (package jsonfast) is written
// by it, byte for byte the same, without encoding/json's per-type set-up.
func Marshal(v any) ([]byte, error) {
	own, isOwn := v.(json.Marshaler)
	fast, isFast := v.(jsonfast.FastAppender)
	if !isOwn && !isFast {
		return marshalReflect(v)
	}
	// Either way, as encoding/json does it, without building an encoder
	// for the type: null for a nil pointer (a generated encoder would
	// dereference it); a Marshaler's own bytes, compacted (an error goes the
	// long way, for encoding/json's own); else the generated encoder.
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return []byte("null"), nil
	}
	if isOwn {
		if b, err := own.MarshalJSON(); err == nil {
			var buf bytes.Buffer
			if json.Compact(&buf, b) == nil {
				return buf.Bytes(), nil
			}
		}
	} else if b, ok := jsonfast.Append(make([]byte, 0, 512), fast); ok {
		return b, nil
	}
	return marshalReflect(v)
}

// marshalReflect is Marshal by encoding/json.
func marshalReflect(v any) ([]byte, error) {
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
