package jsonfast

import (
	"encoding/json"
	"time"
	"unsafe"
)

// The generated codecs call these, one per member: each decodes the next
// value into *p, or appends *p, as encoding/json does for p's type. The
// element functions of slices, maps and pointers have the same shapes.

type integer interface {
	~int | ~int64 | ~int32 | ~int16 | ~int8
}

type unsigned interface {
	~uint | ~uint64 | ~uint32 | ~uint16 | ~uint8
}

// DecString decodes a string; null leaves it as it is.
func DecString[T ~string](d *Decoder, p *T) {
	if !d.Null() {
		*p = T(d.String())
	}
}

// DecBool decodes a boolean; null leaves it as it is.
func DecBool[T ~bool](d *Decoder, p *T) {
	if !d.Null() {
		*p = T(d.Bool())
	}
}

// DecInt decodes an integer that fits T; null leaves it as it is.
func DecInt[T integer](d *Decoder, p *T) {
	if !d.Null() {
		*p = T(d.Int(int(unsafe.Sizeof(*p)) * 8))
	}
}

// DecUint decodes an unsigned integer that fits T; null leaves it as it is.
func DecUint[T unsigned](d *Decoder, p *T) {
	if !d.Null() {
		*p = T(d.Uint(int(unsafe.Sizeof(*p)) * 8))
	}
}

// DecFloat decodes a float64; null leaves it as it is.
func DecFloat[T ~float64](d *Decoder, p *T) {
	if !d.Null() {
		*p = T(d.Float(64))
	}
}

// DecTime decodes a time as time.Time's UnmarshalJSON; null leaves it.
func DecTime(d *Decoder, p *time.Time) {
	if !d.Null() {
		*p = d.Time()
	}
}

// DecRaw keeps the value's bytes, null included.
func DecRaw(d *Decoder, p *json.RawMessage) { *p = d.Raw() }

// DecStruct decodes a struct with a generated decoder.
func DecStruct[T any, P interface {
	*T
	FastDecoder
}](d *Decoder, p *T) {
	P(p).FastDecode(d)
}

// DecCustom passes the value to T's own UnmarshalJSON, as encoding/json does.
func DecCustom[T any, P interface {
	*T
	json.Unmarshaler
}](d *Decoder, p *T) {
	if err := P(p).UnmarshalJSON(d.RawNoCopy()); err != nil {
		d.bad = true
	}
}

// DecPtr decodes a pointer: null is nil, anything else a new value.
func DecPtr[T any](d *Decoder, p **T, elem func(*Decoder, *T)) {
	if d.Null() {
		*p = nil
		return
	}
	*p = new(T)
	elem(d, *p)
}

// DecPtrStruct is DecPtr of DecStruct.
func DecPtrStruct[T any, P interface {
	*T
	FastDecoder
}](d *Decoder, p **T) {
	if d.Null() {
		*p = nil
		return
	}
	*p = new(T)
	P(*p).FastDecode(d)
}

// DecSlice decodes an array into a new slice (empty, not nil, for []);
// null is nil.
func DecSlice[S ~[]E, E any](d *Decoder, p *S, elem func(*Decoder, *E)) {
	if d.Null() {
		*p = nil
		return
	}
	if !d.Array() {
		return
	}
	s := make(S, 0)
	for d.More() {
		var x E
		elem(d, &x)
		s = append(s, x)
	}
	*p = s
}

// DecMap decodes an object into a new map (the last of a key given twice
// wins, as in encoding/json); null is nil.
func DecMap[M ~map[K]V, K ~string, V any](d *Decoder, p *M, elem func(*Decoder, *V)) {
	decMap(d, p, func(k []byte) K { return K(k) }, elem)
}

// DecIntMap is DecMap for integer keys, which encoding/json writes as
// decimal strings.
func DecIntMap[M ~map[K]V, K integer, V any](d *Decoder, p *M, elem func(*Decoder, *V)) {
	decMap(d, p, func(k []byte) K {
		var n K
		return K(d.IntKey(k, int(unsafe.Sizeof(n))*8))
	}, elem)
}

func decMap[M ~map[K]V, K comparable, V any](d *Decoder, p *M, key func([]byte) K, elem func(*Decoder, *V)) {
	if d.Null() {
		*p = nil
		return
	}
	if !d.Object() {
		return
	}
	m := make(M)
	for d.More() {
		k := key(d.Key())
		var x V
		elem(d, &x)
		m[k] = x
	}
	*p = m
}

// EncString appends a string.
func EncString[T ~string](e *Encoder, p *T) { e.String(string(*p)) }

// EncBool appends a boolean.
func EncBool[T ~bool](e *Encoder, p *T) { e.Bool(bool(*p)) }

// EncInt appends an integer.
func EncInt[T integer](e *Encoder, p *T) { e.Int(int64(*p)) }

// EncUint appends an unsigned integer.
func EncUint[T unsigned](e *Encoder, p *T) { e.Uint(uint64(*p)) }

// EncFloat appends a float64.
func EncFloat[T ~float64](e *Encoder, p *T) { e.Float(float64(*p)) }

// EncTime appends a time as time.Time's MarshalJSON.
func EncTime(e *Encoder, p *time.Time) { e.Time(*p) }

// EncRaw appends a json.RawMessage.
func EncRaw(e *Encoder, p *json.RawMessage) { e.Raw(*p) }

// EncStruct appends a struct with a generated encoder.
func EncStruct[T any, P interface {
	*T
	FastAppender
}](e *Encoder, p *T) {
	P(p).FastAppend(e)
}

// EncPtr appends a pointer: null for nil.
func EncPtr[T any](e *Encoder, p **T, elem func(*Encoder, *T)) {
	if *p == nil {
		e.Null()
		return
	}
	elem(e, *p)
}

// EncPtrStruct is EncPtr of EncStruct.
func EncPtrStruct[T any, P interface {
	*T
	FastAppender
}](e *Encoder, p **T) {
	if *p == nil {
		e.Null()
		return
	}
	P(*p).FastAppend(e)
}

// EncSlice appends a slice: null for nil.
func EncSlice[S ~[]E, E any](e *Encoder, p *S, elem func(*Encoder, *E)) {
	s := *p
	if s == nil {
		e.Null()
		return
	}
	e.Byte('[')
	for i := range s {
		if i > 0 {
			e.Byte(',')
		}
		elem(e, &s[i])
	}
	e.Byte(']')
}

// EncMap appends a map with its keys sorted: null for nil.
func EncMap[M ~map[K]V, K ~string, V any](e *Encoder, p *M, elem func(*Encoder, *V)) {
	if *p == nil {
		e.Null()
		return
	}
	encMap(e, *p, SortedKeys(*p), func(k K) { e.String(string(k)) }, elem)
}

// EncIntMap appends a map with integer keys, sorted as encoding/json
// sorts them (by their text): null for nil.
func EncIntMap[M ~map[K]V, K integer, V any](e *Encoder, p *M, elem func(*Encoder, *V)) {
	if *p == nil {
		e.Null()
		return
	}
	encMap(e, *p, SortedIntKeys(*p), func(k K) { e.IntKey(int64(k)) }, elem)
}

func encMap[M ~map[K]V, K comparable, V any](e *Encoder, m M, keys []K, key func(K), elem func(*Encoder, *V)) {
	e.Byte('{')
	for i, k := range keys {
		if i > 0 {
			e.Byte(',')
		}
		key(k)
		e.Byte(':')
		v := m[k]
		elem(e, &v)
	}
	e.Byte('}')
}
