package orchestrate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Where says where the workflow stands, for reasons: "phase 1, step F1,
// fix iteration 1/3".
func (w *Workflow) Where() string {
	switch w.Current {
	case S0a, S0b:
		s := fmt.Sprintf("step %s, clarification round %d/%d", w.Current, w.Rounds, w.limits().ClarificationRounds)
		if w.WaitingOn == "answers" {
			s += ", waiting for the user's answers"
		}
		return s
	case S1:
		return fmt.Sprintf("step 1 (discovery %d/%d)", w.Discovery, w.limits().DiscoveryLoops)
	case S2:
		return "step 2 (planning)"
	case S3:
		return "step 3, waiting for the user's approval"
	case S4a, S4b, SF1, SF2, S4c:
		if w.Current == S4a && w.Awaiting != "" {
			return fmt.Sprintf("step 4a, waiting for a %s phase to be appended", map[string]string{"fix": "fix", "lightweight": "follow-up"}[w.Awaiting])
		}
		return fmt.Sprintf("phase %d, step %s, fix iteration %d/%d", w.Phase, w.Current, w.FixIterations, w.limits().FixIterations)
	case S5a, S5b:
		return fmt.Sprintf("step %s (final validation, failures %d/%d)", w.Current, w.FinalFailures, w.limits().FinalValidationFailures)
	case S6:
		return "step 6 (completion)"
	case Escalated:
		return "escalated, waiting for the user's decision"
	}
	return "step " + string(w.Current)
}

// Next says what the orchestrator should do now. env may be nil.
func (w *Workflow) Next(env *Env) string {
	wait := func(agent string) string {
		if l := w.inFlightOf(agent); len(l) > 0 {
			return "wait for " + agent + " to return"
		}
		return ""
	}
	switch w.Current {
	case S0a, S0b:
		if w.WaitingOn == "answers" {
			return "wait for the user's answers to the questions"
		}
		if s := wait(Analyst); s != "" {
			return s
		}
		if w.Current == S0b {
			return "launch requirements-analyst with the discovery findings"
		}
		return "launch requirements-analyst"
	case S1:
		var todo []string
		for _, a := range []string{Researcher, Explorer} {
			done := false
			for _, l := range w.Launches[min(w.DiscoveryFrom, len(w.Launches)):] {
				if l.Agent == a && (l.Status == gates.Returned || l.Status == gates.Running) {
					done = true
				}
			}
			if !done {
				todo = append(todo, a)
			}
		}
		if len(todo) == 0 {
			return "wait for the discovery agents to return"
		}
		return "launch " + strings.Join(todo, " and ") + " (in parallel)"
	case S2:
		if s := wait(Planner); s != "" {
			return s
		}
		return "launch task-planner to write .orchestrator/tasks/MASTER_PLAN.md and the task files"
	case S3:
		return "wait for the user: /orch-hook:approve, or /orch-hook:request-changes <what>"
	case S4a:
		if w.Awaiting != "" {
			return "append the phase to MASTER_PLAN.md (or launch task-planner to do it), then launch code-implementer for its tasks"
		}
		ready, running := w.readyTasks(env), w.runningTasks()
		switch {
		case len(ready) > 1:
			return "launch code-implementer for " + taskList(ready) + " (in parallel, one message)"
		case len(ready) == 1:
			return "launch code-implementer for " + taskList(ready)
		case len(running) > 0:
			return "wait for code-implementer (" + taskList(running) + ")"
		}
		return "relaunch code-implementer for the open tasks"
	case S4b:
		if s := wait(Quality); s != "" {
			return s
		}
		return fmt.Sprintf("launch code-quality for the phase %d quality gate", w.Phase)
	case SF1:
		if s := wait(Planner); s != "" {
			return s
		}
		if len(w.FailingTasks) == 0 {
			return "launch task-planner for FAILURE_ANALYSIS; the gate named no failing task, so ask it to end with `FIX TASKS: NN, NN` naming the tasks to fix"
		}
		return "launch task-planner for FAILURE_ANALYSIS"
	case SF2:
		open := w.openFailing()
		var ready []int
		for _, n := range open {
			if w.Tasks[n] == nil || w.Tasks[n].Status != gates.Running {
				ready = append(ready, n)
			}
		}
		if len(ready) == 0 {
			return "wait for the fixes (" + taskList(open) + ")"
		}
		return "launch code-implementer for the failing tasks only: " + taskList(ready)
	case S4c:
		return fmt.Sprintf("mark phase %d's tasks [x] in MASTER_PLAN.md and update its Status: and Progress: lines", w.Phase)
	case S5a:
		if s := wait(Quality); s != "" {
			return s
		}
		return "launch code-quality for final validation (full test suite, production build, all acceptance criteria)"
	case S5b:
		if s := wait(UXDX); s != "" {
			return s
		}
		return "launch ux-dx-quality for the UX/DX review"
	case S6:
		if s := wait(Planner); s != "" {
			return s
		}
		return "launch task-planner for SUCCESS_EXTRACTION"
	case Escalated:
		if e := w.Escalation; e != nil && e.Kind == EscalationAgent {
			return "wait for the user: /orch-hook:resolve retry|" + skipOption(e.From) + "abort (see .orchestrator/ESCALATION.md)"
		}
		return "wait for the user: /orch-hook:resolve retry|skip|abort (see .orchestrator/ESCALATION.md)"
	case Complete:
		return "nothing; the workflow is complete (a follow-up the user asks for reopens it: the orch-hook:follow-up skill)"
	case Aborted:
		return "nothing; the workflow was aborted"
	}
	return "see `orch-hook status`"
}

