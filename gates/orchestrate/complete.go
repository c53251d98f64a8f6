package orchestrate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// postAgent ties a launch to its agent id, and completes a foreground
// agent (whose SubagentStop came first and is pending).
func (w *Workflow) postAgent(c *gates.Call, env *Env) gates.Outcome {
	l := w.launchByTool(c.ToolUseID)
	if l == nil {
		return gates.Outcome{}
	}
	o := gates.Outcome{}
	if l.AgentID == "" && c.LinkAgentID != "" {
		l.AgentID = c.LinkAgentID
		o.Changed = true
	}
	if c.Status == "async_launched" && !l.Background {
		l.Background = true
		o.Changed = true
	}
	if l.Status != gates.Running {
		return o
	}
	text, prior, have := "", "", false
	if p := w.takePending(l.AgentID); p != nil {
		text, prior, have = p.Text, p.Prior, true
		l.Tokens = p.Tokens
		if p.Unrecognized {
			w.finish(l, "", gates.Unrecognized, env, &o)
			o.Changed = true
			return o
		}
	} else if c.Status == "completed" {
		prior = gates.TakeKept(&w.Kept, l.AgentID)
		text = gates.JoinKept(prior, c.Text)
		if missingLine(l.Job, text, false) {
			// No SubagentStop was seen and the content lacks the line.
			w.finish(l, "", gates.Unrecognized, env, &o)
			o.Changed = true
			return o
		}
		have = true
	}
	if have {
		w.complete(l, text, prior, env, &o)
		o.Changed = true
	}
	return o
}

func (w *Workflow) takePending(agentID string) *PendingStop {
	if agentID == "" {
		return nil
	}
	for i, p := range w.Pending {
		if p.AgentID == agentID {
			w.Pending = append(w.Pending[:i], w.Pending[i+1:]...)
			return p
		}
	}
	return nil
}

// agentFailed closes a launch whose Agent call failed.
func (w *Workflow) agentFailed(c *gates.Call, env *Env) gates.Outcome {
	l := w.launchByTool(c.ToolUseID)
	if l == nil || l.Status != gates.Running {
		return gates.Outcome{}
	}
	l.Status, l.Ended = gates.Failed, env.Now
	if l.Task > 0 && w.Tasks[l.Task] != nil && w.Tasks[l.Task].Status == gates.Running {
		w.Tasks[l.Task].Status = ""
	}
	why := "launch failed (" + shorten.Runes(shorten.OneLine(gates.OrText(c.Failure, "no reason given")), 120) + ")"
	o := gates.Outcome{Changed: true}
	o.Log(gates.Record{Type: gates.RecComplete, AgentType: l.Agent, ToolUseID: l.ToolUseID, Task: l.Task, Phase: l.Phase, Reason: "failed (transient): " + shorten.Runes(shorten.OneLine(c.Failure), 200)})
	o.Context = w.failed(l, gates.Transient, why, env, &o)
	return o
}

