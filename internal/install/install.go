// Package install writes orch-hook into a project's own .claude/ (for
// people who do not use plugins): the commands and agents rendered for that
// target, and the hook registrations merged into .claude/settings.json
// without touching anything else there; and the settings that the plugin's
// /orch-hook:protect and /orch-hook:statusline write as well (the sandbox,
// the status line). It is idempotent.
package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/templates"
)

// Change is one file init would create or update.
type Change struct {
	Path string // relative to the project root
	Old  []byte // nil when the file is new
	New  []byte
	// Theirs: the file is the user's (not one init wrote, or changed
	// since): it is replaced only with --force, its content kept in Backup.
	Theirs bool
	Backup string // relative to the root; set by Force
}

// Plan computes what `orch-hook init` would write in root. The settings
// files are merged (every other key kept); any other file that exists and
// differs is the user's (Theirs) unless it is one init wrote, unchanged
// since (Ours).
func Plan(root string) ([]Change, error) {
	files, err := templates.Render(templates.Init)
	if err != nil {
		return nil, err
	}
	plain := map[string][]byte{}
	for p, b := range files {
		plain[p] = b
		files[p] = Stamp(b)
	}
	settingsPath := filepath.Join(".claude", "settings.json")
	old, err := os.ReadFile(filepath.Join(root, settingsPath))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	merged, err := MergeSettings(old, templates.Hooks(templates.Init))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", settingsPath, err)
	}
	files[settingsPath] = merged
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var changes []Change
	for _, p := range paths {
		cur, err := os.ReadFile(filepath.Join(root, p))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if err == nil && bytes.Equal(cur, files[p]) {
			continue
		}
		if os.IsNotExist(err) {
			cur = nil
		}
		// An unstamped file equal to what init renders today was written
		// by an init from before the stamp: init's too.
		theirs := cur != nil && p != settingsPath && !Ours(cur) && !bytes.Equal(cur, plain[p])
		changes = append(changes, Change{Path: p, Old: cur, New: files[p], Theirs: theirs})
	}
	return changes, nil
}

// stampPrefix starts the line init adds to every Markdown file it writes,
// right below the frontmatter's opening "---": a YAML comment, which
// Claude Code does not read and the model never sees. It names the hash
// of the rest of the file, so that a later init tells a file it wrote,
// unchanged since (replaced on upgrade), from one the user wrote or
// edited (kept unless --force).
const stampPrefix = "# orch-hook init wrote this file; it replaces it on upgrade while it is unchanged: sha256:"

// Stamp adds init's line to rendered Markdown (which opens with "---").
func Stamp(b []byte) []byte {
	head, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(head) != "---" {
		return b
	}
	var out bytes.Buffer
	out.Write(head)
	out.WriteString("\n" + stampPrefix + stampHash(b) + "\n")
	out.Write(rest)
	return out.Bytes()
}

// Ours reports a file carrying init's stamp whose hash matches the rest of
// it: written by init (any version) and not changed since. Line endings do
// not count, so a checkout that turned them into CRLF is still init's.
func Ours(b []byte) bool {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	head, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(head) != "---" {
		return false
	}
	line, body, ok := bytes.Cut(rest, []byte("\n"))
	sum, found := bytes.CutPrefix(line, []byte(stampPrefix))
	if !ok || !found {
		return false
	}
	// A new slice: appending to head would write over b, sum included.
	rest = make([]byte, 0, len(head)+1+len(body))
	rest = append(append(append(rest, head...), '\n'), body...)
	return string(sum) == stampHash(rest)
}

