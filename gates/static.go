package gates

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Relevant reports whether an event can matter to an active workflow; the
// caller answers allow at once (without reading the plan or locking)
// when it cannot.
func Relevant(c *Call) bool {
	switch c.Event {
	case PreToolUse:
		switch c.Tool {
		case "Agent", "Task", "Write", "Edit", "NotebookEdit", "Bash", "Skill", "SendMessage", "Workflow":
			return true
		}
		return IsMCP(c.Tool) && len(c.MCPPaths) > 0 && MCPWrites(c.Tool)
	case PostToolUse, PostToolUseFailure:
		switch c.Tool {
		case "Agent", "Task", "Write", "Edit", "NotebookEdit":
			return true
		case "Bash":
			return c.Event == PostToolUseFailure && RefusedBySandbox(c.Failure)
		}
		return false
	case SubagentStop, Stop, UserPromptSubmit, SessionStart, SessionEnd:
		return true
	}
	return false
}

// NeedsState reports whether deciding c depends on the workflow's state at
// all. A Bash command that names neither the state directory nor the binary
// (the static rules, checked first), and on the main thread changes nothing
// under or through a specs/ directory (where coordinate topics live:
// specs/NNN_topic or .claude/specs/NNN_topic, which `cd .claude; ...`
// reaches unnamed), is allowed whatever the state, so the hook need not
// read it.
func NeedsState(c *Call) bool {
	if c.Event == PreToolUse && (c.Tool == "Bash" || c.Tool == "Skill") {
		if c.Tool != "Bash" {
			name, _ := CommandName(strings.ToLower(c.Skill))
			return name == "follow-up"
		}
		return c.Unsandboxed || c.TouchesState() || c.AgentID == "" && (c.changesUnder("specs") || c.Reaches(".claude/specs"))
	}
	return Relevant(c)
}

// Static applies the rules that hold whatever the state: the model may not
// take the user's decisions through the Skill tool or by running the binary.
func Static(c *Call) (Outcome, bool) { return StaticRules(c) }

// modelForbidden are subcommands the model may not run from Bash: starting
// a workflow is the user's; `hook` would let it forge hook events (an
// approval, a PASS); repair, migrate and init rewrite state or settings.
var modelForbidden = map[string]bool{"start": true, "hook": true, "repair": true, "migrate": true, "init": true}

// UserCommands are the decisions only the user takes.
var UserCommands = map[string]bool{"approve": true, "request-changes": true, "resolve": true, "abort": true, "resume": true, "protect": true}

// startCommands start a workflow: also only the user's.
var startCommands = map[string]bool{"orchestrate": true, "coordinate": true}

// settingsCommands write the user's Claude Code settings: only the user's
// too. Not UserCommands: `orch-hook statusline` from Bash is a read.
var settingsCommands = map[string]bool{"statusline": true}

// StaticRules hold whatever the state: the model may not take the user's
// decisions through the Skill tool or by running the binary.
func StaticRules(c *Call) (Outcome, bool) {
	if c.Event != PreToolUse {
		return Outcome{}, false
	}
	switch c.Tool {
	case "Skill":
		name, ok := CommandName(strings.ToLower(c.Skill))
		if ok && (UserCommands[name] || startCommands[name] || settingsCommands[name]) {
			rule := fmt.Sprintf("/orch-hook:%s is the user's decision; the model may not invoke it. Ask the user to type it.", name)
			if startCommands[name] {
				rule = fmt.Sprintf("only the user starts a workflow: ask them to type /orch-hook:%s <request>.", name)
			}
			return Refuse(Deny, &Refusal{Rule: rule}, Record{ToolUseID: c.ToolUseID, AgentID: c.AgentID}), true
		}
	case "Bash":
		if named, allowed := c.namesBinary(); named && !allowed {
			word := BinaryDecision(c.Command)
			rule := fmt.Sprintf("running orch-hook %s from Bash is not allowed: %s is the user's decision. Ask the user to type /orch-hook:%s.", word, word, word)
			switch word {
			case "start":
				rule = "the model may not start a workflow; only the user does, with /orch-hook:orchestrate <request>."
			case "hook":
				rule = "running `orch-hook hook` from Bash is not allowed: hook events come from Claude Code, not from the model."
			case "repair", "migrate", "init":
				rule = fmt.Sprintf("running orch-hook %s from Bash is not allowed: it rewrites orch-hook's state or settings; ask the user to run it.", word)
			case "":
				if c.namesSeal() {
					rule = c.StateWhat()
					break
				}
				rule = "this command names the orch-hook binary (in some spelling) other than as a plain read-only command; from Bash the model may only read the workflow: `orch-hook status`, `log`, `explain`, `graph`, `report` (without -o) or `doctor`, with literal arguments. Decisions are the user's (typed /orch-hook:... commands) and hook events come from Claude Code."
			}
			return Refuse(Deny, &Refusal{Rule: rule}, Record{ToolUseID: c.ToolUseID, AgentID: c.AgentID}), true
		}
	}
	return Outcome{}, false
}

