package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Claude Code shows one status line: the statusLine of the most
// authoritative settings file that sets one (managed, local, project,
// user); a plugin's settings cannot set it (README, "Status line"). orch-hook
// writes its own into .claude/settings.local.json, this clone's file: in the
// committed .claude/settings.json it would replace every teammate's own.
//
// A status line the user already has is chained, not replaced: the command
// written runs theirs, then orch-hook's, both on the JSON Claude Code passes
// on stdin. The chaining is in the command line itself, which Claude Code
// runs through sh as it ran theirs: orch-hook never runs text it read from
// a settings file. Their text is single-quoted and run by eval in a
// subshell, so any text survives (quotes, $, backticks, newlines, a trailing
// comment) and an exit or exec in it ends only that subshell. Their output
// is shown only when their command succeeds (as Claude Code shows nothing
// of a command that fails), and orch-hook's line follows either way.

// The chained command: chainHead THEIRS(quoted) chainMid BIN chainTail.
// stdin is read once, exactly (the "." keeps a trailing newline, which
// $(...) would strip), and given to each command.
const (
	chainHead = `orch_hook_stdin=$(cat; printf .); orch_hook_stdin=${orch_hook_stdin%.}; orch_hook_theirs=$(printf %s "$orch_hook_stdin" | (eval `
	chainMid  = `)) && printf '%s\n' "$orch_hook_theirs"; printf %s "$orch_hook_stdin" | `
	// chainTail names where their command came from (a scope), which a
	// later run reads: a chained user or project status line is followed
	// when it changes there; a local one lives only here.
	chainTail = ` statusline; exit 0 # orch-hook: your status line (%s settings) first, then orch-hook's`
)

// Settings scopes, as Claude Code names them.
const (
	ScopeManaged = "managed"
	ScopeLocal   = "local"
	ScopeProject = "project"
	ScopeUser    = "user"
)

// StatusLineSetting is the statusLine one settings file sets.
type StatusLineSetting struct {
	Scope string          // managed, project or user
	File  string          // the file, as shown to the user
	Value json.RawMessage // the statusLine object as written there
}

// Command is the setting's command ("" when it has none).
func (s StatusLineSetting) Command() string {
	var v struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(s.Value, &v)
	return v.Command
}

