package state

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tstSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestHashProjectFile(t *testing.T) {
	root, outside := tstConfineDirs(t)
	if err := os.MkdirAll(filepath.Join(root, "specs", "001_x", "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(root, "specs", "001_x", "reports", "001_a.md")
	if err := os.WriteFile(report, []byte("# Findings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := tstSHA("# Findings\n")
	for _, p := range []string{report, "specs/001_x/reports/001_a.md", "specs/001_x/../001_x/reports/001_a.md"} {
		rel, sum, err := HashProjectFile(root, p)
		if err != nil || rel != "specs/001_x/reports/001_a.md" || sum != want {
			t.Errorf("HashProjectFile(%q) = %q, %q, %v; want the report's relative path and %s", p, rel, sum, err, want)
		}
	}

	// A symlinked directory inside the project resolves to its target: the
	// record and the report name one file.
	tstSymlink(t, filepath.Join(root, "specs", "001_x"), filepath.Join(root, "topic"))
	if rel, sum, err := HashProjectFile(root, "topic/reports/001_a.md"); err != nil || rel != "specs/001_x/reports/001_a.md" || sum != want {
		t.Errorf("through a symlinked directory: %q, %q, %v", rel, sum, err)
	}

	// Refused: outside (by .. and by a link), missing, a directory, too
	// large.
	if err := os.WriteFile(filepath.Join(outside, "x.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tstSymlink(t, filepath.Join(outside, "x.md"), filepath.Join(root, "specs", "001_x", "reports", "out.md"))
	big := filepath.Join(root, "big.md")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxHashBytes+1); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"../outside/x.md":                  "is outside the project",
		"specs/001_x/reports/out.md":       "is outside the project",
		"specs/001_x/reports/002_nope.md":  "no such file",
		"specs/001_x/reports":              "is not a regular file",
		"big.md":                           "is larger than",
		strings.Repeat("a/", MaxPathLen/2): "is outside the project",
	}
	for p, want := range cases {
		_, sum, err := HashProjectFile(root, p)
		if err == nil || sum != "" || !strings.Contains(err.Error(), want) {
			t.Errorf("HashProjectFile(%q) = sum %q, error %v; want an error containing %q", clipPath(p), sum, err, want)
		}
	}

	// The content changes: so does the hash; a hard link has its target's.
	if err := os.WriteFile(report, []byte("# Findings, edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, sum, _ := HashProjectFile(root, report); sum != tstSHA("# Findings, edited\n") {
		t.Errorf("after an edit: sum %s, want the new content's", sum)
	}
	link := filepath.Join(root, "specs", "001_x", "reports", "002_b.md")
	if err := os.Link(report, link); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	if rel, sum, _ := HashProjectFile(root, link); rel != "specs/001_x/reports/002_b.md" || sum != tstSHA("# Findings, edited\n") {
		t.Errorf("hard link: %q, %s; want its own path and the target's hash", rel, sum)
	}
}

func clipPath(p string) string {
	if len(p) > 40 {
		return p[:40] + "..."
	}
	return p
}
