package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemo replays the recorded session through a freshly built binary:
// it must run to the end and leave the workflow complete.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "orch-hook")
	build := exec.Command("go", "build", "-o", bin, "../../../cmd/orch-hook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	stdout := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(stdout)
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = f
	err = run(bin, "testdata/session.jsonl", dir)
	os.Stdout = saved
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(stdout)
	for _, want := range []string{
		"DENY   PreToolUse orchestrator: Bash \"orch-hook approve\"",
		"[Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed",
		"[STEP 6] SUCCESS_EXTRACTION -> complete",
		"State: complete (finished; nothing is gated)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "export", "csv.ts")); err != nil {
		t.Errorf("the implementer's allowed Write was not applied: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "ui", "ExportButton.tsx")); err != nil {
		t.Errorf("the implementer's allowed Write was not applied: %v", err)
	}

	// Without -dir (as `make demo` runs it), the demo removes its scratch
	// project, and keeps the workflow's marker and key out of the user's
	// config directory.
	tmp, config := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_CONFIG_HOME", config)
	os.Stdout, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	err = run(bin, "testdata/session.jsonl", "")
	os.Stdout.Close()
	os.Stdout = saved
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{tmp, config} {
		if left, _ := os.ReadDir(d); len(left) > 0 {
			t.Errorf("the demo left %s in %s", left[0].Name(), d)
		}
	}
}
