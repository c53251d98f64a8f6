// Package bootstrap keeps the plugin's binary in step with the plugin: at
// SessionStart, a binary whose version differs from .claude-plugin/plugin.json
// (the plugin was updated in place, e.g. a git pull of a --plugin-dir
// checkout) starts `go build` of the new version in the background, under
// the same lock directory hooks/bootstrap.sh uses for a missing binary.
package bootstrap

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// PluginVersion reads the version from <root>/.claude-plugin/plugin.json.
func PluginVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, ".claude-plugin", "plugin.json"))
	if err != nil {
		return "", err
	}
	var manifest struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil || manifest.Version == "" {
		return "", fmt.Errorf("no version in plugin.json")
	}
	return manifest.Version, nil
}

// CheckVersion compares the running binary's version with the plugin's and
// starts a rebuild when they differ. It returns a note for the session, or
// "" when nothing had to be done. A development build ("dev") is left alone.
func CheckVersion(root, running string) string {
	if root == "" || running == "dev" {
		return ""
	}
	want, err := PluginVersion(root)
	if err != nil || want == running {
		return ""
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Sprintf("orch-hook: the binary is version %s but the plugin is %s, and Go is not installed to rebuild it; run make build in %s.", running, want, root)
	}
	if err := startBuild(root, want); err != nil {
		return fmt.Sprintf("orch-hook: the binary is version %s but the plugin is %s; rebuilding failed to start (%v): run make build in %s.", running, want, err, root)
	}
	return fmt.Sprintf("orch-hook: the plugin was updated to %s; rebuilding the binary (now %s) in the background.", want, running)
}

// startBuild runs go build detached, under bin/.build.lock (a directory:
// mkdir is atomic, and the shell bootstrap uses the same lock).
func startBuild(root, version string) error {
	lock := filepath.Join(root, "bin", ".build.lock")
	if fi, err := os.Stat(lock); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
		os.Remove(lock)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(lock, 0o755); err != nil {
		return nil // another session is building it
	}
	tmp := filepath.Join("bin", fmt.Sprintf("orch-hook.tmp.%d", os.Getpid()))
	// sh -c runs only this fixed line; the version and paths are passed as
	// arguments, never interpolated into it.
	script := `CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -ldflags "-s -w -X main.version=$1" -o "$2" ./cmd/orch-hook >bin/build.log 2>&1 && mv -f "$2" bin/orch-hook; rm -f "$2"; rmdir bin/.build.lock`
	cmd := exec.Command("sh", "-c", script, "build", version, tmp)
	cmd.Dir = root
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		os.Remove(lock)
		return err
	}
	return cmd.Process.Release()
}
