package orchestrate

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/gates"
)

// Test fixtures: a plan builder, call constructors shaped like the hook
// payloads package hooks normalizes, and a harness that drives a Workflow
// through real Decide calls, so every state a test starts from was reached
// by the real rules.

const (
	testRoot     = "/home/user/project"
	ownerSession = "sess-owner"
	otherSession = "sess-other"
)

// ---- plan fixtures ----

// task is one task of a plan fixture: its number, the optional task-file
// fields, and whether MASTER_PLAN.md lists it checked.
type task struct {
	N     int
	Files []string
	Deps  []int
	Par   []int
	UX    bool
	Done  bool
}

// phase is one "## Phase N: Title" section of a plan fixture.
type phase struct {
	N     int
	Title string
	Tasks []task
}

// twoPhases is the default plan: phase 1 has Tasks 01-03 (03 depends on
// 01), phase 2 Tasks 04-05; ux flags Task 04 requires_ux_dx_review.
func twoPhases(ux bool) []phase {
	return []phase{
		{N: 1, Title: "Core", Tasks: []task{
			{N: 1, Files: []string{"a.go"}},
			{N: 2, Files: []string{"b.go"}, Par: []int{1}},
			{N: 3, Files: []string{"c.go"}, Deps: []int{1}},
		}},
		{N: 2, Title: "Polish", Tasks: []task{
			{N: 4, Files: []string{"d.go"}, UX: ux},
			{N: 5, Files: []string{"e.go"}},
		}},
	}
}

// onePhase is a one-phase plan (Tasks 01-02), for short paths to 5a.
func onePhase(ux bool) []phase {
	return []phase{{N: 1, Title: "Only", Tasks: []task{
		{N: 1, Files: []string{"a.go"}, UX: ux},
		{N: 2, Files: []string{"b.go"}},
	}}}
}

func masterText(phases ...phase) string {
	total, done := 0, 0
	for _, ph := range phases {
		for _, t := range ph.Tasks {
			total++
			if t.Done {
				done++
			}
		}
	}
	var b strings.Builder
	b.WriteString("# Master Plan: login page\n\n")
	fmt.Fprintf(&b, "Progress: %d/%d\n", done, total)
	for _, ph := range phases {
		fmt.Fprintf(&b, "\n## Phase %d: %s\nStatus: pending\n\n", ph.N, ph.Title)
		for _, t := range ph.Tasks {
			box := " "
			if t.Done {
				box = "x"
			}
			fmt.Fprintf(&b, "- [%s] Task %02d: step %d\n", box, t.N, t.N)
		}
	}
	return b.String()
}

func taskFileName(n int) string { return fmt.Sprintf("task-%02d-step.md", n) }

func taskText(t task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task %02d: step %d\n\n", t.N, t.N)
	if len(t.Deps) > 0 {
		fmt.Fprintf(&b, "Depends On: %s\n", twoDigits(t.Deps))
	}
	if len(t.Par) > 0 {
		fmt.Fprintf(&b, "Parallel With: %s\n", twoDigits(t.Par))
	}
	files := t.Files
	if len(files) == 0 {
		files = []string{fmt.Sprintf("src/task%02d.go", t.N)} // every task lists its files
	}
	fmt.Fprintf(&b, "Files: %s\n", strings.Join(files, ", "))
	fmt.Fprintf(&b, "requires_ux_dx_review: %t\n\n## Acceptance\n- it works\n", t.UX)
	return b.String()
}

func twoDigits(nums []int) string {
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = fmt.Sprintf("%02d", n)
	}
	return strings.Join(parts, ", ")
}

// planFiles builds the tasks directory: MASTER_PLAN.md and one task file
// per task.
func planFiles(phases ...phase) PlanFiles {
	f := PlanFiles{MasterPlan: []byte(masterText(phases...))}
	for _, ph := range phases {
		for _, t := range ph.Tasks {
			f[taskFileName(t.N)] = []byte(taskText(t))
		}
	}
	return f
}

