package main

import "strings"

// 4c edits: how models tick a phase in MASTER_PLAN.md (README, "4c"): one
// Write, Writes that differ in trailing newlines, ticks as separate Edits
// with the Status: and Progress: lines after them (even once the phase
// has moved on), and the edits that must be refused, each followed by the
// correct one.

const masterPlan = "MASTER_PLAN.md"

// tickEdit ticks one task line by an Edit.
func tickEdit(key, task string) *action {
	return editPlanFile(key, masterPlan, "- [ ] "+task, "- [x] "+task)
}

// retick is the fix of a refused 4c edit: the phase ticked by one Write.
func retick(phase int) func(*script) []*action {
	return func(*script) []*action { return []*action{tickPhase("retick", phase)} }
}

func init() {
	tick1Want := orchestrateBase().at("tick1").want
	tick2Want := orchestrateBase().at("tick2").want
	vs := []variant{
		{name: "phase 1 by three Edits, then Status:, then Progress:",
			change: func(s *script) {
				s.replace("tick1",
					tickEdit("e1", "Task 01: Parser").expecting(want{state: "4c"}),
					tickEdit("e2", "Task 02: Formatter").expecting(want{state: "4c"}),
					tickEdit("e3", "Task 03: CLI flag").expecting(tick1Want),
					// The phase has moved on: Status: and Progress: stay editable.
					editPlanFile("e4", masterPlan, "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\nStatus: complete").expecting(want{state: "4a"}),
					editPlanFile("e5", masterPlan, "Progress: 0/4", "Progress: 3/4").expecting(want{state: "4a"}),
				)
			}},
		{name: "phase 2 by an Edit, then Status: and Progress: in 5a",
			change: func(s *script) {
				s.replace("tick2",
					tickEdit("e1", "Task 04: Document it").expecting(tick2Want),
					editPlanFile("e2", masterPlan, "## Phase 2: Docs\nStatus: pending", "## Phase 2: Docs\nStatus: complete").expecting(want{state: "5a"}),
					editPlanFile("e3", masterPlan, "Progress: 3/4", "Progress: 4/4").expecting(want{state: "5a"}),
				)
			}},
		{name: "Status: first, then the ticks",
			change: func(s *script) {
				s.replace("tick1",
					editPlanFile("e0", masterPlan, "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\nStatus: in progress").expecting(want{state: "4c"}),
					tickEdit("e1", "Task 01: Parser"),
					tickEdit("e2", "Task 02: Formatter"),
					tickEdit("e3", "Task 03: CLI flag").expecting(tick1Want),
				)
			}},
		{name: "one Edit of the whole phase block",
			change: func(s *script) {
				s.replace("tick1", editPlanFile("e1", masterPlan,
					"Status: pending\n- [ ] Task 01: Parser\n- [ ] Task 02: Formatter\n- [ ] Task 03: CLI flag",
					"Status: complete\n- [x] Task 01: Parser\n- [x] Task 02: Formatter\n- [x] Task 03: CLI flag").expecting(tick1Want))
			}},
		{name: "Writes without a trailing newline",
			change: func(s *script) {
				s.replace("tick1", writePlanFile("w1", masterPlan, strings.TrimSuffix(planPhase1Done, "\n")).expecting(tick1Want))
				s.replace("tick2", writePlanFile("w2", masterPlan, strings.TrimSuffix(planAllDone, "\n")).expecting(tick2Want))
			}},
		{name: "Writes with trailing blank lines",
			change: func(s *script) {
				s.replace("tick1", writePlanFile("w1", masterPlan, planPhase1Done+"\n\n").expecting(tick1Want))
				s.replace("tick2", writePlanFile("w2", masterPlan, planAllDone+"\n").expecting(tick2Want))
			}},
		{name: "ticks written [X]",
			change: func(s *script) {
				s.replace("tick1", writePlanFile("w1", masterPlan, strings.ReplaceAll(planPhase1Done, "- [x] Task", "- [X] Task")).expecting(tick1Want))
			}},
		{name: "ticks only, Status: and Progress: in one Edit during phase 2's gate",
			change: func(s *script) {
				ticks := strings.NewReplacer("- [ ] Task 01", "- [x] Task 01", "- [ ] Task 02", "- [x] Task 02", "- [ ] Task 03", "- [x] Task 03")
				s.replace("tick1", writePlanFile("w1", masterPlan, ticks.Replace(standardPlan[masterPlan])).expecting(tick1Want))
				s.insertAfter("i4", editPlanFile("e1", masterPlan,
					"Progress: 0/4\n\n## Phase 1: Core\nStatus: pending",
					"Progress: 3/4\n\n## Phase 1: Core\nStatus: complete").expecting(want{state: "4b"}))
			}},
		{name: "phase 2 by an Edit with replace_all",
			change: func(s *script) {
				e := editPlanFile("e1", masterPlan, "- [ ] ", "- [x] ").expecting(tick2Want)
				e.replaceAll = true
				s.replace("tick2", e)
			}},
		{name: "refused: replace_all in phase 1 ticks Task 04 too",
			change: func(s *script) {
				e := editPlanFile("e1", masterPlan, "- [ ] ", "- [x] ")
				e.replaceAll = true
				s.insertBefore("tick1", e)
			},
			fixes: []fix{{match: "[Gate 2] Task 04 belongs to another phase; only phase 1's tasks may be ticked now"}}},
		{name: "refused: a task title edited with its tick",
			change: func(s *script) {
				s.insertBefore("tick1", editPlanFile("e1", masterPlan, "- [ ] Task 01: Parser", "- [x] Task 01: Word parser"))
			},
			fixes: []fix{{match: "line 7 may not change in 4c"}}},
		{name: "refused: a later phase's task ticked",
			change: func(s *script) {
				s.insertBefore("tick1", writePlanFile("w1", masterPlan, strings.Replace(planPhase1Done, "- [ ] Task 04", "- [x] Task 04", 1)))
			},
			fixes: []fix{{match: "Task 04 belongs to another phase"}}},
		{name: "refused: a later phase's Status: edited",
			change: func(s *script) {
				s.insertBefore("tick1", editPlanFile("e1", masterPlan, "## Phase 2: Docs\nStatus: pending", "## Phase 2: Docs\nStatus: next"))
			},
			fixes: []fix{{match: "line 12 may not change in 4c"}}},
		{name: "refused: a note added to the plan",
			change: func(s *script) {
				s.replace("tick1", writePlanFile("w1", masterPlan, planPhase1Done+"\nNote: the formatter needed a second pass.\n"))
			},
			fixes: []fix{{match: "this edit adds or removes lines", redo: retick(1)}}},
		// Claude Code fails an Edit whose old_string is not unique; orch-hook
		// refuses it first.
		{name: "refused: an Edit whose old_string is not unique",
			change: func(s *script) {
				s.insertBefore("tick1", editPlanFile("e1", masterPlan, "Status: pending", "Status: in progress"))
			},
			fixes: []fix{{match: "Edit's old_string is not unique in the file", redo: then(
				editPlanFile("e1-fix", masterPlan, "## Phase 1: Core\nStatus: pending", "## Phase 1: Core\nStatus: in progress").expecting(want{state: "4c"}))}}},
		{name: "refused: a task unticked in phase 2's 4c",
			change: func(s *script) {
				s.insertBefore("tick2", editPlanFile("e1", masterPlan, "- [x] Task 01: Parser", "- [ ] Task 01: Parser"))
			},
			fixes: []fix{{match: "Task 01 belongs to another phase"}}},
		{name: "refused: Status: edited once the plan is closed (5b)",
			change: func(s *script) {
				s.insertBefore("ux", editPlanFile("e1", masterPlan, "## Phase 2: Docs\nStatus: complete", "## Phase 2: Docs\nStatus: done"))
			},
			fixes: []fix{{match: "MASTER_PLAN.md may not change at step 5b"}}},
	}
	registerVariants("4c edits", vs...)
}
