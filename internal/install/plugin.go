package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What Claude Code (2.1.328) writes when a plugin is installed and enabled,
// read to tell whether the orch-hook plugin runs in a project:
//
//   - <config>/plugins/installed_plugins.json: {"version": 2, "plugins":
//     {"<name>@<marketplace>": [{"scope": "user"|"project"|"local",
//     "projectPath": "<dir>" (project and local only), "installPath": ...}]}}
//   - enabledPlugins {"<name>@<marketplace>": true|false} in
//     <config>/settings.json, <project>/.claude/settings.json and
//     <project>/.claude/settings.local.json: the later file decides
//     (`claude plugin disable --scope local` turns a user-scope plugin off
//     in one project).
//
// <config> is $CLAUDE_CONFIG_DIR, else ~/.claude. Inside a plugin's hook,
// CLAUDE_PLUGIN_ROOT is set: the plugin is loaded there, however it came
// (--plugin-dir included).

// PluginName is the plugin's name in <name>@<marketplace>.
const PluginName = "orch-hook"

// PluginUse says whether Claude Code loads the orch-hook plugin in root,
// and why; Where is "" when it does not.
type PluginUse struct {
	Loaded bool
	Where  string
	Key    string // <name>@<marketplace>, when the records name it
}

// PluginLoaded reads Claude Code's plugin records for root.
func PluginLoaded(getenv func(string) string, root string) PluginUse {
	if dir := getenv("CLAUDE_PLUGIN_ROOT"); dir != "" {
		return PluginUse{Loaded: true, Where: "CLAUDE_PLUGIN_ROOT is set (" + dir + "): this runs inside the plugin's hook"}
	}
	config := getenv("CLAUDE_CONFIG_DIR")
	if config == "" {
		home := getenv("HOME")
		if home == "" {
			return PluginUse{}
		}
		config = filepath.Join(home, ".claude")
	}
	var installed struct {
		Plugins map[string][]struct {
			Scope       string `json:"scope"`
			ProjectPath string `json:"projectPath"`
		} `json:"plugins"`
	}
	b, err := os.ReadFile(filepath.Join(config, "plugins", "installed_plugins.json"))
	if err != nil || json.Unmarshal(b, &installed) != nil {
		return PluginUse{}
	}
	settings := []string{
		filepath.Join(config, "settings.json"),
		filepath.Join(root, ".claude", "settings.json"),
		filepath.Join(root, ".claude", "settings.local.json"),
	}
	keys := make([]string, 0, len(installed.Plugins))
	for k := range installed.Plugins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if name, _, _ := strings.Cut(key, "@"); name != PluginName {
			continue
		}
		in := false
		for _, i := range installed.Plugins[key] {
			in = in || i.Scope == "user" || samePath(i.ProjectPath, root)
		}
		if !in {
			continue
		}
		enabled, where := false, ""
		for _, f := range settings {
			var s struct {
				Enabled map[string]bool `json:"enabledPlugins"`
			}
			b, err := os.ReadFile(f)
			if err != nil || json.Unmarshal(b, &s) != nil {
				continue
			}
			if v, ok := s.Enabled[key]; ok {
				enabled, where = v, f
			}
		}
		if enabled {
			return PluginUse{Loaded: true, Where: key + ", enabled in " + where, Key: key}
		}
	}
	return PluginUse{}
}

// HookSettings lists the project's settings files that register
// orch-hook's hooks (what init writes), relative to root.
func HookSettings(root string) []string {
	var out []string
	for _, rel := range []string{SettingsFile(true), SettingsFile(false)} {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			continue
		}
		var s struct {
			Hooks map[string][]json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(b, &s) != nil {
			continue
		}
		found := false
		for _, entries := range s.Hooks {
			for _, e := range entries {
				found = found || isOurs(e)
			}
		}
		if found {
			out = append(out, rel)
		}
	}
	return out
}

// samePath compares two directories as the file system sees them.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
