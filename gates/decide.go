package gates

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/shorten"
)

// Call is one hook event, normalized by package hooks. Only the fields the
// event carries are set.
type Call struct {
	Event     string // hook_event_name
	Session   string
	PromptID  string
	AgentID   string // the subagent the event fired in ("" on the main thread)
	AgentType string
	Tool      string
	ToolUseID string

	// Agent launches.
	SubagentType string
	Prompt       string // the Agent prompt, or the user's prompt
	Description  string // the Agent description
	Background   bool
	Isolation    string

	// File writes: Path is absolute and cleaned (symlinks of existing
	// directories resolved by the caller).
	Path  string
	Write *FileWrite
	// Unresolved: Path (or an MCP path) does not resolve inside the
	// project: outside it, too long, or a link loop.
	Unresolved bool

	Command string // Bash
	// Unsandboxed: the Bash call asks to run outside Claude Code's sandbox
	// (dangerouslyDisableSandbox).
	Unsandboxed bool
	// CwdRel is the session's directory relative to the project root (""
	// at the root), against which a Bash command's relative paths resolve.
	CwdRel string
	// bash memoizes what the rules read of Command (see bashFacts).
	bash      *bashFacts
	Skill     string // Skill
	SkillArgs string // Skill's args
	SendTo    string // SendMessage
	// MCPPaths are the paths an MCP tool's input names (absolute, resolved
	// like Path).
	MCPPaths []string

	// Completions and stops.
	Status         string // PostToolUse(Agent) tool_response.status
	LinkAgentID    string // PostToolUse(Agent) tool_response.agentId
	DurationMs     int64  // PostToolUse(Agent) tool_response.totalDurationMs (foreground)
	Text           string // the agent's final report
	Failure        string // PostToolUseFailure error
	StopHookActive bool
	BackgroundRuns []string // ids of running background subagents (Stop)
	Source         string   // SessionStart
	EndReason      string   // SessionEnd
}

// FileWrite is what a Write, Edit or NotebookEdit would do.
type FileWrite struct {
	Content    *string // Write
	OldString  string  // Edit
	NewString  string
	ReplaceAll bool
	Notebook   bool
}

// Env is what a decision may consult besides the workflow: the project
// root, the plan files (read by the caller when Needs says so), the clock
// and the Stop cap.
type Env struct {
	Root string
	// Files are the plan files; when nil, LoadFiles reads them on first
	// use (most events never need them).
	Files     PlanFiles
	LoadFiles func() (PlanFiles, error)
	// Recorded reads orch-hook's copy of a plan file as it recorded it
	// (false: none kept; nil: none at all). It is read only while the
	// plan differs from the record: to show a refusal's diff, and to read
	// the plan as recorded when FAILURE_ANALYSIS returns (recordedView).
	// It is not trusted: a copy counts only when it hashes to the
	// recorded hash.
	Recorded func(name string) ([]byte, bool)
	Now      time.Time
	StopCap  int

	loadErr  error
	parsed   *Plan
	parseErr error
}

// files returns the plan files, reading them on first use.
func (e *Env) files() PlanFiles {
	if e.Files == nil && e.LoadFiles != nil && e.loadErr == nil {
		e.Files, e.loadErr = e.LoadFiles()
	}
	return e.Files
}

func (e *Env) plan() (*Plan, error) {
	if e.parsed == nil {
		e.parsed = ParsePlan(e.files())
		e.parseErr = e.parsed.Validate()
		if e.loadErr != nil {
			e.parseErr = fmt.Errorf("reading %s: %w", TasksDir, e.loadErr)
		}
	}
	return e.parsed, e.parseErr
}

// Reset drops the parsed plan, after the files changed.
func (e *Env) Reset(files PlanFiles) { e.Files, e.parsed, e.parseErr = files, nil, nil }

// Verdict is the kind of answer.
type Verdict int

// Verdicts.
const (
	Allow Verdict = iota
	Deny          // PreToolUse: the tool does not run
	Block         // Stop, SubagentStop, UserPromptSubmit: refused with a reason
)

// Outcome is a decision and what it did to the workflow.
type Outcome struct {
	Verdict Verdict
	Gate    int
	Reason  string
	Context string
	// Message is shown to the user, not the model (a systemMessage): the
	// plan as orch-hook read it, before the user approves it.
	Message string
	// Changed: the workflow was modified and must be saved.
	Changed bool
	// Records are what to log (state changes, denies, errors).
	Records []Record
	// Files to write in the project (relative path -> content): the
	// ESCALATION.md report, MASTER_PLAN.md after a skip.
	Files map[string]string
	// Start asks the caller to archive a finished workflow and start a new
	// one with this request.
	Start string
}

