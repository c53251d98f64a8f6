package jsonfast

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FastAppender is a type with a generated encoder.
type FastAppender interface {
	// FastAppend appends the receiver's JSON, byte for byte what
	// encoding/json writes without HTML escaping, and marks e failed on
	// a value it cannot write so (a time out of range, a NaN).
	FastAppend(e *Encoder)
}

// Encoder builds one JSON text.
type Encoder struct {
	B   []byte
	bad bool
}

// Append is jsonenc.Marshal's fast path: v's JSON, and whether it was
// written (false: encode it with encoding/json).
func Append(b []byte, v FastAppender) ([]byte, bool) {
	e := &Encoder{B: b}
	v.FastAppend(e)
	return e.B, !e.bad
}

// Byte appends c.
func (e *Encoder) Byte(c byte) { e.B = append(e.B, c) }

// Key appends "k": preceded by a comma unless first.
func (e *Encoder) Key(k string, first bool) {
	if !first {
		e.B = append(e.B, ',')
	}
	e.B = AppendString(e.B, k)
	e.B = append(e.B, ':')
}

// String appends s quoted.
func (e *Encoder) String(s string) { e.B = AppendString(e.B, s) }

// Int appends n.
func (e *Encoder) Int(n int64) { e.B = strconv.AppendInt(e.B, n, 10) }

// Uint appends n.
func (e *Encoder) Uint(n uint64) { e.B = strconv.AppendUint(e.B, n, 10) }

// Bool appends true or false.
func (e *Encoder) Bool(v bool) { e.B = strconv.AppendBool(e.B, v) }

// Null appends null.
func (e *Encoder) Null() { e.B = append(e.B, "null"...) }

// Float appends f as encoding/json writes a float64.
func (e *Encoder) Float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.bad = true
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(e.B)
	e.B = strconv.AppendFloat(e.B, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(e.B) - start
		if n >= 4 && e.B[len(e.B)-4] == 'e' && e.B[len(e.B)-3] == '-' && e.B[len(e.B)-2] == '0' {
			e.B[len(e.B)-2] = e.B[len(e.B)-1]
			e.B = e.B[:len(e.B)-1]
		}
	}
}

// Raw appends a json.RawMessage as encoding/json does: null when nil,
// else compacted (and failed if it is not valid JSON).
func (e *Encoder) Raw(raw []byte) {
	if raw == nil {
		e.Null()
		return
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		e.bad = true
		return
	}
	e.B = append(e.B, buf.Bytes()...)
}

// Time appends t as time.Time's MarshalJSON does.
func (e *Encoder) Time(t time.Time) {
	b, err := t.MarshalJSON()
	if err != nil {
		e.bad = true
		return
	}
	e.B = append(e.B, b...)
}

// AppendString quotes s as encoding/json does without HTML escaping:
// invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// IntKey appends an integer map key, quoted as encoding/json quotes it.
func (e *Encoder) IntKey(n int64) {
	e.B = append(e.B, '"')
	e.B = strconv.AppendInt(e.B, n, 10)
	e.B = append(e.B, '"')
}

// SortedKeys are m's keys in the order encoding/json writes them.
func SortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SortedIntKeys are m's keys in the order encoding/json writes them: by
// their decimal text, not their value.
func SortedIntKeys[K integer, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int {
		return strings.Compare(strconv.FormatInt(int64(a), 10), strconv.FormatInt(int64(b), 10))
	})
	return keys
}
