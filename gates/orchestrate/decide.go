package orchestrate

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Env is what a decision may consult besides the workflow: the project
// root, the plan files (read by the caller when Needs says so), the clock
// and the Stop cap.
type Env struct {
	Root string
	// Files are the plan files; when nil, LoadFiles reads them on first
	// use (most events never need them).
	Files     PlanFiles
	LoadFiles func() (PlanFiles, error)
	// Recorded reads orch-hook's copy of a plan file as it recorded it
	// (false: none kept; nil: none at all). It is read only while the
	// plan differs from the record: to show a refusal's diff, and to read
	// the plan as recorded when FAILURE_ANALYSIS returns (recordedView).
	// It is not trusted: a copy counts only when it hashes to the
	// recorded hash.
	Recorded func(name string) ([]byte, bool)
	Now      time.Time
	StopCap  int
	// ConfigHash reads the configuration file's hash now ("" when there is
	// none); nil: not checked. It is read only for a decision that is
	// logged, to report a change made since the workflow started.
	ConfigHash gates.ConfigEnv
	// Tokens are the stopping agent's token counts, read from its
	// transcript at a SubagentStop (nil otherwise, or not read); kept with
	// its launch, never decided on.
	Tokens *gates.Tokens

	loadErr  error
	parsed   *Plan
	parseErr error
}

// files returns the plan files, reading them on first use.
func (e *Env) files() PlanFiles {
	if e.Files == nil && e.LoadFiles != nil && e.loadErr == nil {
		e.Files, e.loadErr = e.LoadFiles()
	}
	return e.Files
}

func (e *Env) plan() (*Plan, error) {
	if e.parsed == nil {
		e.parsed = ParsePlan(e.files())
		e.parseErr = e.parsed.Validate()
		if e.loadErr != nil {
			e.parseErr = fmt.Errorf("reading %s: %w", TasksDir, e.loadErr)
		}
	}
	return e.parsed, e.parseErr
}

// Reset drops the parsed plan, after the files changed.
func (e *Env) Reset(files PlanFiles) { e.Files, e.parsed, e.parseErr = files, nil, nil }

// Decide answers one hook event against the workflow. It is pure: the
// caller loads w (with Current/Completed set), calls Decide, and saves w
// when Outcome.Changed.
func Decide(w *Workflow, c *gates.Call, env *Env) gates.Outcome {
	return gates.TeamAgents(w.Settings().Agents).DecideAsTeam(c,
		func(reason string, _ *gates.Call) gates.Outcome { return w.deny(0, reason) },
		func(c *gates.Call) gates.Outcome { return decide(w, c, env) },
		w.Config, env.ConfigHash, func() bool { return !Finished(w.Current) })
}

func decide(w *Workflow, c *gates.Call, env *Env) gates.Outcome {
	if o, denied := gates.StaticRules(c); denied {
		return o
	}
	if Finished(w.Current) {
		return decideFinished(w, c, env)
	}
	switch c.Event {
	case gates.PreToolUse:
		switch c.Tool {
		case "Agent", "Task":
			return w.preAgent(c, env)
		case "Write", "Edit", "NotebookEdit":
			return w.preWrite(c, env)
		case "Bash":
			return w.preBash(c)
		case "SendMessage":
			return w.preSendMessage(c)
		case "Skill":
			if name, ok := gates.CommandName(strings.ToLower(c.Skill)); ok && name == "follow-up" {
				return w.followUpSkill(c, env)
			}
		case "Workflow":
			return w.deny(0, "the native Workflow tool is not allowed while an orch-hook workflow is active (its agents would bypass the gates).")
		}
		if gates.IsMCP(c.Tool) {
			return w.preMCP(c, env)
		}
	case gates.PostToolUse:
		switch c.Tool {
		case "Agent", "Task":
			return w.postAgent(c, env)
		case "Write", "Edit", "NotebookEdit":
			return w.postWrite(c, env)
		}
	case gates.PostToolUseFailure:
		if c.Tool == "Agent" || c.Tool == "Task" {
			return w.agentFailed(c, env)
		}
		if o, ok := gates.SandboxRefusal(c); ok {
			return o
		}
	case gates.SubagentStop:
		return w.subagentStop(c, env)
	case gates.Stop:
		return w.stop(c, env)
	case gates.UserPromptSubmit:
		return w.userPrompt(c, env)
	case gates.SessionStart:
		return w.sessionStart(c, env)
	case gates.SessionEnd:
		return w.sessionEnd(c)
	}
	return gates.Outcome{}
}