// readyTasks are the current phase's tasks that may be launched now.
func (w *Workflow) readyTasks(env *Env) []int {
	var out []int
	for _, n := range w.openTasks() {
		if w.taskLaunchable(n, env) == "" {
			out = append(out, n)
		}
	}
	return out
}

func (w *Workflow) runningTasks() []int {
	var out []int
	for _, n := range sortedKeys(w.Tasks) {
		if w.Tasks[n].Status == gates.Running {
			out = append(out, n)
		}
	}
	return out
}

// phaseTag is the checkpoint line prefix "[PHASE 1 | Tasks 01-03]".
func (w *Workflow) phaseTag(phase int) string {
	nums := phaseNumbers(w.Plan.Phase(phase))
	sort.Ints(nums)
	tasks := ""
	switch {
	case len(nums) == 0:
		return fmt.Sprintf("[PHASE %d]", phase)
	case len(nums) == 1:
		tasks = fmt.Sprintf("Task %02d", nums[0])
	case nums[len(nums)-1]-nums[0] == len(nums)-1:
		tasks = fmt.Sprintf("Tasks %02d-%02d", nums[0], nums[len(nums)-1])
	default:
		parts := make([]string, len(nums))
		for i, n := range nums {
			parts[i] = fmt.Sprintf("%02d", n)
		}
		tasks = "Tasks " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("[PHASE %d | %s]", phase, tasks)
}

// stepTag is the checkpoint line prefix for the current step.
func (w *Workflow) stepTag() string {
	switch w.Current {
	case S4a, S4b, SF1, SF2, S4c:
		if w.Phase > 0 {
			return w.phaseTag(w.Phase)
		}
	}
	return "[STEP " + string(w.Current) + "]"
}

// MetadataBlock is the PHASE METADATA EXTRACTION block (the phase's
// tasks, their UX/DX flags, and whether 5b will be required) from the plan
// snapshot, given at 4a -> 4b.
func (w *Workflow) MetadataBlock() string {
	ph := w.Plan.Phase(w.Phase)
	if ph == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PHASE METADATA EXTRACTION - Phase %d\n", w.Phase)
	b.WriteString("-------------------------------------\n")
	nums := make([]string, len(ph.Tasks))
	any := false
	for i, t := range ph.Tasks {
		nums[i] = fmt.Sprintf("%02d", t.Number)
	}
	fmt.Fprintf(&b, "Tasks in Phase: [%s]\nTotal Tasks: %d\n\nUX/DX Review Flags:\n", strings.Join(nums, ", "), len(ph.Tasks))
	for _, t := range ph.Tasks {
		fmt.Fprintf(&b, "- Task %02d: requires_ux_dx_review = %t\n", t.Number, t.UXDX)
		any = any || t.UXDX
	}
	yes := "NO"
	if w.uxRequired() {
		yes = "YES"
	}
	_ = any
	fmt.Fprintf(&b, "\nPhase 5 UX/DX Required: %s\n-------------------------------------", yes)
	return b.String()
}

// Summary says, in under 2,000 characters, where the workflow stands and
// what comes next; it is injected at SessionStart.
func (w *Workflow) Summary(env *Env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "orch-hook: an orchestrate workflow is active: %q.\n", shorten.Runes(shorten.OneLine(w.Request), 200))
	fmt.Fprintf(&b, "Now: %s. Next: %s.\n", w.Where(), w.Next(env))
	if w.Plan != nil && w.Phase > 0 {
		fmt.Fprintf(&b, "Plan: %d phases; current %s.\n", len(w.Plan.Phases), w.phaseTag(w.Phase))
	}
	fmt.Fprintf(&b, "Counters: clarification %d/%d, discovery %d/%d, fix iterations %d/%d, final-validation failures %d/%d.\n",
		w.Rounds, w.limits().ClarificationRounds, w.Discovery, w.limits().DiscoveryLoops, w.FixIterations, w.limits().FixIterations, w.FinalFailures, w.limits().FinalValidationFailures)
	if fl := w.InFlight(); len(fl) > 0 {
		parts := make([]string, 0, len(fl))
		for _, l := range fl {
			s := l.Agent
			if l.Task > 0 {
				s += fmt.Sprintf(" (Task %02d)", l.Task)
			}
			parts = append(parts, s)
		}
		fmt.Fprintf(&b, "In flight: %s.\n", strings.Join(parts, ", "))
	}
	b.WriteString("Workflow agents are launched as orch-hook:<name>; every step is checked by the hooks. `orch-hook status` shows everything.")
	return shorten.Runes(b.String(), 1990)
}

