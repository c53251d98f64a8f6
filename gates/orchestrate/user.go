package orchestrate

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// stop decides whether the main thread may stop.
func (w *Workflow) stop(c *gates.Call, env *Env) gates.Outcome {
	o := gates.Outcome{}
	if w.foreign(c) {
		return o
	}
	// A running launch that the Stop no longer lists never completed: stale.
	running := map[string]bool{}
	for _, id := range c.BackgroundRuns {
		running[id] = true
	}
	waitingOnAgent := false
	for _, l := range w.InFlight() {
		if l.AgentID != "" && running[l.AgentID] {
			waitingOnAgent = true
			continue
		}
		l.Status = gates.Stale
		l.Ended = env.Now
		if l.Task > 0 && w.Tasks[l.Task] != nil && w.Tasks[l.Task].Status == gates.Running {
			w.Tasks[l.Task].Status = ""
		}
		o.Changed = true
		o.Log(gates.Record{Type: gates.RecUpdate, AgentID: l.AgentID, AgentType: l.Agent, ToolUseID: l.ToolUseID, Task: l.Task, Reason: "stale launch cleared at Stop: not among the running background tasks and never completed"})
	}
	// A background agent that finished but whose task-notification has
	// not reached the orchestrator yet will wake it: let it stop meanwhile.
	for _, l := range w.Launches {
		if l.Notice != "" {
			waitingOnAgent = true
		}
	}
	if w.Current == Escalated || w.WaitingOn != "" || waitingOnAgent {
		return o
	}
	limit := w.limits().StopCap
	if env.StopCap > 0 {
		limit = env.StopCap // $ORCH_HOOK_STOP_CAP overrides the configuration
	}
	if w.StopBlocks >= limit {
		o.Log(gates.Record{Type: gates.RecError, Reason: fmt.Sprintf("Stop allowed after %d consecutive blocks (stop cap %d) though the workflow is not finished", w.StopBlocks, limit)})
		return o
	}
	w.StopBlocks++
	gate := stopGate(w)
	o.Refuse(gates.Block, w.refusal(gate, fmt.Sprintf("the workflow is not finished and the next step is yours (stop blocked %d/%d).", w.StopBlocks, limit)), gates.Record{Phase: w.Phase})
	o.Changed = true
	return o
}

// stopGate names the gate a Stop would skip.
func stopGate(w *Workflow) int {
	switch w.Current {
	case S4b:
		return 1
	case S4c:
		return 2
	case SF1, SF2:
		return 3
	case S6:
		return 4
	case S5b:
		return 5
	case S4a:
		if w.Awaiting == "fix" {
			if w.FinalFrom == S5b {
				return 7
			}
			return 6
		}
	}
	return 0
}

// userPrompt handles UserPromptSubmit: a background agent's notification,
// or a prompt the user typed (a decision, answers, anything).
func (w *Workflow) userPrompt(c *gates.Call, env *Env) gates.Outcome {
	if gates.IsNotification(c.Prompt) {
		return w.notification(c, env)
	}
	o := gates.Outcome{}
	if w.StopBlocks > 0 && !w.foreign(c) {
		w.StopBlocks = 0
		o.Changed = true
	}
	if w.Owner == "" && c.Session != "" {
		w.Owner = c.Session
		o.Changed = true
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: "workflow owned by session " + c.Session + " (its first prompt)"})
	}
	if name, args, ok := gates.UserCommand(c.Prompt); ok {
		if d, handled := w.decision(name, args, c, env); handled {
			if o.Changed {
				d.Changed = true
				d.Records = append(o.Records, d.Records...)
			}
			return d
		}
		return o
	}
	if w.foreign(c) {
		return o
	}
	if w.WaitingOn == "answers" {
		w.WaitingOn = ""
		o.Changed = true
		if w.Rounds >= w.limits().ClarificationRounds {
			step := w.Current
			if _, err := w.fire(OnAnswers, env); err == nil {
				w.Forced = "defaults"
				line := fmt.Sprintf("[STEP %s] answers to round %d/%d -> 2 (forced: defaults) | launch task-planner; fill remaining gaps with sensible defaults", step, w.limits().ClarificationRounds, w.limits().ClarificationRounds)
				o.Context = line
				o.Log(gates.Record{Type: gates.RecTransition, Reason: line})
				return o
			}
		}
		o.Context = fmt.Sprintf("orch-hook: the user answered clarification round %d/%d; relaunch requirements-analyst with their answers.", w.Rounds, w.limits().ClarificationRounds)
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: fmt.Sprintf("answers to clarification round %d received", w.Rounds)})
	}
	return o
}

