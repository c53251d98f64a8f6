package install

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const testBin = "/opt/orch-hook/bin/orch-hook"

// statusLineOf is the statusLine object of a settings file.
func statusLineOf(t *testing.T, settings []byte) map[string]any {
	t.Helper()
	var s struct {
		StatusLine map[string]any `json:"statusLine"`
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, settings)
	}
	return s.StatusLine
}

func keysOf(t *testing.T, settings []byte) []string {
	t.Helper()
	keys, _, err := decodeObject(settings)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func merge(t *testing.T, local []byte, others []StatusLineSetting, remove bool) ([]byte, StatusLineResult) {
	t.Helper()
	b, res, err := MergeStatusLine(local, others, testBin, remove)
	if err != nil {
		t.Fatalf("MergeStatusLine: %v", err)
	}
	return b, res
}

// mustBeStable: running again changes nothing.
func mustBeStable(t *testing.T, settings []byte, others []StatusLineSetting) {
	t.Helper()
	again, _ := merge(t, settings, others, false)
	if !bytes.Equal(again, settings) {
		t.Errorf("a second run changed the settings:\n%s\nto\n%s", settings, again)
	}
}

func TestStatusLineNone(t *testing.T) {
	got, res := merge(t, nil, nil, false)
	want := "{\n  \"statusLine\": {\n    \"type\": \"command\",\n    \"command\": \"/opt/orch-hook/bin/orch-hook statusline\"\n  }\n}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if res.Theirs != "" || res.Command != testBin+" statusline" {
		t.Errorf("result %+v", res)
	}
	mustBeStable(t, got, nil)
	// Removed: the key goes, the file stays an object.
	removed, res := merge(t, got, nil, true)
	if string(removed) != "{}\n" || !res.Removed {
		t.Errorf("remove gave %q, %+v", removed, res)
	}
	// Nothing to remove: unchanged, not Removed.
	if b, res := merge(t, removed, nil, true); !bytes.Equal(b, removed) || res.Removed {
		t.Errorf("a second remove changed %q to %q (%+v)", removed, b, res)
	}
}

// The user's own local status line is chained in place: other keys, their
// order and the status line's other fields are kept, and --remove puts it
// back as it was.
func TestStatusLineChainsLocal(t *testing.T) {
	local := []byte(`{"model": "opus", "statusLine": {"type": "command", "command": "~/bin/mine.sh --short", "padding": 1}, "env": {"A": "b"}}`)
	got, res := merge(t, local, nil, false)
	if k := strings.Join(keysOf(t, got), ","); k != "model,statusLine,env" {
		t.Errorf("keys %s, want model,statusLine,env", k)
	}
	sl := statusLineOf(t, got)
	if sl["padding"] != 1.0 || sl["type"] != "command" {
		t.Errorf("statusLine lost a field: %v", sl)
	}
	cmd := sl["command"].(string)
	if cmd != ChainStatusLine("~/bin/mine.sh --short", testBin, ScopeLocal) || res.Theirs != "~/bin/mine.sh --short" || res.From != ".claude/settings.local.json" {
		t.Errorf("command %q, result %+v", cmd, res)
	}
	mustBeStable(t, got, nil)
	// A user status line below does not matter: theirs is the local one.
	mustBeStable(t, got, []StatusLineSetting{{Scope: ScopeUser, File: "~/.claude/settings.json", Value: json.RawMessage(`{"type":"command","command":"other"}`)}})

	removed, res := merge(t, got, nil, true)
	if !sameJSON(removed, local) || !res.Removed || res.Theirs != "~/bin/mine.sh --short" {
		t.Errorf("remove did not restore the original:\n%s\n%+v", removed, res)
	}
}

