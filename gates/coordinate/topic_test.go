package coordinate

import (
	"reflect"
	"strings"
	"testing"
)

func TestTopicName(t *testing.T) {
	cases := []struct {
		desc, want string
	}{
		// Examples from the README ("Topic names", "Scope detection").
		{"Research the /home/user/nvim/docs directory", "nvim_docs_directory"},
		{"fix the token refresh bug", "fix_token_refresh_bug"},
		// Filler prefixes (the leading run only) and stopwords.
		{"Research authentication patterns", "authentication_patterns"},
		{"Research and plan authentication system", "authentication_system"},
		{"Please carefully research how we could add caching", "add_caching"},
		{"Compare research tools", "compare_research_tools"},
		{"Investigate why the login fails", "login_fails"},
		{"Implement OAuth login", "implement_oauth_login"},
		{"RESEARCH Authentication   Patterns", "authentication_patterns"},
		// Paths: the last meaningful components, in place.
		{"Research /home/user/.config/nvim/lua/plugins", "nvim_lua_plugins"},
		{"Fix the bug in src/auth/token.go", "fix_bug_auth_token"},
		{"Review /Users/alice/projects/shop/README.md please", "shop_readme_please"},
		{"Revise specs/042_auth/plans/001_auth_plan.md", "revise_auth_plan"}, // auth, auth_plan: the repeat is kept once
		{"Research ./docs/", "docs"},
		{"Research ~/notes/zettel", "notes_zettel"},
		{`Analyze C:\Users\bob\work\billing\invoices`, "work_billing_invoices"},
		{"Research https://example.com/guides/oauth", "example_com_guides_oauth"},
		{"Research the /home/user/research/notes", "research_notes"}, // words from a path are never fillers
		{"Support TCP/IP and/or UDP", "support_tcp_ip_udp"},
		// Paths with spaces: quoted, or with escaped spaces.
		{`Research the "/home/user/My Projects/web app/docs" layout`, "projects_web_app_docs_layout"},
		{`Research '/srv/Shared Files/q3 reports' quickly`, "shared_files_q3_reports_quickly"},
		{"Research the `/opt/Data Sets/raw` folder", "data_sets_raw_folder"},
		{`Research /home/user/My\ Documents/notes today`, "documents_notes_today"},
		{"Research /home/user/My Documents/notes", "documents_notes"}, // unquoted: two paths, same words
		// Punctuation.
		{"Fix: the (token) refresh-bug!!!", "fix_token_refresh_bug"},
		{"Why does `make test` hang??", "make_test_hang"},
		{"v2.0 API: rate-limits & quotas", "v2_0_api_rate_limits_quotas"},
		{"fix fix fix the bug", "fix_bug"},
		// Unicode: Latin diacritics fold, other scripts drop out.
		{"Réviser la documentation du café", "reviser_la_documentation_du_cafe"},
		{"Straße und Größe", "strasse_und_grosse"},
		{"Research 认证 patterns", "patterns"},
		{"🚀 launch the rocket", "launch_rocket"},
		// Only stopwords, fillers or nothing: the fallback.
		{"the and of to in", "topic"},
		{"Please research the", "topic"},
		{"", "topic"},
		{"   \t\n", "topic"},
		{"!!! ??? ...", "topic"},
		{"研究", "topic"},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			got := TopicName(tc.desc)
			if got != tc.want {
				t.Errorf("TopicName(%q) = %q, want %q", tc.desc, got, tc.want)
			}
			checkTopicShape(t, got)
		})
	}
}

// checkTopicShape: snake_case of a-z0-9, no empty words, at most 50 bytes.
func checkTopicShape(t *testing.T, name string) {
	t.Helper()
	if name == "" || len(name) > MaxTopicNameLen {
		t.Errorf("%q: length %d not in 1..%d", name, len(name), MaxTopicNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			t.Errorf("%q has %q", name, r)
		}
	}
	if strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_") || strings.Contains(name, "__") {
		t.Errorf("%q has an empty word", name)
	}
}