// subagentStop handles a subagent's end: its final report is here.
func (w *Workflow) subagentStop(c *gates.Call, env *Env) gates.Outcome {
	if c.AgentType == "" {
		o := gates.Outcome{}
		o.Log(gates.Record{Type: gates.RecError, AgentID: c.AgentID, Reason: "SubagentStop with an empty agent_type (compaction) ignored"})
		return o
	}
	agent, isWorkflow := agentName(c.AgentType)
	if !isWorkflow {
		return gates.Outcome{}
	}
	l := w.launchByAgent(c.AgentID)
	if l != nil && l.Status != gates.Running && l.Status != gates.Stale {
		o := gates.Outcome{}
		o.Log(gates.Record{Type: gates.RecError, AgentID: c.AgentID, AgentType: agent, Reason: "repeated completion of " + agent + " ignored (each agent completes once)"})
		return o
	}
	if l == nil {
		for _, p := range w.Pending {
			if p.AgentID == c.AgentID {
				o := gates.Outcome{}
				o.Log(gates.Record{Type: gates.RecError, AgentID: c.AgentID, AgentType: agent, Reason: "repeated completion of " + agent + " ignored (each agent completes once)"})
				return o
			}
		}
	}
	job := ""
	if l != nil {
		job = l.Job
	} else if pending := w.unlinkedLaunch(agent); pending != nil {
		job = pending.Job
	} else {
		// A completion whose launch orch-hook never saw: its PreToolUse
		// hook did not run (or ran before the workflow began).
		o := gates.Outcome{}
		o.Log(gates.Record{Type: gates.RecError, AgentID: c.AgentID, AgentType: agent, Reason: HealthPrefix + "completion of " + agent + " (" + c.AgentID + ") whose launch was never seen: its PreToolUse(Agent) hook did not run"})
		return o
	}
	if l != nil && env.Tokens != nil {
		// Each stop's transcript holds all the agent's responses so far:
		// the last one read counts.
		l.Tokens = env.Tokens.Copy()
	}
	// A nudged agent's earlier report is read with this message.
	prior := gates.TakeKept(&w.Kept, c.AgentID)
	text := gates.JoinKept(prior, c.Text)
	if o, blocked := w.owedLine(c, agent, job, text, env); blocked {
		return o
	}
	missing := missingLine(job, text, false)
	o := gates.Outcome{Changed: true}
	if l == nil {
		// A foreground agent: its PostToolUse ties it to its launch next.
		w.Pending = append(w.Pending, &PendingStop{AgentID: c.AgentID, AgentType: agent, Text: shorten.Runes(text, 20000), Prior: shorten.Runes(prior, 1500), Time: env.Now, Unrecognized: missing, Tokens: env.Tokens.Copy()})
		return o
	}
	if missing {
		w.finish(l, "", gates.Unrecognized, env, &o)
		return o
	}
	w.complete(l, text, prior, env, &o)
	return o
}

// unlinkedLaunch is the oldest running launch of agent not yet tied to an
// agent id.
func (w *Workflow) unlinkedLaunch(agent string) *Launch {
	for _, l := range w.inFlightOf(agent) {
		if l.AgentID == "" {
			return l
		}
	}
	return nil
}

// missingLine: the job owes a result line and the text lacks it. A FAIL of
// the quality gate also owes its FAILING TASKS line, but only while the
// agent can still be asked for it (canNudge): after the one nudge a FAIL
// is applied as it stands (gated), so it never loops.
func missingLine(job, text string, canNudge bool) bool {
	owed := OwedLines(job)
	if owed == nil {
		return false
	}
	line := gates.FindResult(text, owed)
	if line == "" {
		return true
	}
	if line == LineGateFail && job == JobGate && canNudge {
		_, _, found := gates.KeyLine(text, gates.KeyFailingTasks)
		return !found
	}
	return false
}

// owedLine blocks a SubagentStop once when the agent's report lacks the
// result line its job owes: the reason quotes what was found and names the
// exact line to add, and the report is kept to be read with the answer.
func (w *Workflow) owedLine(c *gates.Call, agent, job, text string, env *Env) (gates.Outcome, bool) {
	if contains(w.Nudged, c.AgentID) || !missingLine(job, text, true) {
		return gates.Outcome{}, false
	}
	owed := OwedLines(job)
	what := gates.MissingLineProblem(text, owed)
	if gates.FindResult(text, owed) == LineGateFail {
		what = fmt.Sprintf("after `%s` your report must end with the line `FAILING TASKS: NN, NN` naming the tasks that fail (of phase %d, or of an earlier phase for a regression; `FAILING TASKS: none` when no task is to blame, e.g. the tests cannot run).", LineGateFail, w.Phase)
	}
	w.Nudged = append(w.Nudged, c.AgentID)
	w.Kept = gates.Keep(w.Kept, c.AgentID, text)
	// To the agent, not the orchestrator: no step of the workflow to name.
	r := &gates.Refusal{Rule: what + " Reply with your complete report again, ending with that line; the orchestrator cannot go on without it."}
	o := gates.Refuse(gates.Block, r, gates.Record{AgentID: c.AgentID, AgentType: agent})
	o.Changed = true
	return o, true
}

