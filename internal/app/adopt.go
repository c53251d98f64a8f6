package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// Adoption is what the user says when adopting a v1.3 checkpoint: the
// scope, when the checkpoint does not record one (or records the wrong
// one), and the session that owns the workflow from now on ("" for the
// first one that prompts).
type Adoption struct {
	Scope   string
	Session string
}

// InstallV13 returns what puts into a migrated v1.3 checkpoint the
// workflow it continues (state.Store.Adopt): the workflow section, the
// workflow's table and the state it resumes at, read against the project
// at store.Root (README, "Continuing a v1.3 checkpoint").
func InstallV13(store *state.Store, opt Adoption) func(cp *state.Checkpoint) (string, error) {
	return func(cp *state.Checkpoint) (string, error) {
		cfg := cp.StateMachine.WorkflowConfig
		description := strings.TrimSpace(cfg.Description)
		if description == "" {
			return "", errors.New("the v1.3 checkpoint has no workflow_description: orch-hook cannot tell what the workflow is for, so it cannot continue it")
		}
		if cp.Metadata.ProjectName == "" {
			cp.Metadata.ProjectName = filepath.Base(store.Root)
		}
		phase := gates.State(cp.StateMachine.CurrentState)
		switch cfg.Command {
		case "orchestrate":
			if opt.Scope != "" {
				return "", errors.New("--scope is for a coordinate workflow; this checkpoint is orchestrate's")
			}
			ge := &orchestrate.Env{Root: store.ResolvedRoot(), LoadFiles: func() (orchestrate.PlanFiles, error) {
				return state.ReadDirFiles(store.Root, orchestrate.TasksDir)
			}}
			w, where, err := orchestrate.Adopt(description, opt.Session, phase, ge)
			if err != nil {
				return "", err
			}
			// The team's configuration as it is now, as a start takes it.
			if w.Config, err = ReadConfig(store.Root); err != nil {
				return "", err
			}
			return where, saveWorkflow(cp, w)
		case "coordinate":
			return installCoordinate(store, cp, opt, description, phase)
		}
		return "", fmt.Errorf("the v1.3 checkpoint is a %q workflow; orch-hook continues orchestrate and coordinate workflows only", cfg.Command)
	}
}

// installCoordinate: the topic directory is the v1.3 topic_path, which
// must be inside the project (a new one is numbered when it has none).
func installCoordinate(store *state.Store, cp *state.Checkpoint, opt Adoption, description string, phase gates.State) (string, error) {
	cfg := cp.StateMachine.WorkflowConfig
	scope, why := opt.Scope, "given with --scope"
	if scope == "" && coordinate.ValidScope(cfg.Scope) {
		scope, why = cfg.Scope, "recorded in the v1.3 checkpoint"
	}
	topicDir := ""
	if cfg.TopicPath != "" {
		a := state.InspectArtifact(store.Root, cfg.TopicPath)
		if !a.Inside || a.Rel == "" || a.Rel == "." {
			return "", fmt.Errorf("the v1.3 topic_path %q is not a directory inside the project (%s)", cfg.TopicPath, store.Root)
		}
		topicDir = filepath.ToSlash(a.Rel)
	} else {
		specs := SpecsDir(store.Root)
		number, _ := coordinate.NextTopicNumber(state.ListDirs(store.Root, specs), coordinate.TopicName(description))
		topicDir = specs + "/" + coordinate.TopicDir(number, coordinate.TopicName(description))
	}
	plan := ""
	if found := state.NewestNames(store.Root, topicDir+"/plans", ".md"); len(found) > 0 {
		plan = topicDir + "/plans/" + found[0]
	}
	c, where, err := coordinate.Adopt(coordinate.AdoptFrom{
		Description: description, Scope: scope, ScopeWhy: why, Session: opt.Session,
		TopicDir: topicDir, Phase: phase, Plan: plan,
	}, coordEnv(Env{}, store))
	if err != nil {
		return "", err
	}
	if c.Config, err = ReadConfig(store.Root); err != nil {
		return "", err
	}
	return where, saveCoord(cp, c)
}

