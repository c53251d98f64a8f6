package app

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// The user puts orch-hook's line in Claude Code's status line by typing
// /orch-hook:statusline: a plugin cannot set statusLine, so the hook (as
// for /orch-hook:protect) writes .claude/settings.local.json and the model
// never needs to. README, "Status line".

// statusLinePrompt recognizes "/orch-hook:statusline [args]" (or the
// /orch-hook-statusline of an init install) and returns the command as
// typed and its arguments.
func statusLinePrompt(prompt string) (typed, args string, ok bool) {
	name, args, ok := gates.UserCommand(prompt)
	typed = "/orch-hook:statusline"
	if strings.HasPrefix(strings.TrimSpace(prompt), "/orch-hook-") {
		typed = "/orch-hook-statusline"
	}
	return typed, args, ok && name == "statusline"
}

// statusLine applies /orch-hook:statusline [--remove] [--dry-run] and
// shows the change as a diff with what it means. The prompt is blocked:
// it was for orch-hook, not the model, and a block's reason is what the
// user sees.
func statusLine(env Env, root, typed, args string) hooks.Decision {
	remove, dry := false, false
	apply := "" // the command without --dry-run
	for _, a := range strings.Fields(args) {
		switch a {
		case "--remove":
			remove = true
			apply = " --remove"
		case "--dry-run", "-n":
			dry = true
		default:
			return hooks.Decision{Block: true, Reason: fmt.Sprintf("orch-hook: %s takes --remove (take orch-hook's status line out, putting yours back) and --dry-run (show the change only), not %q.", typed, a)}
		}
	}
	bin, note, err := install.StatusLineBinary(env.getenv(), dry || remove)
	if err != nil {
		return hooks.Decision{Block: true, Reason: "orch-hook: " + shorten.OneLine(err.Error()) + "."}
	}
	change, res, err := install.PlanStatusLine(root, bin, env.getenv(), remove)
	if err != nil {
		return hooks.Decision{Block: true, Reason: "orch-hook: cannot set the status line: " + shorten.OneLine(err.Error()) + ". Fix the file, or set statusLine by hand (README, \"Status line\")."}
	}
	var b strings.Builder
	switch {
	case change == nil:
		b.WriteString("orch-hook: " + res.Summary(typed, remove) + " Nothing to change.")
	case dry:
		fmt.Fprintf(&b, "orch-hook: %s would change %s (nothing written; type %s%s to apply):\n", typed, change.Path, typed, apply)
		b.WriteString(install.Diff(*change))
		b.WriteString(res.Summary(typed, remove))
	default:
		if err := install.Apply(root, []install.Change{*change}); err != nil {
			return hooks.Decision{Block: true, Reason: "orch-hook: cannot write " + change.Path + ": " + shorten.OneLine(err.Error())}
		}
		fmt.Fprintf(&b, "orch-hook: wrote %s:\n", change.Path)
		b.WriteString(install.Diff(*change))
		b.WriteString(res.Summary(typed, remove))
		b.WriteString(" Claude Code picks the change up when it next draws the status line.")
	}
	if note != "" {
		b.WriteString(" Note: " + note + ".")
	}
	return hooks.Decision{Block: true, Reason: b.String()}
}