// fixableTasks reads a task-list line (FAILING TASKS, FIX TASKS) of text:
// the tasks of phases up to the current one (a regression in an earlier
// phase is fixed in its task), and what was dropped: numbers of later
// phases or of no task, or the line itself when it does not read.
func (w *Workflow) fixableTasks(text, key string) (tasks []int, dropped string, found bool) {
	value, raw, found := gates.KeyLine(text, key)
	if !found {
		return nil, "", false
	}
	nums, _, ok, bad := taskRefs(value)
	if !ok {
		return nil, fmt.Sprintf("%q does not read as task numbers (%q)", shorten.Runes(raw, 80), bad), true
	}
	upTo := w.tasksUpTo(w.Phase)
	var out []string
	for _, n := range nums {
		if upTo[n] {
			tasks = appendNew(tasks, n)
		} else {
			out = append(out, fmt.Sprintf("%02d", n))
		}
	}
	sort.Ints(tasks)
	if len(out) > 0 {
		dropped = fmt.Sprintf("%s named %s, not %s of phases up to %d: dropped", key, strings.Join(out, ", "), gates.Pick(len(out), "a task", "tasks"), w.Phase)
	}
	return tasks, dropped, true
}

// tasksUpTo is the set of tasks of the phases up to phase, in plan order.
func (w *Workflow) tasksUpTo(phase int) map[int]bool {
	out := map[int]bool{}
	if w.Plan == nil {
		return out
	}
	for _, ph := range w.Plan.Phases {
		for _, t := range ph.Tasks {
			out[t.Number] = true
		}
		if ph.Number == phase {
			break
		}
	}
	return out
}

// finish closes a launch and tells the orchestrator.
func (w *Workflow) finish(l *Launch, result, status string, env *Env, o *gates.Outcome) {
	l.Status, l.Result, l.Ended = status, result, env.Now
	if status == gates.Unrecognized {
		if l.Task > 0 && w.Tasks[l.Task] != nil && w.Tasks[l.Task].Status == gates.Running {
			w.Tasks[l.Task].Status = ""
		}
		o.Log(gates.Record{Type: gates.RecComplete, AgentID: l.AgentID, AgentType: l.Agent, ToolUseID: l.ToolUseID, Task: l.Task, Phase: l.Phase, Reason: "unrecognized (permanent): no result line"})
		why := fmt.Sprintf("returned without its result line (%s): nothing advanced", strings.Join(OwedLines(l.Job), " | "))
		w.notify(l, w.failed(l, gates.Permanent, why, env, o), o)
	}
}

// notify delivers a checkpoint line: now for a foreground agent (as
// PostToolUse context), at its task-notification for a background one.
func (w *Workflow) notify(l *Launch, line string, o *gates.Outcome) {
	if l.Background {
		l.Notice = line
		return
	}
	if o.Context != "" {
		o.Context += "\n\n"
	}
	o.Context += line
}

// complete applies an agent's result to the workflow. prior is the report
// a nudged agent gave before its answer (text holds both): the
// orchestrator gets it with the checkpoint line, since a background
// agent's notification holds only the answer.
func (w *Workflow) complete(l *Launch, text, prior string, env *Env, o *gates.Outcome) {
	result := gates.FindResult(text, OwedLines(l.Job))
	w.finish(l, result, gates.Returned, env, o)
	rec := gates.Record{Type: gates.RecComplete, AgentID: l.AgentID, AgentType: l.Agent, ToolUseID: l.ToolUseID, Task: l.Task, Phase: l.Phase, Reason: gates.OrText(result, "returned"), Input: shorten.Runes(gates.SummaryOf(text, OwedLines(l.Job)...), 200)}
	o.Log(rec)
	from := w.Current
	line, detail := "", ""
	switch l.Job {
	case JobClarify:
		line = w.clarified(result, text, env, o)
	case JobDiscovery:
		line = fmt.Sprintf("[STEP 1] %s returned -> 1 | waiting for the other discovery agent", l.Agent)
		if _, err := w.fire(OnDiscoveryDone, env); err == nil {
			line = "[STEP 1] Discovery complete -> 0b | relaunch requirements-analyst with the findings"
		}
	case JobPlan:
		line = w.planned(l, env, o)
		if w.Current == S3 {
			// The user sees the plan as orch-hook read it, so a misreading
			// shows before the approval; so does the orchestrator.
			detail = "\n" + w.Plan.Describe()
			o.Message = "orch-hook: the plan is ready for your approval. " + w.Plan.Describe() + "\nType /orch-hook:approve, or /orch-hook:request-changes <what to change>."
		}
	case JobPhase:
		if why := w.takeAppendedPhase(env, o); why != "" {
			line = fmt.Sprintf("[STEP 4a] task-planner returned, but %s", why)
		} else {
			line = fmt.Sprintf("%s phase created -> 4a | next: %s", w.phaseTag(w.Phase), w.Next(env))
		}
	case JobImplement, JobFix:
		line = w.implemented(l, result, text, env)
	case JobGate:
		line = w.gated(result, text, env, o)
	case JobAnalysis:
		line = w.analysed(text, env)
	case JobFinal, JobUXDX:
		line = w.validated(l.Job, result, text, env, o)
	case JobExtraction:
		if _, err := w.fire(OnExtraction, env); err == nil {
			line = "[STEP 6] SUCCESS_EXTRACTION -> complete | the workflow is complete; summarize it for the user"
		}
	}
	if w.Current != from {
		o.Log(gates.Record{Type: gates.RecTransition, Reason: line, Phase: w.Phase, AgentType: l.Agent, Input: result})
	}
	line += detail
	if line != "" && prior != "" {
		line += "\n\nThe agent's report before orch-hook asked for its result line:\n" + shorten.Runes(strings.TrimSpace(prior), 1500)
	}
	if line != "" {
		w.notify(l, line, o)
	}
}