func copyFiles(f PlanFiles) PlanFiles {
	out := PlanFiles{}
	for k, v := range f {
		out[k] = append([]byte(nil), v...)
	}
	return out
}

// tickText ticks the given tasks in a MASTER_PLAN.md text.
func tickText(text string, nums ...int) string {
	for _, n := range nums {
		text = strings.Replace(text, fmt.Sprintf("- [ ] Task %02d:", n), fmt.Sprintf("- [x] Task %02d:", n), 1)
	}
	return text
}

// ---- call constructors ----

func tasksPath(name string) string { return path.Join(testRoot, TasksDir, name) }

func agentCall(agent, prompt, toolUse string) *gates.Call {
	return &gates.Call{Event: gates.PreToolUse, Tool: "Agent", ToolUseID: toolUse, SubagentType: gates.PluginPrefix + agent, Prompt: prompt, Background: true}
}

func postAsync(toolUse, agentID string) *gates.Call {
	return &gates.Call{Event: gates.PostToolUse, Tool: "Agent", ToolUseID: toolUse, Status: "async_launched", LinkAgentID: agentID}
}

func postDone(toolUse, agentID, text string) *gates.Call {
	return &gates.Call{Event: gates.PostToolUse, Tool: "Agent", ToolUseID: toolUse, Status: "completed", LinkAgentID: agentID, Text: text}
}

func postFailure(toolUse, msg string) *gates.Call {
	return &gates.Call{Event: gates.PostToolUseFailure, Tool: "Agent", ToolUseID: toolUse, Failure: msg}
}

func subStop(agentID, agent, text string) *gates.Call {
	return &gates.Call{Event: gates.SubagentStop, AgentID: agentID, AgentType: gates.PluginPrefix + agent, Text: text}
}

func notifyPrompt(agentID, toolUse, status, result string) string {
	return fmt.Sprintf("<task-notification>\n<task-id>%s</task-id>\n<tool-use-id>%s</tool-use-id>\n<output-file>/tmp/claude-0/tasks/%s.output</output-file>\n<status>%s</status>\n<summary>Agent finished</summary>\n<result>%s</result>\n</task-notification>", agentID, toolUse, agentID, status, result)
}

func notification(agentID, toolUse, status, result string) *gates.Call {
	return &gates.Call{Event: gates.UserPromptSubmit, Prompt: notifyPrompt(agentID, toolUse, status, result)}
}

func promptCall(text, promptID string) *gates.Call {
	return &gates.Call{Event: gates.UserPromptSubmit, Prompt: text, PromptID: promptID}
}

func writeCall(abs, content string) *gates.Call {
	return &gates.Call{Event: gates.PreToolUse, Tool: "Write", ToolUseID: "toolu_w", Path: abs, Write: &gates.FileWrite{Content: &content}}
}

func editCall(abs, old, new string) *gates.Call {
	return &gates.Call{Event: gates.PreToolUse, Tool: "Edit", ToolUseID: "toolu_e", Path: abs, Write: &gates.FileWrite{OldString: old, NewString: new}}
}

// by makes a call come from inside a subagent.
func by(c *gates.Call, agentID, agent string) *gates.Call {
	c.AgentID, c.AgentType = agentID, gates.PluginPrefix+agent
	return c
}

func bashCall(cmd string) *gates.Call {
	return &gates.Call{Event: gates.PreToolUse, Tool: "Bash", ToolUseID: "toolu_b", Command: cmd}
}

func skillCall(skill string) *gates.Call {
	return &gates.Call{Event: gates.PreToolUse, Tool: "Skill", ToolUseID: "toolu_s", Skill: skill}
}

func stopCall(running ...string) *gates.Call {
	return &gates.Call{Event: gates.Stop, BackgroundRuns: running}
}

// ---- the harness ----

