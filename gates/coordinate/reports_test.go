package coordinate

import (
	"slices"
	"strings"
	"testing"
)

// TestReportPathsFollowTheReports: a verified report at another name takes
// the place of the pre-calculated path with its number, else of the first
// one not yet verified; report_paths then names files that exist.
func TestReportPathsFollowTheReports(t *testing.T) {
	c := &Workflow{Paths: Paths{ReportPaths: []string{"r/001_a.md", "r/002_b.md"}}}
	c.noteReport("r/002_other.md")
	c.noteReport("r/002_other.md") // twice: once
	if want := []string{"r/001_a.md", "r/002_other.md"}; !slices.Equal(c.Paths.ReportPaths, want) {
		t.Fatalf("after 002_other.md: %v, want %v", c.Paths.ReportPaths, want)
	}
	c.noteReport("r/notes.md")
	if want := []string{"r/notes.md", "r/002_other.md"}; !slices.Equal(c.Paths.ReportPaths, want) {
		t.Fatalf("after notes.md: %v, want %v", c.Paths.ReportPaths, want)
	}
	c.noteReport("r/003_c.md")
	if want := []string{"r/notes.md", "r/002_other.md", "r/003_c.md"}; !slices.Equal(c.Paths.ReportPaths, want) || len(c.Reports) != 3 {
		t.Fatalf("after 003_c.md: %v (reports %v)", c.Paths.ReportPaths, c.Reports)
	}
	c = &Workflow{Paths: Paths{ReportPaths: []string{"r/001_a.md"}}}
	c.noteReport("r/001_a.md")
	if !slices.Equal(c.Paths.ReportPaths, []string{"r/001_a.md"}) {
		t.Errorf("the pre-calculated path itself: %v", c.Paths.ReportPaths)
	}
}

// TestReportMetadata: a research worker's metadata comes from its report.
func TestReportMetadata(t *testing.T) {
	text := "# Caching patterns\n\nLRU with a TTL fits the\nsession cache.\n\nMore prose.\n\n```\n# not a heading\n```\n## Key findings\n- LRU with TTL\n* write-through\nNot a finding line.\n## Other\n- not a finding\n"
	md := reportMetadata(text)
	if md.Title != "Caching patterns" || md.Summary != "LRU with a TTL fits the session cache." || !slices.Equal(md.KeyFindings, []string{"LRU with TTL", "write-through"}) {
		t.Errorf("reportMetadata = %+v", md)
	}
	long := "# T\n" + strings.Repeat("word ", 80)
	if got := reportMetadata(long).Summary; len(strings.Fields(got)) != 51 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long first paragraph is clipped to 50 words: %q", got)
	}
}
