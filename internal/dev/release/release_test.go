package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchiveReproducible: the same files give the same bytes, whatever
// order they come in and whatever their times on disk; entries are sorted,
// with one time, and the binaries executable.
func TestArchiveReproducible(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	files := []archiveFile{
		{name: "hooks/hooks.json", src: write("hooks.json", "{}"), mode: 0o644},
		{name: "bin/orch-hook-linux-amd64", src: write("bin", "ELF"), mode: 0o755},
		{name: ".claude-plugin/plugin.json", src: write("plugin.json", `{"version":"1.0.0"}`), mode: 0o644},
	}
	a, b := filepath.Join(dir, "a.zip"), filepath.Join(dir, "b.zip")
	if err := writeArchive(a, files); err != nil {
		t.Fatal(err)
	}
	reversed := []archiveFile{files[2], files[1], files[0]}
	os.Chtimes(files[0].src, archiveTime.AddDate(3, 0, 0), archiveTime.AddDate(3, 0, 0))
	if err := writeArchive(b, reversed); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Fatal("the same files gave two different archives")
	}
	zr, err := zip.NewReader(bytes.NewReader(ab), int64(len(ab)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(archiveTime) {
			t.Errorf("%s: time %v", f.Name, f.Modified)
		}
		if f.Name == "bin/orch-hook-linux-amd64" && f.Mode().Perm() != 0o755 {
			t.Errorf("the binary's mode is %v", f.Mode())
		}
		if f.Name == "hooks/hooks.json" && f.Mode().Perm() != 0o644 {
			t.Errorf("hooks.json's mode is %v", f.Mode())
		}
	}
	want := ".claude-plugin/ .claude-plugin/plugin.json bin/ bin/orch-hook-linux-amd64 hooks/ hooks/hooks.json"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries %q, want %q", got, want)
	}
}

