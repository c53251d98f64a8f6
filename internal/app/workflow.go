package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// LoadWorkflow reads the orchestrate runtime out of a checkpoint.
func LoadWorkflow(cp *state.Checkpoint) (*orchestrate.Workflow, error) {
	w, err := orchestrate.DecodeWorkflow(cp.Workflow)
	if err != nil {
		return nil, &state.ValidationError{Field: "workflow", Problem: err.Error()}
	}
	w.Current = gates.State(cp.StateMachine.CurrentState)
	w.Completed = gates.States(cp.StateMachine.CompletedStates)
	return w, nil
}

// CheckWorkflow decodes a checkpoint's workflow section as the hooks will:
// one they cannot read is damage, which status, doctor and repair report
// (state.Store.Check).
func CheckWorkflow(cp *state.Checkpoint) error {
	var err error
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		_, err = LoadWorkflow(cp)
	case "coordinate":
		_, err = LoadCoord(cp)
	}
	return err
}

// saveWorkflow writes the runtime and the state back into the checkpoint.
func saveWorkflow(cp *state.Checkpoint, w *orchestrate.Workflow) error {
	b, err := w.Encode()
	if err != nil {
		return err
	}
	cp.Workflow = b
	cp.StateMachine.CurrentState = string(w.Current)
	cp.StateMachine.CompletedStates = gates.Strings(w.Completed)
	cp.StateMachine.TransitionTable = maps.Clone(compiledTable())
	cp.StateMachine.TableVersion = orchestrate.TableVersion
	cp.ErrorState = state.ErrorState{}
	if last, failed, retries, class, ok := w.ErrorState(); ok {
		from := string(failed)
		cp.ErrorState = state.ErrorState{LastError: &last, RetryCount: retries, FailedState: &from, Classification: class}
	}
	return nil
}

// compiledTable is orchestrate.CompiledTable, compiled once per process
// (every hook call on an orchestrate workflow compares the stored table
// with it): read it, never change it.
var compiledTable = sync.OnceValue(orchestrate.CompiledTable)

// TableError: the stored transition table is not this binary's.
type TableError struct{ msg string }

func (e *TableError) Error() string { return e.msg }

// Hint says how to recover.
func (e *TableError) Hint() string {
	return "`orch-hook repair` rebuilds the state from the log; or abort the workflow with /orch-hook:abort"
}

// checkTable compares the stored transition table with the compiled one:
// the same version must match exactly; an older version is upgraded at the
// next write when its current state still exists; a newer one is refused.
func checkTable(cp *state.Checkpoint) error {
	sm := cp.StateMachine
	switch {
	case sm.TableVersion == orchestrate.TableVersion:
		compiled := compiledTable()
		if len(compiled) != len(sm.TransitionTable) {
			return &TableError{"state_machine.transition_table does not match table version " + fmt.Sprint(sm.TableVersion) + " (edited by hand?)"}
		}
		for k, v := range compiled {
			if sm.TransitionTable[k] != v {
				return &TableError{fmt.Sprintf("state_machine.transition_table[%q] is %q; table version %d says %q (edited by hand?)", k, sm.TransitionTable[k], sm.TableVersion, v)}
			}
		}
	case sm.TableVersion > orchestrate.TableVersion:
		return &TableError{fmt.Sprintf("the state was written by a newer orch-hook (table version %d; this binary knows %d): update orch-hook", sm.TableVersion, orchestrate.TableVersion)}
	default:
		if _, ok := compiledTable()[sm.CurrentState]; !ok {
			return &TableError{fmt.Sprintf("state %q of table version %d no longer exists in version %d", sm.CurrentState, sm.TableVersion, orchestrate.TableVersion)}
		}
	}
	return nil
}