// FailureEntry is one row of ESCALATION.md's failure history.
type FailureEntry struct {
	Iteration int
	Failure   string
	Fix       string
}

// EscalationMarkdown renders .orchestrator/ESCALATION.md (README, "First
// run"; "Escalation" in "The rules in detail") in seed 002's five parts:
// what failed, what was expected, what was found, what to do next, and
// the commands that show more.
func (w *Workflow) EscalationMarkdown(history []FailureEntry) string {
	var b strings.Builder
	kind := "fix"
	limit, used := w.limits().FixIterations, w.FixIterations
	if w.Escalation != nil {
		kind = w.Escalation.Kind
	}
	if kind == EscalationFinal {
		limit, used = w.limits().FinalValidationFailures, w.FinalFailures
	}
	b.WriteString("## Escalation Required\n\n")
	switch kind {
	case EscalationAgent:
		e := w.Escalation
		what := gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What()
		fmt.Fprintf(&b, "**What failed**: %s, %d times at step %s (the limit is %d retries of one work in one step)\n", what, len(e.Attempts), e.From, w.limits().Retries)
		fmt.Fprintf(&b, "**Expected**: %s\n", expectedOf(e.Agent, w.launchJob(e)))
		if len(e.Attempts) > 0 {
			last := e.Attempts[len(e.Attempts)-1]
			fmt.Fprintf(&b, "**Found**: %s (%s)\n", last.Error, last.Class)
		}
		if w.Phase > 0 && contains(phaseWork, e.From) {
			fmt.Fprintf(&b, "**Phase**: %d\n", w.Phase)
		}
		fmt.Fprintf(&b, "**Iteration**: %d/%d (maximum reached)\n\n", len(e.Attempts), w.limits().Retries+1)
		b.WriteString("### Failure History\n| Attempt | Class | Failure | Time |\n|---------|-------|---------|------|\n")
		for i, a := range e.Attempts {
			fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, a.Class, cell(a.Error), a.Time.UTC().Format("15:04:05"))
		}
		b.WriteString("\nA transient failure is one where the agent did not finish (its Agent call failed); a permanent one, where it finished but verification closed its launch.\n")
	default:
		if kind == EscalationFix {
			fmt.Fprintf(&b, "**What failed**: the quality gate of phase %d, %d times (the limit is %d fix iterations)\n", w.Phase, used, limit)
			b.WriteString("**Expected**: `PHASE GATE STATUS: PASS` from code-quality after a fix\n")
		} else {
			fmt.Fprintf(&b, "**What failed**: final validation (%s), %d times (the limit is %d)\n", w.FinalFrom, used, limit)
			b.WriteString("**Expected**: `PHASE GATE STATUS: PASS` (5a) and `UX/DX STATUS: PASS` (5b)\n")
		}
		if len(history) > 0 {
			fmt.Fprintf(&b, "**Found**: %s\n", cell(history[len(history)-1].Failure))
		}
		if kind == EscalationFix {
			fmt.Fprintf(&b, "**Phase**: %d\n", w.Phase)
			fmt.Fprintf(&b, "**Tasks**: %s\n", taskList(phaseNumbers(w.Plan.Phase(w.Phase))))
		} else {
			fmt.Fprintf(&b, "**Phase**: final validation (%s)\n", w.FinalFrom)
			fmt.Fprintf(&b, "**Tasks**: all phases\n")
		}
		fmt.Fprintf(&b, "**Iteration**: %d/%d (maximum reached)\n\n", used, limit)
		b.WriteString("### Failure History\n| Iteration | Failure | Fix Attempted | Result |\n|-----------|---------|---------------|--------|\n")
		for _, h := range history {
			fmt.Fprintf(&b, "| %d | %s | %s | FAIL |\n", h.Iteration, cell(h.Failure), cell(gates.OrText(h.Fix, "-")))
		}
		b.WriteString("\n### Root Cause Analysis\n")
		if w.LastAnalysis != "" && kind == EscalationFix {
			b.WriteString(strings.TrimSpace(w.LastAnalysis) + "\n")
		} else {
			b.WriteString("No FAILURE_ANALYSIS covered this failure; see the failure history above and `orch-hook log`.\n")
		}
	}
	b.WriteString("\n### Options\n")
	for i, o := range w.escalationOptions(kind, history) {
		fmt.Fprintf(&b, "%d. %s\n", i+1, o)
	}
	b.WriteString("\n### More\n")
	b.WriteString("- `orch-hook status`: where the workflow stands, its counters and its failures\n")
	b.WriteString("- `orch-hook log --type agent_complete --type error`: every completion (and failure) and every error, in order\n")
	b.WriteString("- `orch-hook explain`: why the last refused call was refused\n\n")
	b.WriteString("**User decision required to proceed.**\n")
	return b.String()
}

