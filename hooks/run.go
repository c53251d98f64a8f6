package hooks

import (
	"errors"
	"io"

	"github.com/orch-hook/orch-hook/state"
)

// Env is what a hook call takes from its environment.
type Env struct {
	// ProjectDir is $CLAUDE_PROJECT_DIR: the project root, which does not
	// move when the session cds elsewhere.
	ProjectDir string
}

// ProjectRoot is $CLAUDE_PROJECT_DIR, else the payload's cwd.
func ProjectRoot(env Env, in *Input) string {
	if env.ProjectDir != "" {
		return env.ProjectDir
	}
	return in.Cwd
}

// Run handles one hook call: decode stdin, decide, render to stdout. An
// *InputError means the payload was malformed.
func Run(env Env, stdin io.Reader, stdout io.Writer, eventArg string) error {
	in, err := Decode(stdin, eventArg)
	if err != nil {
		return err
	}
	d, err := Handle(env, in)
	if err != nil {
		return err
	}
	return Render(stdout, in.HookEventName, d)
}

// Handle decides one event. With no workflow in the project it returns
// allow before any write: the fast path.
func Handle(env Env, in *Input) (Decision, error) {
	root := ProjectRoot(env, in)
	if root == "" {
		return Decision{}, nil
	}
	_, err := state.Open(root).Load()
	if errors.Is(err, state.ErrNoState) {
		return Decision{}, nil
	}
	// The workflow rules arrive with the orchestrate workflow; until then
	// an active workflow is read (so a broken one is noticed) and allowed.
	return Decision{}, nil
}