func TestTopicNameLong(t *testing.T) {
	long := "Research the interaction between the authentication middleware, the session store, the rate limiter and the audit logging pipeline across every service"
	got := TopicName(long)
	if want := "interaction_between_authentication_middleware"; got != want {
		t.Errorf("long description: %q, want %q", got, want)
	}
	checkTopicShape(t, got)
	// Cut on a word boundary: every word is whole.
	full := strings.Fields("interaction between authentication middleware session store rate limiter")
	for _, w := range strings.Split(got, "_") {
		found := false
		for _, f := range full {
			found = found || f == w
		}
		if !found {
			t.Errorf("word %q was cut", w)
		}
	}
	// Exactly 50 fits.
	fifty := "authentication patterns create implementation plan" // 50 with underscores
	if got := TopicName(fifty); got != "authentication_patterns_create_implementation_plan" || len(got) != 50 {
		t.Errorf("50 characters: %q (%d)", got, len(got))
	}
	// One word longer than the limit is cut at the limit.
	word := strings.Repeat("abcdefghij", 7)
	if got := TopicName("research " + word + " next"); got != word[:50] {
		t.Errorf("long word: %q", got)
	}
	// A very long description is still cheap and bounded.
	huge := strings.Repeat("distributed tracing pipeline ", 5000)
	if got := TopicName(huge); len(got) > MaxTopicNameLen || !strings.HasPrefix(got, "distributed_tracing_pipeline_distributed") {
		t.Errorf("huge description: %q", got)
	}
	// Long path components.
	p := "/home/user/" + strings.Repeat("very-long-directory-name/", 4) + "final"
	checkTopicShape(t, TopicName("Research "+p))
}

func TestTopicNameDeterministic(t *testing.T) {
	for _, d := range []string{"Research the /home/user/nvim/docs directory", "fix the token refresh bug", "Réviser 认证 /a/b c"} {
		first := TopicName(d)
		for range 10 {
			if got := TopicName(d); got != first {
				t.Fatalf("TopicName(%q) changed: %q then %q", d, first, got)
			}
		}
	}
}

func TestNextTopicNumber(t *testing.T) {
	cases := []struct {
		name     string
		existing []string
		topic    string
		number   int
		reuse    bool
		dir      string
	}{
		{"none", nil, "auth", 1, false, "001_auth"},
		{"empty dir list", []string{}, "auth", 1, false, "001_auth"},
		{"max plus one", []string{"001_a", "007_b", "003_c"}, "auth", 8, false, "008_auth"},
		{"reuse", []string{"001_a", "042_auth", "043_b"}, "auth", 42, true, "042_auth"},
		{"reuse the highest of duplicates", []string{"002_auth", "009_auth", "010_x"}, "auth", 9, true, "009_auth"},
		{"exact match only", []string{"005_auth_v2", "006_oauth"}, "auth", 7, false, "007_auth"},
		{"paths and trailing slashes", []string{"/p/specs/012_x/", "specs/013_auth"}, "auth", 13, true, "013_auth"},
		{"ignores other names", []string{"README.md", "auth", "abc_auth", "_auth", "12auth"}, "auth", 1, false, "001_auth"},
		{"above 999", []string{"999_a", "1000_b"}, "c", 1001, false, "1001_c"},
		{"leading zeros", []string{"0042_x"}, "y", 43, false, "043_y"},
		{"windows separators", []string{`C:\specs\004_auth`}, "auth", 4, true, "004_auth"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, reuse := NextTopicNumber(tc.existing, tc.topic)
			if n != tc.number || reuse != tc.reuse {
				t.Errorf("NextTopicNumber = %d, %v; want %d, %v", n, reuse, tc.number, tc.reuse)
			}
			if dir := TopicDir(n, tc.topic); dir != tc.dir {
				t.Errorf("TopicDir = %q, want %q", dir, tc.dir)
			}
		})
	}
}

// TestTopicNumberIdempotent: the number is idempotent (README, "Topic
// names"; "research auth" three times -> the same 042_research_auth), while
// a new topic still gets max+1.
func TestTopicNumberIdempotent(t *testing.T) {
	dirs := []string{"041_other"}
	name := TopicName("research auth")
	var first string
	for block := range 3 {
		n, reuse := NextTopicNumber(dirs, name)
		dir := TopicDir(n, name)
		if block == 0 {
			if n != 42 || reuse {
				t.Fatalf("first block: %d %v", n, reuse)
			}
			first = dir
			dirs = append(dirs, dir) // created
			continue
		}
		if dir != first || !reuse {
			t.Fatalf("block %d: %s (reuse %v), want %s", block+1, dir, reuse, first)
		}
	}
	if n, reuse := NextTopicNumber(dirs, TopicName("fix the token refresh bug")); n != 43 || reuse {
		t.Errorf("new topic: %d %v, want 43 false", n, reuse)
	}
}

