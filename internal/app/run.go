package app

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// Env is what a hook call takes from its environment.
type Env struct {
	// ProjectDir is $CLAUDE_PROJECT_DIR: the project root, which does not
	// move when the session cds elsewhere.
	ProjectDir string
	// StopCap is $ORCH_HOOK_STOP_CAP, the consecutive Stop blocks allowed
	// (0: the default, 3).
	StopCap int
	// Debug receives diagnostics ($ORCH_HOOK_DEBUG); nil discards them.
	Debug io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notice is shown to the user at SessionStart (a systemMessage): what
	// the plugin's dispatcher left to say, such as a refused download.
	Notice string
	// Getenv reads the environment (Claude Code's settings locations);
	// nil means os.Getenv.
	Getenv func(string) string
	// Budget is the time Claude Code gives this hook (hooks.json's timeout,
	// passed as `hook --budget`); 0 means DefaultBudget.
	Budget time.Duration

	// tokens are a stopping workflow agent's token counts, which Handle
	// reads from its transcript before the lock (tokens.go); the decision
	// keeps them with the launch, and its reads for the replay.
	tokens *gates.Tokens
}

// DefaultBudget is the budget of a hook run without --budget.
const DefaultBudget = 9 * time.Second

// budgetMargin is kept back from the budget to answer after a lock wait.
const budgetMargin = time.Second

// lockWait is how long a write for event waits for the state lock. A
// gating call (a tool call, a user's /orch-hook: decision) waits briefly
// (state.LockWait) and then refuses, saying so; anything else (a
// completion, a task notification, a Stop) waits as long as its hook may
// run, so that it is applied, not dropped. Neither waits past the budget.
func (e Env) lockWait(in *hooks.Input) time.Duration {
	b := e.Budget
	if b <= 0 {
		b = DefaultBudget
	}
	avail := max(b-budgetMargin, minLockWait)
	if _, _, decision := gates.UserCommand(in.Prompt); in.HookEventName == gates.PreToolUse || in.HookEventName == gates.UserPromptSubmit && decision {
		return min(state.LockWait, avail)
	}
	return avail
}

// minLockWait is the least a write waits, whatever the budget.
const minLockWait = 500 * time.Millisecond

func (e Env) getenv() func(string) string {
	if e.Getenv != nil {
		return e.Getenv
	}
	return os.Getenv
}

