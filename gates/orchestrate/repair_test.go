package orchestrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// A changed plan can always be repaired (issue 13): the refusal shows what
// changed and how to put it back; a write that restores a file's recorded
// content is allowed, and is the only plan write allowed meanwhile.

// formatted is what a markdown formatter run over the repository makes of
// a task file: list markers rewritten, the blank line before a heading
// dropped.
func formatted(text string) string {
	return strings.NewReplacer("\n\n## Acceptance\n- it works\n", "\n## Acceptance\n* it works\n").Replace(text)
}

func TestDriftRefusalAndRestore(t *testing.T) {
	h := driveTo(t, S4a)
	name := taskFileName(2)
	orig := string(h.files[name])
	if string(h.recorded[name]) != orig {
		t.Fatalf("no copy of %s as recorded: %q", name, h.recorded[name])
	}
	h.files[name] = []byte(formatted(orig))

	// The refusal, exactly as the model reads it.
	o := h.start(Implementer, implPrompt(1)).launch
	want := "orch-hook: the plan changed outside orch-hook (not through an allowed Write/Edit): task-02-step.md under .orchestrator/tasks. " +
		"Progress is blocked until every file is back to the content orch-hook recorded. To repair: Write the file back with exactly its recorded content (shown in the diff), or ask the user to type /orch-hook:resolve accept-plan. " +
		"Now: phase 1, step 4a, fix iteration 0/3. Next: once the plan is back as orch-hook recorded it (or accepted), launch code-implementer for Task 01, Task 02 (in parallel, one message).\n\n" +
		"--- task-02-step.md (recorded)\n" +
		"+++ task-02-step.md (now)\n" +
		"@@ -5,4 +5,3 @@\n" +
		" requires_ux_dx_review: false\n" +
		"-\n" +
		" ## Acceptance\n" +
		"-- it works\n" +
		"+* it works"
	wantVerdict(t, o, gates.Deny)
	if o.Reason != want {
		t.Fatalf("reason:\n%s\nwant:\n%s", o.Reason, want)
	}
	// The log keeps the first paragraph, without the diff.
	if len(o.Records) != 1 || strings.Contains(o.Records[0].Reason, "---") || !strings.HasSuffix(o.Records[0].Reason, "(in parallel, one message).") {
		t.Errorf("logged %+v", o.Records)
	}

	// Paired refusals: the changed content again, a third content, an Edit
	// that leaves the file changed elsewhere, an Edit of another file.
	wantDeny(t, h.writeFile(writeCall(tasksPath(name), formatted(orig))), 0, "This Write does not give task-02-step.md its recorded content.", "+* it works")
	wantDeny(t, h.writeFile(writeCall(tasksPath(name), orig+"Note: more\n")), 0, "This Write does not give task-02-step.md its recorded content.")
	wantDeny(t, h.writeFile(editCall(tasksPath(name), "* it works", "- it works")), 0, "This Edit does not give task-02-step.md its recorded content.")
	wantDeny(t, h.writeFile(editCall(tasksPath(MasterPlan), "Progress: 0/5", "Progress: 0/5")), 0, "the plan changed outside orch-hook", "--- task-02-step.md (recorded)")
	if len(h.w.PlanWrites) != 0 {
		t.Fatalf("a refused write was bound: %+v", h.w.PlanWrites)
	}

	// The orchestrator's Write of the recorded content is allowed and
	// confirmed at PostToolUse; the workflow goes on.
	o = h.writeFile(writeCall(tasksPath(name), orig))
	wantAllow(t, o)
	wantContext(t, o, "orch-hook: task-02-step.md is back to the content orch-hook recorded; the plan is as orch-hook recorded it again. Next: launch code-implementer")
	if !hasRecord(o, gates.RecUpdate, "task-02-step.md written back to the content orch-hook recorded") {
		t.Errorf("restore not logged: %+v", o.Records)
	}
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
	// Outside the changed state a restore is nothing special: the same
	// Write is a task file change, refused in 4a.
	wantDeny(t, h.writeFile(writeCall(tasksPath(name), orig)), 0, "task-02-step.md may not change at step 4a.")
}

