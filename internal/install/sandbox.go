package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/orch-hook/orch-hook/state"
)

// Claude Code's Bash sandbox (bubblewrap on Linux, Seatbelt on macOS) runs
// every Bash command, and everything it starts, with the paths listed in
// sandbox.filesystem.denyWrite read-only. Listing orch-hook's directory there
// keeps the model's shell (sed, rm, a forged `orch-hook hook`) off the
// workflow's state, which hooks (not sandboxed) still write. README,
// "Threat model".

// ProtectedDir is what the sandbox settings make read-only to Bash.
const ProtectedDir = ".orchestrator"

// sandboxSettings are the settings /orch-hook:protect writes.
var sandboxSettings = []struct {
	key   string
	value bool
	why   string
}{
	{"enabled", true, "every Bash command runs in Claude Code's sandbox"},
	{"failIfUnavailable", true, "without bubblewrap (or Seatbelt), Claude Code refuses to start instead of running Bash unprotected"},
	{"allowUnsandboxedCommands", false, "a command cannot ask to leave the sandbox (dangerouslyDisableSandbox)"},
}

// ProtectConsequences says what the change means for the user.
func ProtectConsequences() string {
	var b strings.Builder
	for _, s := range sandboxSettings {
		fmt.Fprintf(&b, "- sandbox.%s: %v: %s\n", s.key, s.value, s.why)
	}
	fmt.Fprintf(&b, "- sandbox.filesystem.denyWrite += %q: Bash (and what it starts, the orch-hook binary included) cannot change orch-hook's state or plan; orch-hook's hooks, which are not sandboxed, still can\n", ProtectedDir)
	if denyRead, readRule, ok := HiddenKeys(); ok {
		fmt.Fprintf(&b, "- sandbox.filesystem.denyRead += %q and permissions.deny += %q: neither Bash nor the Read tool can read the keys that seal the workflow's state, so the model cannot re-seal a change\n", denyRead, readRule)
	}
	b.WriteString("- also: Bash cannot write under your home directory (tool caches such as ~/.cache/go-build or ~/.npm included) unless sandbox.filesystem.allowWrite lists them, and its network access follows the sandbox's rules; the project itself stays writable\n")
	b.WriteString("- the local file is this clone's only (not committed); --shared writes .claude/settings.json for the whole team\n")
	if runtime.GOOS == "linux" {
		b.WriteString("- on Linux the sandbox needs bubblewrap and socat (Debian/Ubuntu: apt-get install bubblewrap socat)\n")
	}
	return b.String()
}

// SettingsFile is where protection is written: .claude/settings.local.json
// (this machine only, not committed) unless shared, then
// .claude/settings.json (committed, for the whole team).
func SettingsFile(shared bool) string {
	if shared {
		return filepath.Join(".claude", "settings.json")
	}
	return filepath.Join(".claude", "settings.local.json")
}

// PlanProtect computes the settings change that turns the sandbox on for
// root; nil when the file already has it.
func PlanProtect(root string, shared bool) (*Change, error) {
	rel := SettingsFile(shared)
	old, err := os.ReadFile(filepath.Join(root, rel))
	if os.IsNotExist(err) {
		old, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	merged, err := MergeSandbox(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if old != nil && bytes.Equal(old, merged) {
		return nil, nil
	}
	return &Change{Path: rel, Old: old, New: merged}, nil
}

// MergeSandbox sets the protecting sandbox settings in a settings file,
// keeping every other setting (and the order of keys) as it is.
func MergeSandbox(old []byte) ([]byte, error) {
	keys, values, err := decodeObject(old)
	if err != nil {
		return nil, err
	}
	sbKeys, sbValues, err := decodeObject(values["sandbox"])
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	for _, s := range sandboxSettings {
		sbKeys = setKey(sbKeys, sbValues, s.key, []byte(fmt.Sprint(s.value)))
	}
	fsKeys, fsValues, err := decodeObject(sbValues["filesystem"])
	if err != nil {
		return nil, fmt.Errorf("sandbox.filesystem: %w", err)
	}
	var deny []string
	if raw, ok := fsValues["denyWrite"]; ok {
		if err := json.Unmarshal(raw, &deny); err != nil {
			return nil, fmt.Errorf("sandbox.filesystem.denyWrite: not a list of strings: %w", err)
		}
	}
	if !coversProtected(deny, "") {
		deny = append(deny, ProtectedDir)
	}
	denyRaw, _ := marshal(deny)
	fsKeys = setKey(fsKeys, fsValues, "denyWrite", denyRaw)
	denyRead, readRule, hide := HiddenKeys()
	if hide {
		if fsKeys, err = addToList(fsKeys, fsValues, "denyRead", denyRead); err != nil {
			return nil, fmt.Errorf("sandbox.filesystem.%w", err)
		}
	}
	fsRaw, _ := encodeObject(fsKeys, fsValues)
	sbKeys = setKey(sbKeys, sbValues, "filesystem", fsRaw)
	sbRaw, _ := encodeObject(sbKeys, sbValues)
	keys = setKey(keys, values, "sandbox", sbRaw)
	if hide {
		pKeys, pValues, err := decodeObject(values["permissions"])
		if err != nil {
			return nil, fmt.Errorf("permissions: %w", err)
		}
		if pKeys, err = addToList(pKeys, pValues, "deny", readRule); err != nil {
			return nil, fmt.Errorf("permissions.%w", err)
		}
		pRaw, _ := encodeObject(pKeys, pValues)
		keys = setKey(keys, values, "permissions", pRaw)
	}
	flat, _ := encodeObject(keys, values)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, flat, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	if len(old) > 0 && sameJSON(old, pretty.Bytes()) {
		return old, nil // already protected: keep the user's formatting
	}
	return pretty.Bytes(), nil
}

// addToList adds entry to the list of strings at key, unless it is there.
func addToList(keys []string, values map[string]json.RawMessage, key, entry string) ([]string, error) {
	var list []string
	if raw, ok := values[key]; ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%s: not a list of strings: %w", key, err)
		}
	}
	for _, e := range list {
		if strings.TrimSuffix(strings.TrimSuffix(e, "/**"), "/") == strings.TrimSuffix(entry, "/**") {
			return keys, nil
		}
	}
	raw, _ := marshal(append(list, entry))
	return setKey(keys, values, key, raw), nil
}

