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