// notification delivers a background agent's checkpoint line; if its
// SubagentStop was never seen, the notification's <result> completes it.
func (w *Workflow) notification(c *gates.Call, env *Env) gates.Outcome {
	id := gates.FirstMatch(gates.ReNotifyID, c.Prompt)
	l := w.notifiedLaunch(c.Prompt)
	if l == nil {
		return gates.Outcome{}
	}
	o := gates.Outcome{}
	if l.AgentID == "" && id != "" {
		l.AgentID = id
		o.Changed = true
	}
	if l.Status == gates.Running || l.Status == gates.Stale {
		status := gates.FirstMatch(gates.ReNotifyStatus, c.Prompt)
		if status != "" && status != "completed" {
			l.Status, l.Ended = gates.Failed, env.Now
			if l.Task > 0 && w.Tasks[l.Task] != nil && w.Tasks[l.Task].Status == gates.Running {
				w.Tasks[l.Task].Status = ""
			}
			o.Changed = true
			o.Log(gates.Record{Type: gates.RecComplete, AgentID: l.AgentID, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "ended (transient): " + status})
			o.Context = w.failed(l, gates.Transient, fmt.Sprintf("ended with status %q", shorten.Runes(status, 40)), env, &o)
			return o
		}
		l.Background = false // deliver the line now
		prior := gates.TakeKept(&w.Kept, l.AgentID)
		text := gates.JoinKept(prior, gates.FirstMatch(gates.ReNotifyResult, c.Prompt))
		if missingLine(l.Job, text, false) {
			w.finish(l, "", gates.Unrecognized, env, &o)
		} else {
			w.complete(l, text, prior, env, &o)
		}
		o.Changed = true
		return o
	}
	if l.Notice != "" {
		o.Context = l.Notice
		l.Notice = ""
		o.Changed = true
	}
	return o
}

// notifiedLaunch is the launch a <task-notification> is about, by its
// task-id (agent id), else its tool-use-id.
func (w *Workflow) notifiedLaunch(prompt string) *Launch {
	if l := w.launchByAgent(gates.FirstMatch(gates.ReNotifyID, prompt)); l != nil {
		return l
	}
	return w.launchByTool(gates.FirstMatch(gates.ReNotifyTool, prompt))
}

// decision applies a user command typed as a prompt. handled is false for
// commands that are not decisions (they pass through).
func (w *Workflow) decision(name, args string, c *gates.Call, env *Env) (gates.Outcome, bool) {
	if name == "orchestrate" || name == "coordinate" {
		return w.block(fmt.Sprintf("a workflow is already active here (step %s: %q). Continue it, or end it with /orch-hook:abort before starting another.", w.Current, shorten.Runes(w.Request, 60))), true
	}
	if !gates.UserCommands[name] {
		return gates.Outcome{}, false
	}
	if c.Session == "" || c.PromptID == "" {
		// Claude Code always sends both with a typed prompt.
		return w.block("a decision needs a prompt typed in a Claude Code session (this event has no session_id or prompt_id)."), true
	}
	if contains(w.Decisions, c.PromptID) {
		return gates.Outcome{}, true // the same prompt seen again: not a second decision
	}
	if name != "resume" && w.foreign(c) {
		return w.block(w.foreignRefusal().Rule), true
	}
	var o gates.Outcome
	switch name {
	case "approve":
		o = w.approve(env)
	case "request-changes":
		o = w.requestChanges(args)
	case "resolve":
		o = w.resolve(args, env)
	case "abort":
		from := w.Current
		if _, err := w.fire(OnAbort, env); err != nil {
			o = w.block(fmt.Sprintf("the workflow cannot be aborted here: %v.", err))
			break
		}
		w.WaitingOn = ""
		o = gates.Outcome{Changed: true, Context: "orch-hook: the user aborted the workflow; nothing is gated any more. Stop and summarize where it ended."}
		o.Log(gates.Record{Type: gates.RecDecision, Reason: "abort", Input: string(from)})
	case "resume":
		if c.Session == "" || c.Session == w.Owner {
			return gates.Outcome{Context: "orch-hook: this session already owns the workflow. " + w.Summary(env)}, true
		}
		prev := w.Owner
		w.Owner = c.Session
		o = gates.Outcome{Changed: true, Context: "orch-hook: this session now owns the workflow. " + w.Summary(env)}
		o.Log(gates.Record{Type: gates.RecDecision, Reason: fmt.Sprintf("resume: ownership moved from session %s to %s", gates.OrText(prev, "(none)"), c.Session)})
	}
	if o.Changed && c.PromptID != "" {
		w.Decisions = append(w.Decisions, c.PromptID)
		if len(w.Decisions) > 50 {
			w.Decisions = w.Decisions[len(w.Decisions)-50:]
		}
	}
	return o, true
}

