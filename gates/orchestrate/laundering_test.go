package orchestrate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// A change made outside orch-hook is never adopted as recorded: taking an
// appended phase, a skip, FAILURE_ANALYSIS's re-read and 4c all check the
// plan against what orch-hook recorded first (red-team findings 15, 16).

// appendByPlanner has a task-planner append a fix phase (Task 03 in phase
// 2) through allowed writes; outside, when non-nil, changes the plan
// outside orch-hook while it runs. It returns the planner's completion.
func appendByPlanner(h *harness, outside func()) gates.Outcome {
	h.t.Helper()
	r := h.launch(Planner, "Append a fix phase for the final-validation failure")
	wantAllow(h.t, r.write(taskFileName(3), taskText(task{N: 3, Files: []string{"fix.go"}})))
	master := strings.TrimRight(string(h.files[MasterPlan]), "\n") + "\n\n## Phase 2: Fixes\nStatus: pending\n\n- [ ] Task 03: fix 3\n"
	wantAllow(h.t, r.write(MasterPlan, master))
	if outside != nil {
		outside()
	}
	return r.finish("Fix phase appended.")
}

func flipUX(h *harness, n int) (recorded string) {
	name := taskFileName(n)
	recorded = string(h.files[name])
	h.files[name] = []byte(strings.Replace(recorded, "requires_ux_dx_review: true", "requires_ux_dx_review: false", 1))
	return recorded
}

// Paired with TestRedteamAppendedPhaseLaundersOutsideChange: a phase
// appended through allowed writes is taken when the planner returns, and
// the approved flags still hold.
func TestAppendedPhaseThroughAllowedWritesTaken(t *testing.T) {
	h := driveTo(t, awaitFix5a, onePhase(true)...)
	o := appendByPlanner(h, nil)
	h.expect(S4a)
	if h.w.Phase != 2 || h.w.Awaiting != "" {
		t.Fatalf("phase %d awaiting %q: the appended phase was not taken", h.w.Phase, h.w.Awaiting)
	}
	wantContext(t, o, "phase created -> 4a")
	if changed := ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files)); len(changed) != 0 {
		t.Errorf("recorded hashes differ from the files written through allowed writes: %v", changed)
	}
	h.implement(3)
	h.gate(true)
	h.tick()
	h.expect(S5a)
	h.final(true)
	h.expect(S5b)
}

// The refusal when the planner returns, and the way back by a restoring
// write: the phase is taken at the next code-implementer launch, with the
// recorded flags.
func TestAppendedPhaseOutsideChangeRepaired(t *testing.T) {
	h := driveTo(t, awaitFix5a, onePhase(true)...)
	var recorded string
	o := appendByPlanner(h, func() { recorded = flipUX(h, 1) })
	h.expect(S4a)
	if h.w.Phase != 1 || h.w.Awaiting != "fix" {
		t.Fatalf("phase %d awaiting %q: the phase was taken over a change made outside orch-hook", h.w.Phase, h.w.Awaiting)
	}
	wantContext(t, o,
		"[STEP 4a] task-planner returned, but the plan changed outside orch-hook (not through an allowed Write/Edit): task-01-step.md under .orchestrator/tasks.",
		"To repair: Write the file back with exactly its recorded content (shown in the diff), or ask the user to type /orch-hook:resolve accept-plan.",
		"The appended phase is not taken until then;",
		"-requires_ux_dx_review: true\n+requires_ux_dx_review: false")
	if !hasRecord(o, gates.RecUpdate, "appended phase not taken: the plan changed outside orch-hook (task-01-step.md)") {
		t.Errorf("records %+v", o.Records)
	}
	// Still refused at the implementer's launch, with the diff.
	wantDeny(t, h.start(Implementer, implPrompt(3)).launch, 0, "the plan changed outside orch-hook", "-requires_ux_dx_review: true")
	if h.w.Phase != 1 {
		t.Fatal("phase taken by a refused launch")
	}
	wantAllow(t, h.writeFile(writeCall(tasksPath(taskFileName(1)), recorded)))
	h.implement(3)
	if h.w.Phase != 2 || h.w.Awaiting != "" || !h.w.Plan.Task(1).UXDX {
		t.Fatalf("phase %d awaiting %q UX/DX %v", h.w.Phase, h.w.Awaiting, h.w.Plan.Task(1).UXDX)
	}
	h.gate(true)
	h.tick()
	h.final(true)
	h.expect(S5b)
}