// decideFinished: a complete or aborted workflow gates nothing; a new one
// may be started.
func decideFinished(w *Workflow, c *gates.Call, env *Env) gates.Outcome {
	if o, denied := gates.GuardFinishedState(c, env.Root); denied {
		return o
	}
	if c.Event == gates.UserPromptSubmit && gates.IsNotification(c.Prompt) {
		// The background agent whose completion finished the workflow
		// (SUCCESS_EXTRACTION) still has its checkpoint line to deliver.
		if l := w.notifiedLaunch(c.Prompt); l != nil && l.Notice != "" {
			o := gates.Outcome{Context: l.Notice, Changed: true}
			l.Notice = ""
			return o
		}
		return gates.Outcome{}
	}
	if c.Event == gates.UserPromptSubmit {
		if name, _, ok := gates.UserCommand(c.Prompt); ok && (name == "orchestrate" || name == "coordinate") {
			return gates.StartFromPrompt(c)
		}
		if name, args, ok := gates.UserCommand(c.Prompt); ok && name == "follow-up" && w.Current == Complete && !w.foreign(c) {
			// The user typed the follow-up: applied as typed, the kind
			// its first word, the request the rest.
			kind, request := args, ""
			if i := strings.IndexFunc(args, unicode.IsSpace); i >= 0 {
				kind, request = args[:i], strings.TrimSpace(args[i:])
			}
			o, err := FollowUp(w, kind, request, env)
			if err != nil {
				return w.block(err.Error() + `: type /orch-hook:follow-up lightweight|partial|full <request>.`)
			}
			if o.Start == "" {
				o.Context = "orch-hook: " + o.Context
			}
			return o
		}
		if w.Current == Complete && !w.UserAsked && !w.foreign(c) && !strings.HasPrefix(strings.TrimSpace(c.Prompt), "/") {
			// The user's request after completion: the orchestrator may
			// triage it into one follow-up.
			w.UserAsked = true
			return gates.Outcome{Changed: true}
		}
	}
	if c.Event == gates.PreToolUse && c.Tool == "Skill" {
		if name, ok := gates.CommandName(strings.ToLower(c.Skill)); ok && name == "follow-up" {
			return w.followUpSkill(c, env)
		}
	}
	if c.Event == gates.SessionStart && w.Current == Complete {
		return gates.Outcome{Context: shorten.Runes(fmt.Sprintf("orch-hook: the workflow %q is complete. For a follow-up the user asks for, invoke the orch-hook:follow-up skill with `lightweight|partial|full <request>`, or the user starts a new workflow with /orch-hook:orchestrate.", shorten.Runes(w.Request, 80)), 2000)}
	}
	return gates.Outcome{}
}

// followUpSkill applies orch-hook:follow-up <kind> <request>, invoked by the
// orchestrator through the Skill tool (phase 7): only from complete, once
// per prompt the user typed since.
func (w *Workflow) followUpSkill(c *gates.Call, env *Env) gates.Outcome {
	deny := func(why string) gates.Outcome {
		return gates.Refuse(gates.Deny, &gates.Refusal{Rule: why}, gates.Record{ToolUseID: c.ToolUseID, AgentID: c.AgentID})
	}
	switch {
	case c.AgentID != "":
		return deny("a follow-up is the orchestrator's triage of the user's request, not a subagent's.")
	case w.Current != Complete:
		return deny(fmt.Sprintf("a follow-up reopens a complete workflow; this one is %s.", w.Current))
	case w.foreign(c):
		return deny(w.foreignRefusal().Rule)
	case !w.UserAsked:
		return deny("a follow-up answers a request the user typed after the workflow completed; there is none since the last follow-up. Ask the user what to do next.")
	}
	kind, request, _ := strings.Cut(strings.TrimSpace(c.SkillArgs), " ")
	o, err := FollowUp(w, kind, request, env)
	if err != nil {
		return deny(err.Error() + `; invoke orch-hook:follow-up with "lightweight|partial|full <the user's request>".`)
	}
	w.UserAsked = false
	o.Changed = true
	if o.Start != "" {
		return o
	}
	o.Context = "orch-hook: " + o.Context
	return o
}

func (w *Workflow) foreign(c *gates.Call) bool {
	return w.Owner != "" && c.Session != "" && c.Session != w.Owner
}

// foreignRefusal is the refusal of a call from a session that does not
// own the workflow: the rule alone.
func (w *Workflow) foreignRefusal() *gates.Refusal {
	return &gates.Refusal{Rule: "this workflow belongs to another Claude Code session. To continue it here, type /orch-hook:resume (see `orch-hook status`)."}
}

// refusal is a refusal at the current step: "[Gate N] WHAT Now: WHERE.
// Next: NEXT." (gates.Refusal.Text).
func (w *Workflow) refusal(gate int, what string) *gates.Refusal {
	return &gates.Refusal{Gate: gate, Rule: strings.TrimSpace(what), Where: w.Where(), Next: w.Next(nil)}
}

// refuse answers v for r, logged with the current phase.
func (w *Workflow) refuse(v gates.Verdict, r *gates.Refusal, rec gates.Record) gates.Outcome {
	rec.Phase = w.Phase
	return gates.Refuse(v, r, rec)
}

// deny builds a PreToolUse deny with the standard refusal.
func (w *Workflow) deny(gate int, what string) gates.Outcome {
	return w.refuse(gates.Deny, w.refusal(gate, what), gates.Record{})
}

// tampered blocks progress while the plan files differ from what orch-hook
// last allowed (see repair.go for the way back).
func (w *Workflow) tampered(env *Env) (gates.Outcome, bool) {
	changed, o := w.planDrift(env)
	if o != nil {
		return *o, true
	}
	if len(changed) == 0 {
		return gates.Outcome{}, false
	}
	return w.driftRefusal(env, changed, nil, ""), true
}

func (w *Workflow) preBash(c *gates.Call) gates.Outcome {
	if c.Unsandboxed {
		o := w.deny(0, gates.UnsandboxedWhat)
		o.Records[0].ToolUseID = c.ToolUseID
		return o
	}
	if c.TouchesState() {
		o := w.deny(0, c.StateWhat())
		o.Records[0].ToolUseID = c.ToolUseID
		return o
	}
	return gates.Outcome{}
}

func (w *Workflow) preSendMessage(c *gates.Call) gates.Outcome {
	to := strings.TrimSpace(c.SendTo)
	_, named := agentName(to)
	if named || w.launchByAgent(to) != nil {
		return w.deny(0, "SendMessage to a workflow agent is not allowed: each launch does one job and returns its result line; launch a new agent instead.")
	}
	return gates.Outcome{}
}
