package orchestrate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// agentName strips the plugin namespace: "orch-hook:code-quality" and
// "code-quality" are the workflow's code-quality.
func agentName(subagentType string) (name string, workflow bool) {
	name = strings.TrimPrefix(subagentType, gates.PluginPrefix)
	return name, contains(WorkflowAgents, name)
}

// IsAgent reports whether an agent type (orch-hook:<name>, or the bare
// name) is one of the workflow's agents.
func IsAgent(agentType string) bool {
	_, ok := agentName(agentType)
	return ok
}

func (w *Workflow) preAgent(c *gates.Call, env *Env) gates.Outcome {
	name, isWorkflow := agentName(c.SubagentType)
	if !isWorkflow {
		if gates.ReadOnlyAgents[c.SubagentType] {
			return gates.Outcome{}
		}
		kind := c.SubagentType
		if kind == "" {
			kind = "general-purpose"
		}
		return w.deny(0, fmt.Sprintf("agent type %q is not allowed while a workflow is active; only the workflow's agents (orch-hook:<name>) and the read-only Explore and Plan may run.", kind))
	}
	if c.AgentID != "" {
		return w.deny(0, fmt.Sprintf("only the orchestrator (the main thread) launches workflow agents; %s may not launch %s.", c.AgentType, name))
	}
	if w.foreign(c) {
		return gates.Refuse(gates.Deny, w.foreignRefusal(), gates.Record{ToolUseID: c.ToolUseID, AgentType: name})
	}
	if c.Isolation != "" {
		return w.deny(0, fmt.Sprintf("isolation %q on a workflow agent is not allowed: its edits would happen outside the project the gates watch; launch %s without isolation.", c.Isolation, name))
	}
	if o, bad := w.tampered(env); bad {
		return o
	}
	o := gates.Outcome{}
	job, task, gate, why := w.jobFor(name, c, env, &o)
	if why != "" {
		r := w.refusal(gate, why)
		r.Task = task
		d := w.refuse(gates.Deny, r, gates.Record{AgentType: name, ToolUseID: c.ToolUseID})
		// Taking an appended phase is kept even when the launch is refused.
		d.Changed = o.Changed
		d.Records = append(o.Records, d.Records...)
		return d
	}
	l := &Launch{ToolUseID: c.ToolUseID, Agent: name, Job: job, Task: task, Phase: w.Phase, State: w.Current, Background: c.Background, Status: gates.Running, Started: env.Now}
	w.Launches = append(w.Launches, l)
	if task > 0 {
		tr := w.task(task)
		tr.Status = gates.Running
		tr.Launches++
	}
	o.Changed = true
	o.Log(gates.Record{Type: gates.RecLaunch, AgentType: name, ToolUseID: c.ToolUseID, Task: task, Phase: w.Phase, Reason: job})
	return o
}

// jobFor decides whether agent may be launched now, by the launch rules
// of the current state (launchRules): the job it does, the task it works
// on, or the refusal with the gate it names.
func (w *Workflow) jobFor(agent string, c *gates.Call, env *Env, o *gates.Outcome) (job string, task, gate int, why string) {
	rule, ok := launchRules[w.Current]
	if !ok {
		return "", 0, 0, fmt.Sprintf("%s is not expected at step %s.", agent, w.Current)
	}
	if rule.decide != nil {
		return rule.decide(w, agent, c, env, o)
	}
	j, allowed := rule.jobs[agent]
	if !allowed && !gate3Enforced && w.Current == SF1 && agent == Implementer {
		// The Gate 3 mutant build (README, "End-to-end tests").
		return JobFix, taskOf(c), 0, ""
	}
	if !allowed {
		r, named := rule.refuse[agent]
		if !named {
			r = rule.refuseOthers
		}
		if r.taskFromPrompt {
			task = taskOf(c)
		}
		return "", task, rule.gate, w.launchText(r.why, agent)
	}
	for _, g := range launchGuards {
		if !contains(rule.guards, g.name) {
			continue
		}
		if why := g.fails(w, agent, c); why != "" {
			return "", 0, rule.gate, why
		}
	}
	return j, 0, 0, ""
}