// The other way back: the user accepts the change. A change the gates read
// goes back to 3 (the appended phase, written through allowed writes, is
// not listed as a change); after the approval the phase is taken at the
// next launch, and the accepted flag holds.
func TestAppendedPhaseOutsideChangeAccepted(t *testing.T) {
	h := driveTo(t, awaitFix5a, onePhase(true)...)
	appendByPlanner(h, func() { flipUX(h, 1) })
	o := h.user("/orch-hook:resolve accept-plan")
	h.expect(S3)
	wantContext(t, o, "accept-plan -> 3 | the plan changed in what the gates read (task 01: requires_ux_dx_review true -> false): back to step 3")
	if strings.Contains(o.Context, "task 03") {
		t.Errorf("the appended phase is listed as a change to accept: %q", o.Context)
	}
	o = h.approve()
	h.expect(S4a)
	if h.w.Awaiting != "fix" || h.w.Phase != 1 {
		t.Fatalf("awaiting %q phase %d", h.w.Awaiting, h.w.Phase)
	}
	wantContext(t, o, "[STEP 3] APPROVED -> 4a | phase 2 is appended: launch code-implementer for its tasks")
	h.implement(3)
	if h.w.Phase != 2 || h.w.Awaiting != "" {
		t.Fatalf("phase %d awaiting %q", h.w.Phase, h.w.Awaiting)
	}
	h.gate(true)
	h.tick()
	h.final(true)
	h.expect(S6) // the user accepted Task 01 without UX/DX review

	// A text-only change is accepted without going back to 3, the
	// appended phase still taken at the next launch.
	h = driveTo(t, awaitFix5a, onePhase(true)...)
	appendByPlanner(h, func() { h.files[taskFileName(1)] = append(h.files[taskFileName(1)], "\nNote.\n"...) })
	o = h.user("/orch-hook:resolve accept-plan")
	h.expect(S4a)
	wantContext(t, o, "accept-plan | task-01-step.md accepted as they stand (text only); nothing the gates read changed since the approval. Next: phase 2 is appended: launch code-implementer for its tasks (orch-hook takes the phase then)")
	h.implement(3)
	if h.w.Phase != 2 || h.w.Awaiting != "" {
		t.Fatalf("phase %d awaiting %q", h.w.Phase, h.w.Awaiting)
	}

	// Accepted before anything was appended: the approval goes back to
	// 4a waiting for the phase (not "nothing to implement").
	h = driveTo(t, awaitFix5a, onePhase(true)...)
	flipUX(h, 1)
	h.user("/orch-hook:resolve accept-plan")
	h.expect(S3)
	wantAllow(t, h.approve())
	h.expect(S4a)
	if h.w.Awaiting != "fix" {
		t.Fatalf("awaiting %q", h.w.Awaiting)
	}
	h.runFixPhase()
	h.final(true)
	h.expect(S6)

	// Two phases appended outside orch-hook: not one pending phase, so
	// they are tasks added, for the user's approval, and then run in
	// order (the approval takes them, not the next launch).
	h = driveTo(t, awaitFix5a, onePhase(true)...)
	h.files[taskFileName(3)] = []byte(taskText(task{N: 3, Files: []string{"fix.go"}}))
	h.files[taskFileName(4)] = []byte(taskText(task{N: 4, Files: []string{"fix2.go"}}))
	h.files[MasterPlan] = []byte(strings.TrimRight(string(h.files[MasterPlan]), "\n") + "\n\n## Phase 2: Fixes\nStatus: pending\n\n- [ ] Task 03: fix 3\n\n## Phase 3: More\nStatus: pending\n\n- [ ] Task 04: fix 4\n")
	o = h.user("/orch-hook:resolve accept-plan")
	h.expect(S3)
	wantContext(t, o, "task 03: added (phase 2); task 04: added (phase 3)")
	h.approve()
	h.expect(S4a)
	if h.w.Awaiting != "" || h.w.Phase != 2 {
		t.Fatalf("awaiting %q phase %d", h.w.Awaiting, h.w.Phase)
	}
	h.implement(3)
	h.gate(true)
	wantContext(t, h.tick(), "4c OK -> Phase 3")
}