// block refuses a UserPromptSubmit (the prompt is not sent to the model).
func (w *Workflow) block(what string) gates.Outcome {
	return gates.Refuse(gates.Block, w.refusal(0, what), gates.Record{})
}

func (w *Workflow) approve(env *Env) gates.Outcome {
	if w.Current != S3 {
		return w.block("there is no plan waiting for approval.")
	}
	p, err := env.plan()
	if err != nil {
		return w.block(fmt.Sprintf("the plan does not validate any more (%v); fix it or ask for changes with /orch-hook:request-changes.", err))
	}
	now := HashPlanFiles(env.files())
	if changed := ChangedFiles(w.PlanHashes, now); len(changed) > 0 {
		// The user approves what validated at 2 -> 3; a change since, not
		// through a write orch-hook allowed, is shown and re-validated.
		snap := w.bindable(p)
		what := PlanChanges(w.Plan, snap)
		if len(what) == 0 {
			what = []string{"text only (nothing the gates read)"}
		}
		w.Plan, w.PlanHashes = snap, now
		then := "It is re-validated as it now stands; review it and type /orch-hook:approve again (or revert the change and approve)."
		if err := w.checkTicks(p); err != nil {
			then = fmt.Sprintf("And %v.", err)
		}
		o := w.block(fmt.Sprintf("approval refused: the plan changed since it was validated, not through a write orch-hook allowed (%s under %s): %s. %s", strings.Join(changed, ", "), TasksDir, strings.Join(what, "; "), then))
		o.Changed = true
		return o
	}
	if err := w.checkTicks(p); err != nil {
		return w.block(fmt.Sprintf("approval refused: %v.", err))
	}
	open := p.FirstOpenPhase()
	// Back at 3 while 4a waited for an appended phase (accept-plan, or
	// changes requested): with no open phase it waits for one again, and
	// the one appended after the phases orch-hook knows is taken at the
	// next code-implementer launch, with its checks. Any other open phase
	// is the approved plan's next one.
	awaits := w.Awaiting != "" && (open == 0 || open == w.pendingPhase(p))
	if open == 0 && !awaits {
		// 4a would have no phase to run.
		return w.block("the plan has no unchecked task, so there is nothing to implement; ask for changes with /orch-hook:request-changes <what to add>.")
	}
	if _, err := w.fire(OnApprove, env); err != nil {
		return w.block(fmt.Sprintf("the approval is refused by the workflow's table: %v.", err))
	}
	w.WaitingOn = ""
	w.Tasks = nil
	w.FixIterations = 0
	if awaits {
		w.Plan = w.bindable(p)
	} else {
		w.Plan = p.Snapshot()
		w.Phase = open
		w.Awaiting = ""
	}
	w.PlanHashes = now
	line := fmt.Sprintf("[STEP 3] APPROVED -> 4a | phase %d of %d: %s", w.Phase, len(w.Plan.Phases), w.Next(env))
	if awaits && open != 0 {
		line = fmt.Sprintf("[STEP 3] APPROVED -> 4a | phase %d is appended: launch code-implementer for its tasks (orch-hook takes the phase then)", open)
	} else if awaits {
		line = fmt.Sprintf("[STEP 3] APPROVED -> 4a | %s: %s", w.Where(), w.Next(env))
	}
	o := gates.Outcome{Changed: true, Context: "orch-hook: " + line}
	o.Log(gates.Record{Type: gates.RecDecision, Reason: "approve: " + line, Phase: w.Phase})
	return o
}

func (w *Workflow) requestChanges(args string) gates.Outcome {
	if w.Current != S3 {
		return w.block("there is no plan waiting for approval to change.")
	}
	if args == "" {
		return w.block("say what to change: /orch-hook:request-changes <what to change>.")
	}
	if _, err := w.fire(OnRequestChanges, &Env{}); err != nil {
		return w.block(fmt.Sprintf("the change request is refused by the workflow's table: %v.", err))
	}
	w.WaitingOn = ""
	line := fmt.Sprintf("[STEP 3] CHANGES REQUESTED -> 2 | relaunch task-planner to revise the plan: %s", shorten.Runes(shorten.OneLine(args), 300))
	o := gates.Outcome{Changed: true, Context: "orch-hook: " + line}
	o.Log(gates.Record{Type: gates.RecDecision, Reason: "request-changes: " + shorten.Runes(shorten.OneLine(w.Settings().KeptRequest(args)), 300)})
	return o
}

