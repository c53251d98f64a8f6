package app

import (
	"bytes"
	"testing"
)

// A content is read back from a record as it was read: text that starts
// with "base64:" (a plan file may) included, whether or not the rest
// decodes.
func TestBlobTextRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain text\n", "base64:aGVsbG8=", "base64:not base64 at all", "base64:", "\xff\xfe binary", "Base64:x"} {
		got, err := textBlob(blobText([]byte(s)))
		if err != nil || !bytes.Equal(got, []byte(s)) {
			t.Errorf("%q: read back as %q (%v)", s, got, err)
		}
	}
}
