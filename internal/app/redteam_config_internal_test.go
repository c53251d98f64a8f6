//go:build unix

package app

// Red-team pass on the team configuration (README, "Team configuration").
//
// Tests named TestRedTeamFixed* FAIL on the code as reviewed: each is a hole
// (or a wrong answer) the review found, kept failing until it is fixed.
// Tests named TestRedTeamRefused* pass: they pin attacks the code already
// refuses. TestRedTeamFixed* failed before a small fix made on wt-red and
// now guard it.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// within runs f and fails when it has not returned after d: a read of
// something the model can put in the project must not hang a hook
// (Claude Code kills a hook at its timeout and lets the call through).
// unblock is called on a timeout so the goroutine can finish.
func within(t *testing.T, d time.Duration, what string, f func(), unblock func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("HOLE: %s did not return within %s (a hook would hang until Claude Code's timeout, which lets the call through)", what, d)
		if unblock != nil {
			unblock()
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked after unblocking", what)
		}
	}
}

// mkfifo makes a FIFO and returns a func that unblocks a reader blocked
// opening it (it opens the write end and closes it: the reader sees EOF).
func mkfifo(t *testing.T, path string) func() {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// HOLE: .git/index is writable by the model's Bash even inside Claude
// Code's sandbox (git add writes it; only .git/config and .git/hooks are
// protected). A FIFO there makes gitFileState block in os.ReadFile, so
// the UserPromptSubmit hook that starts a workflow hangs; Claude Code
// kills it at its timeout and passes /orch-hook:orchestrate to the model
// as if the workflow had started (nothing is enforced).
func TestRedTeamFixedGitIndexFIFO(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	unblock := mkfifo(t, filepath.Join(root, ".git", "index"))
	var got string
	within(t, 3*time.Second, "gitFileState with a FIFO at .git/index", func() {
		got = gitFileState(root, gates.ConfigFile, []byte("{}"))
	}, unblock)
	t.Logf("state: %q", got)
}

// HOLE: a project without git: the model makes .git a FIFO. gitDirOf
// stats it (not a directory) and os.ReadFile blocks on it.
func TestRedTeamFixedDotGitFIFO(t *testing.T) {
	root := t.TempDir()
	unblock := mkfifo(t, filepath.Join(root, ".git"))
	within(t, 3*time.Second, "gitFileState with a FIFO at .git", func() {
		gitFileState(root, gates.ConfigFile, []byte("{}"))
	}, unblock)
}

// HOLE (older code on the same start path: startInput, issue 18): gitHead
// reads .git/HEAD with os.ReadFile; a FIFO there hangs every start, with
// or without a configuration file.
func TestRedTeamFixedGitHeadFIFO(t *testing.T) {
	root := t.TempDir()
	unblock := mkfifo(t, filepath.Join(root, ".git", "HEAD"))
	within(t, 3*time.Second, "startInput with a FIFO at .git/HEAD", func() {
		startInput(root)
	}, unblock)
}

// FIXED on wt-red (was a HOLE; it failed before the fix to state's
// readSmall, which now opens with O_NONBLOCK and reads regular files only;
// it guards that fix): the configuration file itself as a FIFO (or a symlink, made before
// the workflow, to a project file the model later replaces by a FIFO:
// see TestRedTeamFixedConfigSymlinkToFIFOFailsOpen). state.ReadProjectFile
// (readSmall) opens without O_NONBLOCK and never checks for a regular
// file, so ReadConfig (the start) and ConfigHash (every logged decision)
// block.
func TestRedTeamFixedConfigFIFO(t *testing.T) {
	root := t.TempDir()
	unblock := mkfifo(t, filepath.Join(root, gates.ConfigFile))
	within(t, 3*time.Second, "ReadConfig of a FIFO", func() {
		if _, err := ReadConfig(root); err == nil {
			t.Error("a FIFO read as a configuration")
		}
	}, unblock)
	within(t, 3*time.Second, "ConfigHash of a FIFO", func() {
		if h := ConfigHash(root); h != "unreadable" {
			t.Errorf("ConfigHash of a FIFO = %q, want unreadable", h)
		}
	}, unblock)
}

// HOLE: gitFileState reads the whole index with os.ReadFile, unbounded. A
// sparse 4 GiB .git/index (`truncate -s 4G .git/index`, or a symlink to
// /dev/zero) makes the start allocate it all: out of memory (the Go
// runtime dies with exit code 2, which for UserPromptSubmit blocks the
// prompt with a runtime trace) or, without a memory limit, a read that
// outlasts the hook's timeout. Run in a child limited to 1 GiB of address
// space, so the test itself stays bounded.
func TestRedTeamFixedGitIndexUnbounded(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("DIRC\x00\x00\x00\x02\xff\xff\xff\xff")); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Skipf("sparse file: %v", err)
	}
	f.Close()
	// Measured in process (what a hook allocates reading it), so that the
	// race detector, which cannot run under a small address-space limit,
	// runs it too.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := gitFileState(root, gates.ConfigFile, []byte("{}"))
	runtime.ReadMemStats(&after)
	if got != gitUnreadable {
		t.Errorf("a sparse 4 GiB .git/index reads %q, want %q", got, gitUnreadable)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2*maxGitIndex {
		t.Errorf("HOLE: gitFileState on a sparse 4 GiB .git/index allocated %d MiB (bound: %d MiB)", n>>20, maxGitIndex>>20)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func git(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("git %v: %v\n%s", args, err, out)
	}
}

// BUG (wrong state, the safe way): in a SHA-256 repository
// (`git init --object-format=sha256`) the index holds 32-byte object ids;
// indexEntry reads 20 and misparses every entry, so a committed
// configuration is reported "not in git" and the user is told it is not
// the team's committed configuration.
func TestRedTeamFixedGitStateSHA256Repo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	git(t, root, "init", "-q", "--object-format=sha256", ".")
	writeFile(t, filepath.Join(root, gates.ConfigFile), "{}\n")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "c")
	if got := gitFileState(root, gates.ConfigFile, []byte("{}\n")); got != gates.GitCommitted {
		t.Errorf("BUG: a committed configuration in a sha256 repository reads %q, want %q", got, gates.GitCommitted)
	}
	if got := gitFileState(root, gates.ConfigFile, []byte("{ }\n")); got != gates.GitModified {
		t.Errorf("BUG: a modified configuration in a sha256 repository reads %q, want %q", got, gates.GitModified)
	}
}

