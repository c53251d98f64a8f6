package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// LoadCoord reads the coordinate runtime out of a checkpoint.
func LoadCoord(cp *state.Checkpoint) (*coordinate.Workflow, error) {
	c, err := coordinate.DecodeWorkflow(cp.Workflow)
	if err != nil {
		return nil, &state.ValidationError{Field: "workflow", Problem: err.Error()}
	}
	c.Current = gates.State(cp.StateMachine.CurrentState)
	c.Completed = gates.States(cp.StateMachine.CompletedStates)
	return c, nil
}

// saveCoord writes the runtime, the state, the scope's table and the
// supervisors' state back into the checkpoint.
func saveCoord(cp *state.Checkpoint, c *coordinate.Workflow) error {
	b, err := c.Encode()
	if err != nil {
		return err
	}
	cp.Workflow = b
	sm := &cp.StateMachine
	sm.CurrentState = string(c.Current)
	sm.CompletedStates = gates.Strings(c.Completed)
	sm.TransitionTable = coordinate.Table(c.Scope)
	sm.TableVersion = coordinate.TableVersion
	sm.WorkflowConfig.Scope = c.Scope
	sm.WorkflowConfig.TopicPath = c.Paths.TopicPath
	sm.WorkflowConfig.TerminalState = coordinate.ScopeTerminal[c.Scope]
	if cp.SupervisorState == nil {
		cp.SupervisorState = map[string]json.RawMessage{}
	}
	for key, st := range c.Supervisors {
		raw, err := jsonenc.Marshal(st.Entry())
		if err != nil {
			return err
		}
		cp.SupervisorState[key] = raw
	}
	cp.ErrorState = state.ErrorState{}
	if last, failed, retries, class, ok := c.ErrorState(); ok {
		from := string(failed)
		cp.ErrorState = state.ErrorState{LastError: &last, RetryCount: retries, FailedState: &from, Classification: class}
	}
	if cp.PhaseData == nil {
		cp.PhaseData = map[string]json.RawMessage{}
	}
	set := func(name string, v any) error {
		raw, err := jsonenc.Marshal(v)
		if err == nil {
			cp.PhaseData[name] = raw
		}
		return err
	}
	if err := set("initialize", c.Paths); err != nil {
		return err
	}
	research, plan := c.PhaseData()
	if research != nil {
		if err := set("research", research); err != nil {
			return err
		}
	}
	if plan != nil {
		return set("plan", plan)
	}
	return nil
}

// maxPlanBytes bounds what a plan read for its dependencies may cost.
const maxPlanBytes = 1 << 20

// coordEnv gives the coordinate engine its looks at the project.
func coordEnv(env Env, store *state.Store) *coordinate.Env {
	root := store.Root
	return &coordinate.Env{
		Root:    store.ResolvedRoot(),
		Now:     env.now(),
		StopCap: env.StopCap,
		Inspect: func(path string) coordinate.FileCheck {
			a := state.InspectArtifact(root, path)
			return coordinate.FileCheck{Rel: a.Rel, Inside: a.Inside, Exists: a.Exists, Size: a.Size}
		},
		Hash: func(path string) (string, string, error) { return state.HashProjectFile(root, path) },
		List: func(rel string) []string { return state.ListNames(root, rel) },
		Read: func(rel string) []byte {
			b, _ := state.ReadProjectFile(root, rel, maxPlanBytes)
			return b
		},
	}
}