// EnvFrom reads Env from environment variables; debug output goes to
// stderr.
func EnvFrom(getenv func(string) string, stderr io.Writer) Env {
	e := Env{ProjectDir: getenv("CLAUDE_PROJECT_DIR"), Getenv: getenv}
	if n, err := strconv.Atoi(getenv("ORCH_HOOK_STOP_CAP")); err == nil && n > 0 {
		e.StopCap = n
	}
	if getenv("ORCH_HOOK_DEBUG") != "" {
		e.Debug = stderr
	}
	// ORCH_HOOK_NOW fixes the clock (RFC 3339), for reproducible tests.
	if t, err := time.Parse(time.RFC3339, getenv("ORCH_HOOK_NOW")); err == nil {
		e.Now = func() time.Time { return t }
	}
	return e
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

func (e Env) debugf(format string, args ...any) {
	if e.Debug != nil {
		fmt.Fprintf(e.Debug, "orch-hook: debug: "+format+"\n", args...)
	}
}

// ProjectRoot is $CLAUDE_PROJECT_DIR, else the payload's cwd.
func ProjectRoot(env Env, in *hooks.Input) string {
	if env.ProjectDir != "" {
		return env.ProjectDir
	}
	return in.Cwd
}

// Run handles one hook call: decode stdin, decide, render to stdout. An
// *InputError means the payload was malformed.
func Run(env Env, stdin io.Reader, stdout io.Writer, eventArg string) error {
	in, err := hooks.Decode(stdin, eventArg)
	if err != nil {
		if d, refuse := refuseMalformed(env, eventArg, err); refuse {
			return hooks.Render(stdout, gates.PreToolUse, d)
		}
		return err
	}
	d := Handle(env, in)
	if in.HookEventName == gates.SessionStart && d.Context != "" {
		// A workflow is active: say whether the sandbox protects it.
		d.Context += "\n" + protectionLine(env, ProjectRoot(env, in))
	}
	if in.HookEventName == gates.SessionStart && env.Notice != "" {
		d.Message = strings.TrimSpace(d.Message + "\n" + env.Notice)
	}
	if err := hooks.Render(stdout, in.HookEventName, d); err != nil {
		return err
	}
	if d.ReadOnly != nil {
		return &ReadOnlyError{Err: d.ReadOnly}
	}
	return nil
}

// ReadOnlyError: the state's file system is read-only to this process.
// Claude Code's hooks can write it; a process the model started inside the
// sandbox cannot, so nothing was changed.
type ReadOnlyError struct{ Err error }

func (e *ReadOnlyError) Error() string {
	return "the workflow's state is read-only here, so nothing was changed: " + shorten.OneLine(e.Err.Error())
}

// Hint says why.
func (e *ReadOnlyError) Hint() string {
	return "inside Claude Code's sandbox the model's commands cannot change orch-hook's state; hook events come from Claude Code"
}

// Handle decides one event. It never fails: where it gates, an internal
// error becomes a deny that says how to recover (fail closed); where it
// gates nothing, the error is logged and the call allowed (fail open).
func Handle(env Env, in *hooks.Input) hooks.Decision {
	root := ProjectRoot(env, in)
	if root == "" {
		return hooks.Decision{}
	}
	if in.HookEventName == gates.UserPromptSubmit {
		if args, ok := protectPrompt(in.Prompt); ok {
			return protect(env, root, args)
		}
		if typed, args, ok := statusLinePrompt(in.Prompt); ok {
			return statusLine(env, root, typed, args)
		}
	}
	call := hooks.ToCall(in, root)
	store := state.Open(root)
	store.Now = env.now
	store.Wait = env.lockWait(in)
	store.Committed = func(prev, next *state.Checkpoint) error { return committed(store, prev, next) }
	if in.HookEventName == gates.UserPromptSubmit {
		if acceptStatePrompt(in.Prompt) {
			return acceptState(store)
		}
		if args, ok := resumePrompt(in.Prompt); ok {
			if d, adopted := resumeV13(store, in, args); adopted {
				return d
			}
		}
	}
	if o, denied := gates.Static(call); denied {
		if _, err := os.Stat(store.CheckpointPath()); err == nil {
			_ = store.Append(toEvents(o.Records, call, &orchestrate.Workflow{})...)
		}
		return decisionOf(o)
	}
	if !gates.NeedsState(call) {
		// Decided without the state: only record that hooks run.
		if _, err := os.Stat(store.CheckpointPath()); err == nil {
			store.TouchHealth(healthName(in), env.now())
		}
		return hooks.Decision{}
	}
	cp, err := store.Load()
	if errors.Is(err, state.ErrNoState) {
		// The fast path: no workflow here. Nothing is written.
		return noWorkflow(env, store, in, call)
	}
	if err != nil {
		return failure(env, store, call, err)
	}
	if !cp.Finished() {
		store.TouchHealth(healthName(in), env.now())
	}
	if !gates.Relevant(call) {
		return hooks.Decision{}
	}
	if read := time.Now(); in.HookEventName == gates.SubagentStop {
		env.tokens = agentTokens(env, in, cp)
		// The read's wait comes out of the lock's: the hook must answer
		// within its budget.
		store.Wait = max(store.Wait-time.Since(read), minLockWait)
	}
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
	case "coordinate":
		d, err := decideCoord(env, store, cp, call)
		if err != nil {
			return failure(env, store, call, err)
		}
		return d
	default:
		return hooks.Decision{} // a workflow this binary has no engine for
	}
	if err := checkTable(cp); err != nil && call.Event != gates.UserPromptSubmit {
		// The user's prompts still go through, so /orch-hook:abort (or
		// any decision, whose write stores the compiled table) gets out.
		return failure(env, store, call, err)
	}
	d, err := decide(env, store, cp, call)
	if err != nil {
		return failure(env, store, call, err)
	}
	return d
}