// launchJob is the job of the escalated work's last launch.
func (w *Workflow) launchJob(e *Escalation) string {
	for i := len(w.Launches) - 1; i >= 0; i-- {
		if l := w.Launches[i]; l.Agent == e.Agent && l.State == e.From {
			return l.Job
		}
	}
	return ""
}

// expectedOf says what an agent of a job owes: its result lines.
func expectedOf(agent, job string) string {
	if job == JobPlan {
		return agent + " writes a plan that validates: " + TasksDir + "/" + MasterPlan + " and a task file per task"
	}
	lines := OwedLines(job)
	if len(lines) == 0 {
		return agent + " returns its report"
	}
	quoted := make([]string, len(lines))
	for i, l := range lines {
		quoted[i] = "`" + l + "`"
	}
	return agent + " ends its report with one of " + strings.Join(quoted, ", ")
}

func cell(s string) string {
	return strings.ReplaceAll(shorten.Runes(shorten.OneLine(s), 120), "|", "\\|")
}

// NewWorkflow starts the orchestrate workflow at 0a.
// It starts by the table's start row, which governs where a workflow
// begins.
func NewWorkflow(request, session string) (*Workflow, error) {
	w := &Workflow{Kind: "orchestrate", Request: request, Owner: session}
	if _, err := w.fire(OnStart, &Env{}); err != nil {
		return nil, err
	}
	return w, nil
}

// FollowUp reopens a complete workflow (phase 7): lightweight -> 4a
// waiting for one appended phase; partial -> 2 (then approval again);
// full asks the caller to archive it and start a new one (Outcome.Start).
func FollowUp(w *Workflow, kind, request string, env *Env) (gates.Outcome, error) {
	if w.Current != Complete {
		return gates.Outcome{}, &gates.TransitionError{State: w.Current, Trigger: OnFollowUp, Valid: ValidTriggers(w.Current)}
	}
	trigger := map[string]gates.Trigger{"lightweight": OnLightweight, "partial": OnPartial, "full": OnFull}[strings.ToLower(kind)]
	if trigger == "" {
		return gates.Outcome{}, fmt.Errorf("follow-up kind %q: use lightweight, partial or full", kind)
	}
	if strings.TrimSpace(request) == "" {
		return gates.Outcome{}, fmt.Errorf("follow-up needs the request text")
	}
	if trigger == OnFull {
		return gates.Outcome{Start: request}, nil
	}
	request = w.Settings().KeptRequest(request)
	if _, err := w.fire(OnFollowUp, env); err != nil {
		return gates.Outcome{}, err
	}
	if _, err := w.fire(trigger, env); err != nil {
		return gates.Outcome{}, err
	}
	w.FollowUps = append(w.FollowUps, kind+": "+request)
	w.StopBlocks = 0
	o := gates.Outcome{Changed: true}
	if trigger == OnLightweight {
		w.Awaiting = "lightweight"
		w.Tasks, w.FailingTasks, w.FixIterations = nil, nil, 0
		o.Context = "LIGHTWEIGHT follow-up -> 4a: append one phase (fewer than 3 files in total) to MASTER_PLAN.md with its task files, then launch code-implementer for its tasks."
	} else {
		o.Context = "PARTIAL follow-up -> 2: launch task-planner to extend the plan; the user approves it again."
	}
	o.Log(gates.Record{Type: gates.RecTransition, Reason: "follow-up " + strings.ToLower(kind) + ": " + shorten.Runes(shorten.OneLine(request), 200)})
	return o, nil
}