// harness is a workflow, the project's tasks directory, and ids, driven
// through Decide one hook call at a time (as package internal/app does).
type harness struct {
	t     *testing.T
	w     *Workflow
	plan  []phase   // what the task-planner writes in step 2
	files PlanFiles // the tasks directory as it is now
	// recorded are orch-hook's copies of the plan as it recorded it, kept
	// as package internal/app keeps them (RecordedCopies after each decision).
	recorded PlanFiles
	session  string
	stopCap  int
	fg       bool // launch agents in the foreground
	// tokens are what each SubagentStop's transcript gives (Env.Tokens).
	tokens *gates.Tokens
	seq    int
	now    time.Time
}

func newHarness(t *testing.T, plan ...phase) *harness {
	t.Helper()
	if len(plan) == 0 {
		plan = twoPhases(false)
	}
	return &harness{
		t:        t,
		w:        must(NewWorkflow("Add a login page", ownerSession)),
		plan:     plan,
		files:    PlanFiles{},
		recorded: PlanFiles{},
		session:  ownerSession,
		now:      time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
	}
}

// driveTo returns a harness whose workflow reached target through real
// Decide calls (see (*harness).to for the targets).
func driveTo(t *testing.T, target string, plan ...phase) *harness {
	t.Helper()
	return newHarness(t, plan...).to(target)
}

func (h *harness) env() *Env {
	return &Env{Root: testRoot, Files: h.files, Now: h.now, StopCap: h.stopCap, Tokens: h.tokens, Recorded: func(name string) ([]byte, bool) {
		b, ok := h.recorded[name]
		return b, ok
	}}
}

func (h *harness) next() int { h.seq++; return h.seq }

// do decides one call; files the outcome asks for under the tasks
// directory are written, as the caller would.
func (h *harness) do(c *gates.Call) gates.Outcome {
	h.t.Helper()
	if c.Session == "" {
		c.Session = h.session
	}
	h.now = h.now.Add(time.Second)
	before := maps.Clone(h.w.PlanHashes)
	env := h.env()
	o := Decide(h.w, c, env)
	if p := refusalProblem(o); p != "" {
		h.t.Errorf("%s %s: %s", c.Event, c.Tool, p)
	}
	keep, drop := RecordedCopies(before, h.w.PlanHashes, env.Files)
	for name, b := range keep {
		h.recorded[name] = append([]byte(nil), b...)
	}
	for _, name := range drop {
		delete(h.recorded, name)
	}
	for rel, content := range o.Files {
		if dir, name := path.Split(rel); strings.TrimSuffix(dir, "/") == TasksDir {
			h.files[name] = []byte(content)
		}
	}
	return o
}

// user is a prompt the user typed (each with its own prompt_id).
func (h *harness) user(text string) gates.Outcome {
	h.t.Helper()
	return h.do(promptCall(text, fmt.Sprintf("prompt-%03d", h.next())))
}

func (h *harness) expect(state string) {
	h.t.Helper()
	if string(h.w.Current) != state {
		h.t.Fatalf("state = %q, want %q (completed %v, waiting %q, awaiting %q)", h.w.Current, state, h.w.Completed, h.w.WaitingOn, h.w.Awaiting)
	}
}

// run is one agent launch.
type run struct {
	h       *harness
	agent   string
	toolUse string
	agentID string
	fg      bool
	launch  gates.Outcome
}

// start launches agent (whatever the verdict); a background launch that is
// allowed gets its PostToolUse(async_launched) at once.
func (h *harness) start(agent, prompt string) *run {
	h.t.Helper()
	n := h.next()
	r := &run{h: h, agent: agent, toolUse: fmt.Sprintf("toolu_%03d", n), agentID: fmt.Sprintf("a%03d", n), fg: h.fg}
	c := agentCall(agent, prompt, r.toolUse)
	c.Background = !h.fg
	r.launch = h.do(c)
	if r.launch.Verdict == gates.Allow && !r.fg {
		h.do(postAsync(r.toolUse, r.agentID))
	}
	return r
}

