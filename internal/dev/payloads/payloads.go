// Package payloads builds Claude Code hook payloads from the real captured
// ones (cmd/orch-hook/testdata/payloads/*.json), for the testscript `hook`
// command and the benchmarks: the template is pointed at a project,
// given a session id, and edited by overrides.
package payloads

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dir is where the templates live, relative to the module root.
const Dir = "cmd/orch-hook/testdata/payloads"

// Build loads dir/TEMPLATE.json, replaces /home/user/project with project,
// sets session_id (unless session is empty) and applies the overrides:
// "path=value" (a dotted path into the JSON; "\n" in the value is a
// newline, $WORK the project), "path:=json", and "-path" to delete. A
// SubagentStop's agent_transcript_path follows its agent_id, as Claude
// Code names it (transcript_path without .jsonl, then
// /subagents/agent-<agent_id>.jsonl), unless an override sets it.
func Build(dir, template, project, session string, overrides ...string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, template+".json"))
	if err != nil {
		return nil, err
	}
	raw = bytes.ReplaceAll(raw, []byte("/home/user/project"), []byte(project))
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s.json: %v", template, err)
	}
	if session != "" {
		p["session_id"] = session
	}
	transcriptSet := false
	for _, a := range overrides {
		transcriptSet = transcriptSet || strings.HasPrefix(strings.TrimPrefix(a, "-"), "agent_transcript_path")
		switch {
		case strings.HasPrefix(a, "-"):
			deletePath(p, strings.TrimPrefix(a, "-"))
		case strings.Contains(a, ":="):
			k, v, _ := strings.Cut(a, ":=")
			var val any
			if err := json.Unmarshal([]byte(v), &val); err != nil {
				return nil, fmt.Errorf("%s: bad JSON: %v", k, err)
			}
			setPath(p, k, val)
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			v = strings.ReplaceAll(v, `\n`, "\n")
			v = strings.ReplaceAll(v, "$WORK", project)
			setPath(p, k, v)
		default:
			return nil, fmt.Errorf("bad override %q", a)
		}
	}
	main, _ := p["transcript_path"].(string)
	if id, ok := p["agent_id"].(string); ok && !transcriptSet && main != "" && p["agent_transcript_path"] != nil {
		p["agent_transcript_path"] = strings.TrimSuffix(main, ".jsonl") + "/subagents/agent-" + id + ".jsonl"
	}
	return json.Marshal(p)
}

func setPath(m map[string]any, path string, val any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = val
}

func deletePath(m map[string]any, path string) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}
