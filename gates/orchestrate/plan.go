package orchestrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// TasksDir is where the plan lives, relative to the project root.
const TasksDir = ".orchestrator/tasks"

// MasterPlan is the plan's file name inside TasksDir.
const MasterPlan = "MASTER_PLAN.md"

// PlanFiles are the files of TasksDir as read by the caller, by base name.
// Only MASTER_PLAN.md and task-*.md matter; others are hashed but not read.
type PlanFiles map[string][]byte

// Plan is MASTER_PLAN.md and its task files, parsed.
type Plan struct {
	Phases    []*PlanPhase
	Tasks     map[int]*TaskFile // by task number
	HasMaster bool
	// Problems are MASTER_PLAN.md's lines that do not read (planread.go);
	// the task files' own are on each TaskFile.
	Problems []PlanProblem
	progress int // line index of Progress:, -1 when absent
	lines    []string
	// dupFiles are task numbers with more than one task file, by name.
	dupFiles map[int][]string
}

// PlanPhase is one "## Phase N: Title" section.
type PlanPhase struct {
	Number     int
	Title      string
	Status     string
	statusLine int
	Tasks      []*PlanTask
}

// PlanTask is one "- [ ] Task NN: title" line.
type PlanTask struct {
	Number  int
	Title   string
	Checked bool
	line    int
	// fields are the task's fields written in MASTER_PLAN.md: indented
	// under its line, "(depends on 01)" on it, or "Task 03 depends on
	// Task 01" on a line of its own.
	fields []fieldLine
}

// TaskFile is a task's file in TasksDir (see TaskFileNumber for its
// names), with the fields MASTER_PLAN.md gives it merged in.
type TaskFile struct {
	Number       int
	Name         string
	DependsOn    []int
	ParallelWith []int
	Files        []string
	UXDX         bool
	// Problems are the lines that do not read.
	Problems []PlanProblem

	hasDeps, hasFiles, hasUXDX bool
	depSource                  fieldLine
	uxdxLine                   int
	// triedFiles, triedUXDX: a line for the field was there but did not
	// read (its problem says so; "no such line" would contradict it).
	triedFiles, triedUXDX bool
	// consumed are the lines fields took (values, lists), 1-based.
	consumed map[int]bool
}

var (
	rePhase    = gates.LazyRegexp(`^\s*#{1,6}\s*\**\s*Phase\s+(\d+)\s*\**\s*(?:[:.)\x{2013}\x{2014}-]\s*)?(.*?)\s*\**\s*$`)
	reCheckbox = gates.LazyRegexp(`^(\s*)(?:(?:[-*+]|\d{1,3}[.)])\s+)?\[(.?)\]\s*(.*?)\s*$`)
	reTaskHead = gates.LazyRegexp("(?i)^(?:task\\s*#?\\s*)?(\\d{1,4})\\b[*_`\\s]*(?:[:.)\\x{2013}\\x{2014}-]\\s*)?(.*)$")
	reTwoTasks = gates.LazyRegexp(`(?i)^(?:,|&|\+|/|and\b)\s*(?:task\s*#?\s*)?\d`)
	// A dependency on a task's line: "(depends on 01)", "(after Task 01)",
	// "— depends on: 01".
	reDepsParen = gates.LazyRegexp(`(?i)[(\[]\s*(?:depends\s+on|depends\s+upon|depends_on|depends|deps|dependencies|dependency|after|requires|needs|blocked\s+by)\s*:?\s*([^)\]]*)[)\]]`)
	reDepsOn    = gates.LazyRegexp(`(?i)\b(?:depends\s+on|depends\s+upon|depends_on|dependencies|dependency|blocked\s+by)\b\s*:?\s*([^);]*)`)
	// "Task 03 depends on Task 01" on a line of its own.
	reTaskDeps = gates.LazyRegexp(`(?i)^\W*(?:task\s*#?\s*)?(\d{1,4})\W*\s+(?:depends\s+on|depends\s+upon|is\s+blocked\s+by|blocked\s+by|requires|needs|(?:runs\s+|comes\s+)?after)\s*:?\s*(.+?)\s*$`)
	// A dependency word before a task reference, in any other form: read
	// two ways, so refused ("The docs depend on Task 01", "Task 01 must
	// finish before Task 03").
	// Within one clause: "after implementing; Task 04 will document it"
	// is two clauses, not a dependency.
	reMentions = gates.LazyRegexp(`(?i)\b(?:depend\w*|requires?|needs?|after|before|once|until|following|waits?|blocked|prerequisites?)\b[^.;:!?,]{0,60}?\btasks?\s*#?\s*\d`)
	// In a task's title a bare task number counts too ("CLI — after 01").
	reTitleMentions = gates.LazyRegexp(`(?i)\b(?:depend\w*|deps|requires?|needs?|after|before|once|until|following|waits?|blocked|prerequisites?)\b[^.;:!?,]{0,60}?(?:\btasks?\s*#?\s*\d|\b\d{2,4}\b)`)
	// An arrow between tasks: "Task 01 → Task 03", "T01 --> T03".
	reArrow = gates.LazyRegexp(`(?i)(?:\btasks?\s*#?\s*\d{1,4}|\bT\d{1,4}|\b\d{2,4})\b\s*(?:→|⟶|->|-->|=>|==>)\s*(?:tasks?\s*#?\s*\d|T\d|\d{2})`)
	// A table row whose first cell is a task: "| 03 | c |", "| Task 03 | c |".
	reTaskRow = gates.LazyRegexp(`(?i)^\s*\|\s*\**(?:task\s*#?\s*)?\d{1,4}\**\s*\|`)
	// A task line's number: "Task 01", or a bare "01" followed by a
	// separator ("01: title", "01 - title"), not "100% of the spec".
	reTaskWord = gates.LazyRegexp(`(?i)^task\b|^task\s*#?\s*\d`)
	reBareTask = gates.LazyRegexp("^#?\\d{1,4}[*_`]*\\s*(?:$|[:.)\\x{2013}\\x{2014}-](?:\\s|$))")
	// "Task 2.1", "1.2": hierarchical numbers.
	reHierTask = gates.LazyRegexp(`(?i)^(?:task\s*#?\s*)?\d{1,4}\.\d+`)
	// "Task 01 has no dependencies", "Task 01: none" under a Dependencies
	// heading.
	reTaskNoDeps = gates.LazyRegexp(`(?i)^\W*task\s*#?\s*(\d{1,4})\s*(?:has no dependencies|depends on nothing|:\s*(?:none|n/a|-|—))\.?\s*$`)
	// A phase's sub-heading over criteria, not tasks: its checkboxes that
	// do not read as tasks are checks.
	reCriteria = gates.LazyRegexp(`(?i)criteria|acceptance|exit|success|definition of done|checklist|verification|checks|notes|risks|done when`)
	// A table's rule row: "|---|---|".
	reTableRule = gates.LazyRegexp(`^\s*\|?\s*:?-{3,}`)
	reStatus    = gates.LazyRegexp(`(?i)^\s*(?:[-*+]\s*)?\**\s*status\s*\**\s*:\s*\**\s*(.*?)\s*$`)
	reProgress  = gates.LazyRegexp(`(?i)^\s*(?:[-*+]\s*)?\**\s*progress\s*\**\s*:\s*\**\s*(\d+)\s*/\s*(\d+)`)
	reNumber    = gates.LazyRegexp(`\d+`)
)

