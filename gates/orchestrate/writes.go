package orchestrate

import (
	"fmt"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// LearningsFile is where SUCCESS_EXTRACTION records what was learned.
const LearningsFile = ".orchestrator/learnings.md"

func (w *Workflow) preWrite(c *gates.Call, env *Env) gates.Outcome {
	rel, inside := gates.RelPath(env.Root, c.Path)
	tag := func(o gates.Outcome) gates.Outcome {
		for i := range o.Records {
			o.Records[i].ToolUseID = c.ToolUseID
			o.Records[i].AgentID = c.AgentID
			o.Records[i].Input = c.Path
		}
		return o
	}
	switch {
	case !inside || c.Unresolved:
		return tag(w.deny(0, gates.OutsideWhat(c.Path, env.Root, inside)))
	case gates.Under(rel, gates.StateDir):
		return tag(w.deny(0, fmt.Sprintf("%s is orch-hook's state; no agent writes there. Use `orch-hook status` to read it.", rel)))
	case gates.Under(rel, TasksDir):
		name, _ := gates.UnderRest(rel, TasksDir)
		if name == "" || strings.Contains(name, "/") {
			return tag(w.deny(0, fmt.Sprintf("%s: the plan is the files directly in %s; nothing else is written there.", rel, TasksDir)))
		}
		return tag(w.prePlanWrite(c, env, name))
	case gates.Under(rel, ".orchestrator"):
		agent, _ := agentName(c.AgentType)
		if strings.EqualFold(rel, LearningsFile) && w.Current == S6 && agent == Planner {
			return gates.Outcome{}
		}
		return tag(w.deny(0, fmt.Sprintf("%s is orch-hook's; only the plan under %s is written by agents (and %s by the task-planner's SUCCESS_EXTRACTION).", rel, TasksDir, LearningsFile)))
	case gates.Under(rel, ".claude"):
		return tag(w.deny(0, fmt.Sprintf("%s is Claude Code's configuration (hooks, agents, commands); it may not change while a workflow is active. Ask the user.", rel)))
	}
	// A project file: only a code-implementer in flight in 4a or F2.
	agent, _ := agentName(c.AgentType)
	if c.AgentID != "" && agent == Implementer && (w.Current == S4a || w.Current == SF2) && w.implementerInFlight(c.AgentID) {
		return gates.Outcome{}
	}
	gate := 0
	switch w.Current {
	case SF1, SF2:
		gate = 3
	case S4b:
		gate = 1
	}
	who := "the orchestrator"
	if c.AgentID != "" {
		who = c.AgentType
	}
	what := fmt.Sprintf("%s may not edit %s now: only a code-implementer launched for a task in 4a or F2 writes project files.", who, rel)
	if c.AgentID == "" {
		what += " Delegate the change to code-implementer."
	}
	return tag(w.deny(gate, what))
}

// implementerInFlight: the agent's launch is a running code-implementer
// (for a foreground agent the link to its launch arrives only at its
// PostToolUse, so any running unlinked code-implementer launch counts).
func (w *Workflow) implementerInFlight(agentID string) bool {
	if l := w.launchByAgent(agentID); l != nil {
		return l.Agent == Implementer && l.Status == gates.Running
	}
	for _, l := range w.inFlightOf(Implementer) {
		if l.AgentID == "" {
			return true
		}
	}
	return false
}

// prePlanWrite applies "who may write what" to a file under the tasks dir,
// and binds an allowed write to the content it produces.
func (w *Workflow) prePlanWrite(c *gates.Call, env *Env, name string) gates.Outcome {
	o := w.planWriteRule(c, env, name)
	if o.Verdict == gates.Allow && c.Write != nil {
		current, exists := env.files()[name]
		if next, err := applyWrite(string(current), exists, c.Write); err == "" {
			w.bindPlanWrite(c, name, next, w.restores(env, name, next), &o)
		}
	}
	return o
}

// planWriteRule is "who may write what" for a file under the tasks dir.
func (w *Workflow) planWriteRule(c *gates.Call, env *Env, name string) gates.Outcome {
	if w.foreign(c) {
		return gates.Refuse(gates.Deny, w.foreignRefusal(), gates.Record{})
	}
	if c.Write == nil || c.Write.Notebook {
		return w.deny(0, fmt.Sprintf("%s may only be changed with Write or Edit.", name))
	}
	current, exists := env.files()[name]
	next, err := applyWrite(string(current), exists, c.Write)
	changed, o := w.planDrift(env)
	if o != nil {
		return *o
	}
	if len(changed) > 0 {
		// While the plan differs from what orch-hook recorded, the only
		// write allowed is one that puts a file back to its recorded
		// content, whoever makes it: that content is what orch-hook
		// allowed, so it opens no way past a rule.
		if err == "" && w.restores(env, name, next) {
			return gates.Outcome{}
		}
		return w.driftRefusal(env, changed, c, name)
	}
	if err != "" {
		return w.deny(0, fmt.Sprintf("%s: %s", name, err))
	}
	agent, _ := agentName(c.AgentType)
	isMaster := name == MasterPlan
	taskNum := 0
	if n, ok := TaskFileNumber(name); ok {
		taskNum = n
	}
	if taskNum != 0 && !exists {
		// One file per task: a second name would be read two ways.
		if tf := ParsePlan(env.files()).Tasks[taskNum]; tf != nil && tf.Name != name {
			return w.deny(0, fmt.Sprintf("Task %02d already has its file %s; change that one instead of adding %s.", taskNum, tf.Name, name))
		}
	}
	byPlanner := func(job string) bool {
		if c.AgentID == "" || agent != Planner {
			return false
		}
		for _, l := range w.inFlightOf(Planner) {
			if l.Job == job && (l.AgentID == "" || l.AgentID == c.AgentID) {
				return true
			}
		}
		return false
	}
	uxChanged := func() bool {
		if taskNum == 0 {
			return false
		}
		// The flag as the whole plan gives it (the task file, or the
		// task's lines in MASTER_PLAN.md), before and after the write.
		files := env.files()
		after := make(PlanFiles, len(files)+1)
		for k, v := range files {
			after[k] = v
		}
		after[name] = []byte(next)
		return uxdxState(ParsePlan(files).Tasks[taskNum]) != uxdxState(ParsePlan(after).Tasks[taskNum])
	}
	switch w.Current {
	case S2:
		if byPlanner(JobPlan) {
			return gates.Outcome{}
		}
		return w.deny(0, fmt.Sprintf("in planning (2) only the task-planner writes %s; launch task-planner.", TasksDir))
	case SF1:
		if !byPlanner(JobAnalysis) {
			return w.deny(3, fmt.Sprintf("%s may change in F1 only by task-planner's FAILURE_ANALYSIS.", name))
		}
		if taskNum == 0 {
			return w.deny(3, fmt.Sprintf("FAILURE_ANALYSIS may update task files only, not %s.", name))
		}
		if uxChanged() {
			return w.deny(3, fmt.Sprintf("%s: requires_ux_dx_review was fixed at approval and may not change.", name))
		}
		return gates.Outcome{}
	case S4c:
		if c.AgentID != "" {
			return w.deny(2, "the plan update (4c) is the orchestrator's own job, not a subagent's.")
		}
		if !isMaster {
			return w.deny(2, fmt.Sprintf("in 4c only %s changes (ticks, Status:, Progress:), not %s.", MasterPlan, name))
		}
		if err := ParsePlan(env.files()).CheckTicking(w.Phase, next); err != nil {
			return w.deny(2, err.Error()+".")
		}
		return gates.Outcome{}
	case S4a:
		if w.Awaiting == "" {
			break
		}
		if c.AgentID != "" && !byPlanner(JobPhase) {
			return w.deny(0, "only the orchestrator or the task-planner creating the phase may append it.")
		}
		p := ParsePlan(env.files())
		if isMaster {
			added, err := p.CheckAppend(next)
			if err != nil {
				if c.AgentID == "" && p.CheckBookkeeping(w.Phase, next) == nil {
					return gates.Outcome{}
				}
				return w.deny(0, err.Error()+".")
			}
			if last := p.Phases; added != nil && len(last) > 0 && w.Plan.Phase(last[len(last)-1].Number) == nil {
				return w.deny(0, fmt.Sprintf("phase %d is already appended and not run yet: one phase at a time. Launch code-implementer for its tasks first.", last[len(last)-1].Number))
			}
			return gates.Outcome{}
		}
		if taskNum > 0 && taskNum > w.maxKnownTask() {
			return gates.Outcome{}
		}
		return w.deny(0, fmt.Sprintf("only the new phase's task files (numbers after Task %02d) may be written now, not %s.", w.maxKnownTask(), name))
	}
	gate := 0
	switch w.Current {
	case S4b:
		gate = 1
	case SF2:
		gate = 3
	}
	if isMaster && c.AgentID == "" && bookkeeping[w.Current] {
		// The Status: and Progress: lines stay the orchestrator's until
		// final validation: models update them after the last tick.
		if err := ParsePlan(env.files()).CheckBookkeeping(w.Phase, next); err != nil {
			return w.deny(gate, fmt.Sprintf("%s may not change at step %s: %v.", name, w.Current, err))
		}
		return gates.Outcome{}
	}
	return w.deny(gate, fmt.Sprintf("%s may not change at step %s.", name, w.Current))
}

// bookkeeping are the steps in which the orchestrator may still update
// the Status: lines of the phases so far and the Progress: line.
var bookkeeping = map[gates.State]bool{S4a: true, S4b: true, SF1: true, SF2: true, S5a: true}

func (w *Workflow) maxKnownTask() int {
	m := 0
	if w.Plan != nil {
		for _, ph := range w.Plan.Phases {
			for _, t := range ph.Tasks {
				m = max(m, t.Number)
			}
		}
	}
	return m
}

// applyWrite computes a file's content after the write; a non-empty error
// means it cannot be known (and the write is refused).
func applyWrite(current string, exists bool, fw *gates.FileWrite) (string, string) {
	if fw.Content != nil {
		return *fw.Content, ""
	}
	if !exists {
		return "", "Edit of a file that does not exist"
	}
	if fw.OldString == "" {
		return "", "Edit without old_string"
	}
	n := strings.Count(current, fw.OldString)
	switch {
	case n == 0:
		return "", "Edit's old_string is not in the file"
	case n > 1 && !fw.ReplaceAll:
		return "", "Edit's old_string is not unique in the file"
	case fw.ReplaceAll:
		return strings.ReplaceAll(current, fw.OldString, fw.NewString), ""
	}
	return strings.Replace(current, fw.OldString, fw.NewString, 1), ""
}

// postWrite records the plan's hashes after an allowed change, and in 4c
// moves on once the phase is ticked.
func (w *Workflow) postWrite(c *gates.Call, env *Env) gates.Outcome {
	rel, inside := gates.RelPath(env.Root, c.Path)
	if !inside || !gates.Under(rel, TasksDir) {
		return gates.Outcome{}
	}
	name, _ := gates.UnderRest(rel, TasksDir)
	pw, found, matched := w.settlePlanWrite(c, name, env)
	if !found {
		return gates.Outcome{}
	}
	o := gates.Outcome{Changed: true}
	if !matched {
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: fmt.Sprintf("%s does not hold what the allowed write produces: changed outside orch-hook (or the tool applied the write differently); progress waits until it is reverted or the user types /orch-hook:resolve accept-plan", name), ToolUseID: c.ToolUseID})
		return o
	}
	if pw.Restore {
		o.Context = w.restoredContext(env, name)
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: fmt.Sprintf("%s written back to the content orch-hook recorded", name), ToolUseID: c.ToolUseID})
	}
	if w.Current == S4c {
		restored := o.Context
		w.advance4c(env, &o)
		if restored != "" && o.Context != restored {
			o.Context = restored + "\n" + o.Context
		}
	}
	return o
}

