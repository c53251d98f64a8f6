package app

import (
	"bytes"
	"crypto/sha1"
	"flag"

	"errors"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestParseConfig(t *testing.T) {
	s, err := ParseConfig("c.json", []byte("\xef\xbb\xbf{\"limits\": {\"fix_iterations\": 2, \"retries\": 0}, \"steps\": {\"ux_dx_review\": false},\n \"agents\": {\"code-implementer\": \"backend-dev\", \"plan-architect\": \"team:architect\"}, \"record\": {\"redact_request\": true}}"))
	if err != nil {
		t.Fatal(err)
	}
	want := gates.DefaultSettings()
	want.Limits.FixIterations, want.Limits.Retries = 2, 0
	want.Steps.UXDXReview = false
	want.RedactRequest = true
	if s.Limits != want.Limits || s.Steps != want.Steps || !s.RedactRequest || s.Agents["code-implementer"] != "backend-dev" || s.Agents["plan-architect"] != "team:architect" || len(s.Agents) != 2 {
		t.Errorf("got %+v", s)
	}
	if d, err := ParseConfig("c.json", []byte("{}")); err != nil || d.Limits != gates.DefaultSettings().Limits || !d.Steps.UXDXReview || d.Agents != nil {
		t.Errorf("{} = %+v, %v; want the defaults", d, err)
	}
}

func TestParseConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		text string
		want string
	}{
		{"", 0, "", "the file is empty"},
		{"[]", 1, "[]", "the configuration must be an object"},
		{"{\n\"limits\": 3}", 2, `"limits": 3}`, "limits must be an object"},
		{"{\n \"limits\": {\n  \"fix_iterations\": 2.5}}", 3, `"fix_iterations": 2.5}}`, "must be a whole number, not 2.5"},
		{"{\"limits\": {\"fix_iterations\": \"2\"}}", 1, "", "must be a whole number"},
		{"{\"limits\": {\"stop_cap\": 21}}", 1, "", "limits.stop_cap must be from 1 to 20"},
		{"{\"limits\": {\"clarification_rounds\": 0}}", 1, "", "must be from 1 to 10"},
		{"{\n\"Limits\": {}}", 2, `"Limits": {}}`, `unknown key "Limits" in the configuration (did you mean "limits"?)`},
		{"{\"steps\": {\"5b\": false}}", 1, "", `unknown key "5b" in steps`},
		{"{\"agents\": {\"code-implementer\": \"back end\"}}", 1, "", "is not an agent name"},
		{"{\"agents\": {\"code-implementer\": \"code-implementer\"}}", 1, "", "maps the role to itself"},
		{"{\"agents\": {\"code-implementer\": \"orch-hook:x\"}}", 1, "", "orch-hook's own namespace"},
		{"{\"agents\": {\"code-implementer\": \"orch-hook:code-quality\"}}", 1, "", "another role of the workflows"},
		{"{\"agents\": {\"code-implementer\": \"Explore\"}}", 1, "", "Claude Code's own agent"},
		{"{\"agents\": {\"code-implementer\": \"EXPLORE\"}}", 1, "", "Claude Code's own agent"},
		{"{\"agents\": {\"code-quality\": \"Code-Implementer\"}}", 1, "", "another role of the workflows"},
		{"{\"agents\": {\"code-quality\": \"ORCH-HOOK:qa\"}}", 1, "", "orch-hook's own namespace"},
		{"{\"agents\": {\"code-implementer\": \"Dev\",\n \"code-quality\": \"dev\"}}", 2, "", "already plays code-implementer"},
		{"{\"agents\": {\"code-implementer\": 3}}", 1, "", "agents.code-implementer must be a string"},
		{"{\"record\": {\"redact_request\": 1}}", 1, "", "record.redact_request must be true or false"},
		{"{\"version\": 1, \"version\": 1}", 1, "", `"version" is given twice`},
		{"{\"limits\": {\n", 1, `{"limits": {`, "the file ends too early"},
		{"{\"limits\" 1}", 1, "", "not valid JSON"},
	} {
		_, err := ParseConfig("c.json", []byte(tc.in))
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: %v, want a ConfigError", tc.in, err)
			continue
		}
		if ce.Line != tc.line || tc.text != "" && ce.Text != tc.text || !strings.Contains(ce.Problem, tc.want) {
			t.Errorf("%q: line %d %q %q; want line %d %q, problem with %q", tc.in, ce.Line, ce.Text, ce.Problem, tc.line, tc.text, tc.want)
		}
		if strings.Contains(ce.Error(), "\n") {
			t.Errorf("%q: the error is not one line: %q", tc.in, ce.Error())
		}
	}
}