// ParsePlan parses the plan files; it never fails: Validate says what is
// wrong.
func ParsePlan(files PlanFiles) *Plan {
	p := &Plan{Tasks: map[int]*TaskFile{}, progress: -1}
	if master, ok := files[MasterPlan]; ok {
		p.HasMaster = true
		p.parseMaster(string(master))
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n, ok := TaskFileNumber(name)
		if !ok {
			continue
		}
		if prev, dup := p.Tasks[n]; dup {
			// The first name in order is read; Validate reports both.
			if p.dupFiles == nil {
				p.dupFiles = map[int][]string{}
			}
			if len(p.dupFiles[n]) == 0 {
				p.dupFiles[n] = []string{prev.Name}
			}
			p.dupFiles[n] = append(p.dupFiles[n], name)
			continue
		}
		p.Tasks[n] = parseTaskFile(n, name, string(files[name]))
	}
	p.mergeMasterFields()
	return p
}

// mergeMasterFields adds the fields MASTER_PLAN.md gives a task to its
// file's: one written in both places must say the same.
func (p *Plan) mergeMasterFields() {
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			tf := p.Tasks[t.Number]
			if len(t.fields) == 0 || tf == nil {
				continue
			}
			m := &TaskFile{Number: t.Number, Name: MasterPlan}
			m.apply(MasterPlan, t.fields)
			p.Problems = append(p.Problems, m.Problems...)
			conflict := func(what string, line int, raw string) {
				p.Problems = append(p.Problems, PlanProblem{File: MasterPlan, Line: line, Text: raw, Problem: fmt.Sprintf("Task %02d's %s here differ from its file %s; write them in one place", t.Number, what, tf.Name)})
			}
			if m.hasDeps {
				if tf.hasDeps && !sameIntSet(tf.DependsOn, m.DependsOn) {
					conflict("dependencies", m.depSource.line, m.depSource.raw)
				} else if !tf.hasDeps {
					tf.DependsOn, tf.hasDeps, tf.depSource = m.DependsOn, true, m.depSource
				}
			}
			if m.hasFiles {
				if tf.hasFiles && !sameStrings(tf.Files, m.Files) {
					conflict("files", t.line+1, strings.TrimSpace(p.lines[t.line]))
				} else if !tf.hasFiles {
					tf.Files, tf.hasFiles = m.Files, true
				}
			}
			if m.hasUXDX {
				if tf.hasUXDX && tf.UXDX != m.UXDX {
					conflict("requires_ux_dx_review", m.uxdxLine, strings.TrimSpace(p.lines[m.uxdxLine-1]))
				} else if !tf.hasUXDX {
					tf.UXDX, tf.hasUXDX, tf.uxdxLine = m.UXDX, true, m.uxdxLine
				}
			}
		}
	}
}