// launch starts agent and fails the test when the launch is denied.
func (h *harness) launch(agent, prompt string) *run {
	h.t.Helper()
	r := h.start(agent, prompt)
	if r.launch.Verdict != gates.Allow {
		h.t.Fatalf("launch of %s (%q) at %s denied: %s", agent, prompt, h.w.Current, r.launch.Reason)
	}
	return r
}

// stop is the agent's SubagentStop with its final report.
func (r *run) stop(text string) gates.Outcome {
	r.h.t.Helper()
	return r.h.do(subStop(r.agentID, r.agent, text))
}

// post is the agent's PostToolUse(Agent): completed (foreground).
func (r *run) post(text string) gates.Outcome {
	r.h.t.Helper()
	return r.h.do(postDone(r.toolUse, r.agentID, text))
}

// notify is the background agent's task-notification.
func (r *run) notify(text string) gates.Outcome {
	r.h.t.Helper()
	return r.h.do(notification(r.agentID, r.toolUse, "completed", text))
}

// finish completes the agent the way Claude Code reports it: foreground,
// SubagentStop then PostToolUse; background, SubagentStop then the
// task-notification. The outcome merges both (the context is the one the
// orchestrator sees, the files are those either asked for).
func (r *run) finish(text string) gates.Outcome {
	r.h.t.Helper()
	s := r.stop(text)
	if s.Verdict != gates.Allow {
		r.h.t.Fatalf("SubagentStop of %s blocked: %s", r.agent, s.Reason)
	}
	var o gates.Outcome
	if r.fg {
		o = r.post(text)
	} else {
		o = r.notify(text)
	}
	return merge(s, o)
}

func merge(a, b gates.Outcome) gates.Outcome {
	out := b
	out.Changed = a.Changed || b.Changed
	out.Records = append(append([]gates.Record(nil), a.Records...), b.Records...)
	if len(a.Files) > 0 {
		out.Files = map[string]string{}
		for k, v := range a.Files {
			out.Files[k] = v
		}
		for k, v := range b.Files {
			out.Files[k] = v
		}
	}
	if a.Context != "" && b.Context == "" {
		out.Context = a.Context
	}
	return out
}

// run launches agent and finishes it with text.
func (h *harness) run(agent, prompt, text string) gates.Outcome {
	h.t.Helper()
	return h.launch(agent, prompt).finish(text)
}

// writeFile is a Write/Edit: PreToolUse, then (when allowed) the change and
// its PostToolUse. The outcome has the PreToolUse verdict and the
// PostToolUse context.
func (h *harness) writeFile(c *gates.Call) gates.Outcome {
	h.t.Helper()
	pre := h.do(c)
	if pre.Verdict != gates.Allow {
		return pre
	}
	rel, ok := gates.RelPath(testRoot, c.Path)
	if ok && gates.Under(rel, TasksDir) {
		name := strings.TrimPrefix(rel, TasksDir+"/")
		cur, exists := h.files[name]
		next, err := applyWrite(string(cur), exists, c.Write)
		if err != "" {
			h.t.Fatalf("allowed write of %s cannot apply: %s", name, err)
		}
		h.files[name] = []byte(next)
	}
	post := *c
	post.Event = gates.PostToolUse
	return merge(pre, h.do(&post))
}

// write writes a file under the tasks directory as this agent.
func (r *run) write(name, content string) gates.Outcome {
	r.h.t.Helper()
	return r.h.writeFile(by(writeCall(tasksPath(name), content), r.agentID, r.agent))
}

// ---- workflow steps ----

func (h *harness) analyst(line string) gates.Outcome {
	h.t.Helper()
	return h.run(Analyst, "Analyze the request: "+h.w.Request, "The request names a login page.\n\n"+line)
}

func (h *harness) answer() gates.Outcome {
	h.t.Helper()
	return h.user("Use sessions, not JWT; email login only.")
}

