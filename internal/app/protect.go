package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// The user turns Claude Code's sandbox on for the project by typing
// /orch-hook:protect: the hook (not sandboxed) writes the settings, so the
// model never needs write access to them. README, "Threat model".

// protectPrompt recognizes "/orch-hook:protect [args]" (or the
// /orch-hook-protect of an init install) and returns its arguments.
func protectPrompt(prompt string) (string, bool) {
	name, args, ok := gates.UserCommand(prompt)
	return args, ok && name == "protect"
}

// protect applies /orch-hook:protect [--shared] [--dry-run]: it writes the
// sandbox settings (to .claude/settings.local.json, or with --shared to
// .claude/settings.json) and shows the change as a diff with what it
// means. The prompt is blocked: it was for orch-hook, not the model, and a
// block's reason is what the user sees.
func protect(env Env, root, args string) hooks.Decision {
	shared, dry := false, false
	for _, a := range strings.Fields(args) {
		switch a {
		case "--shared":
			shared = true
		case "--dry-run", "-n":
			dry = true
		default:
			return hooks.Decision{Block: true, Reason: fmt.Sprintf("orch-hook: /orch-hook:protect takes --shared (write .claude/settings.json, for the whole team; default .claude/settings.local.json, this machine) and --dry-run (show the change only), not %q.", a)}
		}
	}
	change, err := install.PlanProtect(root, shared)
	if err != nil {
		return hooks.Decision{Block: true, Reason: "orch-hook: cannot turn the sandbox on: " + shorten.OneLine(err.Error()) + ". Fix the file, or add the settings by hand (README, \"Threat model\")."}
	}
	var b strings.Builder
	if change == nil {
		fmt.Fprintf(&b, "orch-hook: %s already turns the sandbox on; nothing to change.\n", install.SettingsFile(shared))
	} else {
		if dry {
			fmt.Fprintf(&b, "orch-hook: /orch-hook:protect would change %s (nothing written; type /orch-hook:protect%s to apply):\n", change.Path, strings.TrimSuffix(" "+strings.ReplaceAll(args, "--dry-run", ""), " "))
		} else {
			if err := install.Apply(root, []install.Change{*change}); err != nil {
				return hooks.Decision{Block: true, Reason: "orch-hook: cannot write " + change.Path + ": " + shorten.OneLine(err.Error())}
			}
			fmt.Fprintf(&b, "orch-hook: wrote %s:\n", change.Path)
			appendEvent(root, "protect: wrote "+change.Path)
		}
		b.WriteString(install.Diff(*change))
		b.WriteString("What it means:\n")
		b.WriteString(install.ProtectConsequences())
	}
	fmt.Fprintf(&b, "Protection now: %s.", install.CheckProtection(root, env.getenv(), nil).Summary())
	if !dry && change != nil {
		b.WriteString(" New Bash commands run in the sandbox; if they do not, restart Claude Code.")
	}
	return hooks.Decision{Block: true, Reason: b.String()}
}

// appendEvent logs a user decision taken outside a workflow's state
// machine, when there is a workflow to log it in.
func appendEvent(root, reason string) {
	store := state.Open(root)
	if _, err := os.Stat(store.CheckpointPath()); err == nil {
		_ = store.Append(state.Event{Type: state.EventUserDecision, Reason: reason})
	}
}

// unprotectedNotice is shown to the user (not the model) when a workflow
// starts in a project the sandbox does not protect.
func unprotectedNotice(env Env, root string) string {
	p := install.CheckProtection(root, env.getenv(), nil)
	if p.Protected {
		return ""
	}
	return "orch-hook: this workflow runs without Claude Code's sandbox (" + strings.Join(p.Problems, "; ") + "), so the model's Bash could reach its state; orch-hook detects and refuses what it can. Type /orch-hook:protect to turn the sandbox on (README, \"Threat model\")."
}

// protectionLine is SessionStart's one line on protection.
func protectionLine(env Env, root string) string {
	p := install.CheckProtection(root, env.getenv(), nil)
	return "orch-hook protection: " + p.Summary() + "."
}