// OtherStatusLines reads the statusLine of root's settings files other
// than the local one, most authoritative first; a file that sets none is
// left out. A file that is not JSON is an error: the status line it may
// set would be lost.
func OtherStatusLines(root string, getenv func(string) string) ([]StatusLineSetting, error) {
	var out []StatusLineSetting
	home := getenv("HOME")
	for i, f := range settingsFiles(root, getenv) {
		scope := []string{ScopeManaged, ScopeLocal, ScopeProject, ScopeUser}[i]
		if scope == ScopeLocal {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		shown := f
		if scope == ScopeProject {
			shown = filepath.Join(".claude", "settings.json")
		} else if rel, err := filepath.Rel(home, f); home != "" && err == nil && !strings.HasPrefix(rel, "..") {
			shown = "~/" + filepath.ToSlash(rel)
		}
		_, values, err := decodeObject(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", shown, err)
		}
		if raw, ok := values["statusLine"]; ok && string(raw) != "null" {
			out = append(out, StatusLineSetting{Scope: scope, File: shown, Value: raw})
		}
	}
	return out, nil
}

// StatusLineResult says what MergeStatusLine did, for the user.
type StatusLineResult struct {
	// Command is the local statusLine command afterwards ("" when none).
	Command string
	// Theirs is the user's command chained before orch-hook's ("" when
	// none), from the settings file From.
	Theirs, From string
	// Already names the file whose status line, not one orch-hook wrote,
	// already runs orch-hook statusline: nothing was changed.
	Already string
	// Managed names the managed settings file that sets the status line:
	// Claude Code shows it over any of the user's, so nothing was changed.
	Managed string
	// Removed: with remove, orch-hook's status line was taken out (and
	// Theirs, when set, put back).
	Removed bool
}

// MergeStatusLine sets orch-hook's status line in the local settings file
// (local, its content; others, the other files' status lines from
// OtherStatusLines), chaining the user's own, or with remove takes it out.
// Every other setting, and the order of keys, is kept; running it again
// changes nothing unless the user's own status line changed meanwhile. bin
// is the binary the status line runs.
func MergeStatusLine(local []byte, others []StatusLineSetting, bin string, remove bool) ([]byte, StatusLineResult, error) {
	var res StatusLineResult
	keys, values, err := decodeObject(local)
	if err != nil {
		return nil, res, err
	}
	var curKeys []string
	var curValues map[string]json.RawMessage
	curCmd := ""
	raw, set := values["statusLine"]
	set = set && string(raw) != "null"
	if set {
		if curKeys, curValues, err = decodeObject(raw); err != nil {
			return nil, res, fmt.Errorf("statusLine: %w", err)
		}
		if c, ok := curValues["command"]; ok {
			if err := json.Unmarshal(c, &curCmd); err != nil {
				return nil, res, fmt.Errorf("statusLine.command: not a string")
			}
		}
	}
	ours := parseStatusLine(curCmd)
	if remove {
		switch {
		case !set || !ours.ok:
			res.Command = curCmd
			return local, res, nil
		case ours.theirs != "" && ours.scope == ScopeLocal:
			// Their own local status line, as it was.
			res.Theirs, res.From = ours.theirs, SettingsFile(false)
			cmd, _ := marshal(ours.theirs)
			curKeys = setKey(curKeys, curValues, "command", cmd)
			obj, _ := encodeObject(curKeys, curValues)
			keys = setKey(keys, values, "statusLine", obj)
			res.Command = ours.theirs
		default:
			keys = deleteKey(keys, values, "statusLine")
		}
		res.Removed = true
		b, err := settingsBytes(local, keys, values)
		return b, res, err
	}

	var lower *StatusLineSetting
	for i := range others {
		switch others[i].Scope {
		case ScopeManaged:
			res.Managed, res.Command = others[i].File, curCmd
			return local, res, nil
		case ScopeProject, ScopeUser:
			if lower == nil {
				lower = &others[i]
			}
		}
	}
	theirs, from := "", ""
	base := &StatusLineSetting{} // the object the command goes in
	if set {
		base.Value = raw
	}
	switch {
	case set && ours.ok && ours.theirs != "" && ours.scope == ScopeLocal:
		theirs, from = ours.theirs, ScopeLocal
	case set && !ours.ok && showsOrchHook(curCmd):
		res.Already, res.Command = SettingsFile(false), curCmd
		return local, res, nil
	case set && !ours.ok:
		theirs, from = curCmd, ScopeLocal
	case lower != nil:
		// Below the local file: what Claude Code shows without orch-hook's.
		low := parseStatusLine(lower.Command())
		switch {
		case low.ok:
			theirs = low.theirs
		case showsOrchHook(lower.Command()):
			// Theirs shows orch-hook's line already: one of orch-hook's
			// own here would only hide it.
			res.Already = lower.File
			if !set {
				return local, res, nil
			}
			keys = deleteKey(keys, values, "statusLine")
			b, err := settingsBytes(local, keys, values)
			return b, res, err
		default:
			theirs = lower.Command()
		}
		from = lower.Scope
		if _, _, err := decodeObject(lower.Value); err == nil && !set {
			base = lower // their padding and such, kept
		}
	}
	if strings.ContainsRune(theirs, 0) {
		return nil, res, errors.New("the status line command to chain holds a NUL byte, which no shell passes on")
	}
	cmd := PlainStatusLine(bin)
	if theirs != "" {
		cmd = ChainStatusLine(theirs, bin, from)
		res.Theirs = theirs
		res.From = scopeFile(from, lower)
	}
	res.Command = cmd
	objKeys, objValues, err := decodeObject(base.Value)
	if err != nil {
		return nil, res, fmt.Errorf("statusLine: %w", err)
	}
	objKeys = setKey(objKeys, objValues, "type", []byte(`"command"`))
	cmdRaw, _ := marshal(cmd)
	objKeys = setKey(objKeys, objValues, "command", cmdRaw)
	obj, _ := encodeObject(objKeys, objValues)
	if set && sameJSON(raw, obj) {
		return local, res, nil
	}
	keys = setKey(keys, values, "statusLine", obj)
	b, err := settingsBytes(local, keys, values)
	return b, res, err
}

// Summary says in a sentence or two what the status line now runs; typed
// is how the user types the command that changes it.
func (res StatusLineResult) Summary(typed string, remove bool) string {
	switch {
	case res.Managed != "":
		return "The managed settings (" + res.Managed + ") set the status line, and Claude Code shows theirs over any of yours, so orch-hook's line cannot be added."
	case res.Already != "":
		return "Your status line (" + res.Already + ") already runs orch-hook statusline."
	case remove && res.Removed && res.Theirs != "":
		return "Your status line is back as it was: " + shorten.Runes(shorten.OneLine(res.Theirs), 80) + "."
	case remove && res.Removed:
		return "orch-hook's status line is out of " + SettingsFile(false) + "; Claude Code shows the one your other settings set, if any."
	case remove:
		return SettingsFile(false) + " has no status line of orch-hook's."
	case res.Theirs != "":
		return "The status line runs yours (" + shorten.Runes(shorten.OneLine(res.Theirs), 60) + ", from " + res.From + ") first, then orch-hook's line: the workflow's step, its counters, the agents running and whether it waits on you (nothing without a workflow). " + typed + " --remove puts yours back."
	}
	return "The status line shows orch-hook's line: the workflow's step, its counters, the agents running and whether it waits on you (nothing without a workflow). " + typed + " --remove takes it out."
}

// settingsBytes is the settings file with keys, indented as init writes
// settings; old itself when nothing but its formatting would change.
func settingsBytes(old []byte, keys []string, values map[string]json.RawMessage) ([]byte, error) {
	flat, _ := encodeObject(keys, values)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, flat, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	if len(old) > 0 && sameJSON(old, pretty.Bytes()) {
		return old, nil
	}
	return pretty.Bytes(), nil
}

func scopeFile(scope string, lower *StatusLineSetting) string {
	if scope == ScopeLocal || lower == nil {
		return SettingsFile(false)
	}
	return lower.File
}

func deleteKey(keys []string, values map[string]json.RawMessage, key string) []string {
	delete(values, key)
	out := keys[:0]
	for _, k := range keys {
		if k != key {
			out = append(out, k)
		}
	}
	return out
}

// PlainStatusLine is orch-hook's status line alone.
func PlainStatusLine(bin string) string {
	return shellWord(bin) + " statusline"
}

// ChainStatusLine is the command that runs theirs, then orch-hook's
// status line (bin), both on the same stdin; scope is where theirs is set.
func ChainStatusLine(theirs, bin, scope string) string {
	return chainHead + shellQuote(theirs) + chainMid + shellWord(bin) + fmt.Sprintf(chainTail, scope)
}

// statusLineForm is a status line command read back.
type statusLineForm struct {
	ok     bool   // written by orch-hook (or the plain `.../orch-hook statusline`)
	theirs string // chained before orch-hook's
	scope  string // where theirs was set
	bin    string // the binary, as a shell word
}

// parseStatusLine recognizes the commands PlainStatusLine and
// ChainStatusLine write.
func parseStatusLine(cmd string) statusLineForm {
	if rest, ok := strings.CutPrefix(cmd, chainHead); ok {
		theirs, rest, ok := cutQuoted(rest)
		if !ok {
			return statusLineForm{}
		}
		rest, ok = strings.CutPrefix(rest, chainMid)
		head, _, _ := strings.Cut(chainTail, "%s")
		i := strings.LastIndex(rest, head)
		if !ok || i < 0 {
			return statusLineForm{}
		}
		bin, tagged := rest[:i], rest[i:]
		for _, scope := range []string{ScopeLocal, ScopeProject, ScopeUser} {
			if tagged == fmt.Sprintf(chainTail, scope) && isBinaryWord(bin) {
				return statusLineForm{ok: true, theirs: theirs, scope: scope, bin: bin}
			}
		}
		return statusLineForm{}
	}
	if bin, ok := strings.CutSuffix(strings.TrimSpace(cmd), " statusline"); ok && isBinaryWord(bin) {
		return statusLineForm{ok: true, bin: bin}
	}
	return statusLineForm{}
}

// StatusLineBinaryOf is the binary an orch-hook status line command runs
// (a path, ~ expanded with home), or "" when cmd is not one.
func StatusLineBinaryOf(cmd, home string) string {
	f := parseStatusLine(cmd)
	if !f.ok {
		return ""
	}
	bin := f.bin
	if unq, rest, ok := cutQuoted(bin); ok && rest == "" {
		bin = unq
	}
	if rest, ok := strings.CutPrefix(bin, "~/"); ok && home != "" {
		bin = filepath.Join(home, rest)
	}
	return bin
}

// StatusLineChained is the user's command an orch-hook status line
// command runs first ("" when none).
func StatusLineChained(cmd string) string { return parseStatusLine(cmd).theirs }

// isBinaryWord: one shell word naming orch-hook (any directory; the
// release names orch-hook-<os>-<arch> too).
func isBinaryWord(w string) bool {
	if unq, rest, ok := cutQuoted(w); ok && rest == "" {
		w = unq
	} else if strings.ContainsAny(w, " \t\n;&|<>()$`\"'\\*?[]{}") {
		return false
	}
	return strings.HasPrefix(filepath.Base(filepath.ToSlash(w)), "orch-hook")
}

// showsOrchHook: a command that runs orch-hook's status line among other
// things (doctor's test too).
func showsOrchHook(cmd string) bool {
	return strings.Contains(cmd, "orch-hook") && strings.Contains(cmd, "statusline")
}

// shellQuote is s as one single-quoted sh word, whatever it holds.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWord is s as an sh word: bare when nothing in it is special.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r)) {
			return shellQuote(s)
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

// cutQuoted reads a word shellQuote wrote at the start of s: its text and
// what follows.
func cutQuoted(s string) (text, rest string, ok bool) {
	if !strings.HasPrefix(s, "'") {
		return "", s, false
	}
	var b strings.Builder
	s = s[1:]
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			return "", "", false
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		if after, found := strings.CutPrefix(s, `\''`); found {
			b.WriteByte('\'')
			s = after
			continue
		}
		return b.String(), s, true
	}
}