// A status line of the user or project settings is chained into the local
// file (which Claude Code reads first), followed when it changes there, and
// --remove drops the local one so that theirs shows alone again.
func TestStatusLineChainsLower(t *testing.T) {
	user := StatusLineSetting{Scope: ScopeUser, File: "~/.claude/settings.json", Value: json.RawMessage(`{"type": "command", "command": "printf 'u\\n'", "padding": 0}`)}
	local := []byte("{\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n")
	got, res := merge(t, local, []StatusLineSetting{user}, false)
	sl := statusLineOf(t, got)
	if sl["command"] != ChainStatusLine("printf 'u\\n'", testBin, ScopeUser) || sl["padding"] != 0.0 {
		t.Errorf("statusLine %v", sl)
	}
	if res.From != "~/.claude/settings.json" || res.Theirs != `printf 'u\n'` {
		t.Errorf("result %+v", res)
	}
	if k := strings.Join(keysOf(t, got), ","); k != "permissions,statusLine" {
		t.Errorf("keys %s", k)
	}
	mustBeStable(t, got, []StatusLineSetting{user})

	// The project's status line is above the user's.
	project := StatusLineSetting{Scope: ScopeProject, File: ".claude/settings.json", Value: json.RawMessage(`{"type":"command","command":"team-line"}`)}
	both, res := merge(t, got, []StatusLineSetting{project, user}, false)
	if statusLineOf(t, both)["command"] != ChainStatusLine("team-line", testBin, ScopeProject) || res.From != ".claude/settings.json" {
		t.Errorf("the project's status line was not chained: %v", statusLineOf(t, both))
	}

	// Theirs changed: the new one is chained.
	user.Value = json.RawMessage(`{"type": "command", "command": "new-line"}`)
	changed, _ := merge(t, got, []StatusLineSetting{user}, false)
	if statusLineOf(t, changed)["command"] != ChainStatusLine("new-line", testBin, ScopeUser) {
		t.Errorf("a changed user status line was not chained again: %v", statusLineOf(t, changed))
	}
	// Theirs gone: orch-hook's alone.
	alone, _ := merge(t, got, nil, false)
	if statusLineOf(t, alone)["command"] != PlainStatusLine(testBin) {
		t.Errorf("with no status line of theirs left: %v", statusLineOf(t, alone))
	}

	removed, res := merge(t, got, []StatusLineSetting{user}, true)
	if !sameJSON(removed, local) || !res.Removed {
		t.Errorf("remove left\n%s", removed)
	}
}

// A status line that already runs orch-hook's: the plain one (the README's
// old advice, with a versioned path) is taken over; one of the user's own
// that runs it among other things is left alone.
func TestStatusLineAlreadyOurs(t *testing.T) {
	old := []byte(`{"statusLine": {"type": "command", "command": "~/.claude/plugins/cache/orch-hook/orch-hook/0.1.0/bin/orch-hook statusline"}}`)
	got, res := merge(t, old, nil, false)
	if statusLineOf(t, got)["command"] != PlainStatusLine(testBin) || res.Already != "" {
		t.Errorf("the plain status line was not updated: %s %+v", got, res)
	}
	mustBeStable(t, got, nil)

	mine := []byte(`{"statusLine": {"type": "command", "command": "mine.sh; orch-hook statusline"}}`)
	if b, res := merge(t, mine, nil, false); !bytes.Equal(b, mine) || res.Already != ".claude/settings.local.json" {
		t.Errorf("a status line of the user's running orch-hook's was changed: %s %+v", b, res)
	}
	// The same in the user's settings: nothing written locally, and an
	// orch-hook status line there is dropped (it would hide theirs).
	user := []StatusLineSetting{{Scope: ScopeUser, File: "~/.claude/settings.json", Value: json.RawMessage(`{"type":"command","command":"mine.sh; orch-hook statusline"}`)}}
	if b, res := merge(t, nil, user, false); b != nil || res.Already != "~/.claude/settings.json" {
		t.Errorf("got %s, %+v", b, res)
	}
	ours, _ := merge(t, nil, nil, false)
	if b, res := merge(t, ours, user, false); statusLineOf(t, b) != nil || res.Already == "" {
		t.Errorf("orch-hook's local status line was kept over theirs that shows it: %s", b)
	}
}

// A statusLine of null counts as none.
func TestStatusLineNull(t *testing.T) {
	got, _ := merge(t, []byte(`{"statusLine": null, "model": "opus"}`), nil, false)
	if statusLineOf(t, got)["command"] != PlainStatusLine(testBin) || strings.Join(keysOf(t, got), ",") != "statusLine,model" {
		t.Errorf("got %s", got)
	}
}

// A user statusLine that is not an object chains nothing and breaks
// nothing.
func TestStatusLineOddLower(t *testing.T) {
	odd := []StatusLineSetting{{Scope: ScopeUser, File: "~/.claude/settings.json", Value: json.RawMessage(`"printf x"`)}}
	got, _ := merge(t, nil, odd, false)
	if statusLineOf(t, got)["command"] != PlainStatusLine(testBin) {
		t.Errorf("got %s", got)
	}
}