// committed is what the hook path derives from a change it committed
// (state.Store.Committed: under the lock, after the change is made). Each
// part checks cheaply whether the change concerns it: most changes write
// nothing more.
func committed(store *state.Store, prev, next *state.Checkpoint) error {
	// The record first: the metrics line is written once per workflow.
	return errors.Join(writeRecord(store, prev, next), recordMetrics(store, prev, next))
}

// refuseMalformed: a PreToolUse payload that does not decode, while a
// workflow is active (or its state cannot be read), is denied on purpose:
// Claude Code lets a failed hook through, and a malformed or ambiguous
// payload is what a forged one looks like. The event comes from the
// command line, as hooks.json passes it; the project from
// $CLAUDE_PROJECT_DIR, else the working directory (hooks run in the
// session's). With no workflow the error is returned as it is.
func refuseMalformed(env Env, eventArg string, err error) (hooks.Decision, bool) {
	if eventArg != gates.PreToolUse {
		return hooks.Decision{}, false
	}
	root := env.ProjectDir
	if root == "" {
		wd, werr := os.Getwd()
		if werr != nil {
			return hooks.Decision{}, false
		}
		root = state.FindRoot(wd)
	}
	store := state.Open(root)
	cp, lerr := store.Load()
	if errors.Is(lerr, state.ErrNoState) || lerr == nil && cp.Finished() {
		return hooks.Decision{}, false
	}
	msg := shorten.OneLine(err.Error())
	_ = store.Append(state.Event{Type: state.EventDeny, HookEvent: gates.PreToolUse, Reason: "malformed hook payload refused: " + msg})
	return hooks.Decision{Deny: true, Reason: fmt.Sprintf("orch-hook: this tool call's hook payload could not be read (%s), so it cannot be checked against the active workflow and is refused (failing closed). Claude Code sends well-formed payloads: if this keeps happening, run `orch-hook doctor` and report it.", msg)}, true
}

// healthName is the health file of an event: main thread and subagents
// apart.
func healthName(in *hooks.Input) string {
	if in.IsSubagent() {
		return in.HookEventName + ".subagent"
	}
	return in.HookEventName
}

// noWorkflow: a typed /orch-hook:orchestrate starts a workflow; nothing
// else is decided (the static rules ran already).
func noWorkflow(env Env, store *state.Store, in *hooks.Input, call *gates.Call) hooks.Decision {
	if in.HookEventName == gates.UserPromptSubmit && isStartCommand(in.Prompt) {
		o := orchestrate.Decide(&orchestrate.Workflow{Current: orchestrate.Complete}, call, &orchestrate.Env{})
		return startWorkflow(env, store, o, call)
	}
	// The state directory is orch-hook's before a workflow too: a
	// checkpoint the model put there (a v1.3 one, or one without a seal)
	// would wait for the user to adopt or accept it as theirs.
	if o, denied := gates.GuardFinishedState(call, store.ResolvedRoot()); denied {
		return decisionOf(o)
	}
	return hooks.Decision{}
}

// decision is one workflow's decision on one checkpoint: the outcome, the
// events it logs and how a change is persisted into the checkpoint
// (effects, the workflow section), returning the events to log. Events and
// save are used only under the lock: most calls end with the outcome.
type decision struct {
	out    gates.Outcome
	events func() []state.Event
	save   func(cp *state.Checkpoint, events []state.Event) ([]state.Event, error)
	// reads is what the decision read from the project, logged with the
	// call for its replay (reads.go).
	reads *reads
	// redact: the workflow keeps requests redacted (record.redact_request),
	// so the call is logged with its request hashed (redactCall).
	redact bool
}

