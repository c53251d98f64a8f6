package bootstrap_test

// Tests of hooks/bootstrap.sh, the plugin's dispatcher, run the way Claude
// Code runs it: the SessionStart command line of the generated hooks.json,
// through sh, with the hook payload on stdin, a plugin root, a plugin data
// directory and a PATH holding only the tools a case allows.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/templates"
)

const version = "9.9.9"

var (
	repoRoot  string
	realBin   []byte // orch-hook built at version
	binName   = "orch-hook-" + runtime.GOOS + "-" + runtime.GOARCH
	baseTools = []string{"sh", "awk", "sed", "grep", "cut", "head", "tail", "tr", "cat", "mkdir", "rmdir", "rm", "cp", "mv", "chmod", "find", "date", "ls", "uname", "dirname", "sort", "ln"}
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		wd, _ := os.Getwd()
		repoRoot = filepath.Join(wd, "..", "..")
		if _, err := exec.LookPath("sh"); err != nil || runtime.GOOS == "windows" {
			fmt.Println("bootstrap: no sh; the dispatcher tests need one")
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "orch-hook-bootstrap-test-")
		if err != nil {
			fmt.Println(err)
			return 1
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "orch-hook")
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", "urfave_cli_no_docs", "-ldflags", "-X main.version="+version, "-o", out, "./cmd/orch-hook")
		cmd.Dir = repoRoot
		if b, err := cmd.CombinedOutput(); err != nil {
			fmt.Printf("go build: %v\n%s", err, b)
			return 1
		}
		realBin, _ = os.ReadFile(out)
		return m.Run()
	}())
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// tools makes a PATH directory with the base tools and the named extras.
func tools(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range append(append([]string{}, baseTools...), extra...) {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s is not installed", name)
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pluginRoot is a plugin root holding the dispatcher, the version's
// checksums pinning pinned (a binary's bytes) and, when shipped is not nil,
// a shipped binary for this platform.
func pluginRoot(t *testing.T, pinned, shipped []byte) string {
	t.Helper()
	root := t.TempDir()
	script, err := os.ReadFile(filepath.Join(repoRoot, "hooks", "bootstrap.sh"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "hooks", "bootstrap.sh"), script, 0o644)
	sums := ""
	if pinned != nil {
		sums = sum(pinned) + "  v" + version + "/" + binName + "\n"
	}
	// Another platform's line and another version's must not be taken.
	sums += strings.Repeat("0", 64) + "  v" + version + "/orch-hook-plan9-mips\n" + strings.Repeat("1", 64) + "  v0.0.1/" + binName + "\n"
	write(t, filepath.Join(root, "hooks", "release.sha256"), []byte(sums), 0o644)
	if shipped != nil {
		write(t, filepath.Join(root, "bin", binName), shipped, 0o755)
	}
	return root
}

func write(t *testing.T, p string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
}

type world struct {
	root, data, project, path string
	env                       []string
}

func newWorld(t *testing.T, root, path string, env ...string) *world {
	return &world{root: root, data: t.TempDir(), project: t.TempDir(), path: path, env: env}
}

func (w *world) bin() string { return filepath.Join(w.data, "bin", version, "orch-hook") }

func (w *world) environ() []string {
	env := []string{"PATH=" + w.path, "HOME=" + os.Getenv("HOME"), "CLAUDE_PLUGIN_ROOT=" + w.root, "CLAUDE_PLUGIN_DATA=" + w.data, "CLAUDE_PROJECT_DIR=" + w.project}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	return append(env, w.env...)
}

// answer is what a SessionStart hook prints.
type answer struct {
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
	raw string
}

// sessionStart runs the generated SessionStart hook line.
func (w *world) sessionStart(t *testing.T) answer {
	t.Helper()
	line := templates.Hooks(templates.Plugin(version))["SessionStart"][0].Hooks[0].Command
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = w.environ()
	cmd.Stdin = strings.NewReader(`{"session_id":"s1","transcript_path":"/dev/null","cwd":"` + w.project + `","hook_event_name":"SessionStart","source":"startup"}`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("SessionStart hook failed: %v\n%s", err, out)
	}
	a := answer{raw: string(out)}
	if strings.TrimSpace(string(out)) != "" {
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatalf("SessionStart printed invalid JSON (Claude Code would ignore it): %v\n%s", err, out)
		}
	}
	return a
}

// install runs the fix command a failure message gives, in a terminal.
func (w *world) install(t *testing.T) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", filepath.Join(w.root, "hooks", "bootstrap.sh"), "install", version)
	cmd.Env = w.environ()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// waitInstall waits for the background install to end: the binary is in
// place or a failure is recorded.
func (w *world) waitInstall(t *testing.T) {
	t.Helper()
	dir := filepath.Dir(w.bin())
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		_, lockErr := os.Stat(filepath.Join(dir, ".lock"))
		if os.IsNotExist(lockErr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "bootstrap.log"))
	t.Fatalf("the background install did not end in 60 s; log:\n%s", log)
}