func TestArtifactPaths(t *testing.T) {
	got := ArtifactPaths("specs/042_auth", []string{"authentication patterns", "Research authorization patterns", "session management", "password security"})
	want := Paths{
		TopicPath:  "specs/042_auth",
		TopicName:  "auth",
		ReportsDir: "specs/042_auth/reports/",
		ReportPaths: []string{
			"specs/042_auth/reports/001_authentication_patterns.md",
			"specs/042_auth/reports/002_authorization_patterns.md",
			"specs/042_auth/reports/003_session_management.md",
			"specs/042_auth/reports/004_password_security.md",
		},
		PlansDir:     "specs/042_auth/plans/",
		PlanPath:     "specs/042_auth/plans/001_auth_plan.md",
		DebugDir:     "specs/042_auth/debug/",
		SummariesDir: "specs/042_auth/summaries/",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ArtifactPaths:\n got %+v\nwant %+v", got, want)
	}

	// Relative to the topic directory; generic names for topics with no
	// meaningful word (001_topic1.md).
	rel := ArtifactPaths("", []string{"", "the", "caching"})
	if rel.PlanPath != "plans/001_topic_plan.md" || rel.DebugDir != "debug/" || rel.SummariesDir != "summaries/" || rel.ReportsDir != "reports/" {
		t.Errorf("relative: %+v", rel)
	}
	if w := []string{"reports/001_topic1.md", "reports/002_topic2.md", "reports/003_caching.md"}; !reflect.DeepEqual(rel.ReportPaths, w) {
		t.Errorf("reports %v, want %v", rel.ReportPaths, w)
	}

	// Absolute .claude/specs, trailing slash, no topics yet.
	abs := ArtifactPaths("/p/.claude/specs/007_nvim_docs_directory/", nil)
	if abs.PlanPath != "/p/.claude/specs/007_nvim_docs_directory/plans/001_nvim_docs_directory_plan.md" || abs.TopicName != "nvim_docs_directory" {
		t.Errorf("absolute: %+v", abs)
	}
	if abs.ReportPaths == nil || len(abs.ReportPaths) != 0 {
		t.Errorf("no topics: reports %#v, want an empty list", abs.ReportPaths)
	}
	// A directory without NNN_ keeps its name.
	if p := ArtifactPaths("specs/auth", nil); p.PlanPath != "specs/auth/plans/001_auth_plan.md" {
		t.Errorf("unnumbered: %s", p.PlanPath)
	}
	// The report slugs are bounded like topic names.
	long := ArtifactPaths("x/001_t", []string{strings.Repeat("observability ", 10)})
	if base := strings.TrimSuffix(strings.TrimPrefix(long.ReportPaths[0], "x/001_t/reports/001_"), ".md"); len(base) > MaxTopicNameLen {
		t.Errorf("long topic slug %q", base)
	}
}

func TestReportNumber(t *testing.T) {
	cases := []struct {
		file string
		n    int
		ok   bool
	}{
		{"001_auth_patterns.md", 1, true},
		{"/p/specs/042_auth/reports/004_password_security.md", 4, true},
		{"reports/010_x.md", 10, true},
		{"1000_x.md", 1000, true},
		{"001_topic1.md", 1, true},
		{"01_x.md", 0, false},
		{"001_x.txt", 0, false},
		{"auth.md", 0, false},
		{"001_.md", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		n, ok := ReportNumber(tc.file)
		if n != tc.n || ok != tc.ok {
			t.Errorf("ReportNumber(%q) = %d, %v; want %d, %v", tc.file, n, ok, tc.n, tc.ok)
		}
	}
}

// FuzzTopicName: any description gives a well-shaped, stable name.
func FuzzTopicName(f *testing.F) {
	for _, s := range []string{
		"Research the /home/user/nvim/docs directory", "fix the token refresh bug", "", "the",
		`Research "/a b/c d" 'x/y' ` + "`p/q`", `C:\Users\x\y z\w`, "é/ß/认证", "\\ \\ //", "'\"/`",
		strings.Repeat("a", 200), strings.Repeat("/a", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := TopicName(s)
		checkTopicShape(t, name)
		if again := TopicName(s); again != name {
			t.Fatalf("unstable: %q then %q", name, again)
		}
		scope, why := DetectScope(s)
		if !ValidScope(scope) || why == "" {
			t.Fatalf("DetectScope(%q) = %q, %q", s, scope, why)
		}
		if n, _ := Complexity(s); n < MinResearchTopics || n > MaxResearchTopics {
			t.Fatalf("Complexity(%q) = %d", s, n)
		}
	})
}

func TestRevisionTopic(t *testing.T) {
	topics := []string{"001_auth", "003_authentication_system", "004_billing", "007_auth", "notatopic"}
	for desc, want := range map[string]string{
		"Revise the authentication system plan to use OAuth": "003_authentication_system",
		"Update the plan for auth to include SSO":            "007_auth", // two match: the highest number
		"Revise the billing plan":                            "004_billing",
		"Revise the shipping plan":                           "",
		"":                                                   "",
	} {
		if got := RevisionTopic(desc, topics); got != want {
			t.Errorf("RevisionTopic(%q) = %q, want %q", desc, got, want)
		}
	}
}