// transact is a hook call's transaction, the same for both workflows:
// decide on the lock-free snapshot; when that changes nothing and denies
// nothing, answer with no lock and no write. Otherwise take the lock and
// persist the decision with its events: the snapshot's decision when the
// lock read the very file the snapshot was read from (state.UpdateFrom),
// else a decision made again on what the lock read (another write came
// between, or another checkpoint of the same serial is there: the snapshot
// is stale). decideOn decides on a checkpoint it owns the workflow of:
// a decision it returns is persisted as it is.
func transact(env Env, store *state.Store, cp *state.Checkpoint, call *gates.Call, decideOn func(cp *state.Checkpoint) (*decision, error)) (hooks.Decision, error) {
	dry, err := decideOn(cp)
	if err != nil {
		return hooks.Decision{}, err
	}
	if dry.out.Start != "" {
		return startWorkflow(env, store, dry.out, call), nil
	}
	if dry.out.Verdict == gates.Allow && !dry.out.Changed && len(dry.out.Records) == 0 {
		return decisionOf(dry.out), nil
	}
	var out gates.Outcome
	_, err = store.UpdateFrom(cp, func(cp *state.Checkpoint, same bool) ([]state.Event, error) {
		d := dry
		if !same {
			var err error
			if d, err = decideOn(cp); err != nil {
				return nil, err
			}
		}
		out = d.out
		events := d.events()
		if !out.Changed {
			return attach(store, events, logged(call, d.redact), d.reads), state.ErrNoChange
		}
		events, err := d.save(cp, events)
		out = d.out // saving may add to what the model is told (a file written)
		if err != nil {
			return nil, err
		}
		if len(events) == 0 {
			events = []state.Event{{Type: state.EventUpdate, Reason: "workflow record updated"}}
			fillEvent(&events[0], call)
		}
		return attach(store, events, logged(call, d.redact), d.reads), nil
	})
	if err != nil {
		return hooks.Decision{}, err
	}
	if out.Start != "" {
		return startWorkflow(env, store, out, call), nil
	}
	return decisionOf(out), nil
}

// decide runs the orchestrate workflow on the event (see transact).
func decide(env Env, store *state.Store, cp *state.Checkpoint, call *gates.Call) (hooks.Decision, error) {
	// The plan files are read on first use, at most once per call.
	var files orchestrate.PlanFiles
	var filesErr error
	read := false
	load := func() (orchestrate.PlanFiles, error) {
		if !read {
			read = true
			files, filesErr = state.ReadDirFiles(store.Root, orchestrate.TasksDir)
		}
		return files, filesErr
	}
	return transact(env, store, cp, call, func(cp *state.Checkpoint) (*decision, error) {
		w, err := LoadWorkflow(cp)
		if err != nil {
			return nil, err
		}
		r := newReads(store.ResolvedRoot(), env.now(), env.StopCap)
		r.Tokens = env.tokens
		loadFiles, recorded := r.orchestrate(load, store.ReadRecorded)
		ge := &orchestrate.Env{Root: r.Root, LoadFiles: loadFiles, Recorded: recorded, Now: r.Now, StopCap: r.StopCap, Tokens: r.Tokens, ConfigHash: r.config(func() string { return ConfigHash(store.Root) })}
		before := maps.Clone(w.PlanHashes)
		d := &decision{out: orchestrate.Decide(w, call, ge), reads: r, redact: w.Settings().RedactRequest}
		d.events = func() []state.Event { return toEvents(d.out.Records, call, w) }
		d.save = func(cp *state.Checkpoint, events []state.Event) ([]state.Event, error) {
			events = writeEffects(store, w, &d.out, events, call)
			events = keepRecorded(store, before, w, ge, call, events)
			oldTable := cp.StateMachine.TableVersion
			if err := saveWorkflow(cp, w); err != nil {
				return nil, err
			}
			if oldTable != orchestrate.TableVersion {
				events = append(events, state.Event{Type: state.EventUpdate, Reason: fmt.Sprintf("transition table upgraded from version %d to %d", oldTable, orchestrate.TableVersion)})
				fillEvent(&events[len(events)-1], call)
			}
			return events, nil
		}
		return d, nil
	})
}