// decideCoord runs the coordinate workflow on the event (see transact).
func decideCoord(env Env, store *state.Store, cp *state.Checkpoint, call *gates.Call) (hooks.Decision, error) {
	if err := checkCoordTable(cp); err != nil && call.Event != gates.UserPromptSubmit {
		return hooks.Decision{}, err
	}
	return transact(env, store, cp, call, func(cp *state.Checkpoint) (*decision, error) {
		c, err := LoadCoord(cp)
		if err != nil {
			return nil, err
		}
		ce := coordEnv(env, store)
		r := newReads(ce.Root, ce.Now, ce.StopCap)
		r.Tokens = env.tokens
		ce.Tokens = r.Tokens
		ce.ConfigHash = r.config(func() string { return ConfigHash(store.Root) })
		d := &decision{out: coordinate.Decide(c, call, r.coordinate(ce)), reads: r, redact: c.Settings().RedactRequest}
		d.events = func() []state.Event { return toEvents(d.out.Records, call, &orchestrate.Workflow{}) }
		d.save = func(cp *state.Checkpoint, events []state.Event) ([]state.Event, error) {
			for rel, content := range d.out.Files {
				// ESCALATION.md (failures.go): the only file a coordinate
				// decision writes; the escalation stands without it
				// (writeEffects).
				events = writeEffect(store, rel, content, &d.out, events, call, "")
			}
			return events, saveCoord(cp, c)
		}
		return d, nil
	})
}

// checkCoordTable: the stored table must be the scope's.
func checkCoordTable(cp *state.Checkpoint) error {
	sm := cp.StateMachine
	want := coordinate.Table(sm.WorkflowConfig.Scope)
	if sm.TableVersion > coordinate.TableVersion {
		return &TableError{fmt.Sprintf("the state was written by a newer orch-hook (table version %d; this binary knows %d): update orch-hook", sm.TableVersion, coordinate.TableVersion)}
	}
	if sm.TableVersion == coordinate.TableVersion {
		for k, v := range want {
			if sm.TransitionTable[k] != v {
				return &TableError{fmt.Sprintf("state_machine.transition_table[%q] is %q; scope %s says %q (edited by hand?)", k, sm.TransitionTable[k], sm.WorkflowConfig.Scope, v)}
			}
		}
		if len(want) != len(sm.TransitionTable) {
			return &TableError{"state_machine.transition_table does not match scope " + sm.WorkflowConfig.Scope}
		}
	}
	return nil
}

// SpecsDir is where topic directories go: .claude/specs when the project
// has it, else specs.
func SpecsDir(root string) string {
	if state.IsDir(root, ".claude/specs") {
		return ".claude/specs"
	}
	return "specs"
}

// StartCoordinate initializes and creates a coordinate workflow: scope
// (given or detected), topic directory (numbered idempotently), research
// topics and the pre-calculated artifact paths.
func StartCoordinate(store *state.Store, description, scope, session string, now time.Time) (*coordinate.Workflow, error) {
	description = strings.TrimSpace(description)
	if description == "" {
		return nil, errors.New("the description is empty: say what to research or build")
	}
	if scope != "" && !coordinate.ValidScope(scope) {
		return nil, fmt.Errorf("unknown scope %q (one of %s)", scope, strings.Join(coordinate.Scopes, ", "))
	}
	specs := SpecsDir(store.Root)
	existing := state.ListDirs(store.Root, specs)
	effective := scope
	if effective == "" {
		effective, _ = coordinate.DetectScope(description)
	}
	name := coordinate.TopicName(description)
	number, _ := coordinate.NextTopicNumber(existing, name)
	topicDir := filepath.ToSlash(filepath.Join(specs, coordinate.TopicDir(number, name)))
	var plan string // research-and-revise: the existing plan to revise
	if effective == coordinate.ScopeResearchAndRevise {
		// The plan to revise is the newest one (seed 002).
		plans := func(dir string) []string { return state.NewestNames(store.Root, dir+"/plans", ".md") }
		if found := plans(topicDir); len(found) > 0 {
			plan = topicDir + "/plans/" + found[0]
		} else {
			var withPlans []string
			for _, d := range existing {
				if len(plans(specs+"/"+d)) > 0 {
					withPlans = append(withPlans, d)
				}
			}
			if t := coordinate.RevisionTopic(description, withPlans); t != "" {
				topicDir = specs + "/" + t
				plan = topicDir + "/plans/" + plans(topicDir)[0]
			} else {
				hint := "use research-and-plan to write one"
				if len(withPlans) > 0 {
					hint = "topics with a plan: " + strings.Join(withPlans, ", ") + "; name one of them in the description, or use research-and-plan"
				}
				return nil, fmt.Errorf("scope research-and-revise needs an existing plan in %s/plans/, and there is none (%s)", topicDir, hint)
			}
		}
	}
	c, err := coordinate.NewWorkflow(description, scope, session, topicDir)
	if err != nil {
		return nil, err
	}
	if c.Config, err = ReadConfig(store.Root); err != nil {
		return nil, err
	}
	// Kept as the team's configuration says (its hash only, redacted).
	description = c.Config.Settings.KeptRequest(description)
	c.Description = description
	if plan != "" {
		c.Topic = strings.SplitN(filepath.Base(topicDir), "_", 2)[1]
		c.Paths.PlanPath = plan
	}
	cp := &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		StateMachine: state.StateMachine{
			WorkflowConfig: state.WorkflowConfig{Command: "coordinate", Description: description},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata: state.Metadata{
			CheckpointID: "coordinate_" + now.Format("20060102_150405"),
			ProjectName:  filepath.Base(store.Root),
			CreatedAt:    now,
		},
	}
	if err := saveCoord(cp, c); err != nil {
		return nil, err
	}
	ev := state.Event{Type: state.EventStart, Session: session, Reason: fmt.Sprintf("coordinate (%s): %s", c.Scope, shorten.Bytes(shorten.OneLine(description), 300, "...")), Input: startInput(store.Root)}
	if err := store.Create(cp, ev); err != nil {
		return nil, err
	}
	// The topic directory exists from the start, so a later workflow does
	// not take its number even if this one writes nothing (seed 002). The
	// agents' writes create it too, so a failure is logged, not fatal.
	if err := state.MakeProjectDir(store.Root, topicDir); err != nil {
		_ = store.Append(state.Event{Type: state.EventError, Session: session, Reason: "could not create the topic directory " + topicDir + ": " + shorten.OneLine(err.Error())})
	}
	return c, nil
}