// AdoptV13 adopts a v1.3 checkpoint as the project's workflow, at the
// user's word (who): the project's own checkpoint.json when imported is
// nil, else the document imported (see state.Store.Adopt). It returns
// the checkpoint written and where the workflow resumes.
func AdoptV13(store *state.Store, imported []byte, opt Adoption, who string) (*state.Checkpoint, string, error) {
	store.Check = CheckWorkflow
	cp, where, err := store.Adopt(imported, InstallV13(store, opt), who)
	if err != nil {
		return nil, "", err
	}
	if topic := cp.StateMachine.WorkflowConfig.TopicPath; topic != "" {
		// As at a start: the topic directory exists, so no later workflow
		// takes its number (seed 002). The agents' writes create it too:
		// a failure is logged, not fatal.
		if err := state.MakeProjectDir(store.Root, topic); err != nil {
			_ = store.Append(state.Event{Type: state.EventError, Reason: "could not create the topic directory " + topic + ": " + shorten.OneLine(err.Error())})
		}
	}
	return cp, where, nil
}

// PreviewV13 is what adopting the v1.3 document raw would write, with
// nothing written: the checkpoint, or raw unchanged when it is not v1.3.
func PreviewV13(store *state.Store, raw []byte, opt Adoption) (cp *state.Checkpoint, where string, migrated bool, err error) {
	cp, migrated, err = state.Decode(raw)
	if err != nil || !migrated {
		return cp, "", migrated, err
	}
	where, err = InstallV13(store, opt)(cp)
	if err == nil {
		err = cp.Validate()
	}
	if err == nil {
		err = CheckWorkflow(cp)
	}
	return cp, where, true, err
}

// resumePrompt: the user typed /orch-hook:resume, with its arguments.
func resumePrompt(prompt string) (args string, ok bool) {
	name, args, ok := gates.UserCommand(prompt)
	return args, ok && name == "resume"
}

// resumeV13 applies /orch-hook:resume to a v1.3 checkpoint: the user
// adopts it (state.Store.Adopt), and the session owns it. It answers
// false when the checkpoint is not v1.3 (the workflow's own resume
// applies then).
func resumeV13(store *state.Store, in *hooks.Input, args string) (hooks.Decision, bool) {
	var unadopted *state.UnadoptedError
	if _, err := store.Load(); !errors.As(err, &unadopted) {
		return hooks.Decision{}, false
	}
	if unadopted.Pinned {
		// The user types /orch-hook:resume to move the running workflow to
		// this session: that is no word to adopt a file that took its
		// place, which a model may have crafted (at any state it likes).
		return hooks.Decision{Block: true, Reason: fmt.Sprintf("orch-hook: %s: /orch-hook:resume does not adopt it. %s.", unadopted.Error(), upperFirst(unadopted.Hint()))}, true
	}
	if in.SessionID == "" || in.PromptID == "" {
		// As for every decision: Claude Code sends both with a typed prompt.
		return hooks.Decision{Block: true, Reason: "orch-hook: adopting a v1.3 checkpoint needs /orch-hook:resume typed in a Claude Code session (this event has no session_id or prompt_id)."}, true
	}
	session := in.SessionID
	const usage = "/orch-hook:resume [--scope S]"
	scope, rest, err := scopeOption(args, usage)
	if err == nil && rest != "" {
		err = fmt.Errorf("cannot read %q: write %s", shorten.Runes(rest, 60), usage)
	}
	var where string
	var cp *state.Checkpoint
	if err == nil {
		cp, where, err = AdoptV13(store, nil, Adoption{Scope: scope, Session: session}, "the user (/orch-hook:resume)")
	}
	switch {
	case err != nil:
		hint := ""
		var h interface{ Hint() string }
		if errors.As(err, &h) {
			hint = " " + upperFirst(h.Hint()) + "."
		}
		return hooks.Decision{Block: true, Reason: fmt.Sprintf("orch-hook: could not adopt the v1.3 checkpoint: %s.%s", shorten.OneLine(err.Error()), hint)}, true
	}
	return hooks.Decision{Context: fmt.Sprintf("orch-hook: adopted the v1.3 %s checkpoint; the workflow %s. Every step is checked by hooks from here; `orch-hook status` shows where it stands.", cp.StateMachine.WorkflowConfig.Command, where)}, true
}