// An Edit restores too, computed as Claude Code applies it; so does a
// subagent's write, and a Write that recreates a deleted file.
func TestRestoreByEditSubagentAndRecreate(t *testing.T) {
	h := driveTo(t, S4a)
	r := h.launch(Implementer, implPrompt(1))
	name := taskFileName(3)
	orig := string(h.files[name])
	h.files[name] = []byte(strings.Replace(orig, "Depends On: 01", "Depends On: none", 1))
	// An Edit whose old_string is not unique is refused, as Claude Code
	// would refuse it; the unique one restores.
	wantDeny(t, h.writeFile(by(editCall(tasksPath(name), "n", "n"), r.agentID, Implementer)), 0, "the plan changed outside orch-hook")
	o := h.writeFile(by(editCall(tasksPath(name), "Depends On: none", "Depends On: 01"), r.agentID, Implementer))
	wantAllow(t, o)
	wantContext(t, o, "task-03-step.md is back to the content orch-hook recorded")

	// Deleted, and another file changed: the first Write restores one, the
	// PostToolUse says what is left.
	del := taskFileName(5)
	delOrig := string(h.files[del])
	delete(h.files, del)
	h.files[MasterPlan] = append(h.files[MasterPlan], '\n')
	o = h.start(Implementer, implPrompt(2)).launch
	wantDeny(t, o, 0, "MASTER_PLAN.md, task-05-step.md under .orchestrator/tasks",
		"--- MASTER_PLAN.md (recorded)\n+++ MASTER_PLAN.md (now)\n@@ -16 +16,2 @@\n - [ ] Task 05: step 5\n+",
		"task-05-step.md was deleted; Write it back with its recorded content (the lines removed below):\n--- task-05-step.md (recorded)\n+++ task-05-step.md (now: deleted)\n@@ -1,7 +0,0 @@\n-# Task 05: step 5\n")
	wantDeny(t, h.writeFile(writeCall(tasksPath(del), "")), 0, "This Write does not give task-05-step.md its recorded content.")
	o = h.writeFile(writeCall(tasksPath(del), delOrig))
	wantAllow(t, o)
	wantContext(t, o, "task-05-step.md is back to the content orch-hook recorded; still changed outside orch-hook: MASTER_PLAN.md (repair them the same way, or ask the user to type /orch-hook:resolve accept-plan).")
	wantDeny(t, h.start(Implementer, implPrompt(2)).launch, 0, "MASTER_PLAN.md under .orchestrator/tasks")
	o = h.writeFile(editCall(tasksPath(MasterPlan), "- [ ] Task 05: step 5\n\n", "- [ ] Task 05: step 5\n"))
	wantAllow(t, o)
	wantContext(t, o, "the plan is as orch-hook recorded it again")
	wantAllow(t, h.start(Implementer, implPrompt(2)).launch)
}

// Two restoring writes in flight at once (both PreToolUse before either
// lands) are both bound and both confirmed.
func TestRestoreRace(t *testing.T) {
	h := driveTo(t, S4a)
	name := taskFileName(4)
	orig := string(h.files[name])
	h.files[name] = []byte(formatted(orig))
	a, b := writeCall(tasksPath(name), orig), writeCall(tasksPath(name), orig)
	a.ToolUseID, b.ToolUseID = "toolu_a", "toolu_b"
	wantAllow(t, h.do(a))
	wantAllow(t, h.do(b))
	if len(h.w.PlanWrites) != 2 || !h.w.PlanWrites[0].Restore || !h.w.PlanWrites[1].Restore {
		t.Fatalf("plan writes %+v", h.w.PlanWrites)
	}
	h.files[name] = []byte(orig)
	for _, c := range []*gates.Call{a, b} {
		post := *c
		post.Event = gates.PostToolUse
		o := h.do(&post)
		wantContext(t, o, "the plan is as orch-hook recorded it again")
	}
	if len(h.w.PlanWrites) != 0 {
		t.Fatalf("plan writes left: %+v", h.w.PlanWrites)
	}
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
}