// discover runs researcher and code-explorer in parallel.
func (h *harness) discover() gates.Outcome {
	h.t.Helper()
	r := h.launch(Researcher, "Research login best practices")
	e := h.launch(Explorer, "Map the auth code")
	r.finish("Findings: use bcrypt.")
	return e.finish("The auth code lives in auth/.")
}

// writePlan is step 2: the task-planner writes the plan and returns.
func (h *harness) writePlan() gates.Outcome {
	h.t.Helper()
	return h.rtPlan(planFiles(h.plan...))
}

// rtPlan is step 2 with the given plan files: the task-planner writes
// them and returns.
func (h *harness) rtPlan(files PlanFiles) gates.Outcome {
	h.t.Helper()
	r := h.launch(Planner, "Create MASTER_PLAN.md and the task files")
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if o := r.write(n, string(files[n])); o.Verdict != gates.Allow {
			h.t.Fatalf("planner write of %s denied: %s", n, o.Reason)
		}
	}
	return r.finish("Plan written.")
}

func (h *harness) approve() gates.Outcome {
	h.t.Helper()
	return h.user("/orch-hook:approve")
}

func implPrompt(n int) string { return fmt.Sprintf("Task %02d: implement step %d", n, n) }

const (
	implComplete = "Implemented; lint and build pass.\nIMPLEMENTATION STATUS: COMPLETE"
	implBlocked  = "Cannot go on: missing dependency.\nIMPLEMENTATION STATUS: BLOCKED"
)

func (h *harness) implement(n int) gates.Outcome {
	h.t.Helper()
	return h.run(Implementer, implPrompt(n), implComplete)
}

// phaseTasks are the task numbers of the current phase.
func (h *harness) phaseTasks() []int { return phaseNumbers(h.w.Plan.Phase(h.w.Phase)) }

// implementPhase implements every open task of the current phase, one
// after the other.
func (h *harness) implementPhase() gates.Outcome {
	h.t.Helper()
	var o gates.Outcome
	for _, n := range h.phaseTasks() {
		if !h.w.Tasks[n].done() {
			o = h.implement(n)
		}
	}
	return o
}

func gateText(pass bool, failing ...int) string {
	if pass {
		return "All tests pass; acceptance criteria met.\nPHASE GATE STATUS: PASS"
	}
	return "test error\nPHASE GATE STATUS: FAIL\nFAILING TASKS: " + twoDigits(failing)
}

// gate runs code-quality in 4b; a FAIL names failing (default: the
// phase's second task).
func (h *harness) gate(pass bool, failing ...int) gates.Outcome {
	h.t.Helper()
	if !pass && len(failing) == 0 {
		nums := h.phaseTasks()
		failing = nums[min(1, len(nums)-1):][:1]
	}
	return h.run(Quality, fmt.Sprintf("Quality gate for phase %d", h.w.Phase), gateText(pass, failing...))
}

func (h *harness) analysis() gates.Outcome {
	h.t.Helper()
	return h.run(Planner, "FAILURE_ANALYSIS of the failing tasks", "Root cause: off-by-one in b.go.\nFAILURE_ANALYSIS: COMPLETE")
}

// fixAll runs one code-implementer per failing task.
func (h *harness) fixAll() gates.Outcome {
	h.t.Helper()
	var o gates.Outcome
	for _, n := range h.w.FailingTasks {
		o = h.implement(n)
	}
	return o
}

// tick is the orchestrator's 4c Write of MASTER_PLAN.md ticking nums
// (default: the current phase's tasks).
func (h *harness) tick(nums ...int) gates.Outcome {
	h.t.Helper()
	if len(nums) == 0 {
		nums = h.phaseTasks()
	}
	return h.writeFile(writeCall(tasksPath(MasterPlan), tickText(string(h.files[MasterPlan]), nums...)))
}