// launchRule is who may be launched at one state: the agents allowed and
// the job each does, the named guards an allowed launch must pass, the
// refusals of the others (by agent, and for any other), and the gate a
// refusal names. decide replaces it all where a state's rules read the
// launch itself (4a and F2: which task, in which order).
type launchRule struct {
	jobs         map[string]string
	guards       []string
	refuse       map[string]launchRefusal
	refuseOthers launchRefusal
	gate         int
	decide       func(w *Workflow, agent string, c *gates.Call, env *Env, o *gates.Outcome) (string, int, int, string)
}

// launchRefusal is a refusal's text ({agent}, {step} and {phase} filled
// in); taskFromPrompt: the refusal is recorded against the task the
// launch names.
type launchRefusal struct {
	why            string
	taskFromPrompt bool
}

func (w *Workflow) launchText(text, agent string) string {
	return strings.NewReplacer("{agent}", agent, "{step}", string(w.Current), "{phase}", strconv.Itoa(w.Phase)).Replace(text)
}

// Launch guards, by name, in the order they are checked.
const (
	GuardNotWaitingForAnswers = "the user answered the questions"
	GuardNotRunning           = "the agent is not already running"
	GuardNotReturnedThisRound = "the agent has not returned in this discovery round"
	GuardBlocksReported       = "the prompt reports the tasks that ended BLOCKED"
)

