// Command demo replays a recorded Claude Code session (one hook payload a
// line, as Claude Code 2.1.328 sends them) through a real orch-hook binary
// in a scratch project, prints each decision, and ends with
// `orch-hook status`. A Write or Edit the hooks allow is applied to the
// scratch project, as Claude Code would run it. `make demo` runs it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	bin := flag.String("bin", "bin/orch-hook", "the orch-hook binary")
	session := flag.String("session", "internal/dev/demo/testdata/session.jsonl", "the recorded session")
	dir := flag.String("dir", "", "the scratch project, kept afterwards (default: a new temp dir, removed at the end)")
	flag.Parse()
	if err := run(*bin, *session, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// payload is what the demo reads of each recorded event.
type payload struct {
	Event     string `json:"hook_event_name"`
	Tool      string `json:"tool_name"`
	AgentType string `json:"agent_type"`
	AgentID   string `json:"agent_id"`
	Prompt    string `json:"prompt"`
	Source    string `json:"source"`
	Input     struct {
		SubagentType string  `json:"subagent_type"`
		Prompt       string  `json:"prompt"`
		FilePath     string  `json:"file_path"`
		Content      *string `json:"content"`
		Command      string  `json:"command"`
	} `json:"tool_input"`
	LastMessage string `json:"last_assistant_message"`
}

type answer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific struct {
		Permission string `json:"permissionDecision"`
		Reason     string `json:"permissionDecisionReason"`
		Context    string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func run(bin, sessionFile, dir string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s: %w (run make build first)", bin, err)
	}
	env := os.Environ()
	kept := ""
	if dir == "" {
		// A scratch project and, beside it, the config directory the
		// hooks keep the workflow's marker and key in: both go at the end,
		// so a demo leaves nothing in /tmp or the user's ~/.config.
		root, err := os.MkdirTemp("", "orch-hook-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(root)
		dir = filepath.Join(root, "project")
		config := filepath.Join(root, "config")
		for _, d := range []string{dir, config} {
			if err := os.Mkdir(d, 0o700); err != nil {
				return err
			}
		}
		env = append(env, "XDG_CONFIG_HOME="+config)
		kept = " (removed at the end; -dir DIR keeps one)"
	}
	f, err := os.Open(sessionFile)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Printf("Replaying %s through %s\nin the scratch project %s%s\n\n", sessionFile, bin, dir, kept)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := bytes.ReplaceAll(sc.Bytes(), []byte("/home/user/project"), []byte(dir))
		var p payload
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		cmd := exec.Command(bin, "hook", p.Event)
		cmd.Dir = dir
		cmd.Env = append(env, "CLAUDE_PROJECT_DIR="+dir)
		cmd.Stdin = bytes.NewReader(line)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("line %d: orch-hook hook %s: %v: %s", n, p.Event, err, stderr.String())
		}
		var a answer
		if stdout.Len() > 0 {
			if err := json.Unmarshal(stdout.Bytes(), &a); err != nil {
				return fmt.Errorf("line %d: orch-hook printed invalid JSON %q: %w", n, stdout.String(), err)
			}
		}
		verdict := "allow"
		switch {
		case a.Specific.Permission == "deny":
			verdict = "DENY"
		case a.Decision == "block":
			verdict = "BLOCK"
		}
		if verdict == "allow" && a.Specific.Context == "" && quiet(p) {
			continue
		}
		fmt.Printf("%3d %-6s %s\n", n, verdict, describe(p))
		for _, text := range []string{a.Specific.Reason, a.Reason, a.Specific.Context} {
			if text != "" {
				fmt.Printf("           %s\n", strings.ReplaceAll(strings.TrimSpace(text), "\n", "\n           "))
			}
		}
		if verdict == "allow" && p.Event == "PreToolUse" && p.Tool == "Write" && p.Input.Content != nil {
			if err := apply(dir, p.Input.FilePath, *p.Input.Content); err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Println("\n$ orch-hook status")
	status := exec.Command(bin, "status")
	status.Dir = dir
	status.Env = env
	status.Stdout, status.Stderr = os.Stdout, os.Stderr
	return status.Run()
}

// quiet events are left out of the transcript when allowed silently.
func quiet(p payload) bool {
	switch p.Event {
	case "SubagentStart", "SessionEnd", "UserPromptExpansion":
		return true
	case "PostToolUse":
		return p.Tool != "Agent"
	}
	return false
}

func describe(p payload) string {
	who := "orchestrator"
	if p.AgentID != "" {
		who = p.AgentType
	}
	switch p.Event {
	case "PreToolUse", "PostToolUse":
		switch p.Tool {
		case "Agent":
			return fmt.Sprintf("%s %s: launch %s %q", p.Event, who, p.Input.SubagentType, clip(p.Input.Prompt, 50))
		case "Write", "Edit":
			return fmt.Sprintf("%s %s: %s %s", p.Event, who, p.Tool, p.Input.FilePath)
		case "Bash":
			return fmt.Sprintf("%s %s: Bash %q", p.Event, who, clip(p.Input.Command, 50))
		}
		return fmt.Sprintf("%s %s: %s", p.Event, who, p.Tool)
	case "UserPromptSubmit":
		if strings.HasPrefix(p.Prompt, "<task-notification>") {
			return "UserPromptSubmit: background agent finished (task-notification)"
		}
		return fmt.Sprintf("UserPromptSubmit: the user typed %q", clip(p.Prompt, 60))
	case "SubagentStop":
		return fmt.Sprintf("SubagentStop %s: %q", p.AgentType, clip(lastLine(p.LastMessage), 60))
	case "SessionStart":
		return "SessionStart (" + p.Source + ")"
	}
	return p.Event
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func apply(dir, path, content string) error {
	rel, err := filepath.Rel(dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("refusing to write %s outside the scratch project", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