// keepRecorded updates orch-hook's copies of the plan files whose recorded
// hash the decision moved (only then: most calls record none). The copies
// are a convenience, for the refusal's diff and `orch-hook repair --plan`:
// one that cannot be written is logged, not fatal.
func keepRecorded(store *state.Store, before map[string]string, w *orchestrate.Workflow, ge *orchestrate.Env, call *gates.Call, events []state.Event) []state.Event {
	keep, drop := orchestrate.RecordedCopies(before, w.PlanHashes, ge.Files)
	if len(keep) == 0 && len(drop) == 0 {
		return events
	}
	if err := store.SaveRecorded(keep, drop); err != nil {
		ev := state.Event{Type: state.EventError, Reason: "could not keep the copy of the plan as recorded (a change to it will be refused without a diff): " + shorten.OneLine(err.Error())}
		fillEvent(&ev, call)
		// First: the last event carries the checkpoint.
		if len(events) == 0 {
			events = []state.Event{{Type: state.EventUpdate, Reason: "workflow record updated"}}
			fillEvent(&events[0], call)
		}
		events = append([]state.Event{ev}, events...)
	}
	return events
}

func decisionOf(o gates.Outcome) hooks.Decision {
	return hooks.Decision{Deny: o.Verdict == gates.Deny, Block: o.Verdict == gates.Block, Reason: o.Reason, Context: o.Context, Message: o.Message}
}

// failure turns an internal error into the right answer: a deny for a
// PreToolUse that a rule could have denied, else allow with the error logged.
func failure(env Env, store *state.Store, call *gates.Call, err error) hooks.Decision {
	env.debugf("%v", err)
	if errors.Is(err, syscall.EROFS) {
		d := hooks.Decision{ReadOnly: err}
		if call.Event == gates.PreToolUse && gates.Relevant(call) {
			d.Deny, d.Reason = true, "orch-hook: the workflow's state is read-only to this process, so this call cannot be recorded and is refused (failing closed)."
		}
		return d
	}
	hint := "run `orch-hook status` to see what is wrong"
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	var unadopted *state.UnadoptedError
	if call.Event == gates.PreToolUse && gates.Relevant(call) {
		if !strings.Contains(hint, "orch-hook repair") && !errors.As(err, &unadopted) {
			hint += "; `orch-hook repair` rebuilds damaged state"
		}
		return hooks.Decision{Deny: true, Reason: fmt.Sprintf("orch-hook: cannot check this call against the workflow, so it is refused (failing closed): %s. To recover: %s.", shorten.OneLine(err.Error()), hint)}
	}
	if name, _, ok := gates.UserCommand(call.Prompt); ok && call.Event == gates.UserPromptSubmit {
		// The user's decision must not vanish into a prompt the model reads
		// as text: refuse it where the user sees why.
		return hooks.Decision{Block: true, Reason: fmt.Sprintf("orch-hook: could not record /orch-hook:%s: %s. Nothing changed; %s, then type it again.", shorten.Bytes(shorten.OneLine(name), 40, "..."), shorten.OneLine(err.Error()), hint)}
	}
	var busy *state.LockError
	if errors.As(err, &busy) {
		// Waited the whole budget: the log cannot be had either. Tell the
		// user, who can see who holds the lock, rather than drop it quietly.
		return hooks.Decision{Message: fmt.Sprintf("orch-hook: this %s was not recorded: %s. The workflow may now be behind what happened; run `orch-hook status`, and %s.", shorten.Bytes(shorten.OneLine(call.Event), 40, "..."), shorten.OneLine(busy.Error()), busy.Hint())}
	}
	var changed *state.TamperError
	var noKey *state.KeyError
	if errors.As(err, &changed) || errors.As(err, &noKey) || errors.As(err, &unadopted) {
		// Nothing can be recorded until the user decides: say so to the
		// user (the log refuses the write too).
		return hooks.Decision{Message: fmt.Sprintf("orch-hook: could not check or record this %s: %s. %s.", shorten.Bytes(shorten.OneLine(call.Event), 40, "..."), shorten.OneLine(err.Error()), upperFirst(hint))}
	}
	_ = store.Append(state.Event{Type: state.EventError, HookEvent: call.Event, Session: call.Session, Reason: "let through after an internal error: " + shorten.OneLine(err.Error())})
	return hooks.Decision{}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// isStartCommand: the user typed /orch-hook:orchestrate or
// /orch-hook:coordinate (or the /orch-hook-NAME form of an init install).
func isStartCommand(prompt string) bool {
	name, _, ok := gates.UserCommand(prompt)
	return ok && (name == "orchestrate" || name == "coordinate")
}
