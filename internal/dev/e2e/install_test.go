package e2e

// The install scenarios: a user without Go installs the release archive
// from a marketplace with the real CLI and is protected; an installed
// plugin is updated and its binary's data directory survives.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
	"github.com/orch-hook/orch-hook/templates"
)

// releaseHost is the made-up host the release is published under: the CLI
// refuses an archive URL that is not https or names a loopback host, so
// the test serves it over TLS behind a loopback CONNECT proxy.
const releaseHost = "releases.orch-hook.test"

// releaseServer serves dir over HTTPS for releaseHost, behind a CONNECT
// proxy on loopback. It returns the proxy URL, a CA file for
// NODE_EXTRA_CA_CERTS, and a count of file requests.
func releaseServer(t *testing.T, dir string) (proxyURL, caFile string, hits *atomic.Int32) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: releaseHost},
		DNSNames:              []string{releaseHost},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	hits = &atomic.Int32{}
	files := http.FileServer(http.Dir(dir))
	tlsLn, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Logf("release server: %s %s", r.Method, r.URL.Path)
		files.ServeHTTP(w, r)
	})}
	go srv.Serve(tlsLn)
	t.Cleanup(func() { srv.Close() })

	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || !strings.HasPrefix(r.Host, releaseHost+":") {
			http.Error(w, "this proxy only reaches "+releaseHost, http.StatusForbidden)
			return
		}
		upstream, err := net.Dial("tcp", tlsLn.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, _ := w.(http.Hijacker)
		client, buf, err := hj.Hijack()
		if err != nil {
			upstream.Close()
			return
		}
		client.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n"))
		go func() { io.Copy(upstream, buf); upstream.Close() }()
		io.Copy(client, upstream)
		client.Close()
	})}
	go proxy.Serve(proxyLn)
	t.Cleanup(func() { proxy.Close() })
	return "http://" + proxyLn.Addr().String(), caFile, hits
}

// pathWithoutGo is PATH without the directories that hold a go command.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			continue
		}
		keep = append(keep, dir)
	}
	path := strings.Join(keep, string(os.PathListSeparator))
	for _, dir := range keep {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Fatalf("go is still on %s", path)
		}
	}
	return path
}

// claudeCmd runs a claude subcommand (not a session) with the offline
// environment of a session in home.
func claudeCmd(t *testing.T, home string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(claudeBinary(t), args...)
	cmd.Env = append(cliEnv(home, "http://127.0.0.1:9"), env...)
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	t.Logf("claude %s:\n%s", strings.Join(args, " "), out)
	return string(out), err
}