// resolve answers an escalation (retry, skip, abort) or clears stale
// launches.
func (w *Workflow) resolve(args string, env *Env) gates.Outcome {
	option := strings.ToLower(strings.Fields(args + " ")[0])
	if option == "clear-stale" {
		n := 0
		for _, l := range w.Launches {
			if l.Status == gates.Stale {
				l.Status = gates.Failed
				n++
			}
		}
		o := gates.Outcome{Changed: n > 0, Context: fmt.Sprintf("orch-hook: %d stale launch(es) cleared.", n)}
		if n > 0 {
			o.Log(gates.Record{Type: gates.RecDecision, Reason: fmt.Sprintf("clear-stale: %d stale launch(es) cleared", n)})
		}
		return o
	}
	switch option {
	case "accept-plan":
		return w.acceptPlan(env)
	case "accept-state":
		return w.block("there is no change to the workflow's state to accept: orch-hook has detected none (/orch-hook:resolve accept-state accepts a state changed outside orch-hook once it is detected).")
	}
	if w.Current != Escalated || w.Escalation == nil {
		return w.block(fmt.Sprintf("there is no escalation to resolve (/orch-hook:resolve %s).", gates.OrText(option, "?")))
	}
	kind := w.Escalation.Kind
	o := gates.Outcome{Changed: true}
	switch option {
	case "retry":
		if _, err := w.fire(OnRetry, env); err != nil {
			return w.block(fmt.Sprintf("retry is refused by the workflow's table: %v.", err))
		}
		w.WaitingOn = ""
		if kind == EscalationAgent {
			e := w.Escalation
			o.Context = fmt.Sprintf("orch-hook: [RESOLVE] retry -> %s | the failure count of %s is reset (0/%d): relaunch it. Next: %s", w.Current, gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What(), w.limits().Retries, w.Next(env))
		} else if kind == EscalationFix {
			w.FixIterations = 0
			o.Context = fmt.Sprintf("orch-hook: [RESOLVE] retry -> F1 | fix iterations reset to 0/%d: launch task-planner for FAILURE_ANALYSIS of %s", w.limits().FixIterations, taskList(w.FailingTasks))
		} else {
			w.FinalFailures = 0
			w.Awaiting = "fix"
			o.Context = fmt.Sprintf("orch-hook: [RESOLVE] retry -> 4a | final-validation failures reset to 0/%d: append a fix phase to MASTER_PLAN.md, then implement it", w.limits().FinalValidationFailures)
		}
	case "skip":
		if kind == EscalationAgent && !contains(phaseWork, w.Escalation.From) {
			return w.block(fmt.Sprintf("skip is not possible for a failure at step %s: the steps after it need what it produces. Use /orch-hook:resolve retry or abort.", w.Escalation.From))
		}
		phaseSkip := kind == EscalationFix || kind == EscalationAgent
		if phaseSkip {
			if refused, bad := w.skipDrift(env); bad {
				return refused
			}
		}
		if _, err := w.fire(OnSkip, env); err != nil {
			return w.block(fmt.Sprintf("skip is refused by the workflow's table: %v.", err))
		}
		w.WaitingOn = ""
		if phaseSkip {
			p := ParsePlan(env.files())
			text := p.MarkSkipped(w.Phase)
			o.Files = map[string]string{TasksDir + "/" + MasterPlan: text}
			files := PlanFiles{}
			for k, v := range env.files() {
				files[k] = v
			}
			files[MasterPlan] = []byte(text)
			env.Reset(files)
			if w.PlanHashes == nil {
				w.PlanHashes = map[string]string{}
			}
			w.PlanHashes[MasterPlan] = hashContent([]byte(text))
			issue := fmt.Sprintf("phase %d (%s) skipped after %d failed fix iterations", w.Phase, taskList(w.FailingTasks), w.limits().FixIterations)
			if kind == EscalationAgent {
				e := w.Escalation
				issue = fmt.Sprintf("phase %d skipped after %s failed %d times at step %s", w.Phase, gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What(), len(e.Attempts), e.From)
			}
			w.KnownIssues = append(w.KnownIssues, issue)
			o.Context = fmt.Sprintf("orch-hook: [RESOLVE] skip -> 4c | phase %d's tasks marked [x] (skipped: known issue)", w.Phase)
			w.advance4c(env, &o)
			if o.Context != "" && !strings.HasPrefix(o.Context, "orch-hook:") {
				o.Context = "orch-hook: [RESOLVE] skip -> 4c | phase marked skipped (known issue)\n" + o.Context
			}
		} else {
			w.KnownIssues = append(w.KnownIssues, fmt.Sprintf("final validation failed %d times (last at %s); skipped by the user", w.limits().FinalValidationFailures, w.FinalFrom))
			o.Context = "orch-hook: [RESOLVE] skip -> 6 | the final-validation failure is recorded as a known issue: launch task-planner for SUCCESS_EXTRACTION"
		}
	case "abort":
		if _, err := w.fire(OnAbort, env); err != nil {
			return w.block(fmt.Sprintf("abort is refused by the workflow's table: %v.", err))
		}
		w.WaitingOn = ""
		o.Context = "orch-hook: [RESOLVE] abort -> aborted | the workflow is aborted; nothing is gated any more."
	default:
		return w.block(fmt.Sprintf("unknown option %q: use /orch-hook:resolve retry, skip or abort (or clear-stale, accept-plan, accept-state).", option))
	}
	w.Escalation = nil
	o.Log(gates.Record{Type: gates.RecDecision, Reason: "resolve " + option + " (" + kind + " escalation)", Phase: w.Phase})
	return o
}