// StatusLineBinary is the orch-hook a status line should run, by a path
// that outlives updates. In the plugin ($CLAUDE_PLUGIN_DATA set, as for its
// hooks) it is the data directory's bin/orch-hook, which the dispatcher
// points at each version it installs (made here when missing, unless
// dryRun); otherwise this binary, by the PATH entry that finds it when
// there is one (so that an upgrade copied there is run). note, when not
// empty, says what the user should know.
func StatusLineBinary(getenv func(string) string, dryRun bool) (bin, note string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("cannot find the running orch-hook binary: %w", err)
	}
	if data := getenv("CLAUDE_PLUGIN_DATA"); data != "" && filepath.IsAbs(data) {
		stable := bootstrap.StableBinary(data)
		if dryRun {
			return stable, "", nil
		}
		if err := bootstrap.EnsureStableLink(data, exe); err != nil {
			return exe, "could not link " + stable + " (" + err.Error() + "), so the status line runs this version's binary by its path, which a later plugin update removes: type the command again after updating", nil
		}
		return stable, "", nil
	}
	if p, err := exec.LookPath("orch-hook"); err == nil {
		if abs, err := filepath.Abs(p); err == nil && sameFile(abs, exe) {
			return abs, "", nil
		}
	}
	return exe, "", nil
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// PlanStatusLine computes the change to .claude/settings.local.json that
// sets orch-hook's status line (remove: takes it out); Change is nil when
// there is nothing to change.
func PlanStatusLine(root, bin string, getenv func(string) string, remove bool) (*Change, StatusLineResult, error) {
	rel := SettingsFile(false)
	old, err := os.ReadFile(filepath.Join(root, rel))
	if os.IsNotExist(err) {
		old, err = nil, nil
	}
	if err != nil {
		return nil, StatusLineResult{}, err
	}
	others, err := OtherStatusLines(root, getenv)
	if err != nil {
		return nil, StatusLineResult{}, err
	}
	merged, res, err := MergeStatusLine(old, others, bin, remove)
	if err != nil {
		return nil, res, fmt.Errorf("%s: %w", rel, err)
	}
	if bytes.Equal(old, merged) {
		return nil, res, nil
	}
	return &Change{Path: rel, Old: old, New: merged}, res, nil
}