func (h *harness) final(pass bool) gates.Outcome {
	h.t.Helper()
	text := "Full suite and production build pass.\nPHASE GATE STATUS: PASS"
	if !pass {
		text = "Production build fails.\nPHASE GATE STATUS: FAIL"
	}
	return h.run(Quality, "Final validation", text)
}

func (h *harness) uxReview(pass bool) gates.Outcome {
	h.t.Helper()
	text := "The flow reads well.\nUX/DX STATUS: PASS"
	if !pass {
		text = "Error messages are cryptic.\nUX/DX STATUS: FAIL"
	}
	return h.run(UXDX, "UX/DX review", text)
}

func (h *harness) extract() gates.Outcome {
	h.t.Helper()
	return h.run(Planner, "SUCCESS_EXTRACTION", "Learnings recorded.\nSUCCESS_EXTRACTION: COMPLETE")
}

// appendPhase is the orchestrator appending one phase to MASTER_PLAN.md
// with its task files (default: one new task touching fix.go). It returns
// the new task numbers.
func (h *harness) appendPhase(tasks ...task) []int {
	h.t.Helper()
	p := ParsePlan(h.files)
	if len(tasks) == 0 {
		tasks = []task{{N: p.MaxTask() + 1, Files: []string{"fix.go"}}}
	}
	num := p.Phases[len(p.Phases)-1].Number + 1
	var nums []int
	var b strings.Builder
	b.WriteString(strings.TrimRight(string(h.files[MasterPlan]), "\n"))
	fmt.Fprintf(&b, "\n\n## Phase %d: Fixes\nStatus: pending\n\n", num)
	for _, t := range tasks {
		if o := h.writeFile(writeCall(tasksPath(taskFileName(t.N)), taskText(t))); o.Verdict != gates.Allow {
			h.t.Fatalf("task file %02d of the appended phase denied: %s", t.N, o.Reason)
		}
		fmt.Fprintf(&b, "- [ ] Task %02d: fix %d\n", t.N, t.N)
		nums = append(nums, t.N)
	}
	if o := h.writeFile(writeCall(tasksPath(MasterPlan), b.String())); o.Verdict != gates.Allow {
		h.t.Fatalf("appending phase %d denied: %s", num, o.Reason)
	}
	return nums
}

// Targets of (*harness).to besides the states themselves.
const (
	questionsPending = "0a (questions pending)"
	escalatedFix     = "escalated (4b)"
	escalatedFinal   = "escalated (final validation)"
	awaitFix5a       = "4a (after a 5a FAIL)"
	awaitFix5b       = "4a (after a 5b FAIL)"
)

// to drives the workflow to target with real calls: 0a -> (DISCOVERY) 1 ->
// 0b, or 0a -> (CLEAR) 2 -> 3 -> 4a -> 4b -> F1 (FAIL of the phase's
// second task) -> F2, 4b -> (PASS) 4c -> ... -> 5a -> 5b (a UX plan) -> 6
// -> complete; the escalations and the waits for a fix phase.
func (h *harness) to(target string) *harness {
	h.t.Helper()
	want := target
	switch target {
	case S0a:
	case questionsPending:
		h.analyst(LineQuestions)
		want = S0a
	case S1:
		h.analyst(LineDiscovery)
	case S0b:
		h.to(S1).discover()
	case S2:
		h.analyst(LineClear)
	case S3:
		h.to(S2).writePlan()
	case S4a:
		h.to(S3).approve()
	case S4b:
		h.to(S4a).implementPhase()
	case SF1:
		h.to(S4b).gate(false)
	case SF2:
		h.to(SF1).analysis()
	case S4c:
		h.to(S4b).gate(true)
	case S5a:
		h.to(S4c)
		for {
			h.tick()
			if h.w.Current == S5a {
				break
			}
			h.expect(S4a)
			h.implementPhase()
			h.gate(true)
		}
	case S5b:
		h.to(S5a).final(true)
	case S6:
		h.to(S5a).final(true)
		if h.w.Current == S5b {
			h.uxReview(true)
		}
	case Complete:
		h.to(S6).extract()
	case Aborted:
		h.user("/orch-hook:abort")
	case escalatedFix:
		h.to(S4b)
		for i := 0; i < MaxFixIterations; i++ {
			h.gate(false)
			if h.w.Current == SF1 {
				h.analysis()
				h.fixAll()
			}
		}
		want = Escalated
	case awaitFix5a:
		h.to(S5a).final(false)
		want = S4a
	case awaitFix5b:
		h.to(S5b).uxReview(false)
		want = S4a
	case escalatedFinal:
		h.to(awaitFix5a)
		for i := 1; i < MaxFinalFailures; i++ {
			h.runFixPhase()
			h.final(false)
		}
		want = Escalated
	default:
		h.t.Fatalf("unknown target %q", target)
	}
	h.expect(want)
	return h
}

