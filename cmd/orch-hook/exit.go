package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/jsonenc"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/state"
)

// Exit codes: the one table (also in the README). orch-hook never exits 2:
// Claude Code reads exit 2 from a hook as "block".
const (
	exitOK      = 0  // success; for hook, the decision (if any) is on stdout
	exitError   = 1  // malformed input or a failure; one line on stderr
	exitBusy    = 3  // the state lock was held by another process for too long
	exitCorrupt = 4  // the state files need you: 'orch-hook repair', or adopting a v1.3 checkpoint
	exitRefused = 5  // refused: a workflow is already active, a step not allowed now, or init would replace the user's files
	exitUsage   = 64 // unknown command or flag, wrong arguments
)

// usageError is a command line that does not parse.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// hinter is implemented by errors that know the way forward.
type hinter interface{ Hint() string }

func exitCode(err error) int {
	var (
		usage   *usageError
		input   *hooks.InputError
		lock    *state.LockError
		corrupt *state.CorruptError
		gone    *state.VanishedError
		changed *state.TamperError
		key     *state.KeyError
		v13     *state.UnadoptedError
		active  *state.ActiveError
		refused *gates.TransitionError
		forged  *app.ForgedError
		theirs  *install.ConflictError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &input):
		return exitError
	case errors.As(err, &lock):
		return exitBusy
	case errors.As(err, &corrupt), errors.As(err, &gone), errors.As(err, &changed), errors.As(err, &key), errors.As(err, &v13):
		return exitCorrupt
	case errors.As(err, &active), errors.As(err, &refused), errors.As(err, &forged), errors.As(err, &theirs):
		return exitRefused
	}
	return exitError
}

// printError prints err once, on one line, with its hint when it has one.
func printError(w io.Writer, err error) {
	msg, hint := errorText(err)
	switch {
	case isUsage(err):
		msg += " (" + hint + ")"
	case hint != "":
		msg += "; " + hint
	}
	fmt.Fprintln(w, "orch-hook: "+msg)
}

// errorText is an error's message on one line and its way forward.
func errorText(err error) (msg, hint string) {
	msg = strings.ReplaceAll(err.Error(), "\n", " ")
	var h hinter
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	var usage *usageError
	if errors.As(err, &usage) {
		hint = fmt.Sprintf("see 'orch-hook %s--help'", usageTopic(usage.msg))
	}
	return msg, hint
}

func isUsage(err error) bool {
	var usage *usageError
	return errors.As(err, &usage)
}

// errorSchema names the object an error is under --json.
const errorSchema = "orch-hook.error/1"

// jsonError is an error under --json (README, "Exit codes"): a script
// reading stdout gets one object either way; stderr has the usual line.
type jsonError struct {
	Schema   string   `json:"schema"`
	Error    string   `json:"error"`
	Hint     string   `json:"hint"`
	ExitCode int      `json:"exit_code"`
	Files    []string `json:"files,omitempty"` // init: the files it would replace
}

// reported is an error whose command already printed its report on
// stdout (doctor's failed checks): no error object follows it.
type reported interface{ reportedOnStdout() }

// printJSONError prints err as a jsonError on stdout when args ask one of
// the JSON commands among commands (the command table) for --json.
func printJSONError(w io.Writer, args []string, commands []*cli.Command, err error) {
	var r reported
	if !jsonRequested(args, commands) || errors.As(err, &r) {
		return
	}
	msg, hint := errorText(err)
	out := jsonError{Schema: errorSchema, Error: msg, Hint: hint, ExitCode: exitCode(err)}
	var theirs *install.ConflictError
	if errors.As(err, &theirs) {
		out.Files = theirs.Files
	}
	if b, jerr := jsonenc.Indent(out); jerr == nil {
		fmt.Fprintln(w, string(b))
	}
}

// jsonCommand reports whether the command named name in commands (the
// command table) is a JSON command: one whose --json is jsonFlag, which
// prints one JSON object and promises its errors as one (log's --json,
// a JSON record a line, is not). The list is the table's, so a command
// that gains jsonFlag gains its errors too.
func jsonCommand(commands []*cli.Command, name string) bool {
	for _, c := range commands {
		if c.Name != name {
			continue
		}
		for _, f := range c.Flags {
			df, ok := f.(cli.DocGenerationFlag)
			if ok && slices.Contains(f.Names(), "json") && strings.HasSuffix(df.GetUsage(), jsonErrorUsage) {
				return true
			}
		}
	}
	return false
}

// jsonRequested reports `orch-hook [--project DIR] CMD ... --json ...` for
// a JSON command of commands, read from the raw arguments: a usage error
// comes before the flags are parsed.
func jsonRequested(args []string, commands []*cli.Command) bool {
	cmd := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return false
		}
		if cmd == "" {
			switch {
			case a == "--project" || a == "-project":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				if !jsonCommand(commands, a) {
					return false
				}
				cmd = a
			}
			continue
		}
		switch a {
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// usageTopic is "<subcommand> " when a usage message starts with one (as
// "start: ..." or "graph --format: ..."), else "".
func usageTopic(msg string) string {
	word, _, _ := strings.Cut(msg, ":")
	word, _, _ = strings.Cut(word, " ")
	for _, s := range gates.Subcommands {
		if word == s.Name {
			return s.Name + " "
		}
	}
	return ""
}