// BUG (wrong state, the safe way): with a split index (`git update-index
// --split-index`, or core.splitIndex) the entries live in
// .git/sharedindex.<sha>; only .git/index is read, so a committed file is
// "not in git".
func TestRedTeamFixedGitStateSplitIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	git(t, root, "init", "-q", ".")
	writeFile(t, filepath.Join(root, gates.ConfigFile), "{}\n")
	writeFile(t, filepath.Join(root, "a.txt"), "a")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "c")
	git(t, root, "update-index", "--split-index")
	if got := gitFileState(root, gates.ConfigFile, []byte("{}\n")); got != gates.GitCommitted {
		t.Errorf("BUG: a committed configuration with a split index reads %q, want %q", got, gates.GitCommitted)
	}
}

// REFUSED: every input that could be read two ways is refused with a line
// of the file, or read exactly one way; nothing panics.
func TestRedTeamRefusedParserAmbiguities(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int    // 0: accepted
		want string // part of the problem
	}{
		// A key given twice through a \u escape is the same key.
		{`{"limits": {"fix_iterations": 2, "fix\u005fiterations": 3}}`, 1, "given twice"},
		{"{\n\"limits\": {\"retries\": 1},\n\"lim\\u0069ts\": {}\n}", 3, `"limits" is given twice`},
		{"{\"agents\": {\"code-implementer\": \"a\",\n \"code\\u002dimplementer\": \"b\"}}", 2, "given twice"},
		// Case variants are other keys, refused as unknown.
		{`{"Limits": {}}`, 1, "unknown key"},
		{`{"limits": {"Fix_Iterations": 3}}`, 1, "unknown key"},
		{`{"agents": {"Code-Implementer": "dev"}}`, 1, "unknown key"},
		// Numbers: only a plain integer is a whole number.
		{`{"limits": {"fix_iterations": 2.0}}`, 1, "whole number"},
		{`{"limits": {"fix_iterations": 1e0}}`, 1, "whole number"},
		{`{"limits": {"fix_iterations": 2E0}}`, 1, "whole number"},
		{`{"limits": {"retries": 99999999999999999999999}}`, 1, "whole number"},
		{`{"limits": {"retries": -1}}`, 1, "must be from 0 to 10"},
		{`{"limits": {"retries": 01}}`, 1, "not valid JSON"},
		{`{"limits": {"retries": +1}}`, 1, "not valid JSON"},
		{`{"version": 1.0}`, 1, "whole number"},
		// Not JSON: comments, NUL, a second BOM, trailing commas, NaN.
		{"{\"limits\": {\"retries\": 1}} // c", 1, "text after"},
		{"{\n// c\n\"limits\": {}}", 2, "not valid JSON"},
		{"{\"limits\": {\"retries\": 1}}\x00", 1, "text after"},
		{"\x00{}", 1, "not valid JSON"},
		{"\xef\xbb\xbf\xef\xbb\xbf{}", 1, "not valid JSON"},
		{"{\"limits\": {\"retries\": 1,}}", 1, "not valid JSON"},
		{`{"limits": {"retries": NaN}}`, 1, "not valid JSON"},
		// Deep nesting is refused at its first bracket, not walked.
		{"{\"limits\": " + strings.Repeat("[", 200000), 1, "limits must be an object"},
		{strings.Repeat("{", 200000), 1, ""},
		// Agent names: the role's own in another spelling, whitespace,
		// look-alikes, the plugin's namespace in another case.
		{`{"agents": {"code-implementer": " backend-dev"}}`, 1, "not an agent name"},
		{`{"agents": {"code-implementer": "backend-dev\n"}}`, 1, "not an agent name"},
		{`{"agents": {"code-implementer": "backеnd-dev"}}`, 1, "not an agent name"}, // Cyrillic е
		{`{"agents": {"code-implementer": "backend\u200b-dev"}}`, 1, "not an agent name"},
		{`{"agents": {"code-implementer": "orch-hook:backend-dev"}}`, 1, "orch-hook's own namespace"},
		{`{"agents": {"code-implementer": "orch-hook:code-implementer"}}`, 1, "another role"},
		{`{"agents": {"code-implementer": "dev", "code-quality": "dev"}}`, 1, "already plays"},
		// Read one way: -0 is 0, a BOM is dropped, escapes decode.
		{`{"limits": {"retries": -0}}`, 0, ""},
		{"\xef\xbb\xbf{\"limits\": {\"retries\": 1}}", 0, ""},
		{`{"limits": {"fix\u005fiterations": 3}}`, 0, ""},
	} {
		s, err := ParseConfig("c.json", []byte(tc.in))
		show := tc.in
		if len(show) > 60 {
			show = show[:60] + "..."
		}
		if tc.line == 0 {
			if err != nil {
				t.Errorf("%q: %v, want it read", show, err)
			}
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: accepted (%+v), want a refusal", show, s)
			continue
		}
		if ce.Line != tc.line || !strings.Contains(ce.Problem, tc.want) {
			t.Errorf("%q: line %d %q, want line %d with %q", show, ce.Line, ce.Problem, tc.line, tc.want)
		}
	}
	// "fix\u005fiterations" is fix_iterations: the value applies.
	if s, _ := ParseConfig("c.json", []byte(`{"limits": {"fix\u005fiterations": 7}}`)); s.Limits.FixIterations != 7 {
		t.Errorf("an escaped key read otherwise: %+v", s.Limits)
	}
}