// A file orch-hook never recorded cannot be written away: only the user
// removes it (or accepts the plan).
func TestDriftUnrecordedFile(t *testing.T) {
	h := driveTo(t, S4a)
	h.files["task-09-extra.md"] = []byte("# Task 09: extra\n")
	want := "orch-hook: the plan changed outside orch-hook (not through an allowed Write/Edit): task-09-extra.md under .orchestrator/tasks. " +
		"Progress is blocked until it is removed. task-09-extra.md was never recorded by orch-hook (new): no write can remove it; only the user can, with `rm .orchestrator/tasks/task-09-extra.md` in their terminal, or the user accepts the plan with /orch-hook:resolve accept-plan. " +
		"Now: phase 1, step 4a, fix iteration 0/3. Next: once the plan is back as orch-hook recorded it (or accepted), launch code-implementer for Task 01, Task 02 (in parallel, one message)."
	o := h.start(Implementer, implPrompt(1)).launch
	wantVerdict(t, o, gates.Deny)
	if o.Reason != want {
		t.Fatalf("reason:\n%s\nwant:\n%s", o.Reason, want)
	}
	for _, c := range []*gates.Call{writeCall(tasksPath("task-09-extra.md"), ""), editCall(tasksPath("task-09-extra.md"), "# Task 09: extra\n", "")} {
		wantDeny(t, h.writeFile(c), 0, "no write can remove it")
	}
	// A name that needs quoting is quoted for the user's shell.
	h.files["it's new.md"] = []byte("x")
	wantDeny(t, h.start(Implementer, implPrompt(1)).launch, 0, "`rm '.orchestrator/tasks/it'\\''s new.md' .orchestrator/tasks/task-09-extra.md`", "were never recorded", "until they are removed")
	// Many new files: the command stays short.
	for i := 0; i < 30; i++ {
		h.files[fmt.Sprintf("notes-%02d.md", i)] = []byte("x")
	}
	o = h.start(Implementer, implPrompt(1)).launch
	wantDeny(t, o, 0, "it's new.md, notes-00.md, notes-01.md, notes-02.md, notes-03.md, notes-04.md, notes-05.md, notes-06.md, notes-07.md, notes-08.md and 22 more under .orchestrator/tasks.", ".orchestrator/tasks/notes-08.md ... (22 more)` in their terminal")
	for i := 0; i < 30; i++ {
		delete(h.files, fmt.Sprintf("notes-%02d.md", i))
	}
	delete(h.files, "it's new.md")
	delete(h.files, "task-09-extra.md")
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
}

// The copy is not trusted: one that does not hash to the recorded hash is
// not offered, and the hash still decides which write restores.
func TestDriftTamperedOrMissingCopy(t *testing.T) {
	h := driveTo(t, S4a)
	name := taskFileName(1)
	orig := string(h.files[name])
	h.files[name] = []byte(formatted(orig))
	h.recorded[name] = []byte(strings.Replace(orig, "requires_ux_dx_review: false", "requires_ux_dx_review: true", 1))
	o := h.start(Implementer, implPrompt(1)).launch
	wantDeny(t, o, 0,
		"To repair: Write the file back with exactly its recorded content (no diff can be shown, see below), or ask the user to type /orch-hook:resolve accept-plan.",
		"\n\ntask-01-step.md: orch-hook's copy of its recorded content (.orchestrator/state/recorded/task-01-step.md) does not match the recorded hash: it was changed outside orch-hook, so it cannot be offered (tell the user). Write it back with its recorded content if you know it (for example from `git show HEAD:.orchestrator/tasks/task-01-step.md`, if it was committed as recorded), or ask the user to type /orch-hook:resolve accept-plan.")
	if strings.Contains(o.Reason, "requires_ux_dx_review: true") {
		t.Fatalf("the tampered copy was shown: %s", o.Reason)
	}
	// Writing the tampered copy's content is refused; the recorded one is
	// allowed.
	wantDeny(t, h.writeFile(writeCall(tasksPath(name), string(h.recorded[name]))), 0, "This Write does not give task-01-step.md its recorded content.")
	delete(h.recorded, name)
	h.files[name] = []byte(formatted(orig))
	wantDeny(t, h.start(Implementer, implPrompt(1)).launch, 0, "task-01-step.md: orch-hook kept no copy of its recorded content (none is kept of a file over 256 KiB), so no diff can be shown.")
	wantAllow(t, h.writeFile(writeCall(tasksPath(name), orig)))
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
}