var launchGuards = []struct {
	name  string
	fails func(w *Workflow, agent string, c *gates.Call) string
}{
	{GuardNotWaitingForAnswers, func(w *Workflow, _ string, _ *gates.Call) string {
		if w.WaitingOn == "answers" {
			return "the user has not answered the questions yet; wait for their answers before relaunching requirements-analyst."
		}
		return ""
	}},
	{GuardNotRunning, func(w *Workflow, agent string, _ *gates.Call) string {
		if inFlight := w.inFlightOf(agent); len(inFlight) > 0 {
			return fmt.Sprintf("%s is already running (%s); wait for it to return.", agent, inFlight[0].ToolUseID)
		}
		return ""
	}},
	{GuardNotReturnedThisRound, func(w *Workflow, agent string, _ *gates.Call) string {
		for _, l := range w.Launches[min(w.DiscoveryFrom, len(w.Launches)):] {
			if l.Agent == agent && l.Status == gates.Returned {
				return fmt.Sprintf("%s already returned in this discovery round.", agent)
			}
		}
		return ""
	}},
	{GuardBlocksReported, func(w *Workflow, agent string, c *gates.Call) string {
		blocked := w.blockedTasks()
		if len(blocked) == 0 {
			return ""
		}
		text := c.Prompt + "\n" + c.Description
		var missing []int
		for _, n := range blocked {
			if !mentionsTask(text, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 && reBlock.MatchString(text) {
			return ""
		}
		if len(missing) == 0 {
			missing = blocked
		}
		return fmt.Sprintf("%s and counts as returned; the quality gate judges it: say so in %s's prompt (name the task and its block, e.g. \"Task %02d is BLOCKED: ...\"), so the gate knows what was not implemented.", w.blockedText(missing), agent, missing[0])
	}},
}

// launchRules: per state, who may be launched (README, "The rules in
// detail"; the gates are README, "The seven gates").
var launchRules = map[gates.State]launchRule{
	S0a: clarifyRule,
	S0b: clarifyRule,
	S1: {
		jobs:         map[string]string{Researcher: JobDiscovery, Explorer: JobDiscovery},
		guards:       []string{GuardNotRunning, GuardNotReturnedThisRound},
		refuseOthers: launchRefusal{why: "{agent} is not part of discovery (phase 1): launch researcher and code-explorer."},
	},
	S2: {
		jobs:         map[string]string{Planner: JobPlan},
		guards:       []string{GuardNotRunning},
		refuseOthers: launchRefusal{why: "{agent} is not part of planning (step 2): launch task-planner."},
	},
	S3:  {refuseOthers: launchRefusal{why: "{agent} may not run before the user approves the plan."}},
	S4a: {decide: (*Workflow).job4a},
	S4b: {
		jobs:   map[string]string{Quality: JobGate},
		guards: []string{GuardNotRunning, GuardBlocksReported},
		gate:   1,
		refuse: map[string]launchRefusal{
			Implementer: {why: "code-implementer after 4a is not allowed: no failure yet to fix, and the next phase waits for the quality gate."},
			Planner:     {why: "task-planner after 4a is not allowed: there is no failure to analyse before the quality gate."},
		},
		refuseOthers: launchRefusal{why: "{agent} after 4a is not allowed: the quality gate (code-quality) comes next."},
	},
	SF1: {
		jobs:         map[string]string{Planner: JobAnalysis},
		guards:       []string{GuardNotRunning},
		gate:         3,
		refuse:       map[string]launchRefusal{Implementer: {why: "code-implementer before FAILURE_ANALYSIS is not allowed.", taskFromPrompt: true}},
		refuseOthers: launchRefusal{why: "{agent} is not allowed after a 4b FAIL before FAILURE_ANALYSIS."},
	},
	SF2: {decide: (*Workflow).jobF2},
	S4c: {
		gate:         2,
		refuse:       map[string]launchRefusal{Planner: {why: "SUCCESS_EXTRACTION is not allowed after a 4b PASS (it moved to phase 6)."}},
		refuseOthers: launchRefusal{why: "{agent} before the plan update skips it: mark phase {phase}'s tasks [x] in MASTER_PLAN.md first."},
	},
	S5a: {
		jobs:         map[string]string{Quality: JobFinal},
		guards:       []string{GuardNotRunning},
		refuse:       map[string]launchRefusal{UXDX: {why: "ux-dx-quality (5b) runs only after final validation (5a) passed."}},
		refuseOthers: launchRefusal{why: "{agent} is not part of final validation (5a): launch code-quality."},
	},
	S5b: {
		jobs:         map[string]string{UXDX: JobUXDX},
		guards:       []string{GuardNotRunning},
		gate:         5,
		refuse:       map[string]launchRefusal{Planner: {why: "skipping 5b is not allowed: a task requires UX/DX review."}},
		refuseOthers: launchRefusal{why: "{agent} is not part of the UX/DX review (5b): launch ux-dx-quality."},
	},
	S6: {
		jobs:         map[string]string{Planner: JobExtraction},
		guards:       []string{GuardNotRunning},
		gate:         4,
		refuseOthers: launchRefusal{why: "{agent} is not allowed after final validation passed: phase 6 (SUCCESS_EXTRACTION) comes next."},
	},
	Escalated: {refuseOthers: launchRefusal{why: "{agent} may not run while the workflow is escalated to the user."}},
}

var clarifyRule = launchRule{
	jobs:         map[string]string{Analyst: JobClarify},
	guards:       []string{GuardNotWaitingForAnswers, GuardNotRunning},
	refuseOthers: launchRefusal{why: "{agent} is not part of step {step}; clarification is requirements-analyst's job."},
}

// jobF2 decides launches in the fix cycle: only the failing tasks, by the
// parallel rules.
func (w *Workflow) jobF2(agent string, c *gates.Call, env *Env, _ *gates.Outcome) (string, int, int, string) {
	switch agent {
	case Implementer:
		n, problem := TaskOfLaunch(c.Prompt, c.Description)
		if n == 0 {
			return "", 0, 0, fmt.Sprintf("%s The failing tasks to fix: %s.", problem, taskList(w.FailingTasks))
		}
		if !contains(w.FailingTasks, n) {
			return "", n, 3, fmt.Sprintf("fixing Task %02d is not allowed: only the failing tasks (%s) are fixed.", n, taskList(w.FailingTasks))
		}
		if why := w.taskLaunchable(n, env); why != "" {
			return "", n, 3, why
		}
		return JobFix, n, 0, ""
	case Quality:
		return "", 0, 3, fmt.Sprintf("code-quality may revalidate only after the fixes returned (still open: %s).", taskList(w.openFailing()))
	case Planner:
		return "", 0, 3, "FAILURE_ANALYSIS is done; apply its fixes with code-implementer."
	}
	return "", 0, 3, fmt.Sprintf("%s is not part of the fix cycle.", agent)
}

// job4a decides launches while implementing a phase, or while waiting for
// an appended phase.
func (w *Workflow) job4a(agent string, c *gates.Call, env *Env, o *gates.Outcome) (string, int, int, string) {
	if w.Awaiting != "" {
		switch agent {
		case Planner:
			if len(w.inFlightOf(Planner)) > 0 {
				return "", 0, 0, "task-planner is already creating the phase."
			}
			return JobPhase, 0, 0, ""
		case Implementer:
			if why := w.takeAppendedPhase(env, o); why != "" {
				return "", taskOf(c), 0, why
			}
		default:
			gate := 0
			if w.Awaiting == "fix" {
				gate = 6
				if w.FinalFrom == S5b {
					gate = 7
				}
			}
			return "", 0, gate, fmt.Sprintf("%s is not allowed before the fix phase ran: append it to MASTER_PLAN.md and implement it first.", agent)
		}
	}
	switch agent {
	case Implementer:
	case Quality:
		return "", 0, 0, fmt.Sprintf("code-quality (4b) runs only after every task of phase %d returned (still open: %s).", w.Phase, taskList(w.openTasks()))
	default:
		return "", 0, 0, fmt.Sprintf("%s is not part of implementation (4a): launch code-implementer for the tasks of phase %d.", agent, w.Phase)
	}
	n, problem := TaskOfLaunch(c.Prompt, c.Description)
	ph := w.Plan.Phase(w.Phase)
	if n == 0 {
		return "", 0, 0, fmt.Sprintf("%s The tasks of phase %d: %s.", problem, w.Phase, taskList(phaseNumbers(ph)))
	}
	if ph == nil || !contains(ph.Numbers(), n) {
		return "", n, 0, fmt.Sprintf("Task %02d is not in the current phase %d (%s); phases run in order.", n, w.Phase, taskList(phaseNumbers(ph)))
	}
	if why := w.taskLaunchable(n, env); why != "" {
		return "", n, 0, why
	}
	return JobImplement, n, 0, ""
}

// taskOf is the task a launch names, for records (0: none or unclear).
func taskOf(c *gates.Call) int {
	n, _ := TaskOfLaunch(c.Prompt, c.Description)
	return n
}

func phaseNumbers(ph *PhaseSnap) []int {
	if ph == nil {
		return nil
	}
	return ph.Numbers()
}

// taskLaunchable applies the parallel rules to task n in 4a or F2.
func (w *Workflow) taskLaunchable(n int, env *Env) string {
	tr := w.Tasks[n]
	switch {
	case tr != nil && tr.Status == gates.Running:
		return fmt.Sprintf("Task %02d is already in flight; one code-implementer per task.", n)
	case tr != nil && tr.Status == TaskComplete:
		return fmt.Sprintf("Task %02d already returned IMPLEMENTATION STATUS: COMPLETE in this step.", n)
	case tr != nil && tr.Status == gates.Returned:
		return fmt.Sprintf("Task %02d was BLOCKED %d times and counts as returned; the quality gate will judge it.", n, tr.Blocked)
	}
	snap := w.Plan.Task(n)
	if snap == nil {
		return ""
	}
	cur := w.Plan.Phase(w.Phase)
	for _, dep := range snap.DependsOn {
		// In F2 a fix waits for the fixes it depends on, whatever their
		// phase (a regression is fixed in an earlier phase's task).
		pending := cur != nil && contains(cur.Numbers(), dep) || w.Current == SF2 && contains(w.FailingTasks, dep)
		if pending && !w.Tasks[dep].done() {
			return fmt.Sprintf("Task %02d depends on Task %02d, which has not returned; launch it after Task %02d.", n, dep, dep)
		}
	}
	for _, l := range w.InFlight() {
		if l.Agent != Implementer || l.Task == 0 || l.Task == n {
			continue
		}
		other := w.Plan.Task(l.Task)
		if other == nil {
			continue
		}
		for _, f := range snap.Files {
			if contains(other.Files, f) {
				return fmt.Sprintf("Task %02d and Task %02d (in flight) both change %s; run them one after the other.", n, l.Task, f)
			}
		}
	}
	return ""
}

func (w *Workflow) openTasks() []int {
	ph := w.Plan.Phase(w.Phase)
	var out []int
	if ph == nil {
		return out
	}
	for _, n := range ph.Numbers() {
		if !w.Tasks[n].done() {
			out = append(out, n)
		}
	}
	return out
}

func (w *Workflow) openFailing() []int {
	var out []int
	for _, n := range w.FailingTasks {
		if !w.Tasks[n].done() {
			out = append(out, n)
		}
	}
	return out
}

// takeAppendedPhase makes the phase appended to MASTER_PLAN.md the current
// one, if there is one and the plan validates. It reads the whole plan
// again, so it first checks that every file is as orch-hook recorded it:
// the appended phase's files and any other change came through writes
// orch-hook allowed (their hashes moved when they were confirmed), and a
// change made outside orch-hook is refused like everywhere else, the
// phase not taken until it is repaired or accepted.
func (w *Workflow) takeAppendedPhase(env *Env, o *gates.Outcome) string {
	changed, bad := w.planDrift(env)
	if bad != nil {
		return fmt.Sprintf("cannot read %s (%v), so the plan cannot be checked; fix the directory's permissions.", TasksDir, env.loadErr)
	}
	if len(changed) > 0 {
		o.Log(gates.Record{Type: gates.RecUpdate, Reason: fmt.Sprintf("appended phase not taken: the plan changed outside orch-hook (%s)", nameList(changed)), Phase: w.Phase})
		return w.driftNotice(env, changed, "The appended phase is not taken until then; once the plan is back as orch-hook recorded it, launch code-implementer for the phase's tasks (orch-hook takes the phase then; after accept-plan, follow what it says).")
	}
	p, err := env.plan()
	if err != nil {
		return fmt.Sprintf("the plan does not validate (%v); append the fix phase with its task files first.", err)
	}
	last := p.Phases[len(p.Phases)-1]
	known := 0
	if w.Plan != nil && len(w.Plan.Phases) > 0 {
		known = w.Plan.Phases[len(w.Plan.Phases)-1].Number
	}
	if last.Number <= known || p.PhaseChecked(last.Number) {
		what := "a fix phase"
		if w.Awaiting == "lightweight" {
			what = "the follow-up phase"
		}
		return fmt.Sprintf("append %s to MASTER_PLAN.md (## Phase %d: ..., with new task numbers and their task files) before launching code-implementer.", what, known+1)
	}
	if w.Awaiting == "lightweight" {
		files := map[string]bool{}
		for _, t := range last.Tasks {
			if f := p.Tasks[t.Number]; f != nil {
				for _, name := range f.Files {
					files[name] = true
				}
			}
		}
		if len(files) >= 3 {
			return fmt.Sprintf("a LIGHTWEIGHT follow-up may touch fewer than 3 files; phase %d's tasks list %d. Shrink the phase (its task files' Files: lines); a larger change needs the user to abort and start a partial follow-up.", last.Number, len(files))
		}
	}
	from := w.Current
	// No drift: the recorded hashes already are the files' (no re-hash).
	w.Plan = p.Snapshot()
	w.Phase = last.Number
	w.Awaiting = ""
	w.Tasks = nil
	w.FixIterations = 0
	if _, err := w.fire(OnPhaseAppended, env); err != nil {
		return err.Error()
	}
	o.Changed = true
	o.Log(gates.Record{Type: gates.RecTransition, Reason: fmt.Sprintf("phase %d appended to MASTER_PLAN.md and taken (%s)", last.Number, taskList(phaseNumbers(w.Plan.Phase(last.Number)))), Phase: last.Number, Input: string(from)})
	return ""
}

func taskList(nums []int) string {
	if len(nums) == 0 {
		return "none"
	}
	s := append([]int(nil), nums...)
	sort.Ints(s)
	// A long list is cut: it goes into every checkpoint line (and is kept
	// with each background completion), so its length must not grow with
	// the number of tasks.
	more := 0
	if len(s) > maxTaskList {
		more, s = len(s)-maxTaskList+2, s[:maxTaskList-2]
	}
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = fmt.Sprintf("Task %02d", n)
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ", ")
}

// maxTaskList is the most tasks a message names one by one.
const maxTaskList = 12

var reBlock = gates.LazyRegexp(`(?i)\bblock`)

// mentionsTask reports whether text names task n ("Task 02", "task 2",
// "Task #2").
func mentionsTask(text string, n int) bool {
	for _, m := range reTaskRef.FindAllStringSubmatch(text, -1) {
		if v, err := strconv.Atoi(m[2]); err == nil && v == n {
			return true
		}
	}
	return false
}
