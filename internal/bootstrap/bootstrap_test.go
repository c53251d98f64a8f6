package bootstrap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTakeNotice: the dispatcher's notice is returned once, bounded.
func TestTakeNotice(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "orch-hook")
	if got := TakeNotice(exe); got != "" {
		t.Errorf("no notice: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, NoticeFile), []byte("orch-hook refused the download x.\n"), 0o644)
	if got := TakeNotice(exe); got != "orch-hook refused the download x." {
		t.Errorf("got %q", got)
	}
	if got := TakeNotice(exe); got != "" {
		t.Errorf("the notice was returned twice: %q", got)
	}
	os.WriteFile(filepath.Join(dir, NoticeFile), []byte(strings.Repeat("x", 10000)), 0o644)
	if got := TakeNotice(exe); len(got) > maxNotice+10 {
		t.Errorf("a long notice was not cut: %d bytes", len(got))
	}
}

// TestPluginRoot: only an absolute path is taken.
func TestPluginRoot(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "orch-hook")
	if got := PluginRoot(exe); got != "" {
		t.Errorf("no file: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, PluginRootFile), []byte("relative/dir\n"), 0o644)
	if got := PluginRoot(exe); got != "" {
		t.Errorf("a relative root was taken: %q", got)
	}
	os.WriteFile(filepath.Join(dir, PluginRootFile), []byte("/opt/plugin\n"), 0o644)
	if got := PluginRoot(exe); got != "/opt/plugin" {
		t.Errorf("got %q", got)
	}
}

// TestPluginVersion: the version names a directory and goes into a shell
// command line, so only x.y.z with an optional plain suffix is taken.
func TestPluginVersion(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755)
	for v, ok := range map[string]bool{"0.1.0": true, "1.2.3-rc.1": true, "1.2": false, "": false, "1.2.3/../x": false, "1.2.3-$(id)": false, "1..3": false} {
		os.WriteFile(filepath.Join(root, ".claude-plugin", "plugin.json"), []byte(`{"version":"`+v+`"}`), 0o644)
		got, err := PluginVersion(root)
		if ok != (err == nil) || ok && got != v {
			t.Errorf("version %q: got %q, %v", v, got, err)
		}
	}
}

// TestEnsureStableLink: the status line's link is made when missing or
// dangling, and left alone while it leads to a binary (the dispatcher
// keeps it on the newest).
func TestEnsureStableLink(t *testing.T) {
	data := t.TempDir()
	exe := filepath.Join(t.TempDir(), "orch-hook")
	os.WriteFile(exe, []byte("v1"), 0o755)
	if err := EnsureStableLink(data, exe); err != nil {
		t.Fatal(err)
	}
	link := StableBinary(data)
	if b, err := os.ReadFile(link); err != nil || string(b) != "v1" {
		t.Fatalf("%s: %q %v", link, b, err)
	}
	other := filepath.Join(t.TempDir(), "orch-hook")
	os.WriteFile(other, []byte("v2"), 0o755)
	if err := EnsureStableLink(data, other); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(link); string(b) != "v1" {
		t.Errorf("a working link was replaced: %q", b)
	}
	os.Remove(exe) // pruned
	if err := EnsureStableLink(data, other); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(link); string(b) != "v2" {
		t.Errorf("a dangling link was kept: %q", b)
	}
}