// toEvents turns the workflow's records into log events.
func toEvents(records []gates.Record, call *gates.Call, w *orchestrate.Workflow) []state.Event {
	events := make([]state.Event, 0, len(records))
	for _, r := range records {
		ev := state.Event{Type: r.Type, Gate: r.Gate, Reason: r.Reason, AgentID: r.AgentID, AgentType: r.AgentType, ToolUseID: r.ToolUseID, Task: r.Task, Phase: r.Phase}
		if f := r.Refusal; f != nil {
			ev.Rule, ev.Where, ev.Next, ev.Via = f.Rule, f.Where, f.Next, f.Via
		}
		if r.Phase == 0 {
			ev.Phase = w.Phase
		}
		if r.Input != "" {
			ev.Input, _ = jsonenc.Marshal(r.Input)
		}
		fillEvent(&ev, call)
		events = append(events, ev)
	}
	return events
}

func fillEvent(ev *state.Event, call *gates.Call) {
	ev.Session = call.Session
	ev.HookEvent = call.Event
	if ev.ToolUseID == "" {
		ev.ToolUseID = call.ToolUseID
	}
	if ev.AgentID == "" {
		ev.AgentID = call.AgentID
	}
}

// writeEffects writes the project files an outcome asks for.
// pending are this call's events, not yet in the log.
//
// A file that cannot be written does not undo the change (the escalation
// it explains stands: failing it would leave the failure uncounted and the
// work free to be relaunched); the error is logged first (the last event
// carries the checkpoint) and the orchestrator told.
func writeEffects(store *state.Store, w *orchestrate.Workflow, o *gates.Outcome, pending []state.Event, call *gates.Call) []state.Event {
	for rel, content := range o.Files {
		if rel == orchestrate.EscalationFile {
			// In the team's agents' names, as every text of the decision.
			content = gates.TeamAgents(w.Settings().Agents).Text(w.EscalationMarkdown(failureHistory(store, w, pending)))
		}
		pending = writeEffect(store, rel, content, o, pending, call, "retry|skip|abort")
	}
	return pending
}

// writeEffect writes one file an outcome asks for (ESCALATION.md) and
// says so, or logs why it could not (see writeEffects).
func writeEffect(store *state.Store, rel, content string, o *gates.Outcome, events []state.Event, call *gates.Call, options string) []state.Event {
	resolve := "/orch-hook:resolve"
	if options != "" {
		resolve += " " + options
	}
	if err := state.WriteProjectFile(store.Root, rel, content); err != nil {
		why := shorten.OneLine(err.Error())
		o.Context += "\n\n" + "orch-hook: could not write " + rel + " (" + why + "); the escalation stands: tell the user, who decides with " + resolve + " (`orch-hook status` shows it)."
		ev := state.Event{Type: state.EventError, Reason: "could not write " + rel + ": " + why}
		fillEvent(&ev, call)
		if len(events) == 0 {
			events = []state.Event{{Type: state.EventUpdate, Reason: "workflow record updated"}}
			fillEvent(&events[0], call)
		}
		return append([]state.Event{ev}, events...)
	}
	o.Context += "\n\n" + "orch-hook: wrote " + rel + " (tell the user; they decide with " + resolve + ")."
	return events
}

// failureHistory rebuilds the escalation's failure table from the log: each
// 4b FAIL (or final-validation FAIL) and the FAILURE_ANALYSIS that followed.
func failureHistory(store *state.Store, w *orchestrate.Workflow, pending []state.Event) []orchestrate.FailureEntry {
	events, _, _ := store.Events()
	events = append(events, pending...)
	final := w.Escalation != nil && w.Escalation.Kind == orchestrate.EscalationFinal
	var out []orchestrate.FailureEntry
	for _, ev := range events {
		if ev.Type != state.EventAgentDone {
			continue
		}
		var input string
		_ = json.Unmarshal(ev.Input, &input)
		switch {
		case !final && ev.AgentType == orchestrate.Quality && ev.Reason == orchestrate.LineGateFail && ev.Phase == w.Phase:
			out = append(out, orchestrate.FailureEntry{Failure: gates.OrText(input, "quality gate failed")})
		case final && (ev.Reason == orchestrate.LineGateFail || ev.Reason == orchestrate.LineUXFail) && ev.Phase == 0 || final && ev.Reason == orchestrate.LineUXFail:
			out = append(out, orchestrate.FailureEntry{Failure: ev.AgentType + ": " + gates.OrText(input, "failed")})
		case ev.Reason == orchestrate.LineAnalysis && len(out) > 0 && !final:
			out[len(out)-1].Fix = input
		}
	}
	// Keep the failures of this escalation: the last three.
	if len(out) > 3 {
		out = out[len(out)-3:]
	}
	for i := range out {
		out[i].Iteration = i + 1
	}
	return out
}