// Record is one line for the event log.
type Record struct {
	Type      string // transition, update, deny, agent_launch, agent_complete, user_decision, error
	Gate      int
	Reason    string
	AgentID   string
	AgentType string
	ToolUseID string
	Task      int
	Phase     int
	Input     string
}

// Record types (the names of state's event types).
const (
	RecTransition = "transition"
	RecUpdate     = "update"
	RecDeny       = "deny"
	RecLaunch     = "agent_launch"
	RecComplete   = "agent_complete"
	RecDecision   = "user_decision"
	RecError      = "error"
)

func (o *Outcome) log(r Record) { o.Records = append(o.Records, r) }

// Decide answers one hook event against the workflow. It is pure: the
// caller loads w (with Current/Completed set), calls Decide, and saves w
// when Outcome.Changed.
func Decide(w *Workflow, c *Call, env *Env) Outcome {
	if o, denied := staticRules(c); denied {
		return o
	}
	if Finished(w.Current) {
		return decideFinished(w, c, env)
	}
	switch c.Event {
	case PreToolUse:
		switch c.Tool {
		case "Agent", "Task":
			return w.preAgent(c, env)
		case "Write", "Edit", "NotebookEdit":
			return w.preWrite(c, env)
		case "Bash":
			return w.preBash(c)
		case "SendMessage":
			return w.preSendMessage(c)
		case "Skill":
			if name, ok := commandName(strings.ToLower(c.Skill)); ok && name == "follow-up" {
				return w.followUpSkill(c, env)
			}
		case "Workflow":
			return w.deny(0, "the native Workflow tool is not allowed while an orch-hook workflow is active (its agents would bypass the gates).")
		}
		if IsMCP(c.Tool) {
			return w.preMCP(c, env)
		}
	case PostToolUse:
		switch c.Tool {
		case "Agent", "Task":
			return w.postAgent(c, env)
		case "Write", "Edit", "NotebookEdit":
			return w.postWrite(c, env)
		}
	case PostToolUseFailure:
		if c.Tool == "Agent" || c.Tool == "Task" {
			return w.agentFailed(c)
		}
		if o, ok := sandboxRefusal(c); ok {
			return o
		}
	case SubagentStop:
		return w.subagentStop(c, env)
	case Stop:
		return w.stop(c, env)
	case UserPromptSubmit:
		return w.userPrompt(c, env)
	case SessionStart:
		return w.sessionStart(c, env)
	case SessionEnd:
		return w.sessionEnd(c)
	}
	return Outcome{}
}

// Relevant reports whether an event can matter to an active workflow; the
// caller answers allow at once (without reading the plan or locking)
// when it cannot.
func Relevant(c *Call) bool {
	switch c.Event {
	case PreToolUse:
		switch c.Tool {
		case "Agent", "Task", "Write", "Edit", "NotebookEdit", "Bash", "Skill", "SendMessage", "Workflow":
			return true
		}
		return IsMCP(c.Tool) && len(c.MCPPaths) > 0 && MCPWrites(c.Tool)
	case PostToolUse, PostToolUseFailure:
		switch c.Tool {
		case "Agent", "Task", "Write", "Edit", "NotebookEdit":
			return true
		case "Bash":
			return c.Event == PostToolUseFailure && refusedBySandbox(c.Failure)
		}
		return false
	case SubagentStop, Stop, UserPromptSubmit, SessionStart, SessionEnd:
		return true
	}
	return false
}

// NeedsState reports whether deciding c depends on the workflow's state at
// all. A Bash command that names neither the state directory nor the binary
// (the static rules, checked first), and on the main thread changes nothing
// under or through a specs/ directory (where coordinate topics live:
// specs/NNN_topic or .claude/specs/NNN_topic, which `cd .claude; ...`
// reaches unnamed), is allowed whatever the state, so the hook need not
// read it.
func NeedsState(c *Call) bool {
	if c.Event == PreToolUse && (c.Tool == "Bash" || c.Tool == "Skill") {
		if c.Tool != "Bash" {
			name, _ := commandName(strings.ToLower(c.Skill))
			return name == "follow-up"
		}
		return c.Unsandboxed || c.touchesState() || c.AgentID == "" && (c.changesUnder("specs") || c.reaches(".claude/specs"))
	}
	return Relevant(c)
}