// parseMaster reads MASTER_PLAN.md. Under a phase heading, every
// unindented checkbox line is a task (or a problem quoting it); lines
// indented under a task are its fields.
func (p *Plan) parseMaster(text string) {
	p.lines = strings.Split(text, "\n")
	var phase *PlanPhase
	var last *PlanTask // the task whose indented lines follow
	problem := func(i int, msg string) {
		p.Problems = append(p.Problems, PlanProblem{File: MasterPlan, Line: i + 1, Text: strings.TrimSpace(p.lines[i]), Problem: msg})
	}
	byNumber := map[int]*PlanTask{}
	type lineDeps struct {
		task int
		f    fieldLine
	}
	var standalone []lineDeps
	phaseLevel := 0
	depSection := 0   // the level of a "## Dependencies" heading we are under
	criteria := false // under a phase's "### Exit criteria"-like sub-heading
	type lineRefs struct {
		line, phase int
	}
	var taskHeadings []struct{ line, task int }
	var phaseMentions []lineRefs // dependency prose under a phase, judged once all tasks are known
	for i, line := range p.lines {
		if m := rePhase.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch {
			case p.Phase(n) != nil:
				problem(i, fmt.Sprintf("phase %d has two headings; number the phases 1, 2, 3, ... once each", n))
			case n == 0:
				problem(i, "phases are numbered from 1: renumber this one `## Phase 1: ...` and the next ones after it")
			}
			phase = &PlanPhase{Number: n, Title: strings.TrimSpace(m[2]), statusLine: -1}
			p.Phases = append(p.Phases, phase)
			phaseLevel, depSection, criteria = headingLevel(line), 0, false
			last = nil
			continue
		}
		if level := headingLevel(line); level > 0 {
			last = nil
			criteria = phase != nil && level > phaseLevel && reCriteria.MatchString(line)
			if depSection > 0 && level <= depSection {
				depSection = 0
			}
			if kind, _, _, heading, ok := readFieldKey(line); ok && heading && kind == fieldDepends {
				depSection = level
				continue
			}
			if phase != nil && level <= phaseLevel {
				// "## Success criteria" after the phases: its checkboxes
				// are not tasks.
				phase = nil
				continue
			}
			if n := taskHeader(strings.TrimLeft(line, "# ")); n != 0 {
				// "### Task 01: details" is fine for a listed task; a task
				// only a heading names would be dropped.
				taskHeadings = append(taskHeadings, struct{ line, task int }{i, n})
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if depSection > 0 {
			// Under "## Dependencies": "Task 03 depends on Task 01" lines.
			if m := reTaskNoDeps.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				standalone = append(standalone, lineDeps{n, fieldLine{kind: fieldDepends, key: "DEPENDS ON", value: "none", line: i + 1, raw: strings.TrimSpace(line)}})
			} else if m := reTaskDeps.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				standalone = append(standalone, lineDeps{n, fieldLine{kind: fieldDepends, key: "DEPENDS ON", value: m[2], line: i + 1, raw: strings.TrimSpace(line)}})
			} else if !reTableRule.MatchString(line) {
				problem(i, "under a Dependencies heading orch-hook reads only `Task NN depends on Task MM` lines; write this one that way, or as `Depends On: MM` in the task's file")
			}
			continue
		}
		if m := reCheckbox.FindStringSubmatch(line); m != nil && (phase == nil || indentOf(m[1]) >= 2) {
			t, msg := readTaskLine(m[2], m[3])
			switch {
			case msg != "":
				// Not a task: a sub-item, or a checklist outside the phases.
			case phase == nil && !reTaskWord.MatchString(strings.TrimLeft(unlink(m[3]), "*_` ")):
				// "- [ ] 0 false positives" after the phases: a criterion.
			case phase == nil:
				// A checkbox outside a phase may be anything, but one that
				// reads as a task would be dropped silently.
				problem(i, fmt.Sprintf("Task %02d is not under a phase heading; put it under `## Phase N: title`", t.Number))
			case last == nil:
				problem(i, fmt.Sprintf("Task %02d is indented under the phase heading; write task lines unindented (`- [ ] Task %02d: title`)", t.Number, t.Number))
			default:
				problem(i, fmt.Sprintf("Task %02d is nested under Task %02d; give each task its own unindented line", t.Number, last.Number))
			}
			if phase == nil || last == nil {
				continue
			}
		}
		if m := reCheckbox.FindStringSubmatch(line); m != nil && phase != nil && indentOf(m[1]) < 2 {
			last = nil
			t, msg := readTaskLine(m[2], m[3])
			if msg != "" {
				if !criteria || reTaskWord.MatchString(strings.TrimLeft(unlink(m[3]), "*_` ")) {
					problem(i, msg)
				}
				continue
			}
			t.line = i
			dm := reDepsParen.FindStringSubmatch(t.Title)
			if dm == nil {
				dm = reDepsOn.FindStringSubmatch(t.Title)
			}
			switch {
			case dm != nil:
				t.fields = append(t.fields, fieldLine{kind: fieldDepends, key: "DEPENDS ON", value: strings.TrimSpace(dm[1]), line: i + 1, raw: strings.TrimSpace(line)})
			case reTitleMentions.MatchString(t.Title):
				problem(i, "its title may state a dependency orch-hook does not read; write `(depends on NN)` after the title, or `Depends On: NN` in the task's file")
				continue
			}
			phase.Tasks = append(phase.Tasks, t)
			byNumber[t.Number] = t
			last = t
			continue
		}
		if reProgress.MatchString(line) && p.progress < 0 {
			p.progress = i
			last = nil
			continue
		}
		if m := reStatus.FindStringSubmatch(line); m != nil && phase != nil && phase.statusLine < 0 && indentOf(line) < 2 {
			phase.Status = strings.Trim(m[1], "* ")
			phase.statusLine = i
			last = nil
			continue
		}
		if last != nil && indentOf(line) >= 2 {
			// A line indented under a task: its fields. Prose there that
			// states a dependency is refused as it is in a task file.
			if fs := readFields([]string{line}, i+1); len(fs) == 0 && reMentions.MatchString(line) && !mentionsOnly(line, append(last.depNumbers(), last.Number)) {
				problem(i, "it states a dependency orch-hook does not read; write it as `Depends On: NN` (in the file of the task that waits)")
				continue
			}
			for _, f := range readFields([]string{line}, i+1) {
				if f.value == "" && !f.list {
					// "  - Files:" with the list further indented: read the
					// indented block only.
					end := i + 1
					for end < len(p.lines) && (strings.TrimSpace(p.lines[end]) == "" || indentOf(p.lines[end]) > indentOf(line)) {
						end++
					}
					if fs := readFields(p.lines[i:end], i+1); len(fs) > 0 {
						f = fs[0]
					}
				}
				last.fields = append(last.fields, f)
			}
			continue
		}
		last = nil
		if m := reTaskDeps.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			standalone = append(standalone, lineDeps{n, fieldLine{kind: fieldDepends, key: "DEPENDS ON", value: m[2], line: i + 1, raw: strings.TrimSpace(line)}})
			continue
		}
		switch {
		case reArrow.MatchString(line):
			problem(i, "it states a dependency orch-hook does not read (an arrow or a diagram); write it in the task's file as `Depends On: NN`, or as `Task NN depends on Task MM` on a line of its own, and remove the diagram")
		case reMentions.MatchString(line) && phase != nil:
			// Judged at the end: naming only tasks of earlier phases, it
			// says what the phase order already does.
			phaseMentions = append(phaseMentions, lineRefs{i, phase.Number})
		case reMentions.MatchString(line):
			problem(i, "it states a dependency orch-hook does not read; write it in the file of the task that waits as `Depends On: NN`, or as `Task NN depends on Task MM` on a line of its own")
		case phase != nil && reTaskRow.MatchString(line):
			problem(i, "a table row is not a task line; list each task as `- [ ] Task NN: title`")
		case phase != nil:
			if item, isItem := listItem(line); isItem && taskHeader(gates.TrimLeadDecoration(item)) != 0 {
				problem(i, "a task line needs a checkbox: write `- [ ] Task NN: title`")
			}
		}
	}
	for _, h := range taskHeadings {
		if byNumber[h.task] == nil {
			problem(h.line, fmt.Sprintf("a heading is not a task line; list Task %02d under its phase as `- [ ] Task %02d: title`", h.task, h.task))
		}
	}
	for _, m := range phaseMentions {
		earlier := true
		for _, n := range refNumbers(p.lines[m.line]) {
			ph := p.PhaseOf(n)
			earlier = earlier && ph != nil && p.phaseIndex(ph.Number) < p.phaseIndex(m.phase)
		}
		if !earlier {
			problem(m.line, "it states a dependency orch-hook does not read; write it in the file of the task that waits as `Depends On: NN`, or as `Task NN depends on Task MM` on a line of its own")
		}
	}
	for _, d := range standalone {
		t := byNumber[d.task]
		if t == nil {
			p.Problems = append(p.Problems, PlanProblem{File: MasterPlan, Line: d.f.line, Text: d.f.raw, Problem: fmt.Sprintf("Task %02d is not a task of %s", d.task, MasterPlan)})
			continue
		}
		t.fields = append(t.fields, d.f)
	}
}