// startCoordFromPrompt: the user typed /orch-hook:coordinate <description>.
func startCoordFromPrompt(env Env, store *state.Store, call *gates.Call, description string) hooks.Decision {
	scope, description, err := scopeOption(description, "/orch-hook:coordinate [--scope S] <description>")
	if err != nil {
		return hooks.Decision{Block: true, Reason: "orch-hook: " + err.Error()}
	}
	c, err := StartCoordinate(store, description, scope, call.Session, env.now())
	var active *state.ActiveError
	switch {
	case errors.As(err, &active):
		return hooks.Decision{Block: true, Reason: "orch-hook: " + active.Error() + "; " + active.Hint()}
	case err != nil:
		reason := "orch-hook: cannot start the coordinate workflow: " + shorten.OneLine(err.Error())
		var config *ConfigError
		if errors.As(err, &config) {
			reason += ". " + upperFirst(config.Hint()) + "."
		}
		return hooks.Decision{Block: true, Reason: reason}
	}
	return hooks.Decision{Context: CoordStartContext(c), Message: StartNotice(store.Root, env.getenv()("HOME"), c.Config)}
}

// CoordStartContext is what the orchestrator is told when a coordinate
// workflow starts, in the team's agents' names.
func CoordStartContext(c *coordinate.Workflow) string {
	return gates.TeamAgents(c.Settings().Agents).Text(c.StartContext()) + teamContext(c.Settings())
}

// scopeOption splits "--scope S rest" (or "--scope=S rest") off a typed
// command's arguments; usage is how to write that command.
func scopeOption(args, usage string) (scope, rest string, err error) {
	args = strings.TrimSpace(args)
	if !strings.HasPrefix(args, "--scope") {
		return "", args, nil
	}
	opt, rest, _ := strings.Cut(args, " ")
	if opt == "--scope" {
		opt, rest, _ = strings.Cut(strings.TrimSpace(rest), " ")
	} else if v, ok := strings.CutPrefix(opt, "--scope="); ok {
		opt = v
	} else {
		return "", "", fmt.Errorf("cannot read %q: write %s", opt, usage)
	}
	if !coordinate.ValidScope(opt) {
		return "", "", fmt.Errorf("unknown scope %q (one of %s): write %s", opt, strings.Join(coordinate.Scopes, ", "), usage)
	}
	return opt, strings.TrimSpace(rest), nil
}