func TestStatusLineManaged(t *testing.T) {
	managed := []StatusLineSetting{{Scope: ScopeManaged, File: "/etc/claude-code/managed-settings.json", Value: json.RawMessage(`{"type":"command","command":"corp"}`)}}
	local := []byte(`{"model": "opus"}`)
	if b, res := merge(t, local, managed, false); !bytes.Equal(b, local) || res.Managed == "" {
		t.Errorf("got %s, %+v", b, res)
	}
}

func TestStatusLineMalformed(t *testing.T) {
	for _, tc := range []struct{ local, want string }{
		{`{ not json`, "not valid JSON: invalid character"},
		{`[1, 2]`, "not a JSON object"},
		{`{"statusLine": "orch-hook statusline"}`, "statusLine: not a JSON object"},
		{`{"statusLine": {"command": 3}}`, "statusLine.command: not a string"},
	} {
		_, _, err := MergeStatusLine([]byte(tc.local), nil, testBin, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tc.local, err, tc.want)
		}
	}
	// A file of the user's settings that is not JSON: named in the error.
	root, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{,"), 0o644)
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	_, _, err := PlanStatusLine(root, testBin, getenv, false)
	if err == nil || !strings.HasPrefix(err.Error(), "~/.claude/settings.json: not valid JSON") {
		t.Errorf("error %v", err)
	}
}

// PlanStatusLine reads the files: the user's status line (in
// $CLAUDE_CONFIG_DIR when set) is chained; writing it and planning again
// changes nothing.
func TestPlanStatusLine(t *testing.T) {
	root, config := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(config, "settings.json"), []byte(`{"statusLine": {"type": "command", "command": "user-line"}}`), 0o644)
	getenv := func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": config, "HOME": "/nonexistent"}[k]
	}
	change, res, err := PlanStatusLine(root, testBin, getenv, false)
	if err != nil || change == nil {
		t.Fatalf("%v %v", change, err)
	}
	if change.Path != ".claude/settings.local.json" || change.Old != nil || res.Theirs != "user-line" || res.From != filepath.Join(config, "settings.json") {
		t.Errorf("change %s, result %+v", change.Path, res)
	}
	if err := Apply(root, []Change{*change}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, change.Path)); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if cmd, file := StatusLine(root, getenv); cmd != res.Command || file != filepath.Join(root, change.Path) {
		t.Errorf("StatusLine reads %q from %s", cmd, file)
	}
	if again, _, err := PlanStatusLine(root, testBin, getenv, false); err != nil || again != nil {
		t.Errorf("a second plan: %+v %v", again, err)
	}
}

// nasty are status line commands of the user's that the chained command
// must run as written.
var nasty = []string{
	`printf 'theirs\n'`,
	"echo \"it's \\\"quoted\\\" \\$HOME \\`x\\`\"",
	"x=1\nprintf 'line %s\\n' \"$x\"",
	`printf '%s\n' 'a'\''b' "'" '\'`,
	`printf 'c\n' # a trailing comment`,
	`'`, // a lone quote: theirs fails, ours still shows
	`''`,
	`printf '%s' "$(cat)" | tr -d '\n' | wc -c`,
}

func TestChainRoundTrip(t *testing.T) {
	for _, theirs := range nasty {
		for _, bin := range []string{testBin, "/tmp/dir with 'quote'/orch-hook"} {
			cmd := ChainStatusLine(theirs, bin, ScopeUser)
			f := parseStatusLine(cmd)
			if !f.ok || f.theirs != theirs || f.scope != ScopeUser || StatusLineBinaryOf(cmd, "") != bin {
				t.Errorf("%q with %q read back as %+v", theirs, bin, f)
			}
		}
	}
	for _, cmd := range []string{"", "mine.sh", "orch-hook status", "orch-hook statusline; rm -rf ~", "orch-hook subagent-statusline", ChainStatusLine("x", testBin, "team")} {
		if f := parseStatusLine(cmd); f.ok {
			t.Errorf("%q read as orch-hook's: %+v", cmd, f)
		}
	}
}