// advance4c fires "MASTER_PLAN.md updated" when phase is fully ticked,
// and only while MASTER_PLAN.md, whose ticks it reads, is as orch-hook
// recorded it: ticks made outside orch-hook do not move the workflow (a
// restoring write of another file settling meanwhile does not read them;
// the write that restores MASTER_PLAN.md moves it, if its ticks do).
func (w *Workflow) advance4c(env *Env, o *gates.Outcome) {
	if changed, bad := w.planDrift(env); bad != nil || contains(changed, MasterPlan) {
		return
	}
	p, err := env.plan()
	if err != nil || !p.PhaseChecked(w.Phase) {
		return
	}
	from, phase := w.Current, w.Phase
	next := p.NextOpenPhase(w.Phase)
	t, err := w.fire(OnPlanUpdated, env)
	if err != nil {
		return
	}
	w.markDone(phase)
	line := ""
	if t.To == S4a {
		w.Phase = next
		w.Tasks = nil
		w.FixIterations = 0
		w.FailingTasks = nil
		line = fmt.Sprintf("%s 4c OK -> Phase %d | Plan updated; next: %s", w.phaseTag(phase), next, w.Next(env))
	} else {
		line = fmt.Sprintf("%s 4c OK -> 5a | Plan updated, all phases complete; next: %s", w.phaseTag(phase), w.Next(env))
	}
	o.Context = line
	o.Log(gates.Record{Type: gates.RecTransition, Gate: t.Gate, Reason: line, Phase: phase, Input: string(from)})
}