func stampHash(b []byte) string {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ConflictError: init would replace files of the user's own.
type ConflictError struct{ Files []string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("init would replace %d file(s) it did not write, or that were changed since it wrote them: %s; nothing was written", len(e.Files), strings.Join(e.Files, ", "))
}

// Hint says how to go on.
func (e *ConflictError) Hint() string {
	return "`orch-hook init --force` replaces them and keeps each one's content as <file>.bak (<file>.bak.1, .bak.2, ... when that exists); `orch-hook init --force --dry-run` shows the change first"
}

// Conflicts is a ConflictError naming the changes that replace the
// user's files, or nil.
func Conflicts(changes []Change) error {
	var files []string
	for _, c := range changes {
		if c.Theirs {
			files = append(files, c.Path)
		}
	}
	if files == nil {
		return nil
	}
	return &ConflictError{Files: files}
}

// Force names where each of the user's files replaced is kept: <file>.bak,
// else the first free <file>.bak.N. A backup is never overwritten.
func Force(root string, changes []Change) ([]Change, error) {
	taken := map[string]bool{}
	for _, c := range changes {
		taken[c.Path] = true
	}
	for i := range changes {
		if !changes[i].Theirs {
			continue
		}
		for n := 0; ; n++ {
			name := changes[i].Path + ".bak"
			if n > 0 {
				name += fmt.Sprintf(".%d", n)
			}
			_, err := os.Lstat(filepath.Join(root, name))
			if errors.Is(err, fs.ErrNotExist) && !taken[name] {
				changes[i].Backup, taken[name] = name, true
				break
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	return changes, nil
}

// noLinkedDir refuses a write whose directories inside the project (such
// as .claude) are symbolic links: the write would land wherever the link
// points, and the hooks that write settings run outside the sandbox.
func noLinkedDir(root, rel string) error {
	dir := root
	parts := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
	for _, part := range parts {
		if part == "." || part == "" {
			continue
		}
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil // to be created
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("refusing to write %s: %s is a symbolic link (orch-hook writes settings only into the project's own directories)", rel, dir)
		}
	}
	return nil
}

// Apply writes the changes, each user's file kept first in its Backup
// (created, never overwritten). A change replacing a user's file without
// a backup is refused before anything is written.
func Apply(root string, changes []Change) error {
	for _, c := range changes {
		if c.Theirs && c.Backup == "" {
			return Conflicts([]Change{c})
		}
	}
	for _, c := range changes {
		full := filepath.Join(root, c.Path)
		if err := noLinkedDir(root, c.Path); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if c.Backup != "" {
			if err := keep(full, filepath.Join(root, c.Backup), c.Old); err != nil {
				return err
			}
		}
		// A fresh temporary file (O_EXCL, a random name): a fixed name
		// planted as a symlink would be followed, and the write land
		// wherever it points (the hooks that call this run unsandboxed).
		f, err := os.CreateTemp(filepath.Dir(full), filepath.Base(full)+".orch-hook-tmp-*")
		if err != nil {
			return err
		}
		tmp := f.Name()
		_, werr := f.Write(c.New)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp, 0o644)
		}
		if werr == nil {
			werr = os.Rename(tmp, full)
		}
		if werr != nil {
			os.Remove(tmp)
			return werr
		}
	}
	return nil
}

// keep writes old, the content of file, to backup, with file's mode; an
// existing backup is an error, never overwritten.
func keep(file, backup string, old []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(file); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(old); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isOurs recognizes an orch-hook hook entry, whatever version wrote it.
func isOurs(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("orch-hook")) && bytes.Contains(raw, []byte(" hook "))
}

// MergeSettings puts orch-hook's hook entries into a settings.json: for
// each event, earlier orch-hook entries are replaced and every other entry
// is kept in place; every other setting is kept, and the top-level keys
// keep their order.
func MergeSettings(old []byte, hooks map[string][]templates.HookMatcher) ([]byte, error) {
	keys, values, err := decodeObject(old)
	if err != nil {
		return nil, err
	}
	var hookKeys []string
	var hookValues map[string]json.RawMessage
	if raw, ok := values["hooks"]; ok {
		if hookKeys, hookValues, err = decodeObject(raw); err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
		}
	} else {
		keys = append(keys, "hooks")
		hookValues = map[string]json.RawMessage{}
	}
	events := make([]string, 0, len(hooks))
	for ev := range hooks {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		var entries []json.RawMessage
		if raw, ok := hookValues[ev]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf("hooks.%s: not a list: %w", ev, err)
			}
		} else {
			hookKeys = append(hookKeys, ev)
		}
		kept := entries[:0]
		for _, e := range entries {
			if !isOurs(e) {
				kept = append(kept, e)
			}
		}
		for _, m := range hooks[ev] {
			b, err := marshal(m)
			if err != nil {
				return nil, err
			}
			kept = append(kept, b)
		}
		b, err := marshal(kept)
		if err != nil {
			return nil, err
		}
		hookValues[ev] = b
	}
	hooksRaw, err := encodeObject(hookKeys, hookValues)
	if err != nil {
		return nil, err
	}
	values["hooks"] = hooksRaw
	out, err := encodeObject(keys, values)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	return pretty.Bytes(), nil
}

// decodeObject reads a JSON object keeping its key order.
func decodeObject(b []byte) ([]string, map[string]json.RawMessage, error) {
	values := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, values, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("not valid JSON: %w", err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("not valid JSON at %q: %w", key, err)
		}
		if _, dup := values[key]; !dup {
			keys = append(keys, key)
		}
		values[key] = raw
	}
	return keys, values, nil
}

func encodeObject(keys []string, values map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(values[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Patch renders the changes as one patch git apply takes (from the project
// root): each file in git's format, a user's file kept in its backup shown
// as the backup's creation before the file's replacement.
func Patch(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		if c.Backup != "" {
			b.WriteString(filePatch(c.Backup, nil, c.Old))
		}
		b.WriteString(filePatch(c.Path, c.Old, c.New))
	}
	return b.String()
}

// filePatch is one file's diff from old (nil: no file) to new, with git's
// header (which also lets git apply create an empty file).
func filePatch(path string, old, new []byte) string {
	header := fmt.Sprintf("diff --git a/%s b/%s\n", path, path)
	if old == nil {
		header += "new file mode 100644\n"
	}
	return header + Diff(Change{Path: path, Old: old, New: new})
}

// Diff renders one change as a unified diff (from /dev/null for a new
// file).
func Diff(c Change) string {
	from := "a/" + c.Path
	if c.Old == nil {
		from = "/dev/null"
	}
	return gates.Patch(from, "b/"+c.Path, string(c.Old), string(c.New))
}

// marshal encodes without HTML escaping: settings.json holds shell lines
// with & and >, which people read.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
