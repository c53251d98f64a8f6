// Package install writes orch-hook into a project's own .claude/ (for
// people who do not use plugins): the commands and agents rendered for that
// target, and the hook registrations merged into .claude/settings.json
// without touching anything else there. It is idempotent.
package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/templates"
)

// Change is one file init would create or update.
type Change struct {
	Path string // relative to the project root
	Old  []byte // nil when the file is new
	New  []byte
}

// Plan computes what `orch-hook init` would write in root.
func Plan(root string) ([]Change, error) {
	files, err := templates.Render(templates.Init)
	if err != nil {
		return nil, err
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
		changes = append(changes, Change{Path: p, Old: cur, New: files[p]})
	}
	return changes, nil
}

// Apply writes the changes.
func Apply(root string, changes []Change) error {
	for _, c := range changes {
		full := filepath.Join(root, c.Path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		tmp := full + ".orch-hook-tmp"
		if err := os.WriteFile(tmp, c.New, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, full); err != nil {
			return err
		}
	}
	return nil
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

// Diff renders a change as a unified-style line diff.
func Diff(c Change) string {
	var b strings.Builder
	from := "a/" + c.Path
	if c.Old == nil {
		from = "/dev/null"
	}
	fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, c.Path)
	old := splitLines(c.Old)
	now := splitLines(c.New)
	// Longest common subsequence, enough for files of a few hundred lines.
	lcs := make([][]int, len(old)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(now)+1)
	}
	for i := len(old) - 1; i >= 0; i-- {
		for j := len(now) - 1; j >= 0; j-- {
			if old[i] == now[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(old) || j < len(now) {
		switch {
		case i < len(old) && j < len(now) && old[i] == now[j]:
			i, j = i+1, j+1
		case j < len(now) && (i == len(old) || lcs[i][j+1] >= lcs[i+1][j]):
			b.WriteString("+" + now[j] + "\n")
			j++
		default:
			b.WriteString("-" + old[i] + "\n")
			i++
		}
	}
	return b.String()
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
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