func (w *world) installed(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(w.bin())
	if err != nil {
		return nil
	}
	if fi, _ := os.Stat(w.bin()); fi.Mode()&0o100 == 0 {
		t.Errorf("%s is not executable (%v)", w.bin(), fi.Mode())
	}
	return b
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not say %q:\n%s", what, want, text)
		}
	}
}

func mustNotContain(t *testing.T, what, text string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(text, b) {
			t.Errorf("%s says %q:\n%s", what, b, text)
		}
	}
}

func needSh(t *testing.T) {
	if realBin == nil {
		t.Skip("no sh")
	}
}

// serve is a loopback release server; it counts requests.
func serve(t *testing.T, files map[string][]byte) (string, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// TestShippedBinary: an archive install ships the binary for this platform;
// the first SessionStart verifies it, installs it into the data directory
// and runs it for this very event; later hook calls find it there.
func TestShippedBinary(t *testing.T) {
	needSh(t)
	w := newWorld(t, pluginRoot(t, realBin, realBin), tools(t, "sha256sum"))
	// Older versions: the newest of them stays (a session started before
	// the update may still run it), the others go.
	for i, v := range []string{"0.0.1", "0.0.2", "0.0.3"} {
		write(t, filepath.Join(w.data, "bin", v, "orch-hook"), []byte("old"), 0o755)
		old := time.Now().Add(-time.Duration(10-i) * time.Hour)
		os.Chtimes(filepath.Join(w.data, "bin", v), old, old)
	}
	// The status line's link, to the version before.
	os.Symlink(filepath.Join(w.data, "bin", "0.0.3", "orch-hook"), filepath.Join(w.data, "bin", "orch-hook"))
	a := w.sessionStart(t)
	if got := w.installed(t); sum(got) != sum(realBin) {
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "bootstrap.log"))
		t.Fatalf("the shipped binary was not installed at %s; SessionStart said %q; log:\n%s", w.bin(), a.raw, log)
	}
	// The binary answered this SessionStart: no workflow, so nothing.
	if strings.TrimSpace(a.raw) != "" {
		t.Errorf("SessionStart after installing the shipped binary printed %q, want the binary's silence (no workflow)", a.raw)
	}
	if root, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "plugin-root")); strings.TrimSpace(string(root)) != w.root {
		t.Errorf("plugin-root records %q, want %q", root, w.root)
	}
	// The plugin's commands reach it at ${CLAUDE_PLUGIN_ROOT}/bin/orch-hook.
	if real, err := filepath.EvalSymlinks(filepath.Join(w.root, "bin", "orch-hook")); err != nil || real != w.bin() {
		t.Errorf("bin/orch-hook in the plugin root resolves to %q (%v), want %s", real, err, w.bin())
	}
	// The status line reaches it at ${CLAUDE_PLUGIN_DATA}/bin/orch-hook,
	// which the next version's install points at its own binary; prune
	// keeps it.
	if real, err := filepath.EvalSymlinks(filepath.Join(w.data, "bin", "orch-hook")); err != nil || real != w.bin() {
		t.Errorf("bin/orch-hook in the data directory resolves to %q (%v), want %s", real, err, w.bin())
	}
	for v, want := range map[string]bool{"0.0.1": false, "0.0.2": false, "0.0.3": true} {
		if _, err := os.Stat(filepath.Join(w.data, "bin", v)); (err == nil) != want {
			t.Errorf("after installing %s, bin/%s exists: %v, want %v", version, v, err == nil, want)
		}
	}
	if a := w.sessionStart(t); strings.TrimSpace(a.raw) != "" {
		t.Errorf("second SessionStart printed %q", a.raw)
	}
}

