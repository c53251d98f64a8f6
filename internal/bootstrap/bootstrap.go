// Package bootstrap is the Go side of the plugin's dispatcher,
// hooks/bootstrap.sh (README, "How the plugin gets its binary"): the
// dispatcher installs the binary into ${CLAUDE_PLUGIN_DATA}/bin/<version>/
// and leaves beside it what the binary later reports: a notice for the
// user (a refused download, a shipped binary that did not match its
// checksum) and the plugin root it was installed from. It also reads the
// plugin's version, which names the binary's directory.
package bootstrap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// StableName is the link the dispatcher keeps in ${CLAUDE_PLUGIN_DATA}/bin/
// to the newest version's binary: the path the status line runs (Claude
// Code gives a statusLine command no plugin variable, and the command is
// written once into the user's settings, so it must outlive updates; the
// version directories are pruned).
const StableName = "orch-hook"

// StableBinary is that link's path in the plugin's data directory.
func StableBinary(data string) string {
	name := StableName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(data, "bin", name)
}

// EnsureStableLink makes StableBinary(data) a link to exe unless it already
// leads to a file (the dispatcher points it at each version it installs; an
// install from before the link existed has none until its next update).
func EnsureStableLink(data, exe string) error {
	link := StableBinary(data)
	if fi, err := os.Stat(link); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	// Made aside and renamed over, so no run sees it half made.
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// Files the dispatcher writes beside the binary.
const (
	NoticeFile     = "notice"      // one line per thing the user must hear once
	PluginRootFile = "plugin-root" // the plugin root the binary was installed from
	LogFile        = "bootstrap.log"
)

// maxNotice bounds what a notice adds to a SessionStart message.
const maxNotice = 2000

// TakeNotice returns the dispatcher's notice beside the binary exe and
// removes it, so the user hears it once; "" when there is none.
func TakeNotice(exe string) string {
	if exe == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), NoticeFile)
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxNotice+1))
	f.Close()
	os.Remove(p)
	text := strings.TrimSpace(string(b))
	if len(text) > maxNotice {
		text = text[:maxNotice] + " ..."
	}
	if text == "" {
		return ""
	}
	return text
}

// PluginRoot is the plugin root recorded beside the binary exe by the
// dispatcher, or "".
func PluginRoot(exe string) string {
	if exe == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(exe), PluginRootFile))
	if err != nil {
		return ""
	}
	root := strings.TrimSpace(string(b))
	if !filepath.IsAbs(root) {
		return ""
	}
	return root
}

// PluginVersion reads the version from <root>/.claude-plugin/plugin.json:
// the hooks run the binary of that version.
func PluginVersion(root string) (string, error) {
	p := filepath.Join(root, ".claude-plugin", "plugin.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	var manifest struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return "", fmt.Errorf("%s: %v", p, err)
	}
	if !ValidVersion(manifest.Version) {
		return "", fmt.Errorf("%s: version %q is not x.y.z", p, manifest.Version)
	}
	return manifest.Version, nil
}

// ValidVersion: x.y.z with an optional -suffix of letters, digits and
// dots, nothing a path or a shell could read as more.
func ValidVersion(v string) bool {
	core, suffix, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range append(parts, suffix) {
		for _, r := range p {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.') {
				return false
			}
		}
	}
	return parts[0] != "" && parts[1] != "" && parts[2] != ""
}