// REFUSED: a change made while a workflow runs is always seen (the hash
// differs from the snapshot's), whatever replaces the file.
func TestRedTeamRefusedConfigHashSeesEveryChange(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, gates.ConfigFile)
	writeFile(t, cfg, "{}")
	start := ConfigHash(root)
	if start == "" || start == "unreadable" {
		t.Fatalf("hash %q", start)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "c.json"), "{}")
	for name, make := range map[string]func(){
		"removed":            func() {},
		"a directory":        func() { os.Mkdir(cfg, 0o755) },
		"larger than 64KiB":  func() { writeFile(t, cfg, "{\"$schema\": \""+strings.Repeat("x", 70<<10)+"\"}") },
		"a symlink outside":  func() { os.Symlink(filepath.Join(outside, "c.json"), cfg) },
		"a dangling symlink": func() { os.Symlink(filepath.Join(root, "nowhere"), cfg) },
		"a symlink loop":     func() { os.Symlink(cfg, cfg) },
	} {
		os.RemoveAll(cfg)
		make()
		if h := ConfigHash(root); h == start {
			t.Errorf("%s: ConfigHash is the snapshot's: the change is not reported", name)
		}
	}
}

// REFUSED: `config --check` walks the agents directories bounded: a FIFO
// named like the agent, a symlink loop, a symlinked directory leading out
// of the project are skipped, never followed or opened.
func TestRedTeamRefusedFindAgentHostileDir(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	agents := filepath.Join(root, ".claude", "agents")
	unblock := mkfifo(t, filepath.Join(agents, "backend-dev.md"))
	if err := os.Symlink(agents, filepath.Join(agents, "loop")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "evil.md"), "---\nname: backend-dev\n---\nIMPLEMENTATION STATUS: COMPLETE\nIMPLEMENTATION STATUS: BLOCKED\n")
	if err := os.Symlink(outside, filepath.Join(agents, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil.md"), filepath.Join(agents, "link.md")); err != nil {
		t.Fatal(err)
	}
	within(t, 3*time.Second, "findAgent in a hostile .claude/agents", func() {
		if file, _ := findAgent(root, home, "backend-dev"); file != "" {
			t.Errorf("found %s: a FIFO or a file outside the project read as the definition", file)
		}
	}, unblock)
}

// HOLE (low): the refusal quotes the offending line as written, control
// characters included. Before a workflow the model may write the file; a
// line holding an escape sequence (invalid JSON, so it is quoted) reaches
// the user's terminal raw through `orch-hook config [--check]` and
// `orch-hook start`: ESC [2K CR erases the error from view, OSC 52 sets the
// clipboard in terminals that allow it. The quoted line should be
// escaped (%q-style) or stripped of control characters.
func TestRedTeamFixedConfigErrorQuotesControlCharacters(t *testing.T) {
	in := "{\"$schema\": \"\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2K\rlooks fine\"}\n"
	_, err := ParseConfig(gates.ConfigFile, []byte(in))
	if err == nil {
		t.Fatal("accepted")
	}
	if strings.ContainsAny(err.Error(), "\x1b\x07\r") {
		t.Errorf("HOLE: the refusal carries raw control characters to the terminal: %q", err.Error())
	}
}