// TestCloneBuild: in a clone, the binary `make build` made is the release
// binary for this platform when built with go.mod's Go: it is installed as
// if shipped. One built otherwise is passed over without a word to the
// user (it is not an attack), and Go builds the plugin instead.
func TestCloneBuild(t *testing.T) {
	needSh(t)
	root := pluginRoot(t, realBin, nil)
	write(t, filepath.Join(root, "bin", "orch-hook"), realBin, 0o755)
	w := newWorld(t, root, tools(t, "sha256sum"))
	if a := w.sessionStart(t); strings.TrimSpace(a.raw) != "" {
		t.Errorf("SessionStart printed %q, want the installed binary's silence", a.raw)
	}
	if sum(w.installed(t)) != sum(realBin) {
		t.Fatal("the clone's make build binary was not installed")
	}

	other := append(append([]byte{}, realBin...), 1)
	write(t, filepath.Join(root, "bin", "orch-hook"), other, 0o755)
	w = newWorld(t, root, tools(t, "sha256sum"))
	a := w.sessionStart(t)
	if w.installed(t) != nil {
		t.Fatal("a make build binary that does not match the pin was installed")
	}
	mustContain(t, "the message", a.SystemMessage, "no binary for this platform")
	if _, err := os.Stat(filepath.Join(filepath.Dir(w.bin()), "notice")); err == nil {
		t.Error("a mismatching make build binary left a notice, as if it were an attack")
	}
}

// TestShippedMismatch: a shipped binary whose checksum is not the pinned
// one is not used; without another way, the user is told loudly, and the
// refusal is named.
func TestShippedMismatch(t *testing.T) {
	needSh(t)
	tampered := append(append([]byte{}, realBin...), 0)
	w := newWorld(t, pluginRoot(t, realBin, tampered), tools(t, "sha256sum"))
	a := w.sessionStart(t)
	if w.installed(t) != nil {
		t.Fatal("a shipped binary that does not match hooks/release.sha256 was installed")
	}
	mustContain(t, "the session message", a.SystemMessage, "no binary for this platform", "No workflow rule is enforced", "sh '"+w.root+"/hooks/bootstrap.sh' install "+version)
	mustContain(t, "the model's context", a.HookSpecificOutput.AdditionalContext, "NO orch-hook workflow rule is enforced")
	notice, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "notice"))
	mustContain(t, "the notice", string(notice), "refused the shipped", "It was not used")
}

// TestShippedUnverifiable: without sha256sum or shasum a shipped binary is
// not used, and the message names what is missing.
func TestShippedUnverifiable(t *testing.T) {
	needSh(t)
	w := newWorld(t, pluginRoot(t, realBin, realBin), tools(t))
	a := w.sessionStart(t)
	if w.installed(t) != nil {
		t.Fatal("a shipped binary was installed without being verified")
	}
	mustContain(t, "the session message", a.SystemMessage, "only used once verified, which needs sha256sum or shasum")
}

// TestDownloadVerified: no shipped binary, no Go: the release binary is
// downloaded in the background, verified and installed; the next session
// runs it.
func TestDownloadVerified(t *testing.T) {
	needSh(t)
	base, hits := serve(t, map[string][]byte{"/v" + version + "/" + binName: realBin})
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, "curl", "sha256sum"), "ORCH_HOOK_DOWNLOAD_BASE="+base)
	a := w.sessionStart(t)
	mustContain(t, "the first session's message", a.SystemMessage, "in the background: downloading it (verified against hooks/release.sha256)", "until then none is enforced")
	mustContain(t, "the model's context", a.HookSpecificOutput.AdditionalContext, "NO orch-hook workflow rule is enforced")
	w.waitInstall(t)
	if got := w.installed(t); sum(got) != sum(realBin) {
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "bootstrap.log"))
		t.Fatalf("the download was not installed; log:\n%s", log)
	}
	if a := w.sessionStart(t); strings.TrimSpace(a.raw) != "" {
		t.Errorf("the next SessionStart (binary installed) printed %q", a.raw)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}

