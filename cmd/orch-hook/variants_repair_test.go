package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orch-hook/orch-hook/internal/status"
)

// Plan repair (README, "Decisions bound to what you saw", "A changed plan
// can always be repaired"): the plan is changed outside orch-hook (onDisk:
// a formatter, an editor, a shell command) at a step of the standard
// workflow. The next gated call is refused with "the plan changed outside
// orch-hook" and a diff per file (at step 3: the approval is refused with
// the changes listed). The ways back, each a fix: the orchestrator Writes
// the file back with its recorded content (shown in the diff; orch-hook's
// copy in .orchestrator/state/recorded/<name> is readable), or Edits it
// back; the user types /orch-hook:resolve accept-plan (then approves again
// when what the gates read changed: it goes back to step 3); a file
// orch-hook never recorded only the user removes. A Write of any other
// content is refused with the same diff.

// driftRefused is the start of the refusal of a gated call while the plan
// differs from what orch-hook recorded.
const driftRefused = "the plan changed outside orch-hook (not through an allowed Write/Edit): "

// Context lines of a repair.
const (
	toldRestored   = "is back to the content orch-hook recorded; the plan is as orch-hook recorded it again."
	toldAccepted   = "[RESOLVE] accept-plan | "
	toldAcceptedTo = "[RESOLVE] accept-plan -> 3 | the plan changed in what the gates read"
)

// Formatter-like rewrites of the standard plan's MASTER_PLAN.md (text
// only: nothing the gates read changes).
var (
	trailingSpaces = strings.Replace(standardPlan[masterPlan], "- [ ] Task 01: Parser\n", "- [ ] Task 01: Parser  \n", 1)
	blankLineAdded = strings.Replace(standardPlan[masterPlan], "# Master Plan: word counter\n", "# Master Plan: word counter\n\n", 1)
	starMarkers    = strings.ReplaceAll(standardPlan[masterPlan], "- [ ] Task", "* [ ] Task")
)

// tasksPath is a plan file's project-relative path.
func tasksPath(name string) string { return ".orchestrator/tasks/" + name }

// tamperBefore changes plan files on disk right before the action named.
func tamperBefore(before string, files map[string]string) func(s *script) {
	return func(s *script) {
		disk := map[string]string{}
		for name, content := range files {
			disk[tasksPath(name)] = content
		}
		s.insertBefore(before, onDisk("tamper", disk))
	}
}

// again is the refused action done again, as the script has it (a launch
// relaunched with a new key, a group with new members).
func again(s *script, key string) *action {
	a := s.at(key)
	c := copyAction(a, key+"-again")
	for _, m := range a.members {
		c.members = append(c.members, copyAction(m, m.key+"-again"))
	}
	return c
}

// restoreThen is the fix of a refused action: acts (the repair), then the
// action again.
func restoreThen(key string, acts ...*action) func(s *script) []*action {
	return func(s *script) []*action { return append(acts, again(s, key)) }
}

// writeBack is the orchestrator's Write of a plan file with its recorded
// content (the standard plan's, as orch-hook's copy holds it), confirmed
// in what it is told.
func writeBack(name string) *action {
	return writePlanFile("write-back-"+name, name, standardPlan[name]).
		expecting(want{context: []string{toldRestored}, check: recordedCopy(name, standardPlan[name])})
}

// recordedCopy: orch-hook's copy of name as it recorded it is readable,
// and holds content.
func recordedCopy(name, content string) func(r *status.Report) string {
	return func(r *status.Report) string {
		b, err := os.ReadFile(filepath.Join(r.Project, ".orchestrator", "state", "recorded", name))
		if err != nil || string(b) != content {
			return fmt.Sprintf("orch-hook's copy of %s as recorded; read %q, %v", name, b, err)
		}
		return ""
	}
}

// showsDiff: the refusal of the action named quotes the diff of name
// (recorded -> now) with the line given.
func showsDiff(after, name, line string) point {
	return point{after: after, want: want{context: []string{"--- " + name + " (recorded)", line}}}
}