func pluginVersionOf(t *testing.T, root string) string {
	t.Helper()
	v, err := bootstrap.PluginVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestArchiveInstall: the release is built (make release), published over
// HTTPS, and its generated marketplace entry (an archive source pinned by
// sha256) is installed with `claude plugin install` by a user with no Go;
// a session then enforces a gate with the shipped binary, which the first
// SessionStart verified and installed into the plugin's data directory.
// A marketplace entry whose sha256 is wrong is refused by the CLI.
func TestArchiveInstall(t *testing.T) {
	claudeBinary(t)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	version := pluginVersionOf(t, root)
	out := t.TempDir()
	rel := exec.Command("go", "run", "./internal/dev/release", "-version", version, "-out", out, "-base", "https://"+releaseHost+"/releases", "-allow-dirty")
	rel.Dir = root
	if b, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("go run ./internal/dev/release: %v\n%s", err, b)
	}
	// The server's tree mirrors GitHub's: /releases/v<version>/<file>.
	site := t.TempDir()
	if err := os.MkdirAll(filepath.Join(site, "releases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(out, "v"+version), filepath.Join(site, "releases", "v"+version)); err != nil {
		t.Fatal(err)
	}
	proxyURL, caFile, hits := releaseServer(t, site)

	// The marketplace a user adds: the release's generated marketplace.json.
	market := t.TempDir()
	entry, err := os.ReadFile(filepath.Join(site, "releases", "v"+version, "marketplace.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(dir string, b []byte) {
		if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".claude-plugin", "marketplace.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(market, entry)

	home := newProject(t)
	noGo := pathWithoutGo(t)
	env := []string{"PATH=" + noGo, "HTTPS_PROXY=" + proxyURL, "https_proxy=" + proxyURL, "NO_PROXY=127.0.0.1,localhost", "NODE_EXTRA_CA_CERTS=" + caFile}

	// A marketplace whose pin is wrong: refused, nothing installed.
	var m map[string]any
	if err := json.Unmarshal(entry, &m); err != nil {
		t.Fatal(err)
	}
	source := m["plugins"].([]any)[0].(map[string]any)["source"].(map[string]any)
	if source["source"] != "archive" || !strings.HasSuffix(source["url"].(string), ".zip") {
		t.Fatalf("the release's marketplace entry is not a zip archive source: %v", source)
	}
	badSum := fmt.Sprintf("%x", sha256.Sum256([]byte("not the archive")))
	source["sha256"] = badSum
	m["name"] = "orch-hook-bad"
	bad, _ := json.Marshal(m)
	badMarket := t.TempDir()
	write(badMarket, bad)
	if _, err := claudeCmd(t, home, env, "plugin", "marketplace", "add", badMarket); err != nil {
		t.Fatalf("marketplace add (bad pin): %v", err)
	}
	o, err := claudeCmd(t, home, env, "plugin", "install", "orch-hook@orch-hook-bad")
	if err == nil || !strings.Contains(o, "integrity check failed") {
		t.Errorf("an archive with the wrong sha256 was not refused (err %v):\n%s", err, o)
	}

	if _, err := claudeCmd(t, home, env, "plugin", "marketplace", "add", market); err != nil {
		t.Fatalf("marketplace add: %v", err)
	}
	if o, err := claudeCmd(t, home, env, "plugin", "install", "orch-hook@orch-hook"); err != nil {
		t.Fatalf("claude plugin install orch-hook@orch-hook: %v\n%s", err, o)
	}
	if hits.Load() == 0 {
		t.Fatal("the release server was never asked for the archive")
	}
	shipped := filepath.Join(home, ".claude", "plugins", "cache", "orch-hook", "orch-hook", version, "bin", "orch-hook-"+runtime.GOOS+"-"+runtime.GOARCH)
	if _, err := os.Stat(shipped); err != nil {
		t.Fatalf("the installed archive does not ship this platform's binary: %v", err)
	}

	// A session in the installed plugin, with no Go anywhere on PATH.
	project := newProject(t)
	run := runClaude(t, Config{
		ProjectDir: project,
		Home:       home,
		Env:        []string{"PATH=" + noGo},
		Script:     scenario(t, "early", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-EARLY]] Build a greeting module"},
		MaxTurns:   20,
	})
	var c checks
	c.wantDenied(run, "PreToolUse:Agent hook error: orch-hook: code-implementer may not run before the user approves the plan. Now: step 3, waiting for the user's approval.")
	bin := filepath.Join(home, ".claude", "plugins", "data", "orch-hook-orch-hook", "bin", version, "orch-hook")
	got, err := os.ReadFile(bin)
	want, _ := os.ReadFile(shipped)
	if err != nil || sha256.Sum256(got) != sha256.Sum256(want) {
		c.errorf("the shipped binary was not installed at %s (%v)", bin, err)
	}
	if _, err := os.Stat(filepath.Join(project, "src", "greet.txt")); err == nil {
		c.errorf("the denied implementer ran")
	}
	// The plugin's commands (and the model's Bash, which has the plugin's
	// bin/ on PATH) reach it as bin/orch-hook in the plugin root.
	if real, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(shipped), "orch-hook")); err != nil || real != bin {
		c.errorf("bin/orch-hook in the installed plugin resolves to %q (%v), want %s", real, err, bin)
	}
	// The installed binary also serves the terminal (README: run the CLI
	// from a terminal).
	if got := workflowState(statusOf(t, filepath.Dir(filepath.Dir(filepath.Dir(bin))), project, bin)); got != "3" {
		c.errorf("state %q after the session, want 3", got)
	}
	c.report(t, run)

	// The model's Bash has the plugin's bin/ on PATH (Claude Code 2.1.91
	// and later): `orch-hook` by its bare name is the installed binary.
	run = runClaude(t, Config{
		ProjectDir: newProject(t),
		Home:       home,
		Env:        []string{"PATH=" + noGo},
		Script:     loadScript(t, "testdata/bashpath.txtar"),
		Messages:   []string{"[[E2E-BASHPATH]] Which orch-hook is this?"},
		MaxTurns:   5,
	})
	if tr, ok := toolResult(run, "toolu_bashpath"); !ok || tr.IsError || !strings.Contains(tr.Text, "orch-hook version "+version) {
		t.Errorf("the model's Bash did not run the installed orch-hook by its name: %v %q\n%s", ok, tr.Text, run.Mock.Summary())
	}
}