func TestExcluded(t *testing.T) {
	for name, want := range map[string]bool{
		"gates/plan.go": false, "gates/plan_test.go": true, "gates/testdata/fp/x.sh": true,
		".ci/run": true, "internal/dev/e2e/harness_test.go": true, "hooks/bootstrap.sh": false,
		"internal/dev/release/main.go": false, "commands/status.md": false,
	} {
		if got := excluded(name); got != want {
			t.Errorf("excluded(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestMarketplaceEntry: the release's marketplace is the repository's with
// the plugin's source an archive pinned by its checksum.
func TestMarketplaceEntry(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude-plugin", "marketplace.json"), []byte(`{"name":"orch-hook","owner":{"name":"x"},"plugins":[{"name":"orch-hook","source":"./","description":"d"}]}`), 0o644)
	b, err := marketplaceEntry(root, "1.2.3", "https://example.com/v1.2.3/a.tar.gz", "abc")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name    string
		Plugins []struct {
			Name, Version, Description string
			Source                     map[string]string
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	p := m.Plugins[0]
	if m.Name != "orch-hook" || p.Version != "1.2.3" || p.Description != "d" || p.Source["source"] != "archive" || p.Source["url"] != "https://example.com/v1.2.3/a.tar.gz" || p.Source["sha256"] != "abc" {
		t.Errorf("entry %s", b)
	}
	os.WriteFile(filepath.Join(root, ".claude-plugin", "marketplace.json"), []byte(`{"plugins":[{"name":"other"}]}`), 0o644)
	if _, err := marketplaceEntry(root, "1.2.3", "u", "s"); err == nil {
		t.Error("a marketplace without orch-hook was accepted")
	}
}

// TestVersionMustMatch: a release is of the plugin's version, or refused
// with what to do.
func TestVersionMustMatch(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude-plugin", "plugin.json"), []byte(`{"version":"1.0.0"}`), 0o644)
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n\ngo 1.26.8\n"), 0o644)
	var out bytes.Buffer
	err := run([]string{"-root", root, "-version", "1.1.0"}, &out)
	if err == nil || !strings.Contains(err.Error(), "plugin.json says 1.0.0: set the version there, run make generate") {
		t.Errorf("got %v", err)
	}
	if err := run([]string{"-root", root, "-version", "1.0"}, &out); err == nil || !strings.Contains(err.Error(), "is not x.y.z") {
		t.Errorf("got %v", err)
	}
}

func TestGoToolchain(t *testing.T) {
	root := t.TempDir()
	for mod, want := range map[string]string{
		"module x\n\ngo 1.26.8\n":                       "go1.26.8",
		"module x\n\ngo 1.26.0\n\ntoolchain go1.26.8\n": "go1.26.8",
		"module x\n\ngo 1.26\n":                         "",
	} {
		os.WriteFile(filepath.Join(root, "go.mod"), []byte(mod), 0o644)
		got, err := goToolchain(root)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%q: got %q, %v; want %q", mod, got, err, want)
		}
	}
}

// TestBuildEnvPinned: what the builder's environment or go env -w file says
// does not reach the release build (it would change the binaries' bytes).
func TestBuildEnvPinned(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	toolchain, err := goToolchain(root)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(goBin, "env", "GOVERSION").Output(); err != nil || strings.TrimSpace(string(out)) != toolchain {
		t.Skipf("the local Go is not %s (no toolchain download in a unit test)", toolchain)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "env"), []byte("GOFIPS140=latest\nGO111MODULE=off\nGOFLAGS=-race\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.work"), []byte("go 1.26.8\n"), 0o644)
	hostile := append(os.Environ(), "GOENV="+filepath.Join(dir, "env"), "GOWORK="+filepath.Join(dir, "go.work"), "GOFIPS140=v1.0.0", "GOAMD64=v3", "GOEXPERIMENT=jsonv2")
	cmd := exec.Command(goBin, "env", "-json", "GOFIPS140", "GO111MODULE", "GOWORK", "GOFLAGS", "GOAMD64", "GOEXPERIMENT", "GOOS", "CGO_ENABLED")
	cmd.Dir = root
	cmd.Env = buildEnv(hostile, "linux", "amd64", toolchain)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	json.Unmarshal(out, &got)
	want := map[string]string{"GOFIPS140": "off", "GO111MODULE": "on", "GOWORK": "off", "GOFLAGS": "", "GOAMD64": "v1", "GOEXPERIMENT": "", "GOOS": "linux", "CGO_ENABLED": "0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the release build sees %s=%q, want %q", k, got[k], v)
		}
	}
}

// TestPluginFiles: the tracked files a plugin needs, with git's modes; a
// work tree that differs from the commit is refused unless allowed.
func TestPluginFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	files := map[string]string{"hooks/bootstrap.sh": "#!/bin/sh\n", "gates/plan.go": "package gates\n", "gates/plan_test.go": "package gates\n", "gates/testdata/x": "x"}
	for name, text := range files {
		os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(root, name), []byte(text), 0o644)
	}
	git("init", "-q")
	// As on a file system without modes: the index has them, the files not.
	git("config", "core.fileMode", "false")
	git("add", ".")
	git("update-index", "--chmod=+x", "hooks/bootstrap.sh")
	git("commit", "-q", "-m", "x")
	got, err := pluginFiles(root, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got {
		names = append(names, f.name)
		if want := map[string]int64{"hooks/bootstrap.sh": 0o755, "gates/plan.go": 0o644}[f.name]; f.mode != want {
			t.Errorf("%s: mode %o, want %o (git's, not the file system's)", f.name, f.mode, want)
		}
	}
	if strings.Join(names, " ") != "gates/plan.go hooks/bootstrap.sh" {
		t.Errorf("files %v", names)
	}
	os.WriteFile(filepath.Join(root, "gates", "plan.go"), []byte("package gates // changed\n"), 0o644)
	if _, err := pluginFiles(root, false); err == nil || !strings.Contains(err.Error(), "gates/plan.go: commit them first") {
		t.Errorf("a dirty work tree: %v", err)
	}
	if _, err := pluginFiles(root, true); err != nil {
		t.Errorf("-allow-dirty: %v", err)
	}
	os.WriteFile(filepath.Join(root, "gates", "plan_test.go"), []byte("package gates // changed\n"), 0o644)
	os.WriteFile(filepath.Join(root, "gates", "plan.go"), []byte("package gates\n"), 0o644)
	if _, err := pluginFiles(root, false); err != nil {
		t.Errorf("a change to a file the archive leaves out was refused: %v", err)
	}
}

// TestBinaryLinksNoMachinery: the binary a release ships links none of the
// machinery under internal/dev/ (README, "Layout") and none of the
// test-only modules (README, "Dependencies"), on any release platform; a
// product package that imported one would break the split.
func TestBinaryLinksNoMachinery(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", ".."))
	const module = "github.com/orch-hook/orch-hook/"
	for _, p := range Platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		cmd := exec.Command(goBin, "list", "-deps", "-tags", BuildTags, "./cmd/orch-hook")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./cmd/orch-hook (%s): %v", p, err)
		}
		own := 0
		for _, pkg := range strings.Fields(string(out)) {
			// The test-only modules (README, "Dependencies") stay out too.
			for _, m := range []string{"github.com/rogpeppe/go-internal/", "github.com/santhosh-tekuri/jsonschema/"} {
				if strings.HasPrefix(pkg, m) {
					t.Errorf("%s: the binary links %s, a test-only dependency", p, pkg)
				}
			}
			if !strings.HasPrefix(pkg, module) {
				continue
			}
			own++
			if strings.HasPrefix(pkg, module+"internal/dev/") {
				t.Errorf("%s: the binary links %s, which is machinery", p, pkg)
			}
		}
		if own == 0 {
			t.Fatalf("%s: go list -deps names none of %s's packages:\n%s", p, module, out)
		}
	}
}