// analysed applies FAILURE_ANALYSIS (F1 -> F2). The tasks to fix are the
// ones the gate's FAILING TASKS named; if it named none, the ones the
// analysis names with FIX TASKS; if neither, every task of the phase.
func (w *Workflow) analysed(text string, env *Env) string {
	// FAILURE_ANALYSIS may update the task files' Files: and Depends On:
	// lines; F2 schedules the fixes by them, so they are read again (and
	// must still validate). The UX/DX flags stay as approved. A change
	// made outside orch-hook is not read: while the plan differs from
	// what orch-hook recorded, it is read as recorded (from the verified
	// copies), or not at all; the next launch is refused until the plan is
	// repaired or accepted (accept-plan compares with w.Plan, so it shows
	// that change).
	changed, bad := w.planDrift(env)
	if bad != nil {
		return fmt.Sprintf("%s F1: FAILURE_ANALYSIS returned, but %s cannot be read (%v). Fix the directory's permissions, then relaunch task-planner for FAILURE_ANALYSIS.", w.phaseTag(w.Phase), TasksDir, env.loadErr)
	}
	p, err := env.plan()
	read := true
	drift := ""
	if len(changed) > 0 {
		drift = fmt.Sprintf("\n\nThe plan changed outside orch-hook (not through an allowed Write/Edit): %s under %s. ", nameList(changed), TasksDir)
		if view, ok := w.recordedView(env, changed); ok {
			p = ParsePlan(view)
			err = p.Validate()
			drift += "FAILURE_ANALYSIS's task files were read as orch-hook recorded them"
		} else {
			read = false
			drift += "The task files were not read again (orch-hook has no verified copy of every changed file), so the fixes are scheduled by the Files: and Depends On: lines orch-hook read before"
		}
		drift += "; every launch is refused until the plan is back as orch-hook recorded it (Write each file back with exactly its recorded content), or the user accepts it with /orch-hook:resolve accept-plan."
	}
	if read && err != nil {
		return fmt.Sprintf("%s F1: FAILURE_ANALYSIS returned, but the plan does not validate: %v. Relaunch task-planner for FAILURE_ANALYSIS to fix the task files.", w.phaseTag(w.Phase), err)
	}
	for i := range w.Plan.Phases {
		for j := range w.Plan.Phases[i].Tasks {
			ts := &w.Plan.Phases[i].Tasks[j]
			if tf := p.Tasks[ts.Number]; tf != nil && read {
				ts.DependsOn, ts.Files = tf.DependsOn, tf.Files
			}
		}
	}
	w.LastAnalysis = shorten.Runes(strings.TrimSpace(gates.WithoutLines(text, LineAnalysis)), 1500)
	how := ""
	if len(w.FailingTasks) == 0 {
		tasks, dropped, _ := w.fixableTasks(text, gates.KeyFixTasks)
		how = " (named by FAILURE_ANALYSIS)"
		if len(tasks) == 0 {
			tasks = phaseNumbers(w.Plan.Phase(w.Phase))
			how = fmt.Sprintf(" (no task named by the gate or by FAILURE_ANALYSIS's `FIX TASKS:` line: every task of phase %d)", w.Phase)
		}
		if dropped != "" {
			how += "; " + dropped
		}
		w.FailingTasks = tasks
	}
	for _, n := range w.FailingTasks {
		delete(w.Tasks, n)
	}
	if _, err := w.fire(OnAnalysis, env); err != nil {
		return ""
	}
	return fmt.Sprintf("%s F1 OK -> F2 | fix only %s%s%s", w.phaseTag(w.Phase), taskList(w.FailingTasks), how, drift)
}