// Paired with TestRedteamResolveSkipLaundersOutsideChange: a skip on the
// plan as recorded works; a skip over a change made outside orch-hook is
// refused with the diff and the ways out, and works once it is repaired
// or accepted.
func TestResolveSkipChecksThePlan(t *testing.T) {
	h := driveTo(t, escalatedFix, twoPhases(true)...)
	o := h.user("/orch-hook:resolve skip")
	wantAllow(t, o)
	h.expect(S4a)
	if h.w.Phase != 2 || len(ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files))) != 0 {
		t.Fatalf("phase %d, changed %v", h.w.Phase, ChangedFiles(h.w.PlanHashes, HashPlanFiles(h.files)))
	}

	h = driveTo(t, escalatedFix, twoPhases(true)...)
	recorded := string(h.files[MasterPlan])
	h.files[MasterPlan] = []byte(recorded[:strings.Index(recorded, "\n## Phase 2")+1])
	o = h.user("/orch-hook:resolve skip")
	wantBlock(t, o, 0,
		"skip refused: the plan changed outside orch-hook (not through a Write/Edit orch-hook allowed): MASTER_PLAN.md under .orchestrator/tasks. The skip marks phase 1's tasks [x] in MASTER_PLAN.md and records the plan as it then stands, so it would adopt that change without showing it. First put the plan back or accept it: ask Claude to Write each changed file back with exactly its recorded content (the diff below), or run `orch-hook repair --plan` in your terminal; or accept the plan as it stands with /orch-hook:resolve accept-plan (it lists what changed; a change the gates read takes the plan back to step 3 for your approval). Then type /orch-hook:resolve skip again.",
		"-## Phase 2: Polish")
	h.expect(Escalated)
	if h.w.Escalation == nil || len(h.w.KnownIssues) != 0 {
		t.Fatalf("escalation %+v known issues %v", h.w.Escalation, h.w.KnownIssues)
	}
	if o.Files != nil {
		t.Errorf("refused skip writes %v", o.Files)
	}
	// Repaired by a restoring write: the skip works, phase 2 still runs.
	wantAllow(t, h.writeFile(writeCall(tasksPath(MasterPlan), recorded)))
	wantAllow(t, h.user("/orch-hook:resolve skip"))
	h.expect(S4a)
	if h.w.Phase != 2 {
		t.Fatalf("phase %d", h.w.Phase)
	}

	// Accepted (text only): the skip works.
	h = driveTo(t, escalatedFix, twoPhases(true)...)
	h.files[MasterPlan] = append(h.files[MasterPlan], "\n<!-- formatted -->\n"...)
	wantBlock(t, h.user("/orch-hook:resolve skip"), 0, "skip refused")
	h.user("/orch-hook:resolve accept-plan")
	h.expect(Escalated)
	wantAllow(t, h.user("/orch-hook:resolve skip"))
	h.expect(S4a)

	// A new file orch-hook never recorded: only the user removes it.
	h = driveTo(t, escalatedFix, twoPhases(true)...)
	h.files["task-09-extra.md"] = []byte("# Task 09\n")
	wantBlock(t, h.user("/orch-hook:resolve skip"), 0, "First put the plan back or accept it: remove the new file with `rm .orchestrator/tasks/task-09-extra.md` in your terminal; or accept")
	delete(h.files, "task-09-extra.md")
	wantAllow(t, h.user("/orch-hook:resolve skip"))
}