// A restore is allowed whatever the step and whoever writes it, from
// another session too? No: the session rule comes first.
func TestRestoreStepsAndSessions(t *testing.T) {
	h := driveTo(t, S4b)
	name := taskFileName(2)
	orig := string(h.files[name])
	h.files[name] = []byte(formatted(orig))
	c := writeCall(tasksPath(name), orig)
	c.Session = otherSession
	wantDeny(t, h.do(c), 0, "belongs to another Claude Code session")
	wantAllow(t, h.writeFile(writeCall(tasksPath(name), orig)))
	wantAllow(t, h.start(Quality, "Quality gate for phase 1").launch)

	// Escalated: nothing may be written to the plan, but a restore.
	h = driveTo(t, escalatedFix)
	h.files[MasterPlan] = []byte(formatted(string(h.files[MasterPlan])) + "<!-- formatted -->\n")
	orig = string(h.recorded[MasterPlan])
	wantDeny(t, h.writeFile(writeCall(tasksPath(MasterPlan), orig+"x")), 0, "the plan changed outside orch-hook")
	wantAllow(t, h.writeFile(writeCall(tasksPath(MasterPlan), orig)))
	wantDeny(t, h.writeFile(writeCall(tasksPath(MasterPlan), orig)), 0, "MASTER_PLAN.md may not change")
}

// The copies follow every recorded hash: validation, approval, allowed
// writes, a skip, accept-plan.
func TestRecordedCopiesFollowHashes(t *testing.T) {
	check := func(h *harness) {
		t.Helper()
		if len(h.recorded) != len(h.w.PlanHashes) {
			t.Fatalf("%d copies for %d hashes", len(h.recorded), len(h.w.PlanHashes))
		}
		for name, want := range h.w.PlanHashes {
			if hashContent(h.recorded[name]) != want {
				t.Fatalf("copy of %s does not hash to its recorded hash", name)
			}
		}
	}
	check(driveTo(t, S3))
	h := driveTo(t, S4c)
	h.tick(1, 2, 3)
	check(h)
	h.files["task-09-extra.md"] = []byte("# Task 09\n")
	h.user("/orch-hook:resolve accept-plan")
	check(h)
	if _, ok := h.recorded["task-09-extra.md"]; !ok {
		t.Fatal("accepted file has no copy")
	}
	delete(h.files, "task-09-extra.md")
	h.user("/orch-hook:resolve accept-plan")
	check(h)
	if _, ok := h.recorded["task-09-extra.md"]; ok {
		t.Fatal("the copy of a file no longer recorded is kept")
	}
	h = driveTo(t, escalatedFix)
	h.user("/orch-hook:resolve skip")
	check(h)
}

func TestRecordedCopies(t *testing.T) {
	files := PlanFiles{"a": []byte("A"), "b": []byte("B2"), "c": []byte("C")}
	before := map[string]string{"a": hashContent([]byte("A")), "b": hashContent([]byte("B")), "gone": "x"}
	after := map[string]string{"a": hashContent([]byte("A")), "b": hashContent([]byte("B2")), "c": hashContent([]byte("C")), "d": hashContent([]byte("D"))}
	keep, drop := RecordedCopies(before, after, files)
	if len(keep) != 2 || string(keep["b"]) != "B2" || string(keep["c"]) != "C" {
		t.Errorf("keep %q", keep)
	}
	if strings.Join(drop, ",") != "d,gone" {
		t.Errorf("drop %q", drop)
	}
	if keep, drop := RecordedCopies(after, after, nil); keep != nil || drop != nil {
		t.Errorf("no change: keep %q drop %q", keep, drop)
	}
}