// clarified applies requirements-analyst's result in 0a or 0b.
func (w *Workflow) clarified(result, text string, env *Env, o *gates.Outcome) string {
	step := w.Current
	key := shorten.Runes(gates.SummaryOf(text, OwedLines(JobClarify)...), 80)
	switch result {
	case LineQuestions:
		if _, err := w.fire(OnQuestions, env); err != nil {
			return fmt.Sprintf("[STEP %s] QUESTIONS_NEEDED refused: %v", step, err)
		}
		w.Rounds++
		w.WaitingOn = "answers"
		extra := ""
		if w.Rounds == w.limits().ClarificationRounds {
			extra = " (last round: after these answers the workflow goes on with defaults)"
		}
		return fmt.Sprintf("[STEP %s] QUESTIONS_NEEDED -> %s | round %d/%d%s: ask the user these questions and stop until they answer", step, step, w.Rounds, w.limits().ClarificationRounds, extra)
	case LineClear:
		if _, err := w.fire(OnClear, env); err != nil {
			return fmt.Sprintf("[STEP %s] REQUIREMENTS_CLEAR refused: %v", step, err)
		}
		return fmt.Sprintf("[STEP %s] REQUIREMENTS_CLEAR -> 2 | %s; launch task-planner", step, gates.OrText(key, "requirements clear"))
	case LineDiscovery:
		before := w.Discovery
		t, err := w.fire(OnDiscovery, env)
		if err != nil {
			return fmt.Sprintf("[STEP %s] DISCOVERY_NEEDED refused: %v", step, err)
		}
		if t.To == S2 {
			w.Forced = "discovery"
			return fmt.Sprintf("[STEP %s] DISCOVERY_NEEDED -> 2 (forced: discovery limit %d reached) | launch task-planner", step, w.limits().DiscoveryLoops)
		}
		w.Discovery = before + 1
		w.DiscoveryFrom = len(w.Launches)
		return fmt.Sprintf("[STEP %s] DISCOVERY_NEEDED -> 1 | discovery %d/%d: launch researcher and code-explorer in parallel", step, w.Discovery, w.limits().DiscoveryLoops)
	}
	return ""
}

// planned: the task-planner returned in 2; the plan must validate.
func (w *Workflow) planned(l *Launch, env *Env, o *gates.Outcome) string {
	p, err := env.plan()
	if err == nil {
		err = w.checkTicks(p)
	}
	if err != nil {
		// A wrong result: counted as a permanent failure of the planner.
		return fmt.Sprintf("[STEP 2] task-planner returned, but the plan does not validate: %v. Relaunch task-planner to fix it.\n%s", err, w.failed(l, gates.Permanent, "returned a plan that does not validate ("+shorten.Runes(err.Error(), 200)+")", env, o))
	}
	if _, ferr := w.fire(OnPlanReturned, env); ferr != nil {
		return fmt.Sprintf("[STEP 2] %v", ferr)
	}
	w.Plan = p.Snapshot()
	w.PlanHashes = HashPlanFiles(env.files())
	w.WaitingOn = "approval"
	n := 0
	for _, ph := range p.Phases {
		n += len(ph.Tasks)
	}
	return fmt.Sprintf("[STEP 2] MASTER_PLAN.md created -> 3 | %d phases, %d tasks; present the plan and stop: the user approves with /orch-hook:approve or asks for changes with /orch-hook:request-changes", len(p.Phases), n)
}

