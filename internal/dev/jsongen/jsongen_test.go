package jsongen

import (
	"encoding/json"
	"strings"
	"testing"
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