// TestDownloadWget: wget and shasum do as well as curl and sha256sum.
func TestDownloadWget(t *testing.T) {
	needSh(t)
	base, _ := serve(t, map[string][]byte{"/v" + version + "/" + binName: realBin})
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, "wget", "shasum", "perl"), "ORCH_HOOK_DOWNLOAD_BASE="+base)
	w.sessionStart(t)
	w.waitInstall(t)
	if got := w.installed(t); sum(got) != sum(realBin) {
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "bootstrap.log"))
		t.Fatalf("the wget download was not installed; log:\n%s", log)
	}
}

// TestDownloadMismatch: a download whose checksum differs is refused; with
// no Go, the failure is kept, and the next session says so loudly with the
// log's tail and the command that retries, never "installing".
func TestDownloadMismatch(t *testing.T) {
	needSh(t)
	evil := append(append([]byte{}, realBin...), []byte("tampered")...)
	files := map[string][]byte{"/v" + version + "/" + binName: evil}
	base, _ := serve(t, files)
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, "curl", "sha256sum"), "ORCH_HOOK_DOWNLOAD_BASE="+base)
	w.sessionStart(t)
	w.waitInstall(t)
	if w.installed(t) != nil {
		t.Fatal("a download that does not match hooks/release.sha256 was installed")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(w.bin()), ".download.*")); len(leftovers) != 0 {
		t.Errorf("the refused download was left behind: %v", leftovers)
	}
	for i := 0; i < 2; i++ {
		a := w.sessionStart(t)
		mustContain(t, "the next session's message", a.SystemMessage, "failed: the download failed and Go could not build it (Go is not installed)", "REFUSED the download", "not installed", "sh '"+w.root+"/hooks/bootstrap.sh' install "+version)
		mustNotContain(t, "the next session's message", a.SystemMessage, "in the background", "building")
		mustContain(t, "the model's context", a.HookSpecificOutput.AdditionalContext, "NO orch-hook workflow rule is enforced")
	}
	// The fix: the server now has the real binary; the command the
	// message gives installs it in the foreground.
	files["/v"+version+"/"+binName] = realBin
	out, code := w.install(t)
	if code != 0 || sum(w.installed(t)) != sum(realBin) {
		t.Fatalf("install exited %d and did not install the binary:\n%s", code, out)
	}
	mustContain(t, "install's output", out, "is installed: "+w.bin())
	// The binary tells the user once about the refused download.
	a := w.sessionStart(t)
	mustContain(t, "the first session with the binary", a.SystemMessage, "orch-hook refused the download", "It was not used")
	if a := w.sessionStart(t); strings.TrimSpace(a.raw) != "" {
		t.Errorf("the notice was shown twice: %q", a.raw)
	}
}

// TestNothingToInstallWith: no download tool and no Go: the message is
// loud at once, says what would work, and nothing is left to block a later
// session that has Go.
func TestNothingToInstallWith(t *testing.T) {
	needSh(t)
	for name, extra := range map[string][]string{"no curl or wget": {"sha256sum"}, "no sha256sum or shasum": {"curl"}} {
		w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, extra...))
		a := w.sessionStart(t)
		mustContain(t, name, a.SystemMessage, "no binary for this platform", "downloading it needs curl or wget, and sha256sum or shasum", "building it needs Go (1.26.8", "No workflow rule is enforced")
		mustNotContain(t, name, a.SystemMessage, "in the background", "building it with Go")
		mustContain(t, name+": the model's context", a.HookSpecificOutput.AdditionalContext, "NO orch-hook workflow rule is enforced")
		if _, err := os.Stat(filepath.Join(filepath.Dir(w.bin()), "failed")); err == nil {
			t.Errorf("%s: a failure was recorded though nothing was tried", name)
		}
	}
}

// TestDownloadUnavailable: the release server has no such file and there
// is no Go: the failure is loud at the next session.
func TestDownloadUnavailable(t *testing.T) {
	needSh(t)
	base, _ := serve(t, nil)
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, "curl", "sha256sum"), "ORCH_HOOK_DOWNLOAD_BASE="+base)
	w.sessionStart(t)
	w.waitInstall(t)
	a := w.sessionStart(t)
	mustContain(t, "the next session's message", a.SystemMessage, "the download failed and Go could not build it", "404", base+"/v"+version+"/"+binName)
}