// implemented records a code-implementer's result in 4a or F2. A task
// BLOCKED a third time counts as returned: the phase goes on to 4b, with
// the block reported to the orchestrator and (GuardBlocksReported) in the
// quality gate's prompt, for the gate to judge (README, "The rules in
// detail").
func (w *Workflow) implemented(l *Launch, result, text string, env *Env) string {
	tr := w.task(l.Task)
	step := w.Current
	switch result {
	case gates.LineImplComplete:
		tr.Status = TaskComplete
	case gates.LineImplBlocked:
		tr.Blocked++
		tr.Block = shorten.Runes(blockReason(text), 120)
		if tr.Blocked > MaxBlockedRetry {
			tr.Status = gates.Returned
		} else {
			tr.Status = TaskBlocked
		}
	}
	var trigger gates.Trigger = OnTaskReturned
	t, err := w.fire(trigger, env)
	if err == nil && t.To == S4b {
		if step == SF2 {
			launch := "launch code-quality"
			if blocked := w.blockedTasks(); len(blocked) > 0 {
				launch = fmt.Sprintf("%s; launch code-quality and report the block in its prompt, for the gate to judge", w.blockedText(blocked))
			}
			return fmt.Sprintf("%s F2 OK -> 4b | %s fixed, revalidating: %s", w.phaseTag(w.Phase), taskList(w.FailingTasks), launch)
		}
		n := len(phaseNumbers(w.Plan.Phase(w.Phase)))
		launch := "launch code-quality"
		if blocked := w.blockedTasks(); len(blocked) > 0 {
			launch = fmt.Sprintf("%s; launch code-quality and report the block in its prompt, for the gate to judge", w.blockedText(blocked))
		}
		return fmt.Sprintf("%s 4a OK -> 4b | %s implemented; %s\n\n%s", w.phaseTag(w.Phase), gates.Plural(n, "task"), launch, w.MetadataBlock())
	}
	status := "COMPLETE"
	switch tr.Status {
	case TaskBlocked:
		status = fmt.Sprintf("BLOCKED (relaunch allowed, %d of %d retries used)", tr.Blocked, MaxBlockedRetry)
	case gates.Returned:
		status = "BLOCKED again (counts as returned; the quality gate will judge it)"
	}
	open := w.openTasks()
	if step == SF2 {
		open = w.openFailing()
	}
	return fmt.Sprintf("%s %s Task %02d %s -> %s | still open: %s", w.phaseTag(w.Phase), step, l.Task, status, w.Current, taskList(open))
}

// gated applies code-quality's 4b result.
func (w *Workflow) gated(result, text string, env *Env, o *gates.Outcome) string {
	tag := w.phaseTag(w.Phase)
	if result == LineGatePass {
		if _, err := w.fire(OnPass, env); err != nil {
			return fmt.Sprintf("%s 4b PASS refused: %v", tag, err)
		}
		return fmt.Sprintf("%s 4b OK -> 4c | All tests pass; mark phase %d's tasks [x] in MASTER_PLAN.md", tag, w.Phase)
	}
	// A FAIL always counts and moves on (after the one nudge): the tasks
	// to fix are read here, else in F1, else they are the whole phase.
	failing, dropped, _ := w.fixableTasks(text, gates.KeyFailingTasks)
	w.FixIterations++
	w.FailingTasks = failing
	t, err := w.fire(OnFail, env)
	if err != nil {
		return fmt.Sprintf("%s 4b FAIL refused: %v", tag, err)
	}
	why := shorten.Runes(gates.SummaryOf(text, LineGateFail), 70)
	note := ""
	if dropped != "" {
		note = " (" + dropped + ")"
	}
	if t.To == Escalated {
		w.escalate(EscalationFix, S4b, o)
		return fmt.Sprintf("%s 4b FAIL -> escalated | fix iteration %d/%d used up; tell the user: see .orchestrator/ESCALATION.md and decide with /orch-hook:resolve retry|skip|abort%s", tag, w.FixIterations, w.limits().FixIterations, note)
	}
	if len(failing) == 0 {
		return fmt.Sprintf("%s 4b FAIL -> F1 | no failing task named: %s (fix iteration %d/%d); launch task-planner for FAILURE_ANALYSIS, asking it to end with `FIX TASKS: NN, NN` naming the tasks to fix (else every task of phase %d is fixed)%s", tag, gates.OrText(why, "see the report"), w.FixIterations, w.limits().FixIterations, w.Phase, note)
	}
	return fmt.Sprintf("%s 4b FAIL -> F1 | %s failed: %s (fix iteration %d/%d); launch task-planner for FAILURE_ANALYSIS%s", tag, taskList(failing), gates.OrText(why, "see the report"), w.FixIterations, w.limits().FixIterations, note)
}