// depNumbers are the tasks a task's own MASTER_PLAN.md fields depend on.
func (t *PlanTask) depNumbers() []int {
	var out []int
	for _, f := range t.fields {
		if f.kind == fieldDepends {
			nums, _ := taskNumbers(f)
			out = append(out, nums...)
		}
	}
	return out
}

// headingLevel is the number of '#' a Markdown heading starts with (0:
// not a heading).
func headingLevel(line string) int {
	s := strings.TrimLeft(line, " ")
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}

// readTaskLine reads what follows a task's checkbox: "Task 01: title",
// "01 - title", "**Task 01**: title", "[Task 01](task-01.md): title".
func readTaskLine(box, rest string) (*PlanTask, string) {
	t := &PlanTask{}
	switch box {
	case " ", "":
		if box == "" {
			return nil, "the checkbox is empty: write `[ ]` (a space between the brackets) or `[x]`"
		}
	case "x", "X":
		t.Checked = true
	default:
		return nil, fmt.Sprintf("the checkbox [%s] is neither `[ ]` (open) nor `[x]` (done)", box)
	}
	s := strings.TrimSpace(unlink(rest))
	s = strings.TrimLeft(s, "*_` ")
	m := reTaskHead.FindStringSubmatch(s)
	if m == nil || !reTaskWord.MatchString(s) && !reBareTask.MatchString(s) {
		// "100% of the spec passes" is a criterion, not Task 100.
		return nil, "a checkbox under a phase must be a task: write `- [ ] Task NN: title` (if it is not a task, make it a plain `- ` item, or move it after the phases)"
	}
	if h := reHierTask.FindString(s); h != "" {
		return nil, fmt.Sprintf("%q is not a task number; number the tasks 01, 02, 03, ... across the whole plan", strings.TrimSpace(h))
	}
	after := strings.TrimLeft(m[2], "*_` ")
	if reTwoTasks.MatchString(after) || reTwoTasks.MatchString(strings.TrimSpace(s[len(s)-len(m[2]):])) {
		return nil, "it names more than one task; give each task its own line"
	}
	t.Number, _ = strconv.Atoi(m[1])
	t.Title = strings.TrimSpace(strings.Trim(strings.TrimSpace(after), "*_`"))
	return t, ""
}