// TestPluginUpdate: a plugin installed from a marketplace is updated with
// `claude plugin update`; the new version's first session installs its own
// binary beside the old one in ${CLAUDE_PLUGIN_DATA}/bin/, which survived
// the update, and both the new binary and the state work.
func TestPluginUpdate(t *testing.T) {
	claudeBinary(t)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// A marketplace directory whose plugin is a copy of this plugin.
	market := t.TempDir()
	plugin := filepath.Join(market, "orch-hook")
	copyTree(t, pluginCopy(t, ""), plugin)
	marketJSON := `{"name":"upd","owner":{"name":"e2e"},"metadata":{"description":"e2e"},"plugins":[{"name":"orch-hook","source":"./orch-hook","description":"e2e"}]}`
	if err := os.MkdirAll(filepath.Join(market, ".claude-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(market, ".claude-plugin", "marketplace.json"), []byte(marketJSON), 0o644)
	oldVersion := pluginVersionOf(t, plugin)

	home := newProject(t)
	noGo := []string{"PATH=" + pathWithoutGo(t)}
	if o, err := claudeCmd(t, home, noGo, "plugin", "marketplace", "add", market); err != nil {
		t.Fatalf("marketplace add: %v\n%s", err, o)
	}
	if o, err := claudeCmd(t, home, noGo, "plugin", "install", "orch-hook@upd"); err != nil {
		t.Fatalf("install: %v\n%s", err, o)
	}
	var project string
	session := func() *Run {
		project = newProject(t)
		return runClaude(t, Config{
			ProjectDir: project,
			Home:       home,
			Env:        noGo,
			Script:     scenario(t, "early", project),
			Messages:   []string{"/orch-hook:orchestrate [[E2E-EARLY]] Build a greeting module"},
			MaxTurns:   20,
		})
	}
	run := session()
	var c checks
	c.wantDenied(run, "PreToolUse:Agent hook error: orch-hook: code-implementer may not run before the user approves the plan.")
	data := filepath.Join(home, ".claude", "plugins", "data", "orch-hook-upd")
	oldBin := filepath.Join(data, "bin", oldVersion, "orch-hook")
	if _, err := os.Stat(oldBin); err != nil {
		c.errorf("version %s's binary is not in the data directory: %v", oldVersion, err)
	}
	c.report(t, run)

	// The status line: the user has one of their own (user settings);
	// /orch-hook:statusline, typed in a session in the project of the
	// workflow above, chains it in .claude/settings.local.json, running
	// the data directory's bin/orch-hook, which must outlive the update.
	slProject := project
	setUserStatusLine(t, home, `printf '%s\n' "theirs: it's e2e"`)
	typed := runClaude(t, Config{
		ProjectDir: slProject,
		Home:       home,
		Env:        noGo,
		Script:     &mockapi.Script{},
		Messages:   []string{"/orch-hook:statusline"},
		MaxTurns:   2,
		Timeout:    60 * time.Second,
	})
	c = checks{}
	if n := len(typed.Mock.MessageRequests()); n != 0 {
		c.errorf("/orch-hook:statusline reached the model (%d requests); the hook should block it", n)
	}
	// The user sees the diff (the block's reason); the model nothing.
	shown := false
	for _, e := range typed.Events {
		shown = shown || e.Type == "system" && e.Subtype == "informational" && strings.Contains(string(e.Raw), "wrote .claude/settings.local.json") && strings.Contains(string(e.Raw), "statusLine")
	}
	if !shown {
		c.errorf("the user was not shown what /orch-hook:statusline wrote:\n%s", typed.Dump())
	}
	stable := filepath.Join(data, "bin", "orch-hook")
	statusLine := statusLineCommand(t, slProject)
	if !strings.Contains(statusLine, "| "+stable+" statusline; exit 0 # orch-hook: your status line (user settings) first") {
		c.errorf("the status line written does not run %s after the user's own:\n%s", stable, statusLine)
	}
	c.wantStatusLine(t, home, slProject, statusLine, stable, oldBin)
	c.report(t, typed)

	// The new version: another version number, its hooks.json, and a
	// binary of that version shipped and pinned.
	newVersion := oldVersion + "-e2e.1"
	manifest, _ := os.ReadFile(filepath.Join(plugin, ".claude-plugin", "plugin.json"))
	os.WriteFile(filepath.Join(plugin, ".claude-plugin", "plugin.json"), []byte(strings.Replace(string(manifest), `"version": "`+oldVersion+`"`, `"version": "`+newVersion+`"`, 1)), 0o644)
	if pluginVersionOf(t, plugin) != newVersion {
		t.Fatalf("could not set the version in %s", manifest)
	}
	files, err := templates.Render(templates.Plugin(newVersion))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(plugin, "hooks", "hooks.json"), files["hooks/hooks.json"], 0o644)
	shipped := filepath.Join(plugin, "bin", "orch-hook-"+runtime.GOOS+"-"+runtime.GOARCH)
	build := exec.Command("go", "build", "-trimpath", "-tags", "urfave_cli_no_docs", "-ldflags", "-X main.version="+newVersion, "-o", shipped, "./cmd/orch-hook")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	nb, _ := os.ReadFile(shipped)
	os.WriteFile(filepath.Join(plugin, "hooks", "release.sha256"), []byte(fmt.Sprintf("%x  v%s/%s\n", sha256.Sum256(nb), newVersion, filepath.Base(shipped))), 0o644)
	// A file of the old version's in the data directory must survive.
	keep := filepath.Join(data, "user-note")
	os.WriteFile(keep, []byte("kept"), 0o600)

	if o, err := claudeCmd(t, home, noGo, "plugin", "marketplace", "update", "upd"); err != nil {
		t.Fatalf("marketplace update: %v\n%s", err, o)
	}
	if o, err := claudeCmd(t, home, noGo, "plugin", "update", "orch-hook@upd"); err != nil {
		t.Fatalf("plugin update: %v\n%s", err, o)
	}
	run = session()
	c = checks{}
	c.wantDenied(run, "PreToolUse:Agent hook error: orch-hook: code-implementer may not run before the user approves the plan.")
	newBin := filepath.Join(data, "bin", newVersion, "orch-hook")
	if out, err := exec.Command(newBin, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), newVersion) {
		c.errorf("the new version's binary at %s: %v %s", newBin, err, out)
	}
	if _, err := os.Stat(oldBin); err != nil {
		c.errorf("the previous version's binary was pruned at once (a session started before the update may still run it): %v", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "kept" {
		c.errorf("a file in the plugin's data directory did not survive the update: %v", err)
	}
	// The status line written before the update runs the new binary.
	c.wantStatusLine(t, home, slProject, statusLine, stable, newBin)
	c.report(t, run)
}

// setUserStatusLine sets statusLine in the user's settings of home,
// keeping the rest (enabledPlugins).
func setUserStatusLine(t *testing.T, home, command string) {
	t.Helper()
	p := filepath.Join(home, ".claude", "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(p); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	settings["statusLine"] = map[string]any{"type": "command", "command": command}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// statusLineCommand is the statusLine command of the project's
// .claude/settings.local.json.
func statusLineCommand(t *testing.T, project string) string {
	t.Helper()
	var s struct {
		StatusLine struct {
			Command string `json:"command"`
		} `json:"statusLine"`
	}
	b, err := os.ReadFile(filepath.Join(project, ".claude", "settings.local.json"))
	if err != nil || json.Unmarshal(b, &s) != nil || s.StatusLine.Command == "" {
		t.Fatalf("no statusLine command in %s/.claude/settings.local.json (%v):\n%s", project, err, b)
	}
	return s.StatusLine.Command
}

// wantStatusLine runs a status line command as Claude Code does (through
// sh, in the project, its JSON on stdin, without the plugin's variables):
// the user's line, then orch-hook's for the project's workflow; link, the
// binary it runs, leads to bin.
func (c *checks) wantStatusLine(t *testing.T, home, project, command, link, bin string) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(link); err != nil || real != bin {
		c.errorf("the status line's %s leads to %q (%v), want %s", link, real, err, bin)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = project
	cmd.Env = append(cliEnv(home, "http://127.0.0.1:9"), "CLAUDE_PROJECT_DIR="+project, "CLAUDECODE=1")
	cmd.Stdin = strings.NewReader(`{"session_id":"s","cwd":"` + project + `","workspace":{"current_dir":"` + project + `","project_dir":"` + project + `"}}` + "\n")
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 || lines[0] != "theirs: it's e2e" || !strings.HasPrefix(lines[1], "orch-hook ") {
		c.errorf("the status line printed %q (%v), want the user's line, then orch-hook's", out, err)
	}
}

// copyTree copies a directory, keeping file modes.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		copyFile(t, p, filepath.Join(to, rel))
		return os.Chmod(filepath.Join(to, rel), fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}