// startWorkflow creates a new orchestrate workflow (archiving a finished
// one) for a typed /orch-hook:orchestrate or a FULL follow-up.
func startWorkflow(env Env, store *state.Store, o gates.Outcome, call *gates.Call) hooks.Decision {
	if o.Verdict != gates.Allow {
		return decisionOf(o)
	}
	var d hooks.Decision
	if name, _, _ := gates.UserCommand(call.Prompt); name == "coordinate" {
		d = startCoordFromPrompt(env, store, call, o.Start)
	} else {
		d = startOrchestrate(env, store, o, call)
	}
	if !d.Block {
		if _, err := os.Stat(store.CheckpointPath()); err == nil {
			d.Message = joinLines(d.Message, unprotectedNotice(env, store.Root))
		}
	}
	return d
}

// startOrchestrate starts the orchestrate workflow from the user's prompt.
func startOrchestrate(env Env, store *state.Store, o gates.Outcome, call *gates.Call) hooks.Decision {
	w, err := StartWorkflow(store, o.Start, call.Session, env.now())
	var active *state.ActiveError
	var config *ConfigError
	switch {
	case errors.As(err, &active):
		return hooks.Decision{Block: true, Reason: "orch-hook: " + active.Error() + "; " + active.Hint()}
	case errors.As(err, &config):
		return hooks.Decision{Block: true, Reason: "orch-hook: cannot start the workflow: " + config.Error() + ". " + upperFirst(config.Hint()) + "."}
	case err != nil:
		// UserPromptSubmit fails open: the prompt goes through, unenforced.
		env.debugf("start: %v", err)
		return hooks.Decision{Context: "orch-hook: could not start the workflow (" + shorten.OneLine(err.Error()) + "); nothing is enforced. Run `orch-hook doctor`."}
	}
	team := gates.TeamAgents(w.Settings().Agents)
	return hooks.Decision{
		Context: fmt.Sprintf("orch-hook: workflow started (step 0a). Request: %q. Next: %s. Every step is checked by hooks; `orch-hook status` shows where it stands.%s", shorten.Bytes(shorten.OneLine(o.Start), 200, "..."), team.Text(w.Next(nil)), teamContext(w.Settings())),
		Message: StartNotice(store.Root, env.getenv()("HOME"), w.Config),
	}
}

func joinLines(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

// StartWorkflow creates the orchestrate workflow for request, owned by
// session ("" until the first prompt of a session reaches it).
func StartWorkflow(store *state.Store, request, session string, now time.Time) (*orchestrate.Workflow, error) {
	request = strings.TrimSpace(request)
	if request == "" {
		return nil, errors.New("the request is empty: say what to build")
	}
	w, err := orchestrate.NewWorkflow(request, session)
	if err != nil {
		return nil, err
	}
	if w.Config, err = ReadConfig(store.Root); err != nil {
		return nil, err
	}
	// Kept as the team's configuration says (its hash only, redacted).
	request = w.Config.Settings.KeptRequest(request)
	w.Request = request
	cp := &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		StateMachine: state.StateMachine{
			WorkflowConfig: state.WorkflowConfig{Command: "orchestrate", Description: request},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata: state.Metadata{
			CheckpointID: "orchestrate_" + now.Format("20060102_150405"),
			ProjectName:  filepath.Base(store.Root),
			CreatedAt:    now,
		},
	}
	if err := saveWorkflow(cp, w); err != nil {
		return nil, err
	}
	ev := state.Event{Type: state.EventStart, Session: session, Reason: "orchestrate: " + shorten.Bytes(shorten.OneLine(request), 300, "..."), Input: startInput(store.Root)}
	return w, store.Create(cp, ev)
}