// Validate checks what a plan needs to be worked on: at least one task,
// unique task numbers, and a task file for every listed task.
func (p *Plan) Validate() error {
	if !p.HasMaster {
		return fmt.Errorf("%s/%s does not exist", TasksDir, MasterPlan)
	}
	if len(p.Phases) == 0 {
		return fmt.Errorf("%s has no phase heading (\"## Phase 1: Title\")", MasterPlan)
	}
	var problems []PlanProblem
	seen := map[int]int{}
	total := 0
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			total++
			if prev, dup := seen[t.Number]; dup {
				return fmt.Errorf("%s lists Task %02d twice (phases %d and %d)", MasterPlan, t.Number, prev, ph.Number)
			}
			seen[t.Number] = ph.Number
		}
	}
	problems = append(problems, p.Problems...)
	if total == 0 && len(problems) == 0 {
		return fmt.Errorf("%s lists no task (\"- [ ] Task 01: title\")", MasterPlan)
	}
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			problems = append(problems, p.taskProblems(t.Number)...)
		}
	}
	if len(problems) == 0 {
		problems = p.dependencyProblems(seen)
	}
	if len(problems) > 0 {
		return &PlanInvalidError{Problems: problems}
	}
	return p.validateDependencies(seen)
}

// taskProblems is what keeps task n's file from being read: none, two,
// lines that do not read, a missing Files or requires_ux_dx_review line.
func (p *Plan) taskProblems(n int) []PlanProblem {
	tf := p.Tasks[n]
	if tf == nil {
		return []PlanProblem{{Problem: fmt.Sprintf("%s lists Task %02d but %s/task-%02d*.md does not exist", MasterPlan, n, TasksDir, n)}}
	}
	if names := p.dupFiles[n]; len(names) > 1 {
		return []PlanProblem{{File: names[0], Problem: fmt.Sprintf("%s are all Task %02d's file; keep one", strings.Join(names, ", "), n)}}
	}
	out := append([]PlanProblem(nil), tf.Problems...)
	if !tf.hasFiles && !tf.triedFiles {
		out = append(out, PlanProblem{File: tf.Name, Problem: "it has no `Files:` line; list every file the task creates or changes (`Files: src/a.go, src/b.go`): two running tasks may not change one file, and a lightweight follow-up is limited by it"})
	} else if len(tf.Files) == 0 && tf.hasFiles {
		out = append(out, PlanProblem{File: tf.Name, Problem: "its `Files:` line lists no file; list every file the task creates or changes"})
	}
	if !tf.hasUXDX && !tf.triedUXDX {
		out = append(out, PlanProblem{File: tf.Name, Problem: "it has no `requires_ux_dx_review:` line; add `requires_ux_dx_review: true` (users or developers see the change) or `false`"})
	}
	return out
}

// dependencyProblems: a dependency names a task of the plan, of the same
// or an earlier phase, other than itself.
func (p *Plan) dependencyProblems(phaseOf map[int]int) []PlanProblem {
	var out []PlanProblem
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			tf := p.Tasks[t.Number]
			if tf == nil {
				continue
			}
			src := tf.depSource
			for _, d := range tf.DependsOn {
				dph, ok := phaseOf[d]
				msg := ""
				switch {
				case d == t.Number:
					msg = fmt.Sprintf("Task %02d depends on itself", d)
				case !ok:
					msg = fmt.Sprintf("Task %02d is not a task of %s", d, MasterPlan)
				case p.phaseIndex(dph) > p.phaseIndex(ph.Number):
					msg = fmt.Sprintf("Task %02d depends on Task %02d of a later phase (%d)", t.Number, d, dph)
				}
				if msg != "" {
					out = append(out, PlanProblem{File: src.file, Line: src.line, Text: src.raw, Problem: msg})
				}
			}
		}
	}
	return out
}