// skipDrift refuses /orch-hook:resolve skip of a phase while the plan
// differs from what orch-hook recorded: the skip rewrites MASTER_PLAN.md
// from the file as it stands and records it, so it would adopt a change
// made outside orch-hook without showing it. The user repairs or accepts
// the change first (the refusal says how, with the diffs), then skips.
func (w *Workflow) skipDrift(env *Env) (gates.Outcome, bool) {
	changed, bad := w.planDrift(env)
	if bad != nil {
		return w.block(fmt.Sprintf("skip refused: cannot read %s (%v), so the plan cannot be checked; fix the directory's permissions, then type /orch-hook:resolve skip again.", TasksDir, env.loadErr)), true
	}
	if len(changed) == 0 {
		return gates.Outcome{}, false
	}
	var unrecorded []string
	for _, name := range changed {
		if _, ok := w.PlanHashes[name]; !ok {
			unrecorded = append(unrecorded, shellWord(TasksDir+"/"+name))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "skip refused: the plan changed outside orch-hook (not through a Write/Edit orch-hook allowed): %s under %s. The skip marks phase %d's tasks [x] in %s and records the plan as it then stands, so it would adopt that change without showing it. First put the plan back or accept it: ", nameList(changed), TasksDir, w.Phase, MasterPlan)
	if len(unrecorded) < len(changed) {
		b.WriteString("ask Claude to Write each changed file back with exactly its recorded content (the diff below), or run `orch-hook repair --plan` in your terminal")
		if len(unrecorded) > 0 {
			b.WriteString(", and ")
		}
	}
	if len(unrecorded) > 0 {
		fmt.Fprintf(&b, "remove the new %s with `rm %s` in your terminal", gates.Pick(len(unrecorded), "file", "files"), strings.Join(unrecorded, " "))
	}
	b.WriteString("; or accept the plan as it stands with /orch-hook:resolve accept-plan (it lists what changed; a change the gates read takes the plan back to step 3 for your approval). Then type /orch-hook:resolve skip again.")
	r := w.refusal(0, b.String())
	_, r.Detail = w.driftReport(env, changed, nil, "")
	return gates.Refuse(gates.Block, r, gates.Record{}), true
}

func (w *Workflow) sessionStart(c *gates.Call, env *Env) gates.Outcome {
	o := gates.Outcome{}
	if c.Source == "clear" && w.OwnerCleared && c.Session != "" {
		prev := w.Owner
		w.Owner = c.Session
		w.OwnerCleared = false
		o.Changed = true
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: fmt.Sprintf("ownership moved to session %s after /clear of %s", c.Session, prev)})
	}
	o.Context = w.Summary(env)
	if w.foreign(c) {
		o.Context = shorten.Runes("orch-hook: another session owns the active workflow; type /orch-hook:resume here to take it over. "+o.Context, 2000)
	}
	return o
}

func (w *Workflow) sessionEnd(c *gates.Call) gates.Outcome {
	if c.EndReason == "clear" && c.Session != "" && c.Session == w.Owner && !w.OwnerCleared {
		w.OwnerCleared = true
		o := gates.Outcome{Changed: true}
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: "owner session ended with /clear; the next session started by /clear takes the workflow"})
		return o
	}
	return gates.Outcome{}
}