// FuzzParseConfig: whatever the file holds, ParseConfig neither panics
// nor accepts a value outside its range, and every refusal names a line
// of the file.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"{}", `{"limits": {"fix_iterations": 2}}`, `{"agents": {"code-implementer": "dev"}}`, `{"steps": {"ux_dx_review": false}, "record": {"redact_request": true}}`, "{\n\"limits\": {\"retries\": 11}}", `{"version": 1, "$schema": "x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseConfig("c.json", b)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%q: %T %v", b, err, err)
			}
			if ce.Line < 0 || ce.Line > strings.Count(string(b), "\n")+1 {
				t.Fatalf("%q: line %d", b, ce.Line)
			}
			return
		}
		for _, r := range gates.LimitRanges {
			if v := *r.Of(&s.Limits); v < r.Min || v > r.Max {
				t.Fatalf("%q: %s = %d accepted", b, r.Name, v)
			}
		}
		seen := map[string]bool{}
		for role, agent := range s.Agents {
			if seen[agent] || agent == role {
				t.Fatalf("%q: agents %v accepted", b, s.Agents)
			}
			seen[agent] = true
		}
	})
}

// gitFileState reads git's own index: the state git gives a file is the
// one orch-hook reports, for index versions 2, 3 and 4 and a worktree.
func TestGitFileState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("ORCH_HOOK_E2E_REQUIRED") == "1" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rel := gates.ConfigFile
	write := func(s string) []byte {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return []byte(s)
	}
	if got := gitFileState(root, rel, write("{}")); got != gates.GitNone {
		t.Errorf("no repository: %q", got)
	}
	git("init", "-q", ".")
	if got := gitFileState(root, rel, write("{}")); got != gates.GitUntracked {
		t.Errorf("new repository: %q", got)
	}
	// Entries before and after it, with long names, in every index version.
	for _, name := range []string{"a.txt", strings.Repeat("d", 70) + ".txt", "z/zz.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-q", "-m", "c")
	content := write("{}")
	for _, v := range []string{"2", "3", "4"} {
		git("update-index", "--index-version", v)
		if got := gitFileState(root, rel, content); got != gates.GitCommitted {
			t.Errorf("index v%s, committed: %q", v, got)
		}
		if got := gitFileState(root, rel, []byte("{\"version\": 1}")); got != gates.GitModified {
			t.Errorf("index v%s, modified: %q", v, got)
		}
		if got := gitFileState(root, "other.json", content); got != gates.GitUntracked {
			t.Errorf("index v%s, untracked: %q", v, got)
		}
	}
	// A worktree: .git is a file naming its git directory.
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", wt)
	if got := gitFileState(wt, rel, content); got != gates.GitCommitted {
		t.Errorf("worktree: %q", got)
	}
	// A damaged index says so.
	if err := os.WriteFile(filepath.Join(root, ".git", "index"), []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x05short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := gitFileState(root, rel, content); got != "git's index unreadable" {
		t.Errorf("damaged index: %q", got)
	}
}

// FuzzIndexEntry: a damaged or hostile index never panics.
func FuzzIndexEntry(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"), "a")
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02"+strings.Repeat("\x00", 62)+"\x00a\x00"), "a")
	f.Fuzz(func(t *testing.T, index []byte, path string) {
		gitIndex{hashLen: 20, newHash: sha1.New}.lookup(index, path, func(string) ([]byte, error) { return index, nil })
	})
}

var update = flag.Bool("update", false, "rewrite the configuration's JSON Schema")

const configSchemaFile = "config-v1.schema.json"

// The schema file is ConfigSchema's output: it cannot drift from the
// parser's tables.
func TestConfigSchemaFile(t *testing.T) {
	want, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(configSchemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(configSchemaFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not ConfigSchema's output (go test ./internal/app -run TestConfigSchemaFile -update): %v", configSchemaFile, err)
	}
}

// The schema accepts what ParseConfig accepts and refuses what it
// refuses, for every case the schema can express.
func TestConfigSchemaAgreesWithParser(t *testing.T) {
	b, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(ConfigSchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(ConfigSchemaID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []string{
		`{}`,
		`{"$schema": "x", "version": 1, "limits": {"clarification_rounds": 1, "discovery_loops": 10, "fix_iterations": 2, "final_validation_failures": 3, "retries": 0, "stop_cap": 20}, "steps": {"ux_dx_review": false}, "agents": {"code-implementer": "backend-dev", "plan-architect": "team:architect"}, "record": {"redact_request": true}}`,
		`{"version": 2}`,
		`{"limits": {"fix_iterations": 0}}`,
		`{"limits": {"retries": 11}}`,
		`{"limits": {"stop_cap": 2.5}}`,
		`{"limits": {"fix_iteration": 2}}`,
		`{"steps": {"ux_dx_review": "no"}}`,
		`{"steps": {"5b": false}}`,
		`{"agents": {"code-implementor": "dev"}}`,
		`{"agents": {"code-implementer": "back end"}}`,
		`{"agents": {"code-implementer": 3}}`,
		`{"record": {"redact": true}}`,
		`{"extra": 1}`,
		`[]`,
	} {
		_, perr := ParseConfig("c.json", []byte(tc))
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc))
		if err != nil {
			t.Fatal(err)
		}
		serr := sch.Validate(v)
		if (perr == nil) != (serr == nil) {
			t.Errorf("%s: the parser says %v, the schema %v", tc, perr, serr)
		}
	}
}