func TestRestorePlan(t *testing.T) {
	h := driveTo(t, S4a)
	origMaster := string(h.files[MasterPlan])
	h.files[MasterPlan] = []byte(formatted(origMaster) + "\n")
	delete(h.files, taskFileName(5))
	h.files[taskFileName(4)] = []byte("changed")
	h.recorded[taskFileName(4)] = []byte("tampered copy")
	h.files[taskFileName(3)] = []byte("changed")
	delete(h.recorded, taskFileName(3))
	h.files["notes.md"] = []byte("new")
	recorded := func(name string) ([]byte, bool) { b, ok := h.recorded[name]; return b, ok }
	r := h.w.RestorePlan(h.files, recorded)
	if len(r.Write) != 2 || string(r.Write[MasterPlan]) != origMaster || hashContent(r.Write[taskFileName(5)]) != h.w.PlanHashes[taskFileName(5)] {
		t.Errorf("write %q", r.Write)
	}
	if fmt.Sprint(r.NoCopy, r.BadCopy, r.Unrecorded) != "[task-03-step.md] [task-04-step.md] [notes.md]" {
		t.Errorf("no copy %v, bad copy %v, unrecorded %v", r.NoCopy, r.BadCopy, r.Unrecorded)
	}
	// Not while the plan is being written, nor once the workflow is over.
	h.w.Current = S2
	if r := h.w.RestorePlan(h.files, recorded); r.Write != nil || r.Unrecorded != nil {
		t.Errorf("in step 2: %+v", r)
	}
}

// The refusal stays short however much changed: at most diffLinesPerFile
// changed lines per file, diffLinesTotal in all, maxDriftFiles files; the
// rest is named, with where the whole recorded content is.
func TestDriftRefusalBounded(t *testing.T) {
	var phases []phase
	for p := 1; p <= 3; p++ {
		ph := phase{N: p, Title: fmt.Sprintf("Part %d", p)}
		for i := 1; i <= 4; i++ {
			ph.Tasks = append(ph.Tasks, task{N: (p-1)*4 + i, Files: []string{fmt.Sprintf("f%d.go", (p-1)*4+i)}})
		}
		phases = append(phases, ph)
	}
	h := driveTo(t, S4a, phases...)
	var long strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&long, "- criterion %d\n", i)
	}
	for n := 1; n <= 11; n++ {
		name := taskFileName(n)
		h.files[name] = []byte(strings.ReplaceAll(string(h.files[name]), "- it works\n", long.String()))
	}
	o := h.start(Implementer, implPrompt(1)).launch
	wantDeny(t, o, 0,
		"task-01-step.md, task-02-step.md, task-03-step.md, task-04-step.md, task-05-step.md, task-06-step.md, task-07-step.md, task-08-step.md, task-09-step.md, task-10-step.md, task-11-step.md under .orchestrator/tasks.",
		"... 21 more changed lines not shown\n(Not the whole change: Read the whole recorded content in .orchestrator/state/recorded/task-01-step.md and Write it back.)",
		"task-04-step.md: changed (diff not shown: this refusal shows at most 60 changed lines); Read the whole recorded content in .orchestrator/state/recorded/task-04-step.md and Write it back.",
		"\n\n... and 3 more changed files not shown (what orch-hook recorded is in .orchestrator/state/recorded/, by name).")
	changed := 0
	for _, line := range strings.Split(o.Reason, "\n") {
		if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "+++") {
			changed++
		}
	}
	if changed != diffLinesTotal || len(o.Reason) > 8000 {
		t.Errorf("%d changed lines shown, %d bytes:\n%s", changed, len(o.Reason), o.Reason)
	}
	// Whatever is cut, the copy the refusal points to restores the file.
	for n := 1; n <= 11; n++ {
		name := taskFileName(n)
		wantAllow(t, h.writeFile(writeCall(tasksPath(name), string(h.recorded[name]))))
	}
	wantAllow(t, h.start(Implementer, implPrompt(1)).launch)
}
