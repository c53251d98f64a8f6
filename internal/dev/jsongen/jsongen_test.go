package jsongen

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// splitList is a slice with its own UnmarshalJSON, as
// coordinate.FailureList: encoding/json calls it for the member's value
// (null included), so the generated decoder must too.
type splitList []string

func (l *splitList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = strings.Split(s, ";")
	return nil
}

// splitMap is a map with its own UnmarshalJSON.
type splitMap map[string]int

func (m *splitMap) UnmarshalJSON(b []byte) error {
	*m = splitMap{string(b): 1}
	return nil
}

type customMembers struct {
	List  splitList   `json:"list"`
	Map   splitMap    `json:"map"`
	PList *splitList  `json:"plist"`
	Lists []splitList `json:"lists"`
}

type textKey string

func (k *textKey) UnmarshalText(b []byte) error { *k = textKey(strings.ToLower(string(b))); return nil }

type textKeyed struct {
	M map[textKey]int `json:"m"`
}

type ownUnmarshal struct {
	A string `json:"a"`
}

func (o *ownUnmarshal) UnmarshalJSON(b []byte) error { o.A = "own"; return nil }

// TestGenerateCustomUnmarshalers: a member whose type has its own
// UnmarshalJSON is decoded by it whatever the type's kind (a slice or a
// map too, not only a struct), and what jsongen cannot write as
// encoding/json reads it (a map key with UnmarshalText, a root with its
// own UnmarshalJSON) is refused.
func TestGenerateCustomUnmarshalers(t *testing.T) {
	src, err := Generate(customMembers{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"jsonfast.DecCustom[splitList](d, &v.List)",
		"jsonfast.DecCustom[splitMap](d, &v.Map)",
		"jsonfast.DecPtr(d, &v.PList, jsonfast.DecCustom[splitList])",
		"jsonfast.DecSlice(d, &v.Lists, jsonfast.DecCustom[splitList])",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the generated decoder lacks %s:\n%s", want, src)
		}
	}
	if _, err := Generate(textKeyed{}); err == nil {
		t.Errorf("a map whose key type has UnmarshalText was generated (encoding/json decodes its keys with it)")
	}
	if _, err := Generate(ownUnmarshal{}); err == nil {
		t.Errorf("a root with its own UnmarshalJSON was generated (FastDecode would bypass it)")
	}
}

// zeroByPointer is zero by its own IsZero, on a pointer receiver (which
// encoding/json's omitzero calls too).
type zeroByPointer int

func (z *zeroByPointer) IsZero() bool { return *z < 0 }

type omitZeroMembers struct {
	When  *time.Time    `json:"when,omitzero"`
	F     float64       `json:"f,omitzero"`
	Z     zeroByPointer `json:"z,omitzero"`
	Stamp time.Time     `json:"stamp,omitzero"`
}

// TestGenerateOmitZero: omitzero writes a member unless encoding/json's
// omitzero would skip it: a nil pointer is skipped (not dereferenced by a
// promoted IsZero), -0.0 is not zero (reflect.Value.IsZero), and an
// IsZero method on the pointer is called.
func TestGenerateOmitZero(t *testing.T) {
	src, err := Generate(omitZeroMembers{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"if v.When != nil && !v.When.IsZero() {",
		"if v.F != 0 || math.Signbit(float64(v.F)) {",
		"if !v.Z.IsZero() {",
		"if !v.Stamp.IsZero() {",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the generated encoder lacks %s:\n%s", want, src)
		}
	}
}
