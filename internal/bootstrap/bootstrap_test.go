package bootstrap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func plugin(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755)
	os.WriteFile(filepath.Join(root, ".claude-plugin", "plugin.json"), []byte(`{"name":"orch-hook","version":"`+version+`"}`), 0o644)
	return root
}

func TestCheckVersionSame(t *testing.T) {
	root := plugin(t, "1.2.3")
	if note := CheckVersion(root, "1.2.3"); note != "" {
		t.Errorf("same version: %q, want nothing", note)
	}
	if note := CheckVersion(root, "dev"); note != "" {
		t.Errorf("dev build: %q, want nothing", note)
	}
	if note := CheckVersion("", "1.0.0"); note != "" {
		t.Errorf("no plugin root: %q, want nothing", note)
	}
}

// TestCheckVersionRebuilds: a stale binary starts a background build under
// the lock; a second session finds the lock and starts nothing.
func TestCheckVersionRebuilds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go")
	}
	root := plugin(t, "2.0.0")
	note := CheckVersion(root, "1.0.0")
	if !strings.Contains(note, "updated to 2.0.0; rebuilding") {
		t.Fatalf("note %q", note)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", ".build.lock")); err != nil {
		// The build (which fails: no source here) may already be over.
		if _, err := os.Stat(filepath.Join(root, "bin", "build.log")); err != nil {
			t.Fatalf("neither the lock nor the build log exists: the build did not start")
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(root, "bin", ".build.lock")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the build lock was never released")
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(root, "bin", "build.log"))
	if len(log) == 0 {
		t.Errorf("build.log is empty: go build did not run")
	}
}
