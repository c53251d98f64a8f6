package main

// Launch modes: every agent of the base workflow in the other mode
// (background: PostToolUse(Agent) at once, a Stop while it runs, its
// SubagentStop, then its <task-notification>; foreground: SubagentStop
// before PostToolUse(Agent), which brings the checkpoint line), agents
// launched side by side finishing in any order, and completions that
// arrive by one hook only (README, "Correlation").

func init() {
	var vs []variant
	for _, a := range orchestrateBase().launches() {
		to := "background"
		if !a.foreground {
			to = "foreground"
		}
		key := a.key
		vs = append(vs, variant{name: key + " in the " + to, change: func(s *script) {
			x := s.at(key)
			x.foreground = !x.foreground
		}})
	}
	every := func(f func(a *action)) func(s *script) {
		return func(s *script) {
			for _, a := range s.launches() {
				f(a)
			}
		}
	}
	vs = append(vs,
		variant{name: "every agent in the foreground", change: every(func(a *action) { a.foreground = true })},
		variant{name: "every agent in the background", change: every(func(a *action) { a.foreground = false })},
		// Claude Code's Agent tool runs an agent in the background when the
		// model leaves run_in_background out.
		variant{name: "run_in_background left out", change: every(func(a *action) { a.foreground, a.omitMode = false, true })},
		// The tool's older name.
		variant{name: "Agent tool named Task", change: every(func(a *action) { a.tool = "Task" })},
		variant{name: "phase 1 pair in the foreground, each PostToolUse after its SubagentStop",
			change: func(s *script) { s.at("i1").foreground, s.at("i2").foreground = true, true }},
		variant{name: "phase 1 pair in the foreground, both SubagentStops first",
			change: func(s *script) {
				s.at("i1").foreground, s.at("i2").foreground = true, true
				s.at("p1").stopsFirst = true
			}},
		variant{name: "phase 1 pair in the foreground, finishing in reverse order",
			change: func(s *script) {
				s.at("i1").foreground, s.at("i2").foreground = true, true
				s.at("p1").stopsFirst = true
				s.at("p1").order = []int{1, 0}
			}},
		variant{name: "phase 1 pair in the background, finishing in reverse order",
			change: func(s *script) { s.at("p1").order = []int{1, 0} }},
		variant{name: "phase 1 pair, one in each mode",
			change: func(s *script) { s.at("i2").foreground = true }},
		// A model launching the whole phase in one message: Task 03 waits
		// for Task 01 (and for Task 02's shared file); it is relaunched
		// when they returned.
		variant{name: "refused: the whole phase in one message",
			change: func(s *script) {
				i3 := s.at("i3")
				s.replace("i3")
				p1 := s.at("p1")
				p1.members = append(p1.members, i3)
				p1.want = i3.want
			},
			fixes: []fix{{match: "Task 03 depends on Task 01, which has not returned", redo: relaunch("i3", "Task 03: CLI flag", "Implement cli flag")}}},
		// One hook of a completion missing: the other completes it.
		variant{name: "background agent whose SubagentStop never ran",
			change: func(s *script) { s.at("i3").noSubagentStop = true }},
		variant{name: "foreground agent whose SubagentStop never ran",
			change: func(s *script) { s.at("q2").noSubagentStop = true }},
		// An agent that did not complete, or never ran: the orchestrator is
		// told, and relaunches it.
		variant{name: "background agent that failed is relaunched",
			change: func(s *script) {
				i3 := s.at("i3")
				again := copyAction(i3, "i3-again")
				i3.endStatus = "failed"
				i3.want = want{state: "4a", context: []string{"code-implementer (Task 03) ended with status \"failed\"; relaunch it (retry 1/2, a transient failure)."}}
				s.insertAfter("i3", again)
			}},
		variant{name: "launch failed by Claude Code is relaunched",
			change: func(s *script) {
				q3 := s.at("q3")
				again := copyAction(q3, "q3-again")
				q3.launchError = "Agent type 'orch-hook:code-quality' not found."
				q3.want = want{state: "4b", context: []string{"code-quality launch failed (Agent type 'orch-hook:code-quality' not found.); relaunch it (retry 1/2, a transient failure)."}}
				s.insertAfter("q3", again)
			}},
		// The hooks of an agent's end in another order.
		variant{name: "background notification before its SubagentStop",
			change: func(s *script) { s.at("i3").arrival = arrivalNotificationFirst }},
		variant{name: "background gate's notification before its SubagentStop",
			change: func(s *script) { s.at("q3").arrival = arrivalNotificationFirst }},
		variant{name: "foreground PostToolUse before its SubagentStop",
			change: func(s *script) { s.at("q1").arrival = arrivalPostFirst }},
		variant{name: "foreground implementer's PostToolUse before its SubagentStop",
			change: func(s *script) { s.at("i4").arrival = arrivalPostFirst }},
		variant{name: "background agent ending before its launch's PostToolUse",
			change: func(s *script) { s.at("i3").arrival = arrivalStopBeforeLaunched }},
		variant{name: "background analyst ending before its launch's PostToolUse",
			change: func(s *script) { s.at("ra").arrival = arrivalStopBeforeLaunched }},
	)
	registerVariants("launch modes", vs...)
}