// HiddenKeys names orch-hook's keys directory (README, "State") as the
// settings do: sandbox.filesystem.denyRead hides it from every sandboxed
// command (an empty directory in its place, observed with Claude Code
// 2.1.328 and bubblewrap), and a Read permission rule from the Read tool,
// which the sandbox does not cover. Under the home directory it is written
// "~/...", portable across the team; elsewhere absolute ("//" in a rule).
func HiddenKeys() (denyRead, readRule string, ok bool) {
	dir, err := state.KeysDir()
	if err != nil {
		return "", "", false
	}
	if home, err := os.UserHomeDir(); err == nil {
		if rel, err := filepath.Rel(home, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			p := "~/" + filepath.ToSlash(rel)
			return p, "Read(" + p + "/**)", true
		}
	}
	return dir, "Read(/" + filepath.ToSlash(dir) + "/**)", true
}

func setKey(keys []string, values map[string]json.RawMessage, key string, raw []byte) []string {
	if _, ok := values[key]; !ok {
		keys = append(keys, key)
	}
	values[key] = raw
	return keys
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// coversProtected: a denyWrite entry that makes ProtectedDir read-only, in
// the forms Claude Code resolves against the project (".orchestrator",
// "./.orchestrator", with a trailing "/" or "/**"), or as an absolute path
// when root is given (user and managed settings).
func coversProtected(deny []string, root string) bool {
	for _, d := range deny {
		d = strings.TrimSuffix(strings.TrimSuffix(d, "/**"), "/")
		if d == ProtectedDir || d == "./"+ProtectedDir {
			return true
		}
		if root != "" && filepath.IsAbs(d) && filepath.Clean(d) == filepath.Join(root, ProtectedDir) {
			return true
		}
	}
	return false
}

// Protection is whether Claude Code's sandbox protects a project's state:
// its effective settings, read from the managed, local, project and user
// settings files, and the tools it needs.
type Protection struct {
	Protected bool `json:"protected"`
	// Enabled, DenyState, NoEscape and FailIfUnavailable are the effective
	// settings (sandbox.enabled, denyWrite covering .orchestrator,
	// allowUnsandboxedCommands false, failIfUnavailable).
	Enabled           bool `json:"enabled"`
	DenyState         bool `json:"deny_write_state"`
	NoEscape          bool `json:"no_unsandboxed_commands"`
	FailIfUnavailable bool `json:"fail_if_unavailable"`
	// MissingTools are what the sandbox needs and PATH lacks (Linux:
	// bwrap, socat).
	MissingTools []string `json:"missing_tools,omitempty"`
	// Problems say, one each, what keeps the project unprotected.
	Problems []string `json:"problems,omitempty"`
	// Files are the settings files read, most authoritative first.
	Files []string `json:"settings_files"`
}

// sandboxFile is the part of a settings file read here.
type sandboxFile struct {
	Sandbox *struct {
		Enabled                  *bool `json:"enabled"`
		FailIfUnavailable        *bool `json:"failIfUnavailable"`
		AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands"`
		Filesystem               *struct {
			DenyWrite []string `json:"denyWrite"`
		} `json:"filesystem"`
	} `json:"sandbox"`
}

// settingsFiles are Claude Code's settings files for root, most
// authoritative first: managed, local, project, user.
func settingsFiles(root string, getenv func(string) string) []string {
	var files []string
	switch runtime.GOOS {
	case "darwin":
		files = append(files, "/Library/Application Support/ClaudeCode/managed-settings.json")
	case "windows":
		files = append(files, `C:\Program Files\ClaudeCode\managed-settings.json`)
	default:
		files = append(files, "/etc/claude-code/managed-settings.json")
	}
	files = append(files, filepath.Join(root, ".claude", "settings.local.json"), filepath.Join(root, ".claude", "settings.json"))
	config := getenv("CLAUDE_CONFIG_DIR")
	if config == "" {
		if home := getenv("HOME"); home != "" {
			config = filepath.Join(home, ".claude")
		}
	}
	if config != "" {
		files = append(files, filepath.Join(config, "settings.json"))
	}
	return files
}

// CheckProtection reads the effective sandbox settings for root. lookPath
// finds a program (exec.LookPath; nil means it).
func CheckProtection(root string, getenv func(string) string, lookPath func(string) (string, error)) Protection {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var p Protection
	var enabled, fail, unsandboxed *bool
	for i, path := range settingsFiles(root, getenv) {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		p.Files = append(p.Files, path)
		var f sandboxFile
		if json.Unmarshal(b, &f) != nil || f.Sandbox == nil {
			continue
		}
		s := f.Sandbox
		enabled, fail, unsandboxed = first(enabled, s.Enabled), first(fail, s.FailIfUnavailable), first(unsandboxed, s.AllowUnsandboxedCommands)
		if s.Filesystem != nil {
			// In the project's own files (local, project: i 1 and 2) the
			// relative forms resolve against the project (an absolute one
			// was not seen to block there); elsewhere only the absolute one.
			if i == 1 || i == 2 {
				p.DenyState = p.DenyState || coversProtected(s.Filesystem.DenyWrite, "")
			} else {
				p.DenyState = p.DenyState || coversProtected(absOnly(s.Filesystem.DenyWrite), root)
			}
		}
	}
	p.Enabled = enabled != nil && *enabled
	p.FailIfUnavailable = fail != nil && *fail
	p.NoEscape = unsandboxed != nil && !*unsandboxed
	if runtime.GOOS == "linux" {
		for _, tool := range []string{"bwrap", "socat"} {
			if _, err := lookPath(tool); err != nil {
				p.MissingTools = append(p.MissingTools, tool)
			}
		}
	}
	if !p.Enabled {
		p.Problems = append(p.Problems, "sandbox.enabled is not true")
	}
	if !p.DenyState {
		p.Problems = append(p.Problems, "sandbox.filesystem.denyWrite does not list "+ProtectedDir)
	}
	if !p.NoEscape {
		p.Problems = append(p.Problems, "sandbox.allowUnsandboxedCommands is not false (a command may ask to leave the sandbox)")
	}
	if len(p.MissingTools) > 0 {
		p.Problems = append(p.Problems, strings.Join(p.MissingTools, " and ")+" not installed (the sandbox needs them)")
	}
	p.Protected = len(p.Problems) == 0
	return p
}

func first(have, next *bool) *bool {
	if have != nil {
		return have
	}
	return next
}

func absOnly(list []string) []string {
	var out []string
	for _, d := range list {
		if filepath.IsAbs(d) {
			out = append(out, d)
		}
	}
	return out
}

// Summary is one line: protected, or what is missing and what to type.
func (p Protection) Summary() string {
	if p.Protected {
		return fmt.Sprintf("on: Claude Code's sandbox makes %s read-only to Bash", ProtectedDir)
	}
	return "off: " + strings.Join(p.Problems, "; ") + ". Type /orch-hook:protect to turn it on"
}

// StatusLine is the status line command Claude Code runs for root (the
// most authoritative settings file that sets one) and that file; "" when
// none does. A plugin cannot set it (README, "Status line").
func StatusLine(root string, getenv func(string) string) (command, file string) {
	for _, f := range settingsFiles(root, getenv) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var s struct {
			StatusLine *struct {
				Command string `json:"command"`
			} `json:"statusLine"`
		}
		if json.Unmarshal(b, &s) == nil && s.StatusLine != nil {
			return s.StatusLine.Command, f
		}
	}
	return "", ""
}