// PlanInvalidError lists the lines of a plan that do not read.
type PlanInvalidError struct{ Problems []PlanProblem }

// maxShownProblems bounds the problems one refusal quotes.
const maxShownProblems = 6

func (e *PlanInvalidError) Error() string {
	// A whole-file problem shared by several files is said once, naming
	// them: "task-01.md, task-02.md: it has no `Files:` line; ...".
	var order []string
	files := map[string][]string{}
	for _, p := range e.Problems {
		key := p.Error()
		if p.File != "" && p.Line == 0 {
			key = p.Problem
			if len(files[key]) == 0 {
				order = append(order, key)
			}
			files[key] = append(files[key], p.File)
			continue
		}
		order = append(order, key)
	}
	var parts []string
	for i, key := range order {
		if i == maxShownProblems {
			parts = append(parts, fmt.Sprintf("and %d more", len(order)-i))
			break
		}
		if names := files[key]; len(names) > 0 {
			if len(names) > maxShownProblems {
				names = append(names[:maxShownProblems:maxShownProblems], fmt.Sprintf("and %d more", len(names)-maxShownProblems))
			}
			key = strings.Join(names, ", ") + ": " + key
		}
		parts = append(parts, key)
	}
	return strings.Join(parts, "; ")
}

// validateDependencies: no cycle within a phase (which no launch order
// could satisfy).
func (p *Plan) validateDependencies(phaseOf map[int]int) error {
	// Cycles within a phase: depth-first search with colours.
	const (
		white = iota
		grey
		black
	)
	colour := map[int]int{}
	var visit func(n int, path []int) error
	visit = func(n int, path []int) error {
		colour[n] = grey
		if tf := p.Tasks[n]; tf != nil {
			for _, d := range tf.DependsOn {
				if phaseOf[d] != phaseOf[n] {
					continue
				}
				switch colour[d] {
				case grey:
					cycle := append(path, n)
					var quoted []string
					for _, c := range cycle {
						if src := p.Tasks[c].depSource; src.line > 0 {
							quoted = append(quoted, fmt.Sprintf("%s line %d: %q", src.file, src.line, shorten.Runes(src.raw, 60)))
						}
					}
					return fmt.Errorf("tasks %s depend on each other in a cycle (%s); no launch order can satisfy it", taskList(cycle), strings.Join(quoted, "; "))
				case white:
					if err := visit(d, append(path, n)); err != nil {
						return err
					}
				}
			}
		}
		colour[n] = black
		return nil
	}
	order := make([]int, 0, len(phaseOf))
	for n := range phaseOf {
		order = append(order, n)
	}
	sort.Ints(order)
	for _, n := range order {
		if colour[n] == white {
			if err := visit(n, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Plan) phaseIndex(number int) int {
	for i, ph := range p.Phases {
		if ph.Number == number {
			return i
		}
	}
	return -1
}

// Phase returns phase n, or nil.
func (p *Plan) Phase(n int) *PlanPhase {
	for _, ph := range p.Phases {
		if ph.Number == n {
			return ph
		}
	}
	return nil
}

// PhaseOf returns the phase listing task n, or nil.
func (p *Plan) PhaseOf(task int) *PlanPhase {
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			if t.Number == task {
				return ph
			}
		}
	}
	return nil
}

// PhaseChecked reports whether every task of phase n is checked.
func (p *Plan) PhaseChecked(n int) bool {
	ph := p.Phase(n)
	if ph == nil {
		return false
	}
	for _, t := range ph.Tasks {
		if !t.Checked {
			return false
		}
	}
	return true
}

// FirstOpenPhase is the first phase with an unchecked task (0: none).
func (p *Plan) FirstOpenPhase() int {
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			if !t.Checked {
				return ph.Number
			}
		}
	}
	return 0
}

// NextOpenPhase is the first phase after `after`, in plan order, with an
// unchecked task (0: none).
func (p *Plan) NextOpenPhase(after int) int {
	passed := false
	for _, ph := range p.Phases {
		if ph.Number == after {
			passed = true
			continue
		}
		if !passed {
			continue
		}
		for _, t := range ph.Tasks {
			if !t.Checked {
				return ph.Number
			}
		}
	}
	return 0
}

// MaxTask is the highest task number in the plan.
func (p *Plan) MaxTask() int {
	m := 0
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			m = max(m, t.Number)
		}
	}
	return m
}