// runFixPhase appends a fix phase while 4a awaits one, implements it,
// passes its gate and ticks it: back at 5a.
func (h *harness) runFixPhase() {
	h.t.Helper()
	for _, n := range h.appendPhase() {
		h.implement(n)
	}
	h.gate(true)
	h.tick()
	h.expect(S5a)
}

// ---- assertions ----

func wantVerdict(t *testing.T, o gates.Outcome, v gates.Verdict) {
	t.Helper()
	if o.Verdict != v {
		t.Fatalf("verdict = %v, want %v (reason %q)", o.Verdict, v, o.Reason)
	}
}

func wantAllow(t *testing.T, o gates.Outcome) { t.Helper(); wantVerdict(t, o, gates.Allow) }

// wantDeny checks a deny with its gate and reason fragments.
func wantDeny(t *testing.T, o gates.Outcome, gate int, parts ...string) {
	t.Helper()
	wantVerdict(t, o, gates.Deny)
	checkReason(t, o, gate, parts...)
}

func wantBlock(t *testing.T, o gates.Outcome, gate int, parts ...string) {
	t.Helper()
	wantVerdict(t, o, gates.Block)
	checkReason(t, o, gate, parts...)
}

func checkReason(t *testing.T, o gates.Outcome, gate int, parts ...string) {
	t.Helper()
	if gate > 0 {
		tag := fmt.Sprintf("[Gate %d] ", gate)
		if o.Gate != gate || !strings.Contains(o.Reason, tag) {
			t.Errorf("gate = %d, reason %q; want gate %d", o.Gate, o.Reason, gate)
		}
	} else if strings.Contains(o.Reason, "[Gate ") {
		t.Errorf("reason names a gate, want none: %q", o.Reason)
	}
	if !strings.HasPrefix(o.Reason, "orch-hook: ") {
		t.Errorf("reason %q does not start with \"orch-hook: \"", o.Reason)
	}
	for _, p := range parts {
		if !strings.Contains(o.Reason, p) {
			t.Errorf("reason %q lacks %q", o.Reason, p)
		}
	}
}

func wantContext(t *testing.T, o gates.Outcome, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(o.Context, p) {
			t.Errorf("context %q lacks %q", o.Context, p)
		}
	}
}

func hasRecord(o gates.Outcome, typ, reasonPart string) bool {
	for _, r := range o.Records {
		if r.Type == typ && strings.Contains(r.Reason, reasonPart) {
			return true
		}
	}
	return false
}

var reCheckpoint = regexp.MustCompile(`^\[(PHASE \d+( \| Tasks? [0-9, -]+)?|STEP [0-9a-zF]+)\] `)

// must returns v, panicking on err (a fixture that cannot be built).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The coordinate workflow's test-specialist lines, for the grammar tests.
const testsPass, testsFail = "TESTS: PASS", "TESTS: FAIL"

// refusalProblem is gates.RefusalProblem.
func refusalProblem(o gates.Outcome) string { return gates.RefusalProblem(o) }