// FAILURE_ANALYSIS re-reads the task files' Files: and Depends On: lines;
// a change made outside orch-hook meanwhile is not read (the file is read
// as recorded), and accept-plan then shows it.
func TestAnalysisReadsThePlanAsRecorded(t *testing.T) {
	h := driveTo(t, SF1)
	r := h.launch(Planner, "FAILURE_ANALYSIS of the failing tasks")
	name := taskFileName(2)
	edited := strings.Replace(string(h.files[name]), "Files: b.go", "Files: b.go, fix.go", 1)
	wantAllow(t, r.write(name, edited))
	other := taskFileName(3)
	h.files[other] = []byte(strings.Replace(string(h.files[other]), "Files: c.go", "Files: c.go, b.go", 1))
	o := r.finish("Root cause: off-by-one in b.go.\nFAILURE_ANALYSIS: COMPLETE")
	h.expect(SF2)
	wantContext(t, o, "F1 OK -> F2", "The plan changed outside orch-hook (not through an allowed Write/Edit): task-03-step.md under .orchestrator/tasks. FAILURE_ANALYSIS's task files were read as orch-hook recorded them; every launch is refused")
	if got := strings.Join(h.w.Plan.Task(2).Files, ","); got != "b.go,fix.go" {
		t.Errorf("Task 02 files %q: the allowed write is not read", got)
	}
	if got := strings.Join(h.w.Plan.Task(3).Files, ","); got != "c.go" {
		t.Errorf("Task 03 files %q: the change made outside orch-hook is read", got)
	}
	wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 0, "the plan changed outside orch-hook")
	o = h.user("/orch-hook:resolve accept-plan")
	wantContext(t, o, "task 03: Files c.go -> c.go, b.go")

	// No verified copy of the changed file: nothing is read again.
	h = driveTo(t, SF1)
	r = h.launch(Planner, "FAILURE_ANALYSIS of the failing tasks")
	h.files[other] = []byte(strings.Replace(string(h.files[other]), "Files: c.go", "Files: c.go, b.go", 1))
	delete(h.recorded, other)
	o = r.finish("Root cause: off-by-one in b.go.\nFAILURE_ANALYSIS: COMPLETE")
	h.expect(SF2)
	wantContext(t, o, "The task files were not read again")
	if got := strings.Join(h.w.Plan.Task(3).Files, ","); got != "c.go" {
		t.Errorf("Task 03 files %q", got)
	}
}

// 4c moves on only while MASTER_PLAN.md is as recorded: ticks made outside
// orch-hook do not move it, even when another file's restoring write
// settles; an allowed tick moves it though another file changed meanwhile
// (that change is refused at the next launch).
func TestPlanUpdateWaitsForTheRecordedPlan(t *testing.T) {
	h := driveTo(t, S4c)
	h.files[MasterPlan] = []byte(tickText(string(h.files[MasterPlan]), 1, 2, 3))
	name := taskFileName(4)
	recorded := string(h.files[name])
	h.files[name] = []byte(recorded + "\nNote.\n")
	wantAllow(t, h.writeFile(writeCall(tasksPath(name), recorded)))
	h.expect(S4c)
	if len(h.w.DoneTasks) != 0 {
		t.Fatalf("done %v", h.w.DoneTasks)
	}
	// The ticks are the orchestrator's own 4c job: written back, then
	// made through an allowed write, they move it.
	wantBlock(t, h.user("/orch-hook:resolve accept-plan"), 0, "ticked ([x]) in MASTER_PLAN.md before orch-hook saw them done")
	wantAllow(t, h.writeFile(writeCall(tasksPath(MasterPlan), string(h.recorded[MasterPlan]))))
	h.expect(S4c)
	wantContext(t, h.tick(), "4c OK -> Phase 2")
	h.expect(S4a)

	h = driveTo(t, S4c)
	c := writeCall(tasksPath(MasterPlan), tickText(string(h.files[MasterPlan]), 1, 2, 3))
	wantAllow(t, h.do(c))
	h.files[MasterPlan] = []byte(*c.Write.Content)
	h.files[name] = append(h.files[name], "\nNote.\n"...)
	post := *c
	post.Event = gates.PostToolUse
	wantContext(t, h.do(&post), "4c OK -> Phase 2")
	wantDeny(t, h.start(Implementer, implPrompt(4)).launch, 0, "the plan changed outside orch-hook", name)
}
