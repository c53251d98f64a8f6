package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/state"
)

// Exit codes: the one table (also in the README). orch-hook never exits 2:
// Claude Code reads exit 2 from a hook as "block".
const (
	exitOK      = 0  // success; for hook, the decision (if any) is on stdout
	exitError   = 1  // malformed input or a failure; one line on stderr
	exitBusy    = 3  // the state lock was held by another process for too long
	exitCorrupt = 4  // the state files need 'orch-hook repair'
	exitRefused = 5  // refused: a workflow is already active, or a step not allowed now
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
		active  *state.ActiveError
		refused *gates.TransitionError
		forged  *hooks.ForgedError
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
	case errors.As(err, &corrupt), errors.As(err, &gone), errors.As(err, &changed), errors.As(err, &key):
		return exitCorrupt
	case errors.As(err, &active), errors.As(err, &refused), errors.As(err, &forged):
		return exitRefused
	}
	return exitError
}

// printError prints err once, on one line, with its hint when it has one.
func printError(w io.Writer, err error) {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	var h hinter
	if errors.As(err, &h) {
		msg += "; " + h.Hint()
	}
	var usage *usageError
	if errors.As(err, &usage) {
		msg += fmt.Sprintf(" (see 'orch-hook %s--help')", usageTopic(usage.msg))
	}
	fmt.Fprintln(w, "orch-hook: "+msg)
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