// TestBuildWithGo: nothing shipped, nothing pinned for download, Go
// present: the plugin's source is built in the background.
func TestBuildWithGo(t *testing.T) {
	needSh(t)
	w := newWorld(t, repoRoot, tools(t, "go"))
	w.root, _ = filepath.Abs(repoRoot)
	a := w.sessionStart(t)
	mustContain(t, "the first session's message", a.SystemMessage, "building it with Go")
	w.waitInstall(t)
	if w.installed(t) == nil {
		log, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "bootstrap.log"))
		t.Fatalf("go build did not install the binary; log:\n%s", log)
	}
	out, err := exec.Command(w.bin(), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), version) {
		t.Errorf("the built binary says %q (%v), want version %s", out, err, version)
	}
}

// TestBuildFailure: Go is present but the build fails (a Go older than
// go.mod's under GOTOOLCHAIN=local): the next session says so with the
// log's tail, and never again that it is building.
func TestBuildFailure(t *testing.T) {
	needSh(t)
	root := pluginRoot(t, nil, nil)
	write(t, filepath.Join(root, "go.mod"), []byte("module example.com/x\n\ngo 1.99.0\n"), 0o644)
	write(t, filepath.Join(root, "cmd", "orch-hook", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	w := newWorld(t, root, tools(t, "go"), "GOTOOLCHAIN=local")
	a := w.sessionStart(t)
	mustContain(t, "the first session's message", a.SystemMessage, "building it with Go")
	w.waitInstall(t)
	for i := 0; i < 2; i++ {
		a = w.sessionStart(t)
		mustContain(t, "the next session's message", a.SystemMessage, "failed: hooks/release.sha256 pins no release binary", "go.mod requires go >= 1.99.0", "go build failed", "install "+version)
		mustNotContain(t, "the next session's message", a.SystemMessage, "building it with Go", "in the background")
	}
}

// TestInstallInProgress: another session holds the install lock.
func TestInstallInProgress(t *testing.T) {
	needSh(t)
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t, "curl", "sha256sum"))
	os.MkdirAll(filepath.Join(filepath.Dir(w.bin()), ".lock"), 0o755)
	a := w.sessionStart(t)
	mustContain(t, "the message", a.SystemMessage, "being installed by another session")
	mustContain(t, "the model's context", a.HookSpecificOutput.AdditionalContext, "NO orch-hook workflow rule is enforced")
}

// TestOddPaths: paths with spaces and quotes still give valid JSON and a
// command that sh reads back as the same paths.
func TestOddPaths(t *testing.T) {
	needSh(t)
	w := newWorld(t, pluginRoot(t, realBin, nil), tools(t))
	odd := filepath.Join(t.TempDir(), `it's a "data" dir\x`)
	os.MkdirAll(odd, 0o755)
	w.data = odd
	a := w.sessionStart(t)
	mustContain(t, "the message", a.SystemMessage, `CLAUDE_PLUGIN_DATA='`+strings.ReplaceAll(odd, `'`, `'\''`)+`'`)
}

// oddDir moves dir to a new directory whose name holds s and returns it.
func oddDir(t *testing.T, dir, s string) string {
	t.Helper()
	odd := filepath.Join(t.TempDir(), s)
	if err := os.Rename(dir, odd); err != nil {
		t.Fatal(err)
	}
	return odd
}

// TestBackslashPaths: sha256sum and shasum escape a file name holding a
// backslash and then prefix the sum with one; a plugin root or data
// directory with a backslash must still install the verified binary, and
// never report it as tampered.
func TestBackslashPaths(t *testing.T) {
	needSh(t)
	for _, tool := range []string{"sha256sum", "shasum"} {
		root := oddDir(t, pluginRoot(t, realBin, realBin), `root\x`)
		extra := []string{tool}
		if tool == "shasum" {
			extra = append(extra, "perl")
		}
		w := newWorld(t, root, tools(t, extra...))
		w.data = oddDir(t, w.data, `data\y`)
		a := w.sessionStart(t)
		if got := w.installed(t); sum(got) != sum(realBin) {
			log, _ := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "bootstrap.log"))
			t.Errorf("%s: the shipped binary was not installed under a path with a backslash; SessionStart said %q; log:\n%s", tool, a.raw, log)
		}
		if notice, err := os.ReadFile(filepath.Join(filepath.Dir(w.bin()), "notice")); err == nil {
			t.Errorf("%s: a genuine binary was reported as refused: %s", tool, notice)
		}
	}
}