// validated applies a final-validation result (5a code-quality, 5b
// ux-dx-quality).
func (w *Workflow) validated(job, result, text string, env *Env, o *gates.Outcome) string {
	step := w.Current
	pass := result == LineGatePass || result == LineUXPass
	label := strings.TrimPrefix(result, "PHASE GATE STATUS: ")
	label = strings.TrimPrefix(label, "UX/DX STATUS: ")
	if pass {
		t, err := w.fire(OnPass, env)
		if err != nil {
			return fmt.Sprintf("[STEP %s] PASS refused: %v", step, err)
		}
		if t.To == S5b {
			return fmt.Sprintf("[STEP 5a] PASS -> 5b | a task requires UX/DX review: launch ux-dx-quality")
		}
		skipped := ""
		if step == S5a && !w.Settings().Steps.UXDXReview {
			skipped = " (5b is off in " + gates.ConfigFile + ")"
		}
		return fmt.Sprintf("[STEP %s] %s -> 6%s | launch task-planner for SUCCESS_EXTRACTION", step, label, skipped)
	}
	w.FinalFailures++
	w.FinalFrom = step
	t, err := w.fire(OnFail, env)
	if err != nil {
		return fmt.Sprintf("[STEP %s] FAIL refused: %v", step, err)
	}
	why := shorten.Runes(gates.SummaryOf(text, OwedLines(job)...), 70)
	if t.To == Escalated {
		w.escalate(EscalationFinal, step, o)
		return fmt.Sprintf("[STEP %s] FAIL -> escalated | final validation failed %d/%d times; tell the user: see .orchestrator/ESCALATION.md and decide with /orch-hook:resolve retry|skip|abort", step, w.FinalFailures, w.limits().FinalValidationFailures)
	}
	w.Awaiting = "fix"
	w.Tasks = nil
	w.FailingTasks = nil
	return fmt.Sprintf("[STEP %s] FAIL -> 4a | %s (final-validation failure %d/%d): append a fix phase to MASTER_PLAN.md (or launch task-planner to), then implement it", step, gates.OrText(why, "see the report"), w.FinalFailures, w.limits().FinalValidationFailures)
}

// escalate opens an escalation; the caller writes ESCALATION.md.
func (w *Workflow) escalate(kind string, from gates.State, o *gates.Outcome) {
	w.Escalation = &Escalation{Kind: kind, Phase: w.Phase, From: from}
	w.WaitingOn = "resolution"
	if o.Files == nil {
		o.Files = map[string]string{}
	}
	o.Files[EscalationFile] = "" // rendered by the caller, which has the log
}

// EscalationFile is written at every escalation.
const EscalationFile = ".orchestrator/ESCALATION.md"

// HealthPrefix marks log records that orch-hook status turns into hook
// health warnings.
const HealthPrefix = "health: "

// blockReason is what a BLOCKED report says stopped it: the note on its
// result line ("IMPLEMENTATION STATUS: BLOCKED (the DB is down)"), else the
// report's first line.
func blockReason(text string) string {
	value, _, _ := gates.KeyLine(text, "IMPLEMENTATION STATUS")
	if m := reBlockNote.FindStringSubmatch(value); m != nil && m[1] != "" {
		return m[1]
	}
	return gates.SummaryOf(text, gates.LineImplComplete, gates.LineImplBlocked)
}

var reBlockNote = gates.LazyRegexp("(?i)^[\\s*_`]*blocked[\\s*_`]*[-:(\u2013\u2014]*\\s*(.*?)[\\s*_`)]*$")

// blockedTasks are the tasks of this step that returned BLOCKED a third
// time and count as returned, in order.
func (w *Workflow) blockedTasks() []int {
	var out []int
	for _, n := range sortedKeys(w.Tasks) {
		if tr := w.Tasks[n]; tr.Status == gates.Returned && tr.Blocked > MaxBlockedRetry {
			out = append(out, n)
		}
	}
	return out
}

// blockedText names the blocked tasks with their reasons: "Task 02 BLOCKED
// 3 times (the DB is down)".
func (w *Workflow) blockedText(blocked []int) string {
	parts := make([]string, len(blocked))
	for i, n := range blocked {
		tr := w.Tasks[n]
		parts[i] = fmt.Sprintf("Task %02d BLOCKED %d times", n, tr.Blocked)
		if tr.Block != "" {
			parts[i] += " (" + tr.Block + ")"
		}
	}
	return strings.Join(parts, ", ")
}