// acceptAfterTicks is a known orch-hook bug (pendingFix).
func init() {
	noDep3 := readAs(func(p *planWant) { delete(p.deps, 3) })
	vs := []variant{
		// Step 3: the approval is refused, the changes listed; the plan is
		// re-validated as it stands, and approved again.
		{name: "3: trailing spaces, approval refused, approved again",
			change: tamperBefore("approve", map[string]string{masterPlan: trailingSpaces}),
			fixes: []fix{{match: "approval refused: the plan changed since it was validated, not through a write orch-hook allowed (MASTER_PLAN.md under .orchestrator/tasks): text only (nothing the gates read)",
				redo: func(s *script) []*action { return []*action{again(s, "approve")} }}}},
		{name: "3: Depends On removed, approval refused listing it, approved again",
			change: func(s *script) {
				tamperBefore("approve", map[string]string{tf3: strings.Replace(standardPlan[tf3], "Depends On: 01\n", "", 1)})(s)
				s.end.plan = noDep3
			},
			fixes: []fix{{match: "(task-03-cli.md under .orchestrator/tasks): task 03: Depends On 01 -> none. It is re-validated as it now stands",
				redo: func(s *script) []*action { return []*action{again(s, "approve")} }}}},
		{name: "3: star list markers, accept-plan, then approved",
			change: func(s *script) {
				tamperBefore("approve", map[string]string{masterPlan: starMarkers})(s)
				s.insertBefore("approve", userPrompt("accept", "/orch-hook:resolve accept-plan").
					expecting(want{state: "3", context: []string{toldAccepted + "MASTER_PLAN.md accepted as they stand"}}))
			}},
		{name: "3: a task file written back before the approval",
			change: func(s *script) {
				tamperBefore("approve", map[string]string{tf2: standardPlan[tf2] + "Notes: pad with tabs.\n"})(s)
				s.insertBefore("approve", writeBack(tf2).expecting(want{state: "3", context: []string{toldRestored}}))
			}},

		// 4a.
		{name: "4a: trailing spaces, restored by a Write",
			change: tamperBefore("i3", map[string]string{masterPlan: trailingSpaces}),
			expect: []point{showsDiff("i3", masterPlan, "+- [ ] Task 01: Parser  ")},
			fixes:  []fix{{match: driftRefused + "MASTER_PLAN.md under .orchestrator/tasks.", redo: restoreThen("i3", writeBack(masterPlan))}}},
		{name: "4a: trailing spaces, restored by an Edit",
			change: tamperBefore("i3", map[string]string{masterPlan: trailingSpaces}),
			fixes: []fix{{match: driftRefused, redo: restoreThen("i3",
				editPlanFile("edit-back", masterPlan, "- [ ] Task 01: Parser  \n", "- [ ] Task 01: Parser\n").expecting(want{context: []string{toldRestored}}))}}},
		{name: "4a: a task file reformatted, restored by an Edit",
			change: tamperBefore("i3", map[string]string{tf3: strings.Replace(standardPlan[tf3], "Files: src/cli.go, src/shared.go", "Files:   src/cli.go,  src/shared.go", 1)}),
			expect: []point{showsDiff("i3", tf3, "+Files:   src/cli.go,  src/shared.go")},
			fixes: []fix{{match: driftRefused + "task-03-cli.md under", redo: restoreThen("i3",
				editPlanFile("edit-back", tf3, "Files:   src/cli.go,  src/shared.go", "Files: src/cli.go, src/shared.go").expecting(want{context: []string{toldRestored}}))}}},
		{name: "4a: a new unrecorded file, removed by the user",
			change: func(s *script) {
				s.insertBefore("i3", onDisk("tamper", map[string]string{tasksPath("notes.md"): "# Notes\n"}))
			},
			fixes: []fix{{match: "notes.md was never recorded by orch-hook (new): no write can remove it; only the user can, with `rm .orchestrator/tasks/notes.md` in their terminal",
				redo: restoreThen("i3", onDisk("user-rm", map[string]string{tasksPath("notes.md"): removed}))}}},
		// Paired: a Write cannot take a new file away (an empty one
		// included); the user removes it.
		{name: "4a: a Write emptying a new unrecorded file is refused, the user removes it",
			change: func(s *script) {
				s.insertBefore("i3",
					onDisk("tamper", map[string]string{tasksPath("notes.md"): "# Notes\n"}),
					writePlanFile("empty-it", "notes.md", ""),
					onDisk("user-rm", map[string]string{tasksPath("notes.md"): removed}),
				)
			},
			fixes: []fix{{match: "no write can remove it; only the user can"}}},
		// What the gates read changed: accept-plan goes back to 3, and the
		// approval restarts phase 1.
		{name: "4a: Depends On removed, accept-plan back to 3, approved, phase 1 again",
			change: func(s *script) {
				tamperBefore("i3", map[string]string{tf3: strings.Replace(standardPlan[tf3], "Depends On: 01\n", "", 1)})(s)
				s.end.plan = noDep3
			},
			fixes: []fix{{match: driftRefused + "task-03-cli.md under", redo: func(s *script) []*action {
				return []*action{
					userPrompt("accept", "/orch-hook:resolve accept-plan").
						expecting(want{state: "3", context: []string{toldAcceptedTo + " (task 03: Depends On 01 -> none)"}}),
					stopTurn("wait-again").expecting(want{state: "3"}),
					userPrompt("approve-again", "/orch-hook:approve").expecting(want{state: "4a", context: []string{toldApproved}}),
					again(s, "p1"),
					again(s, "i3"),
				}
			}}}},

		// 4b.
		{name: "4b: a blank line added, accept-plan",
			change: tamperBefore("q1", map[string]string{masterPlan: blankLineAdded}),
			fixes: []fix{{match: driftRefused, redo: restoreThen("q1",
				userPrompt("accept", "/orch-hook:resolve accept-plan").
					expecting(want{state: "4b", context: []string{toldAccepted + "MASTER_PLAN.md accepted as they stand (text only)"}}))}}},
		{name: "4b: star list markers, restored by a Write",
			change: tamperBefore("q1", map[string]string{masterPlan: starMarkers}),
			expect: []point{showsDiff("q1", masterPlan, "+* [ ] Task 02: Formatter")},
			fixes:  []fix{{match: driftRefused, redo: restoreThen("q1", writeBack(masterPlan))}}},
		{name: "4b: two files changed, written back one by one",
			change: tamperBefore("q1", map[string]string{masterPlan: trailingSpaces, tf4: standardPlan[tf4] + "\n"}),
			fixes: []fix{{match: driftRefused + "MASTER_PLAN.md, task-04-docs.md under", redo: restoreThen("q1",
				writeBack(masterPlan).expecting(want{context: []string{"still changed outside orch-hook: task-04-docs.md"}}),
				writeBack(tf4))}}},

		// F2.
		{name: "F2: a task file deleted, recreated by a Write",
			change: tamperBefore("fx", map[string]string{tf2: removed}),
			expect: []point{showsDiff("fx", tf2, "task-02-formatter.md was deleted; Write it back with its recorded content")},
			fixes:  []fix{{match: driftRefused + "task-02-formatter.md under", redo: restoreThen("fx", writeBack(tf2))}}},
		{name: "F2: a note added to a task file, accept-plan",
			change: tamperBefore("fx", map[string]string{tf2: standardPlan[tf2] + "\nNotes: pad with tabs, not spaces.\n"}),
			fixes: []fix{{match: driftRefused, redo: restoreThen("fx",
				userPrompt("accept", "/orch-hook:resolve accept-plan").
					expecting(want{state: "F2", context: []string{toldAccepted + "task-02-formatter.md accepted as they stand"}}))}}},

		// 4c: the tick's Write is the gated call; it gives the file a third
		// content, so it is refused too.
		{name: "4c: trailing spaces, the tick refused, written back, ticked",
			change: tamperBefore("tick1", map[string]string{masterPlan: trailingSpaces}),
			expect: []point{showsDiff("tick1", masterPlan, "+- [ ] Task 01: Parser  ")},
			fixes: []fix{{match: driftRefused + "MASTER_PLAN.md under .orchestrator/tasks. This Write does not give MASTER_PLAN.md its recorded content.",
				redo: restoreThen("tick1", writeBack(masterPlan))}}},
		{name: "4c: star list markers, accept-plan, ticked as they stand",
			change: tamperBefore("tick1", map[string]string{masterPlan: starMarkers}),
			fixes: []fix{{match: driftRefused, redo: restoreThen("tick1",
				userPrompt("accept", "/orch-hook:resolve accept-plan").expecting(want{state: "4c", context: []string{toldAccepted}}))}}},
		// Paired: only the recorded content is written; the changed
		// content again, or a third one, is refused with the same diff.
		{name: "4c: the changed content again and a third content refused, then the recorded content",
			change: func(s *script) {
				tamperBefore("tick1", map[string]string{masterPlan: trailingSpaces})(s)
				s.insertBefore("tick1",
					writePlanFile("same-again", masterPlan, trailingSpaces),
					writePlanFile("third", masterPlan, strings.Replace(standardPlan[masterPlan], "Progress: 0/4", "Progress: 3/4", 1)),
					writeBack(masterPlan),
				)
			},
			expect: []point{showsDiff("third", masterPlan, "+- [ ] Task 01: Parser  ")},
			fixes:  []fix{{match: driftRefused + "MASTER_PLAN.md under .orchestrator/tasks. This Write does not give MASTER_PLAN.md its recorded content.", times: 2}}},
		// A model that retries the refused launch before repairing.
		{name: "4b: the gate relaunched once before the plan is written back",
			change: tamperBefore("q1", map[string]string{masterPlan: starMarkers}),
			fixes: []fix{
				{match: driftRefused, redo: func(s *script) []*action { return []*action{copyAction(s.at("q1"), "q1-retry")} }},
				{match: driftRefused, redo: restoreThen("q1", writeBack(masterPlan))},
			}},
		// The phase ticked by a shell command: ticks orch-hook did not
		// allow. accept-plan cannot take them (a tick orch-hook never saw
		// done fails validation); the orchestrator writes the file back
		// and ticks it with its own Write.
		{name: "4c: the phase ticked by sed, accept-plan refused, written back, ticked",
			change: tamperBefore("tick1", map[string]string{masterPlan: planPhase1Done}),
			fixes: []fix{
				{match: driftRefused + "MASTER_PLAN.md under .orchestrator/tasks. This Write does not give MASTER_PLAN.md its recorded content.",
					redo: then(userPrompt("accept", "/orch-hook:resolve accept-plan"))},
				{match: "the plan as it now stands does not validate (Task 01, Task 02, Task 03 are ticked ([x]) in MASTER_PLAN.md before orch-hook saw them done; untick them); fix or revert it first.",
					redo: restoreThen("tick1", writeBack(masterPlan))},
			}},
		// After a phase was ticked (through orch-hook's own 4c Write), a
		// text-only change accepted: nothing the gates read changed since
		// the approval but the ticks orch-hook allowed, so the workflow
		// goes on where it was.
		{name: "4b of phase 2: a blank line added, accept-plan",
			change: tamperBefore("q3", map[string]string{masterPlan: strings.Replace(planPhase1Done, "# Master Plan: word counter\n", "# Master Plan: word counter\n\n", 1)}),
			fixes: []fix{{match: driftRefused + "MASTER_PLAN.md under", redo: restoreThen("q3",
				userPrompt("accept", "/orch-hook:resolve accept-plan").expecting(want{state: "4b", context: []string{toldAccepted + "MASTER_PLAN.md accepted as they stand"}}))}},
		},
		{name: "5a: a task file reformatted, accept-plan",
			change: tamperBefore("final", map[string]string{tf4: strings.Replace(standardPlan[tf4], "# Task 04: Document it\n", "# Task 04: Document it\n\n", 1)}),
			fixes: []fix{{match: driftRefused + "task-04-docs.md under", redo: restoreThen("final",
				userPrompt("accept", "/orch-hook:resolve accept-plan").expecting(want{state: "5a", context: []string{toldAccepted + "task-04-docs.md accepted as they stand"}}))}},
		},
		// Combined with the other categories: a Bash edit of the plan is
		// denied, the user makes it in their terminal, and accepts it; a
		// CRLF plan (a spelling orch-hook reads) turned to LF by a
		// formatter, written back as it was.
		{name: "combined: sed -i denied, the same edit made in the terminal, accept-plan",
			change: func(s *script) {
				edited := strings.Replace(standardPlan[tf2], "# Task 02: Formatter\n", "# Task 02: Formatter (pads with tabs)\n", 1)
				s.insertBefore("q1",
					bashCommand("sed", "sed -i 's/Formatter$/Formatter (pads with tabs)/' .orchestrator/tasks/task-02-formatter.md"),
					onDisk("user-sed", map[string]string{tasksPath(tf2): edited}),
				)
			},
			fixes: []fix{
				{match: deniedBash},
				{match: driftRefused + "task-02-formatter.md under", redo: restoreThen("q1",
					userPrompt("accept", "/orch-hook:resolve accept-plan").expecting(want{state: "4b", context: []string{toldAccepted + "task-02-formatter.md accepted as they stand"}}))},
			}},
		{name: "combined: a CRLF plan turned to LF by a formatter, written back",
			change: func(s *script) {
				crlf := map[string]string{}
				for n, text := range standardPlan {
					crlf[n] = strings.ReplaceAll(text, "\n", "\r\n")
				}
				plannerWrites(s.at("tp"), crlf)
				tamperBefore("i3", map[string]string{tf3: standardPlan[tf3]})(s)
				s.end.plan = standardPlanWant()
			},
			fixes: []fix{{match: driftRefused + "task-03-cli.md under", redo: func(s *script) []*action {
				return []*action{
					writePlanFile("write-back", tf3, strings.ReplaceAll(standardPlan[tf3], "\n", "\r\n")).expecting(want{context: []string{toldRestored}}),
					again(s, "i3"),
				}
			}}}},
	}
	registerVariants("plan repair", vs...)
}