// PlanSnapshot is what the workflow remembers of the plan: taken when the
// plan validates and again at approval, so a later edit of a dependency or
// a UX/DX flag changes nothing.
type PlanSnapshot struct {
	Phases []PhaseSnap `json:"phases"`
	// Unlisted are task files MASTER_PLAN.md does not list: ignored, and
	// shown to the user before the approval (a planner that revised the
	// plan to fewer tasks cannot delete them).
	Unlisted []string `json:"unlisted,omitempty"`
}

// PhaseSnap is one phase of a snapshot.
type PhaseSnap struct {
	Number int        `json:"number"`
	Title  string     `json:"title"`
	Tasks  []TaskSnap `json:"tasks"`
}

// TaskSnap is one task of a snapshot.
type TaskSnap struct {
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	DependsOn []int    `json:"depends_on,omitempty"`
	Parallel  []int    `json:"parallel_with,omitempty"`
	Files     []string `json:"files,omitempty"`
	UXDX      bool     `json:"requires_ux_dx_review,omitempty"`
	Checked   bool     `json:"checked,omitempty"`
}

// Snapshot takes the plan's snapshot.
func (p *Plan) Snapshot() *PlanSnapshot {
	s := &PlanSnapshot{}
	for n, tf := range p.Tasks {
		if p.PhaseOf(n) == nil {
			s.Unlisted = append(s.Unlisted, tf.Name)
		}
	}
	sort.Strings(s.Unlisted)
	for _, ph := range p.Phases {
		ps := PhaseSnap{Number: ph.Number, Title: ph.Title}
		for _, t := range ph.Tasks {
			ts := TaskSnap{Number: t.Number, Title: t.Title, Checked: t.Checked}
			if f := p.Tasks[t.Number]; f != nil {
				ts.DependsOn, ts.Parallel, ts.Files, ts.UXDX = f.DependsOn, f.ParallelWith, f.Files, f.UXDX
			}
			ps.Tasks = append(ps.Tasks, ts)
		}
		s.Phases = append(s.Phases, ps)
	}
	return s
}

// Describe is the plan as orch-hook read it, a line per task: what the
// gates will enforce (order, files, the UX/DX review).
func (s *PlanSnapshot) Describe() string {
	var b strings.Builder
	b.WriteString("The plan as orch-hook read it:")
	for _, ph := range s.Phases {
		fmt.Fprintf(&b, "\nPhase %d: %s", ph.Number, ph.Title)
		for _, t := range ph.Tasks {
			fmt.Fprintf(&b, "\n  Task %02d %q", t.Number, t.Title) // quoted: a title cannot pass for what was read
			if len(t.DependsOn) > 0 {
				fmt.Fprintf(&b, " · after %s", taskList(t.DependsOn))
			}
			fmt.Fprintf(&b, " · files: %s", strings.Join(t.Files, ", "))
			if t.UXDX {
				b.WriteString(" · UX/DX review")
			}
		}
	}
	if len(s.Unlisted) > 0 {
		fmt.Fprintf(&b, "\nIgnored (task files MASTER_PLAN.md does not list): %s", strings.Join(s.Unlisted, ", "))
	}
	return b.String()
}

// Phase returns the snapshot of phase n, or nil.
func (s *PlanSnapshot) Phase(n int) *PhaseSnap {
	if s == nil {
		return nil
	}
	for i := range s.Phases {
		if s.Phases[i].Number == n {
			return &s.Phases[i]
		}
	}
	return nil
}

// Task returns the snapshot of task n, or nil.
func (s *PlanSnapshot) Task(n int) *TaskSnap {
	if s == nil {
		return nil
	}
	for i := range s.Phases {
		for j := range s.Phases[i].Tasks {
			if s.Phases[i].Tasks[j].Number == n {
				return &s.Phases[i].Tasks[j]
			}
		}
	}
	return nil
}

// Numbers lists the task numbers of a phase.
func (ph *PhaseSnap) Numbers() []int {
	out := make([]int, 0, len(ph.Tasks))
	for _, t := range ph.Tasks {
		out = append(out, t.Number)
	}
	return out
}

// HashPlanFiles hashes every file of the tasks directory.
func HashPlanFiles(files PlanFiles) map[string]string {
	out := make(map[string]string, len(files))
	for name, b := range files {
		sum := sha256.Sum256(b)
		out[name] = hex.EncodeToString(sum[:12])
	}
	return out
}