// escalationOptions are the user's choices at an escalation, each with
// what it costs in this situation (seed 004's escalation: retry with a
// fresh count, skip as a known issue, abort).
func (w *Workflow) escalationOptions(kind string, history []FailureEntry) []string {
	var retry, skip string
	total := 0
	if w.Plan != nil {
		for _, ph := range w.Plan.Phases {
			total += len(ph.Tasks)
		}
	}
	abort := fmt.Sprintf("`/orch-hook:resolve abort`: end the workflow here (%d of %d tasks done). Nothing is reverted: the code stays as it is, and nothing is gated afterwards.", len(w.DoneTasks), total)
	if kind == EscalationAgent {
		e := w.Escalation
		what := gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What()
		retry = fmt.Sprintf("`/orch-hook:resolve retry`: back to step %s with %s's failure count reset (up to %d more tries). Costs %s again", e.From, what, w.limits().Retries+1, what)
		if allOf(e.Attempts, gates.Permanent) {
			retry += "; every failure was permanent (it finished, but without what it owes): unless its prompt or the task changes, it is likely to fail the same way."
		} else {
			retry += "; a transient failure (the agent did not finish) may pass on a retry."
		}
		if !contains(phaseWork, e.From) {
			return []string{retry, abort}
		}
		skip = fmt.Sprintf("`/orch-hook:resolve skip`: mark phase %d's tasks done as \"skipped: known issue\" and go on with the plan. The work stays undone", w.Phase)
		if deps := w.dependentsOf(w.Phase); len(deps) > 0 {
			skip += "; later tasks build on this phase: " + strings.Join(deps, ", ")
		}
		skip += "; final validation (5a) will judge the code without it."
		return []string{retry, skip, abort}
	}
	if kind == "fix" {
		retry = fmt.Sprintf("`/orch-hook:resolve retry`: reset the fix iterations to 0 and run FAILURE_ANALYSIS again (F1). Costs up to %d more fix cycles (analysis, fixes, quality gate).", w.limits().FixIterations)
		if same := sameFailures(history); same != "" {
			retry += fmt.Sprintf(" The last %d gates failed the same way (%s): unless the plan or the approach changes, a retry is likely to fail again.", len(history), same)
		}
		skip = fmt.Sprintf("`/orch-hook:resolve skip`: mark phase %d's tasks done as \"skipped: known issue\" and go on with the plan. The failure stays in the code", w.Phase)
		if deps := w.dependentsOf(w.Phase); len(deps) > 0 {
			skip += "; later tasks build on this phase: " + strings.Join(deps, ", ")
		}
		skip += "; final validation (5a) will judge the code with it."
	} else {
		retry = fmt.Sprintf("`/orch-hook:resolve retry`: reset the final-validation failures to 0; append another fix phase and validate again. Costs a phase of work and up to %d more validations.", w.limits().FinalValidationFailures)
		skip = "`/orch-hook:resolve skip`: go on to phase 6 with the failure recorded as a known issue; the workflow completes with it."
	}
	return []string{retry, skip, abort}
}

// allOf reports whether every attempt is of class.
func allOf(attempts []gates.Attempt, class string) bool {
	for _, a := range attempts {
		if a.Class != class {
			return false
		}
	}
	return len(attempts) > 0
}

// sameFailures is the failure every entry of history shares ("" when they
// differ or there is at most one).
func sameFailures(history []FailureEntry) string {
	if len(history) < 2 {
		return ""
	}
	for _, h := range history[1:] {
		if h.Failure != history[0].Failure {
			return ""
		}
	}
	return shorten.Runes(history[0].Failure, 80)
}

// dependentsOf lists the tasks of later phases that depend on a task of
// phase ("Task 05 (phase 2) depends on Task 02").
func (w *Workflow) dependentsOf(phase int) []string {
	ph := w.Plan.Phase(phase)
	if ph == nil {
		return nil
	}
	mine := ph.Numbers()
	var out []string
	for _, later := range w.Plan.Phases {
		if later.Number <= phase {
			continue
		}
		for _, t := range later.Tasks {
			for _, d := range t.DependsOn {
				if slices.Contains(mine, d) {
					out = append(out, fmt.Sprintf("Task %02d (phase %d) depends on Task %02d", t.Number, later.Number, d))
				}
			}
		}
	}
	return out
}