// CommandName reads "orch-hook:approve", "orch-hook-approve" or
// "/orch-hook:approve args" as "approve".
func CommandName(s string) (string, bool) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "/"))
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		s = s[:i]
	}
	for _, p := range []string{"orch-hook:", "orch-hook-"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" {
			return rest, true
		}
	}
	return "", false
}

// BinaryDecision finds "orch-hook <decision>" anywhere in a shell command,
// whatever path, quoting or wrapper names the binary; it returns the word.
func BinaryDecision(cmd string) string {
	if !strings.Contains(cmd, "orch-hook") {
		return ""
	}
	fields := strings.FieldsFunc(cmd, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&()`$'\"{}<>=", r)
	})
	for i, f := range fields {
		if filepath.Base(f) != "orch-hook" && !strings.HasSuffix(f, "/orch-hook") {
			continue
		}
		for j := i + 1; j < len(fields); j++ {
			arg := fields[j]
			if strings.HasPrefix(arg, "-") {
				if arg == "--project" {
					j++ // its value
				}
				continue
			}
			if UserCommands[arg] || modelForbidden[arg] {
				return arg
			}
			break
		}
	}
	return ""
}

// ReadOnlyAgents may run beside the workflow: they cannot write.
var ReadOnlyAgents = map[string]bool{"Explore": true, "Plan": true}

// UnsandboxedWhat refuses a Bash call that asks to leave Claude Code's
// sandbox, which is what keeps the model's shell off the state.
const UnsandboxedWhat = "dangerouslyDisableSandbox is not allowed while an orch-hook workflow is active: the sandbox is what keeps the model's shell away from the workflow's state. Run the command without it; if it needs a path the sandbox denies, ask the user."

// StartFromPrompt: the user typed /orch-hook:orchestrate <request>.
func StartFromPrompt(c *Call) Outcome {
	name, request, _ := UserCommand(c.Prompt)
	if request == "" {
		r := &Refusal{Rule: "say what to build: /orch-hook:orchestrate <request>."}
		if name == "coordinate" {
			r.Rule = "say what to research or build: /orch-hook:coordinate [--scope S] <description>."
		}
		// Not logged: there may be no workflow to log it in.
		return Outcome{Verdict: Block, Reason: r.Told(), Refusal: r}
	}
	return Outcome{Start: request}
}

// PluginPrefix namespaces the plugin's agents and commands.
const PluginPrefix = "orch-hook:"

// UserCommand splits a prompt that is one of orch-hook's commands typed by
// the user, "/orch-hook:NAME args" (or "/orch-hook-NAME args" after init):
// the one reader of a typed command, for the start, the user's decisions
// and protect alike.
func UserCommand(prompt string) (name, args string, ok bool) {
	p := strings.TrimSpace(prompt)
	for _, prefix := range []string{"/orch-hook:", "/orch-hook-"} {
		if rest, found := strings.CutPrefix(p, prefix); found {
			name, args, _ = strings.Cut(rest, " ")
			if i := strings.IndexAny(name, "\t\n"); i >= 0 {
				name, args = name[:i], rest[i:]
			}
			return name, strings.TrimSpace(args), name != ""
		}
	}
	return "", "", false
}