// ChangedFiles lists the files whose hash differs between two hash sets
// (changed, added or removed), sorted.
func ChangedFiles(recorded, now map[string]string) []string {
	var out []string
	for name, h := range now {
		if recorded[name] != h {
			out = append(out, name)
		}
	}
	for name := range recorded {
		if _, ok := now[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// PlanEditError says why a change to MASTER_PLAN.md is not allowed.
type PlanEditError struct{ Problem string }

func (e *PlanEditError) Error() string { return e.Problem }

// CheckTicking verifies that newText differs from the current plan only by
// ticking tasks of phase (`[ ]` to `[x]`), the Status: lines of that phase
// and the ones before it, and the Progress: line: the orchestrator's job
// in 4c. Trailing blank lines do not count.
func (p *Plan) CheckTicking(phase int, newText string) error {
	return p.checkLines(phase, newText, true)
}

// CheckBookkeeping verifies that newText differs from the current plan only
// in the Status: lines of the phases up to phase and the Progress: line:
// models tick first and update those lines after the phase has moved on,
// so they stay editable until final validation (README, "4c").
func (p *Plan) CheckBookkeeping(phase int, newText string) error {
	return p.checkLines(phase, newText, false)
}

func (p *Plan) checkLines(phase int, newText string, ticks bool) error {
	q := &Plan{progress: -1}
	q.parseMaster(newText)
	allowed := fmt.Sprintf("only ticks of phase %d's tasks, the Status: lines of phases up to %d and the Progress: line may change", phase, phase)
	if !ticks {
		allowed = fmt.Sprintf("only the Status: lines of phases up to %d and the Progress: line may change now", phase)
	}
	before, after := trimTrailingBlank(p.lines), trimTrailingBlank(q.lines)
	if len(before) != len(after) {
		return &PlanEditError{fmt.Sprintf("%s; this edit adds or removes lines", allowed)}
	}
	statusOK := map[int]bool{}
	for _, ph := range p.Phases {
		if ph.statusLine >= 0 {
			statusOK[ph.statusLine] = true
		}
		if ph.Number == phase {
			break
		}
	}
	for i := range before {
		if before[i] == after[i] {
			continue
		}
		switch {
		case i == p.progress && i == q.progress:
		case statusOK[i] && reStatus.MatchString(after[i]):
		case !ticks:
			return &PlanEditError{fmt.Sprintf("line %d may not change (%s)", i+1, allowed)}
		default:
			old := taskAt(p, i)
			now := taskAt(q, i)
			if old == nil || now == nil || old.Number != now.Number || old.Title != now.Title {
				return &PlanEditError{fmt.Sprintf("line %d may not change in 4c (%s)", i+1, allowed)}
			}
			if owner := p.PhaseOf(old.Number); owner == nil || owner.Number != phase {
				return &PlanEditError{fmt.Sprintf("Task %02d belongs to another phase; only phase %d's tasks may be ticked now", old.Number, phase)}
			}
			if old.Checked || !now.Checked {
				return &PlanEditError{fmt.Sprintf("Task %02d may only go from [ ] to [x]", old.Number)}
			}
		}
	}
	return nil
}

func taskAt(p *Plan, line int) *PlanTask {
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			if t.line == line {
				return t
			}
		}
	}
	return nil
}

// CheckAppend verifies that newText keeps the current plan as it is (but
// for the Progress: line) and appends at most one new phase whose tasks
// all have new numbers. It returns the appended phase (nil if none yet).
func (p *Plan) CheckAppend(newText string) (*PlanPhase, error) {
	q := &Plan{progress: -1}
	q.parseMaster(newText)
	old := trimTrailingBlank(p.lines)
	now := q.lines
	if len(now) < len(old) {
		return nil, &PlanEditError{"only appending one phase is allowed now; this edit removes lines"}
	}
	for i := range old {
		if old[i] != now[i] && !(i == p.progress && i == q.progress) {
			return nil, &PlanEditError{fmt.Sprintf("only appending one phase is allowed now; line %d of %s would change", i+1, MasterPlan)}
		}
	}
	if len(q.Phases) > len(p.Phases)+1 {
		return nil, &PlanEditError{"append one phase at a time"}
	}
	if len(q.Phases) == len(p.Phases) {
		for i := range q.Phases {
			if len(q.Phases[i].Tasks) != len(p.Phases[i].Tasks) {
				return nil, &PlanEditError{"tasks may only be added in a new phase"}
			}
		}
		return nil, nil
	}
	added := q.Phases[len(q.Phases)-1]
	for _, ph := range p.Phases {
		if ph.Number >= added.Number {
			return nil, &PlanEditError{fmt.Sprintf("the new phase must be numbered after phase %d", ph.Number)}
		}
	}
	maxOld := p.MaxTask()
	for _, t := range added.Tasks {
		if t.Number <= maxOld {
			return nil, &PlanEditError{fmt.Sprintf("Task %02d is not a new task number (the plan already goes up to Task %02d)", t.Number, maxOld)}
		}
		if t.Checked {
			return nil, &PlanEditError{fmt.Sprintf("the new phase's Task %02d must start unchecked", t.Number)}
		}
	}
	return added, nil
}

func trimTrailingBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// MarkSkipped returns the plan text with every unchecked task of phase
// ticked and marked "(skipped: known issue)", for /orch-hook:resolve skip.
func (p *Plan) MarkSkipped(phase int) string {
	lines := append([]string(nil), p.lines...)
	ph := p.Phase(phase)
	if ph == nil {
		return strings.Join(lines, "\n")
	}
	for _, t := range ph.Tasks {
		if t.Checked {
			continue
		}
		l := lines[t.line]
		if i := strings.Index(l, "[ ]"); i >= 0 {
			l = l[:i] + "[x]" + l[i+3:]
		}
		lines[t.line] = l + " (skipped: known issue)"
	}
	return strings.Join(lines, "\n")
}