// TestVerifyThenSwap: what is installed is the very bytes that were
// verified. A shipped file replaced right after it was hashed (the clone's
// bin/ is writable to the model when the clone is in the project) must not
// be what lands in the data directory.
func TestVerifyThenSwap(t *testing.T) {
	needSh(t)
	root := pluginRoot(t, realBin, realBin)
	path := tools(t)
	real, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("no sha256sum")
	}
	evil := filepath.Join(t.TempDir(), "evil")
	write(t, evil, []byte("#!/bin/sh\necho pwned\n"), 0o755)
	shipped := filepath.Join(root, "bin", binName)
	// sha256sum that, once it has hashed, swaps the shipped binary.
	write(t, filepath.Join(path, "sha256sum"), []byte(fmt.Sprintf("#!/bin/sh\n%q \"$@\"\nrc=$?\ncat %q >%q\nexit $rc\n", real, evil, shipped)), 0o755)
	w := newWorld(t, root, path)
	w.sessionStart(t)
	if got := w.installed(t); got != nil && sum(got) != sum(realBin) {
		t.Fatalf("installed %q, not the bytes whose SHA-256 was verified", got)
	}
}

// TestPinLookup: hooks/release.sha256 is read by exact name: a version's
// dots are not wildcards, a longer name or a path ending in the name is
// another file, and a checkout with CRLF line ends (Windows autocrlf)
// still pins.
func TestPinLookup(t *testing.T) {
	needSh(t)
	evil := append(append([]byte{}, realBin...), 0)
	wild := strings.ReplaceAll(version, ".", "x")
	for name, c := range map[string]struct {
		sums    string
		shipped []byte
		want    bool
	}{
		"dots are not wildcards":    {sum(evil) + "  v" + wild + "/" + binName + "\n" + sum(realBin) + "  v" + version + "/" + binName + "\n", evil, false},
		"a path ending in the name": {sum(evil) + "  x/v" + version + "/" + binName + "\n" + sum(realBin) + "  v" + version + "/" + binName + "\n", evil, false},
		"a longer name":             {sum(evil) + "  v" + version + "/" + binName + "x\n", evil, false},
		"CRLF":                      {sum(realBin) + "  v" + version + "/" + binName + "\r\n", realBin, true},
	} {
		root := pluginRoot(t, nil, c.shipped)
		write(t, filepath.Join(root, "hooks", "release.sha256"), []byte(c.sums), 0o644)
		w := newWorld(t, root, tools(t, "sha256sum"))
		a := w.sessionStart(t)
		got := w.installed(t)
		if (got != nil) != c.want {
			t.Errorf("%s: installed %v, want %v; SessionStart said %q", name, got != nil, c.want, a.raw)
		}
		if got != nil && sum(got) != sum(realBin) {
			t.Errorf("%s: installed a binary that is not the pinned one", name)
		}
	}
}

// TestPruneKeepsPreviousVersion: the version kept is the most recent
// other version's directory, never a stray file that happens to be newer;
// a symlink in bin/ is removed, not what it points to.
func TestPruneKeepsPreviousVersion(t *testing.T) {
	needSh(t)
	w := newWorld(t, pluginRoot(t, realBin, realBin), tools(t, "sha256sum"))
	outside := t.TempDir()
	write(t, filepath.Join(outside, "keep"), []byte("x"), 0o644)
	for i, v := range []string{"0.0.1", "0.0.2"} {
		write(t, filepath.Join(w.data, "bin", v, "orch-hook"), []byte("old"), 0o755)
		old := time.Now().Add(-time.Duration(10-i) * time.Hour)
		os.Chtimes(filepath.Join(w.data, "bin", v), old, old)
	}
	os.Symlink(outside, filepath.Join(w.data, "bin", "0.0.0"))
	write(t, filepath.Join(w.data, "bin", "stray"), []byte("x"), 0o644)
	w.sessionStart(t)
	if w.installed(t) == nil {
		t.Fatal("not installed")
	}
	if _, err := os.Stat(filepath.Join(w.data, "bin", "0.0.2", "orch-hook")); err != nil {
		t.Errorf("the previous version's binary was pruned because a newer stray file was taken for it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("prune deleted outside bin/ through a symlink: %v", err)
	}
}