// Static applies the rules that hold whatever the state: the model may not
// take the user's decisions through the Skill tool or by running the binary.
func Static(c *Call) (Outcome, bool) { return staticRules(c) }

// modelForbidden are subcommands the model may not run from Bash: starting
// a workflow is the user's; `hook` would let it forge hook events (an
// approval, a PASS); repair, migrate and init rewrite state or settings.
var modelForbidden = map[string]bool{"start": true, "hook": true, "repair": true, "migrate": true, "init": true}

// userCommands are the decisions only the user takes.
var userCommands = map[string]bool{"approve": true, "request-changes": true, "resolve": true, "abort": true, "resume": true, "protect": true}

// startCommands start a workflow: also only the user's.
var startCommands = map[string]bool{"orchestrate": true, "coordinate": true}

// staticRules hold whatever the state: the model may not take the user's
// decisions through the Skill tool or by running the binary.
func staticRules(c *Call) (Outcome, bool) {
	if c.Event != PreToolUse {
		return Outcome{}, false
	}
	switch c.Tool {
	case "Skill":
		name, ok := commandName(strings.ToLower(c.Skill))
		if ok && (userCommands[name] || startCommands[name]) {
			reason := fmt.Sprintf("orch-hook: /orch-hook:%s is the user's decision; the model may not invoke it. Ask the user to type it.", name)
			if startCommands[name] {
				reason = fmt.Sprintf("orch-hook: only the user starts a workflow: ask them to type /orch-hook:%s <request>.", name)
			}
			o := Outcome{Verdict: Deny, Reason: reason}
			o.log(Record{Type: RecDeny, Reason: reason, ToolUseID: c.ToolUseID, AgentID: c.AgentID})
			return o, true
		}
	case "Bash":
		if named, allowed := c.namesBinary(); named && !allowed {
			word := binaryDecision(c.Command)
			reason := fmt.Sprintf("orch-hook: running orch-hook %s from Bash is not allowed: %s is the user's decision. Ask the user to type /orch-hook:%s.", word, word, word)
			switch word {
			case "start":
				reason = "orch-hook: the model may not start a workflow; only the user does, with /orch-hook:orchestrate <request>."
			case "hook":
				reason = "orch-hook: running `orch-hook hook` from Bash is not allowed: hook events come from Claude Code, not from the model."
			case "repair", "migrate", "init":
				reason = fmt.Sprintf("orch-hook: running orch-hook %s from Bash is not allowed: it rewrites orch-hook's state or settings; ask the user to run it.", word)
			case "":
				if c.namesSeal() {
					reason = "orch-hook: " + c.stateWhat()
					break
				}
				reason = "orch-hook: this command names the orch-hook binary (in some spelling) other than as a plain read-only command; from Bash the model may only read the workflow: `orch-hook status`, `log`, `explain`, `graph`, `report` (without -o) or `doctor`, with literal arguments. Decisions are the user's (typed /orch-hook:... commands) and hook events come from Claude Code."
			}
			o := Outcome{Verdict: Deny, Reason: reason}
			o.log(Record{Type: RecDeny, Reason: reason, ToolUseID: c.ToolUseID, AgentID: c.AgentID})
			return o, true
		}
	}
	return Outcome{}, false
}

// commandName reads "orch-hook:approve", "orch-hook-approve" or
// "/orch-hook:approve args" as "approve".
func commandName(s string) (string, bool) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "/"))
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		s = s[:i]
	}
	for _, p := range []string{"orch-hook:", "orch-hook-"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" {
			return rest, true
		}
	}
	return "", false
}

