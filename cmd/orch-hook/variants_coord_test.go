package main

import "strings"

// Coordinate result lines (README, "The coordinate workflow";
// gates/coordinate/results.go): REPORT_CREATED, PLAN_CREATED, IMPLEMENTATION
// STATUS and TESTS, written the ways models write them, on the coordinate
// base (scope full-implementation, run to complete). A decorated path must
// still name the artifact the agent wrote, so the report is verified and
// the workflow moves on; a line that must be refused blocks the agent once
// and is answered with the plain line.

// coordReport returns the change that makes the action at end its report
// with line in place of the plain one.
func coordReport(at, plain, line string) func(s *script) {
	return withResultLine(at, plain, line, false)
}

func init() {
	base := coordinateBase()
	reportLine := func(at string) string {
		r := base.at(at).report
		return r[strings.LastIndex(r, "\n")+1:]
	}
	variantOn := func(name string, change func(s *script), fixes ...fix) variant {
		return variant{name: name, base: coordinateBase, change: change, fixes: fixes}
	}
	var vs []variant
	vs = append(vs, variantOn("base", nil))
	// REPORT_CREATED, on a background and a foreground research-specialist
	// and on the doc-writer.
	path := func(at string) string { return strings.TrimPrefix(reportLine(at), "REPORT_CREATED: ") }
	forms := []struct {
		name string
		line func(p string) string
	}{
		{"path in backticks", func(p string) string { return "REPORT_CREATED: `" + p + "`" }},
		{"bold key", func(p string) string { return "**REPORT_CREATED:** " + p }},
		{"bold path", func(p string) string { return "REPORT_CREATED: **" + p + "**" }},
		{"dash list", func(p string) string { return "- REPORT_CREATED: " + p }},
		{"quoted", func(p string) string { return "> REPORT_CREATED: " + p }},
		{"angle brackets", func(p string) string { return "REPORT_CREATED: <" + p + ">" }},
		{"double quotes", func(p string) string { return "REPORT_CREATED: \"" + p + "\"" }},
		{"absolute path", func(p string) string { return "REPORT_CREATED: $WORK/" + p }},
		{"equals sign", func(p string) string { return "REPORT_CREATED = " + p }},
		{"lower case key", func(p string) string { return "report_created: " + p }},
		{"spaced key", func(p string) string { return "REPORT CREATED: " + p }},
		{"trailing spaces", func(p string) string { return "REPORT_CREATED: " + p + "   " }},
		{"bold line in backticks", func(p string) string { return "**REPORT_CREATED: `" + p + "`**" }},
	}
	for i, f := range forms {
		at := []string{"r1", "r2", "dw"}[i%3]
		vs = append(vs, variantOn("REPORT_CREATED "+f.name+" ("+at+")", coordReport(at, reportLine(at), f.line(path(at)))))
	}
	plan := strings.TrimPrefix(reportLine("pa"), "PLAN_CREATED: ")
	for _, f := range []struct{ name, line string }{
		{"path in backticks", "PLAN_CREATED: `" + plan + "`"},
		{"bold key", "**PLAN_CREATED:** " + plan},
		{"dash list", "- PLAN_CREATED: " + plan},
		{"absolute path", "PLAN_CREATED: $WORK/" + plan},
	} {
		vs = append(vs, variantOn("PLAN_CREATED "+f.name, coordReport("pa", reportLine("pa"), f.line)))
	}
	for _, f := range []struct{ name, line string }{
		{"PASSED with emoji", "TESTS: PASSED ✅"},
		{"parenthetical", "TESTS: PASS (12/12)"},
		{"bold line", "**TESTS: PASS**"},
		{"equals sign", "TESTS = PASS"},
		{"backticks", "`TESTS: PASS`"},
		{"heading", "## TESTS: PASS"},
	} {
		vs = append(vs, variantOn("TESTS "+f.name, coordReport("ts", "TESTS: PASS", f.line)))
	}
	for _, f := range []struct{ name, line string }{
		{"COMPLETED", "IMPLEMENTATION STATUS: COMPLETED"},
		{"bold key in a list", "- **IMPLEMENTATION STATUS:** COMPLETE"},
		{"underscored key", "IMPLEMENTATION_STATUS: COMPLETE"},
	} {
		vs = append(vs, variantOn("IMPLEMENTATION STATUS "+f.name, coordReport("ie", "IMPLEMENTATION STATUS: COMPLETE", f.line)))
	}
	// A decorated FAIL: a debug round (debug-analyst's verified report),
	// then the tests pass.
	for _, line := range []string{"TESTS: FAILED ❌", "- **TESTS:** FAIL (3 failing)"} {
		vs = append(vs, variantOn("TESTS "+line+" then a debug round", func(s *script) {
			ts := s.at("ts")
			again := copyAction(ts, "ts-again")
			ts.report = "3 tests fail: the bucket refills twice.\n" + line
			ts.want = want{state: "debug", context: []string{"TESTS: FAIL -> debug | 3 tests fail: the bucket refills twice."}}
			s.end.check = completedStates("initialize", "research", "plan", "implement", "test", "debug", "document")
			debugReport := coordTopic + "/debug/001_refill.md"
			s.insertAfter("ts",
				launch("da", "debug-analyst", "Debug the failing tests", "Root cause found.\nREPORT_CREATED: "+debugReport).fg().
					writing(debugReport, "# Debug: the bucket refills twice\n").
					expecting(want{state: "test", context: []string{"verified -> test | retry 1/2"}}),
				again,
			)
		}))
	}
	// Refused, then answered with the plain line.
	vs = append(vs,
		variantOn("refused: TESTS: PASS then prose", coordReport("ts", "TESTS: PASS", "TESTS: PASS but one test is flaky"),
			fix{match: "\"TESTS: PASS but one test is flaky\" was not read: the verdict is followed by other text. End your report with exactly `TESTS: PASS` or `TESTS: FAIL`", reply: "TESTS: PASS"}),
		variantOn("refused: IMPLEMENTATION STATUS in a table", coordReport("ie", "IMPLEMENTATION STATUS: COMPLETE", "| IMPLEMENTATION STATUS | COMPLETE |"),
			fix{match: "\"| IMPLEMENTATION STATUS | COMPLETE |\" was not read: a table cell is not a result line", reply: "IMPLEMENTATION STATUS: COMPLETE"}),
		variantOn("refused: REPORT_CREATED without a path", coordReport("r2", reportLine("r2"), "REPORT_CREATED:"),
			fix{match: "REPORT_CREATED", reply: reportLine("r2")}),
	)
	// One grammar for both workflows: a refused line is quoted back to
	// the agent, with the owed lines.
	vs = append(vs, variantOn("refused TESTS line is quoted back", coordReport("ts", "TESTS: PASS", "TESTS: PASS/FAIL"),
		fix{match: "\"TESTS: PASS/FAIL\" was not read: it names both verdicts", reply: "TESTS: PASS"}))
	// Launch modes.
	vs = append(vs,
		variantOn("every agent in the foreground", func(s *script) {
			for _, a := range s.launches() {
				a.foreground = true
			}
		}),
		variantOn("every agent in the background", func(s *script) {
			for _, a := range s.launches() {
				a.foreground = false
			}
		}),
	)
	registerVariants("coordinate results", vs...)
}