// TestChainRuns runs the chained command as Claude Code does (sh -c, the
// JSON on stdin, ending in a newline) with a stand-in for orch-hook that
// prints what it read: theirs first, exactly as written, on the same
// stdin, then ours, also when theirs fails, prints no newline, or exits.
func TestChainRuns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no sh")
	}
	dir := filepath.Join(t.TempDir(), "a dir with 'quotes' and $x")
	os.MkdirAll(dir, 0o755)
	bin := filepath.Join(dir, "orch-hook")
	os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = statusline ] || exit 9\nin=$(cat; printf .)\nprintf 'ours %s' \"${in%.}\"\n"), 0o755)
	input := `{"session_id":"s","workspace":{"project_dir":"/p"},"x":"it's $HOME"}` + "\n"
	ours := "ours " + input
	run := func(cmd string) string {
		t.Helper()
		c := exec.Command("sh", "-c", cmd)
		c.Stdin = strings.NewReader(input)
		out, err := c.Output()
		if err != nil {
			t.Errorf("the status line exited %v (Claude Code would show nothing):\n%s", err, cmd)
		}
		return string(out)
	}
	for _, tc := range []struct{ theirs, want string }{
		{`printf 'theirs\n'`, "theirs\n"},
		{"echo \"it's \\\"quoted\\\" \\$HOME \\`x\\`\"", "it's \"quoted\" $HOME `x`\n"},
		{"x=1\nprintf 'line %s\\n' \"$x\"", "line 1\n"},
		{`printf '%s\n' 'a'\''b' "'" '\'`, "a'b\n'\n\\\n"},
		{`printf 'c\n' # a trailing comment`, "c\n"},
		// The same stdin, byte for byte (read needs its newline).
		{`cat`, input},
		{`read -r line; printf 'got %s\n' "$line"`, "got " + strings.TrimSuffix(input, "\n") + "\n"},
		// No newline at the end: ours still starts a line.
		{`printf nonl`, "nonl\n"},
		// An exit ends theirs only.
		{`printf 'a\n'; exit 0; printf 'b\n'`, "a\n"},
		// Failing: Claude Code would show nothing of it; ours shows.
		{`printf 'partial\n'; exit 3`, ""},
		{`no-such-command-orch-hook-test`, ""},
		{`'`, ""},
		// Nothing printed: an empty line, which Claude Code drops.
		{`sleep 0 &`, "\n"},
	} {
		got := run(ChainStatusLine(tc.theirs, bin, ScopeUser))
		if got != tc.want+ours {
			t.Errorf("theirs %q: got\n%q\nwant\n%q", tc.theirs, got, tc.want+ours)
		}
	}
	// orch-hook gone (the plugin uninstalled): their line still shows.
	if got := run(ChainStatusLine(`printf 'theirs\n'`, filepath.Join(dir, "gone", "orch-hook"), ScopeUser)); got != "theirs\n" {
		t.Errorf("without orch-hook: %q", got)
	}
	// Alone, through the quoted path.
	if got := run(PlainStatusLine(bin)); got != ours {
		t.Errorf("alone: %q", got)
	}
}

func TestStatusLineBinary(t *testing.T) {
	exe, _ := os.Executable()
	// The plugin: the data directory's stable link, made when missing.
	data := t.TempDir()
	getenv := func(k string) string { return map[string]string{"CLAUDE_PLUGIN_DATA": data}[k] }
	bin, note, err := StatusLineBinary(getenv, true)
	if err != nil || bin != filepath.Join(data, "bin", "orch-hook") || note != "" {
		t.Fatalf("%q %q %v", bin, note, err)
	}
	if _, err := os.Lstat(bin); err == nil {
		t.Errorf("a dry run made %s", bin)
	}
	if bin, _, _ = StatusLineBinary(getenv, false); !sameFile(bin, exe) {
		t.Errorf("%s does not lead to this binary", bin)
	}
	// An init install: the PATH entry that finds this binary.
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "orch-hook")); err != nil {
		t.Skip(err)
	}
	t.Setenv("PATH", dir)
	noPlugin := func(string) string { return "" }
	if bin, _, _ := StatusLineBinary(noPlugin, false); bin != filepath.Join(dir, "orch-hook") {
		t.Errorf("init install: %s", bin)
	}
	t.Setenv("PATH", t.TempDir())
	if bin, _, _ := StatusLineBinary(noPlugin, false); bin != exe {
		t.Errorf("not on PATH: %s, want %s", bin, exe)
	}
}