// binaryDecision finds "orch-hook <decision>" anywhere in a shell command,
// whatever path, quoting or wrapper names the binary; it returns the word.
func binaryDecision(cmd string) string {
	if !strings.Contains(cmd, "orch-hook") {
		return ""
	}
	fields := strings.FieldsFunc(cmd, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&()`$'\"{}<>=", r)
	})
	for i, f := range fields {
		if filepath.Base(f) != "orch-hook" && !strings.HasSuffix(f, "/orch-hook") {
			continue
		}
		for j := i + 1; j < len(fields); j++ {
			arg := fields[j]
			if strings.HasPrefix(arg, "-") {
				if arg == "--project" {
					j++ // its value
				}
				continue
			}
			if userCommands[arg] || modelForbidden[arg] {
				return arg
			}
			break
		}
	}
	return ""
}

// decideFinished: a complete or aborted workflow gates nothing; a new one
// may be started.
func decideFinished(w *Workflow, c *Call, env *Env) Outcome {
	if o, denied := guardFinishedState(c, env.Root); denied {
		return o
	}
	if c.Event == UserPromptSubmit && isNotification(c.Prompt) {
		// The background agent whose completion finished the workflow
		// (SUCCESS_EXTRACTION) still has its checkpoint line to deliver.
		if l := w.notifiedLaunch(c.Prompt); l != nil && l.Notice != "" {
			o := Outcome{Context: l.Notice, Changed: true}
			l.Notice = ""
			return o
		}
		return Outcome{}
	}
	if c.Event == UserPromptSubmit {
		if name, ok := commandName(c.Prompt); ok && (name == "orchestrate" || name == "coordinate") && strings.HasPrefix(strings.TrimSpace(c.Prompt), "/") {
			return startFromPrompt(c)
		}
		if name, ok := commandName(c.Prompt); ok && name == "follow-up" && strings.HasPrefix(strings.TrimSpace(c.Prompt), "/") && w.Current == Complete && !w.foreign(c) {
			// The user typed the follow-up: applied as typed.
			_, args, _ := strings.Cut(strings.TrimSpace(c.Prompt), " ")
			kind, request, _ := strings.Cut(strings.TrimSpace(args), " ")
			o, err := FollowUp(w, kind, request, env)
			if err != nil {
				return w.block(err.Error() + `: type /orch-hook:follow-up lightweight|partial|full <request>.`)
			}
			if o.Start == "" {
				o.Context = "orch-hook: " + o.Context
			}
			return o
		}
		if w.Current == Complete && !w.UserAsked && !w.foreign(c) && !strings.HasPrefix(strings.TrimSpace(c.Prompt), "/") {
			// The user's request after completion: the orchestrator may
			// triage it into one follow-up.
			w.UserAsked = true
			return Outcome{Changed: true}
		}
	}
	if c.Event == PreToolUse && c.Tool == "Skill" {
		if name, ok := commandName(strings.ToLower(c.Skill)); ok && name == "follow-up" {
			return w.followUpSkill(c, env)
		}
	}
	if c.Event == SessionStart && w.Current == Complete {
		return Outcome{Context: shorten.Runes(fmt.Sprintf("orch-hook: the workflow %q is complete. For a follow-up the user asks for, invoke the orch-hook:follow-up skill with `lightweight|partial|full <request>`, or the user starts a new workflow with /orch-hook:orchestrate.", shorten.Runes(w.Request, 80)), 2000)}
	}
	return Outcome{}
}

// followUpSkill applies orch-hook:follow-up <kind> <request>, invoked by the
// orchestrator through the Skill tool (phase 7): only from complete, once
// per prompt the user typed since.
func (w *Workflow) followUpSkill(c *Call, env *Env) Outcome {
	deny := func(why string) Outcome {
		reason := "orch-hook: " + why
		o := Outcome{Verdict: Deny, Reason: reason}
		o.log(Record{Type: RecDeny, Reason: reason, ToolUseID: c.ToolUseID, AgentID: c.AgentID})
		return o
	}
	switch {
	case c.AgentID != "":
		return deny("a follow-up is the orchestrator's triage of the user's request, not a subagent's.")
	case w.Current != Complete:
		return deny(fmt.Sprintf("a follow-up reopens a complete workflow; this one is %s.", w.Current))
	case w.foreign(c):
		return deny(w.foreignReason())
	case !w.UserAsked:
		return deny("a follow-up answers a request the user typed after the workflow completed; there is none since the last follow-up. Ask the user what to do next.")
	}
	kind, request, _ := strings.Cut(strings.TrimSpace(c.SkillArgs), " ")
	o, err := FollowUp(w, kind, request, env)
	if err != nil {
		return deny(err.Error() + `; invoke orch-hook:follow-up with "lightweight|partial|full <the user's request>".`)
	}
	w.UserAsked = false
	o.Changed = true
	if o.Start != "" {
		return o
	}
	o.Context = "orch-hook: " + o.Context
	return o
}

// agentName strips the plugin namespace: "orch-hook:code-quality" and
// "code-quality" are the workflow's code-quality.
func agentName(subagentType string) (name string, workflow bool) {
	name = strings.TrimPrefix(subagentType, PluginPrefix)
	return name, contains(WorkflowAgents, name)
}

// readOnlyAgents may run beside the workflow: they cannot write.
var readOnlyAgents = map[string]bool{"Explore": true, "Plan": true}

func (w *Workflow) foreign(c *Call) bool {
	return w.Owner != "" && c.Session != "" && c.Session != w.Owner
}

func (w *Workflow) foreignReason() string {
	return "orch-hook: this workflow belongs to another Claude Code session. To continue it here, type /orch-hook:resume (see `orch-hook status`)."
}

// deny builds a PreToolUse deny with the standard reason.
func (w *Workflow) deny(gate int, what string) Outcome {
	reason := w.reason(gate, what)
	o := Outcome{Verdict: Deny, Gate: gate, Reason: reason}
	o.log(Record{Type: RecDeny, Gate: gate, Reason: reason, Phase: w.Phase})
	return o
}

// reason is "orch-hook: [Gate N] WHAT Now: WHERE. Next: NEXT."
func (w *Workflow) reason(gate int, what string) string {
	var b strings.Builder
	b.WriteString("orch-hook: ")
	if gate > 0 {
		fmt.Fprintf(&b, "[Gate %d] ", gate)
	}
	b.WriteString(strings.TrimSpace(what))
	fmt.Fprintf(&b, " Now: %s. Next: %s.", w.Where(), w.Next(nil))
	return b.String()
}

func (w *Workflow) preAgent(c *Call, env *Env) Outcome {
	name, isWorkflow := agentName(c.SubagentType)
	if !isWorkflow {
		if readOnlyAgents[c.SubagentType] {
			return Outcome{}
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
		o := Outcome{Verdict: Deny, Reason: w.foreignReason()}
		o.log(Record{Type: RecDeny, Reason: o.Reason, ToolUseID: c.ToolUseID, AgentType: name})
		return o
	}
	if c.Isolation != "" {
		return w.deny(0, fmt.Sprintf("isolation %q on a workflow agent is not allowed: its edits would happen outside the project the gates watch; launch %s without isolation.", c.Isolation, name))
	}
	if o, bad := w.tampered(env); bad {
		return o
	}
	o := Outcome{}
	job, task, gate, why := w.jobFor(name, c, env, &o)
	if why != "" {
		d := w.deny(gate, why)
		d.Records[0].AgentType = name
		d.Records[0].ToolUseID = c.ToolUseID
		d.Records[0].Task = task
		// Taking an appended phase is kept even when the launch is refused.
		d.Changed = o.Changed
		d.Records = append(o.Records, d.Records...)
		return d
	}
	l := &Launch{ToolUseID: c.ToolUseID, Agent: name, Job: job, Task: task, Phase: w.Phase, State: w.Current, Background: c.Background, Status: Running, Started: env.Now}
	w.Launches = append(w.Launches, l)
	if task > 0 {
		tr := w.task(task)
		tr.Status = Running
		tr.Launches++
	}
	o.Changed = true
	o.log(Record{Type: RecLaunch, AgentType: name, ToolUseID: c.ToolUseID, Task: task, Phase: w.Phase, Reason: job})
	return o
}

// jobFor decides whether agent may be launched now, by the launch rules
// of the current state (launchRules): the job it does, the task it works
// on, or the refusal with the gate it names.
func (w *Workflow) jobFor(agent string, c *Call, env *Env, o *Outcome) (job string, task, gate int, why string) {
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
		if why := g.fails(w, agent); why != "" {
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
	decide       func(w *Workflow, agent string, c *Call, env *Env, o *Outcome) (string, int, int, string)
}

// launchRefusal is a refusal's text ({agent}, {step} and {phase} filled
// in); taskFromPrompt: the refusal is recorded against the task the
// launch names.
type launchRefusal struct {
	why            string
	taskFromPrompt bool
}

func (w *Workflow) launchText(text, agent string) string {
	return strings.NewReplacer("{agent}", agent, "{step}", w.Current, "{phase}", strconv.Itoa(w.Phase)).Replace(text)
}

// Launch guards, by name, in the order they are checked.
const (
	GuardNotWaitingForAnswers = "the user answered the questions"
	GuardNotRunning           = "the agent is not already running"
	GuardNotReturnedThisRound = "the agent has not returned in this discovery round"
)

var launchGuards = []struct {
	name  string
	fails func(w *Workflow, agent string) string
}{
	{GuardNotWaitingForAnswers, func(w *Workflow, _ string) string {
		if w.WaitingOn == "answers" {
			return "the user has not answered the questions yet; wait for their answers before relaunching requirements-analyst."
		}
		return ""
	}},
	{GuardNotRunning, func(w *Workflow, agent string) string {
		if inFlight := w.inFlightOf(agent); len(inFlight) > 0 {
			return fmt.Sprintf("%s is already running (%s); wait for it to return.", agent, inFlight[0].ToolUseID)
		}
		return ""
	}},
	{GuardNotReturnedThisRound, func(w *Workflow, agent string) string {
		for _, l := range w.Launches[min(w.DiscoveryFrom, len(w.Launches)):] {
			if l.Agent == agent && l.Status == Returned {
				return fmt.Sprintf("%s already returned in this discovery round.", agent)
			}
		}
		return ""
	}},
}

// launchRules: per state, who may be launched (README, "The rules in
// detail"; the gates are README, "The seven gates").
var launchRules = map[string]launchRule{
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
		guards: []string{GuardNotRunning},
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
func (w *Workflow) jobF2(agent string, c *Call, env *Env, _ *Outcome) (string, int, int, string) {
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
func (w *Workflow) job4a(agent string, c *Call, env *Env, o *Outcome) (string, int, int, string) {
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
func taskOf(c *Call) int {
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
	case tr != nil && tr.Status == Running:
		return fmt.Sprintf("Task %02d is already in flight; one code-implementer per task.", n)
	case tr != nil && tr.Status == TaskComplete:
		return fmt.Sprintf("Task %02d already returned IMPLEMENTATION STATUS: COMPLETE in this step.", n)
	case tr != nil && tr.Status == Returned:
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
func (w *Workflow) takeAppendedPhase(env *Env, o *Outcome) string {
	changed, bad := w.planDrift(env)
	if bad != nil {
		return fmt.Sprintf("cannot read %s (%v), so the plan cannot be checked; fix the directory's permissions.", TasksDir, env.loadErr)
	}
	if len(changed) > 0 {
		o.log(Record{Type: RecUpdate, Reason: fmt.Sprintf("appended phase not taken: the plan changed outside orch-hook (%s)", nameList(changed)), Phase: w.Phase})
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
	o.log(Record{Type: RecTransition, Reason: fmt.Sprintf("phase %d appended to MASTER_PLAN.md and taken (%s)", last.Number, taskList(phaseNumbers(w.Plan.Phase(last.Number)))), Phase: last.Number, Input: from})
	return ""
}

// tampered blocks progress while the plan files differ from what orch-hook
// last allowed (see repair.go for the way back).
func (w *Workflow) tampered(env *Env) (Outcome, bool) {
	changed, o := w.planDrift(env)
	if o != nil {
		return *o, true
	}
	if len(changed) == 0 {
		return Outcome{}, false
	}
	return w.driftRefusal(env, changed, nil, ""), true
}

// unsandboxedWhat refuses a Bash call that asks to leave Claude Code's
// sandbox, which is what keeps the model's shell off the state.
const unsandboxedWhat = "dangerouslyDisableSandbox is not allowed while an orch-hook workflow is active: the sandbox is what keeps the model's shell away from the workflow's state. Run the command without it; if it needs a path the sandbox denies, ask the user."

func (w *Workflow) preBash(c *Call) Outcome {
	if c.Unsandboxed {
		o := w.deny(0, unsandboxedWhat)
		o.Records[0].ToolUseID = c.ToolUseID
		return o
	}
	if c.touchesState() {
		o := w.deny(0, c.stateWhat())
		o.Records[0].ToolUseID = c.ToolUseID
		return o
	}
	return Outcome{}
}

func (w *Workflow) preSendMessage(c *Call) Outcome {
	to := strings.TrimSpace(c.SendTo)
	_, named := agentName(to)
	if named || w.launchByAgent(to) != nil {
		return w.deny(0, "SendMessage to a workflow agent is not allowed: each launch does one job and returns its result line; launch a new agent instead.")
	}
	return Outcome{}
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
