package gates

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// The coordinate workflow's states (README, "The coordinate workflow").
const (
	CInitialize = "initialize"
	CResearch   = "research"
	CPlan       = "plan"
	CImplement  = "implement"
	CTest       = "test"
	CDebug      = "debug"
	CDocument   = "document"
	CComplete   = "complete"
)

// CoordTableVersion stamps the coordinate tables stored in checkpoints.
const CoordTableVersion = 1

// The coordinate workflow's agents.
const (
	ResearchSpecialist = "research-specialist"
	ResearchSupervisor = "research-sub-supervisor"
	ImplSupervisor     = "implementation-sub-supervisor"
	TestSupervisor     = "testing-sub-supervisor"
	PlanArchitect      = "plan-architect"
	ImplementationExec = "implementation-executor"
	TestSpecialist     = "test-specialist"
	DebugAnalyst       = "debug-analyst"
	DocWriter          = "doc-writer"
	MaxDebugRetries    = 2 // debug -> test retries per workflow (README, "Scopes")
)

// CoordAgents lists the coordinate workflow's agents.
var CoordAgents = []string{ResearchSpecialist, ResearchSupervisor, ImplSupervisor, TestSupervisor, PlanArchitect, ImplementationExec, TestSpecialist, DebugAnalyst, DocWriter}

// supervisorWorker: the worker each supervisor launches.
var supervisorWorker = map[string]string{
	ResearchSupervisor: ResearchSpecialist,
	ImplSupervisor:     ImplementationExec,
	TestSupervisor:     TestSpecialist,
}

// Coordinate triggers.
const (
	OnInitialized      = "initialized"
	OnResearchVerified = "research reports verified"
	OnPlanVerified     = "PLAN_CREATED verified"
	OnImplemented      = "implementation complete"
	OnTestsPass        = LineTestsPass
	OnTestsFail        = LineTestsFail
	OnDebugVerified    = "debug report verified"
	OnSummaryVerified  = "summary verified"
)

// Guard names of the coordinate table: each names the scopes whose path
// takes the edge.
const (
	GuardScopeResearchOnly = "scope research-only"
	GuardScopePlans        = "scope research-and-plan or research-and-revise"
	GuardScopeFull         = "scope full-implementation"
	GuardScopeDebug        = "scope debug-only"
	GuardDebugLeft         = "debug retries < 2"
	GuardDebugUsed         = "debug retries = 2 (complete, failure recorded)"
)

// CoordTransitions is the coordinate workflow's table, with the edges each
// scope's path takes (README, "Scopes"). debug-only skips implement: its
// path is research -> debug -> test, and test PASS ends it (there is no
// document step).
var CoordTransitions = []Transition{
	{From: CInitialize, To: CResearch, On: OnInitialized},
	{From: CResearch, To: CComplete, On: OnResearchVerified, Guard: GuardScopeResearchOnly},
	{From: CResearch, To: CPlan, On: OnResearchVerified, Guard: GuardScopePlans},
	{From: CResearch, To: CPlan, On: OnResearchVerified, Guard: GuardScopeFull},
	{From: CResearch, To: CDebug, On: OnResearchVerified, Guard: GuardScopeDebug},
	{From: CPlan, To: CComplete, On: OnPlanVerified, Guard: GuardScopePlans},
	{From: CPlan, To: CImplement, On: OnPlanVerified, Guard: GuardScopeFull},
	{From: CImplement, To: CTest, On: OnImplemented},
	{From: CTest, To: CDocument, On: OnTestsPass, Guard: GuardScopeFull},
	{From: CTest, To: CComplete, On: OnTestsPass, Guard: GuardScopeDebug},
	{From: CTest, To: CDebug, On: OnTestsFail, Guard: GuardDebugLeft},
	{From: CTest, To: CComplete, On: OnTestsFail, Guard: GuardDebugUsed},
	{From: CDebug, To: CTest, On: OnDebugVerified},
	{From: CDocument, To: CComplete, On: OnSummaryVerified},
}

var coordGuards = map[string]func(*Coord) bool{
	GuardScopeResearchOnly: func(c *Coord) bool { return c.Scope == ScopeResearchOnly },
	GuardScopePlans:        func(c *Coord) bool { return c.Scope == ScopeResearchAndPlan || c.Scope == ScopeResearchAndRevise },
	GuardScopeFull:         func(c *Coord) bool { return c.Scope == ScopeFullImplementation },
	GuardScopeDebug:        func(c *Coord) bool { return c.Scope == ScopeDebugOnly },
	GuardDebugLeft:         func(c *Coord) bool { return c.Retries < MaxDebugRetries },
	GuardDebugUsed:         func(c *Coord) bool { return c.Retries >= MaxDebugRetries },
}

// scopeGuard reports whether a guard is about the scope (fixed for the
// workflow) rather than a counter.
func scopeGuard(g string) bool { return strings.HasPrefix(g, "scope ") }

// coordinate is the coordinate workflow's machine: a scope guard is fixed,
// so each scope's table holds only its own path.
var coordinate = &Machine[*Coord]{Rows: CoordTransitions, Guards: coordGuards, Fixed: scopeGuard}

// CoordTable is the table stored in a coordinate checkpoint: the states and
// edges of the scope's path only, so a transition off the path is refused
// by the table itself.
func CoordTable(scope string) map[string]string {
	return coordinate.Compile(&Coord{Scope: scope}, CInitialize)
}

// CoordPath is the rows of CoordTransitions a scope's path takes ("" for
// every row), in table order: what `orch-hook graph --workflow coordinate`
// draws.
func CoordPath(scope string) []Transition {
	if scope == "" {
		return append([]Transition(nil), CoordTransitions...)
	}
	return coordinate.Path(&Coord{Scope: scope}, CInitialize)
}

// Coord is the coordinate workflow's runtime data (the checkpoint's
// "workflow" section); Current and Completed mirror state_machine.
type Coord struct {
	Kind         string `json:"kind"` // "coordinate"
	Description  string `json:"description"`
	Scope        string `json:"scope"`
	ScopeWhy     string `json:"scope_why,omitempty"`
	Topic        string `json:"topic"`
	Paths        Paths  `json:"paths"`
	Topics       int    `json:"research_topics"`
	ComplexWhy   string `json:"complexity_why,omitempty"`
	Hierarchical bool   `json:"hierarchical"`
	Owner        string `json:"owner_session,omitempty"`

	Launches []*CoordLaunch `json:"launches,omitempty"`
	// Reports are the verified research reports (relative paths).
	Reports []string `json:"reports,omitempty"`
	// Writes are the files agents wrote under the topic directory with
	// their write tools: what a reported artifact is checked against.
	Writes      []*AgentWrites              `json:"writes,omitempty"`
	Supervisors map[string]*SupervisorState `json:"supervisors,omitempty"`
	// TrackDeps are the plan's phase (track) dependencies, read when the
	// plan is verified; a track is not launched before those it needs.
	TrackDeps map[int][]int `json:"track_dependencies,omitempty"`
	// ContextReduction and TimeSavings are the supervisors' measured
	// effects, as shown by status.
	ContextReduction string   `json:"context_reduction,omitempty"`
	TimeSavings      string   `json:"time_savings,omitempty"`
	Retries          int      `json:"retries"`
	LastError        string   `json:"last_error,omitempty"`
	FailedState      string   `json:"failed_state,omitempty"`
	Outcome          string   `json:"outcome,omitempty"` // how it ended
	Nudged           []string `json:"nudged,omitempty"`
	// Kept are nudged agents' reports, read with their next message.
	Kept       []KeptReport `json:"kept_reports,omitempty"`
	StopBlocks int          `json:"stop_blocks"`
	Decisions  []string     `json:"decisions,omitempty"`

	Current   string   `json:"-"`
	Completed []string `json:"-"`
}

// CoordLaunch is one coordinate agent launch (by the orchestrator, or a
// worker by its supervisor).
type CoordLaunch struct {
	ToolUseID string `json:"tool_use_id"`
	AgentID   string `json:"agent_id,omitempty"`
	Agent     string `json:"agent"`
	Parent    string `json:"parent,omitempty"` // the supervisor's agent_id
	Unit      string `json:"unit,omitempty"`   // a worker's topic, track or stage
	Track     int    `json:"track,omitempty"`  // an implementation track's number
	// Linked: PostToolUse confirmed AgentID (a SubagentStop before it only
	// guesses).
	Linked bool `json:"linked,omitempty"`
	// DurationMs is the client's own measure of a foreground agent's run
	// (PostToolUse totalDurationMs): what a supervisor is told and sums.
	DurationMs int64 `json:"duration_ms,omitempty"`
	// Result is a worker's own verdict: PASS or FAIL (a test stage),
	// COMPLETE or BLOCKED (a track).
	Result     string    `json:"result,omitempty"`
	State      string    `json:"state"`
	Background bool      `json:"background"`
	Status     string    `json:"status"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitempty"`
	Notice     string    `json:"notice,omitempty"`
}

// DecodeCoord reads the workflow section of a coordinate checkpoint.
func DecodeCoord(raw []byte) (*Coord, error) {
	c := &Coord{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Encode writes the workflow section.
func (c *Coord) Encode() ([]byte, error) { return jsonenc.Marshal(c) }

// FileCheck is what the caller found at a path an agent reported.
type FileCheck struct {
	Rel    string // relative to the project root, when inside
	Inside bool   // inside the project, symlinks resolved
	Exists bool
	Size   int64
}

// CoordEnv is what a coordinate decision may consult: the clock, the Stop
// cap, and read-only looks at the project the caller provides.
type CoordEnv struct {
	Root    string // the project root
	Now     time.Time
	StopCap int
	// Inspect resolves a reported path (absolute, or relative to the
	// project root).
	Inspect func(path string) FileCheck
	// Hash resolves a path like Inspect and returns it relative to the
	// project root with the SHA-256 (hex) of the regular file there; an
	// error when the file cannot be read (missing, too large, outside).
	Hash func(path string) (rel, sum string, err error)
	// List names the files of a directory relative to the project root.
	List func(rel string) []string
	// Read returns a file's content (relative to the project root); nil
	// when it cannot be read.
	Read func(rel string) []byte
}

// NewCoord initializes the coordinate workflow (state initialize done):
// scope (given or detected), topic, research topics, paths.
func NewCoord(description, scope, session, topicDir string) (*Coord, error) {
	c := &Coord{Kind: "coordinate", Description: description, Owner: session, Current: CInitialize}
	if scope == "" {
		c.Scope, c.ScopeWhy = DetectScope(description)
	} else {
		c.Scope, c.ScopeWhy = scope, "given with --scope"
	}
	c.Topic = TopicName(description)
	c.Topics, c.ComplexWhy = Complexity(description)
	c.Hierarchical = Hierarchical(c.Topics)
	c.Paths = ArtifactPaths(topicDir, make([]string, c.Topics))
	// Initialization is done: the table's first row moves on to research.
	if _, err := c.fire(OnInitialized); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Coord) fire(on string) (Transition, error) {
	t, err := coordinate.Fire(c, c.Current, on)
	if err != nil {
		return Transition{}, err
	}
	if c.Current != "" && !contains(c.Completed, c.Current) {
		c.Completed = append(c.Completed, c.Current)
	}
	c.Current = t.To
	c.StopBlocks = 0
	return t, nil
}

// CoordTriggers lists the triggers the scope's path has from state, sorted.
func CoordTriggers(scope, from string) []string {
	return coordinate.Triggers(&Coord{Scope: scope}, from)
}

// coordAgent strips the plugin namespace; ok when it is a coordinate agent.
func coordAgent(t string) (string, bool) {
	name := strings.TrimPrefix(t, PluginPrefix)
	return name, contains(CoordAgents, name)
}

// Next says what the orchestrator does now.
func (c *Coord) Next() string {
	switch c.Current {
	case CResearch:
		if c.Hierarchical {
			return fmt.Sprintf("launch research-sub-supervisor for the %d research topics (reports in %s)", c.Topics, c.Paths.ReportsDir)
		}
		return fmt.Sprintf("launch research-specialist for each of the %d topics, in parallel (reports in %s; %d verified so far)", c.Topics, c.Paths.ReportsDir, len(c.Reports))
	case CPlan:
		return "launch plan-architect to write " + c.Paths.PlanPath
	case CImplement:
		return "launch implementation-executor (or implementation-sub-supervisor for parallel tracks) to implement " + c.Paths.PlanPath
	case CTest:
		return "launch test-specialist (or testing-sub-supervisor) to run the tests"
	case CDebug:
		if c.Retries == 0 {
			return fmt.Sprintf("launch debug-analyst (report in %s; the first debug round, before any retry)", c.Paths.DebugDir)
		}
		return fmt.Sprintf("launch debug-analyst (report in %s; debug retry %d/%d)", c.Paths.DebugDir, c.Retries, MaxDebugRetries)
	case CDocument:
		return "launch doc-writer (summary in " + c.Paths.SummariesDir + ")"
	case CComplete:
		return "nothing; the workflow is complete"
	}
	return "see `orch-hook status`"
}

func (c *Coord) reason(what string) string {
	return fmt.Sprintf("orch-hook: %s Now: coordinate (%s), state %s. Next: %s.", strings.TrimSpace(what), c.Scope, c.Current, c.Next())
}

func (c *Coord) deny(what string, call *Call) Outcome {
	r := c.reason(what)
	if call.AgentID != "" {
		// Inside a subagent: the orchestrator's next step is no advice here.
		r = fmt.Sprintf("orch-hook: %s (coordinate workflow, state %s.)", strings.TrimSpace(what), c.Current)
	}
	o := Outcome{Verdict: Deny, Reason: r}
	o.log(Record{Type: RecDeny, Reason: r, ToolUseID: call.ToolUseID, AgentID: call.AgentID})
	return o
}

// DecideCoord answers one hook event against the coordinate workflow.
func DecideCoord(c *Coord, call *Call, env *CoordEnv) Outcome {
	if o, denied := staticRules(call); denied {
		return o
	}
	if c.Current == CComplete {
		if o, denied := guardFinishedState(call, env.Root); denied {
			return o
		}
		if call.Event == UserPromptSubmit && !isNotification(call.Prompt) {
			if name, ok := commandName(call.Prompt); ok && (name == "coordinate" || name == "orchestrate") && strings.HasPrefix(strings.TrimSpace(call.Prompt), "/") {
				return startFromPrompt(call)
			}
		}
		if call.Event == PostToolUse && (call.Tool == "Agent" || call.Tool == "Task") {
			return c.postAgent(call) // the last foreground agent's line
		}
		return c.deliver(call)
	}
	switch call.Event {
	case PreToolUse:
		switch call.Tool {
		case "Agent", "Task":
			return c.preAgent(call, env)
		case "Bash":
			if call.Unsandboxed {
				return c.deny(unsandboxedWhat, call)
			}
			if call.touchesState() {
				return c.deny(call.stateWhat(), call)
			}
			if topic := strings.TrimSuffix(c.Paths.TopicPath, "/"); call.AgentID == "" && topic != "" && call.reaches(topic) {
				return c.deny(fmt.Sprintf("this command may change %s, the workflow's artifacts; the orchestrator does not write them: launch the agent that owes them.", topic), call)
			}
		case "Workflow":
			return c.deny("the native Workflow tool is not allowed while an orch-hook workflow is active.", call)
		case "Skill":
			if name, ok := commandName(strings.ToLower(call.Skill)); ok && name == "follow-up" {
				return c.deny("orch-hook:follow-up reopens a complete orchestrate workflow; the coordinate workflow has no follow-ups.", call)
			}
		case "Write", "Edit", "NotebookEdit":
			return c.preWrite(call, env)
		}
		if IsMCP(call.Tool) {
			return c.preMCP(call, env)
		}
	case PostToolUse:
		switch call.Tool {
		case "Agent", "Task":
			return c.postAgent(call)
		case "Write", "Edit", "NotebookEdit":
			return c.recordWrite(call, env)
		}
	case PostToolUseFailure:
		if o, ok := sandboxRefusal(call); ok {
			return o
		}
		if call.Tool == "Agent" || call.Tool == "Task" {
			if l := c.byTool(call.ToolUseID); l != nil && l.Status == Running {
				l.Status, l.Ended = Failed, env.Now
				o := Outcome{Changed: true, Context: fmt.Sprintf("[coordinate %s] launch of %s failed; relaunch it.", c.Current, l.Agent)}
				o.log(Record{Type: RecComplete, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "failed: " + shorten.OneLine(call.Failure)})
				return o
			}
		}
	case SubagentStop:
		return c.subagentStop(call, env)
	case Stop:
		return c.stop(call, env)
	case UserPromptSubmit:
		if isNotification(call.Prompt) {
			return c.deliver(call)
		}
		return c.userPrompt(call)
	case SessionStart:
		return Outcome{Context: shorten.Runes(fmt.Sprintf("orch-hook: a coordinate workflow (%s) is active: %q. Now: state %s. Next: %s.", c.Scope, shorten.Runes(c.Description, 200), c.Current, c.Next()), 1990)}
	}
	return Outcome{}
}

// preWrite keeps writes inside the project and out of orch-hook's and
// Claude Code's configuration, and the orchestrator out of the topic
// directory: its artifacts are written by the agents that owe them.
func (c *Coord) preWrite(call *Call, env *CoordEnv) Outcome {
	rel, inside := relPath(env.Root, call.Path)
	topic := strings.TrimSuffix(c.Paths.TopicPath, "/")
	switch {
	case !inside || call.Unresolved:
		return c.deny(outsideWhat(call.Path, env.Root, inside), call)
	case under(rel, ".orchestrator"):
		return c.deny(fmt.Sprintf("%s is orch-hook's; no agent writes there. Use `orch-hook status` to read it.", rel), call)
	case under(rel, ".claude") && !under(rel, ".claude/specs"):
		return c.deny(fmt.Sprintf("%s is Claude Code's configuration; it may not change while a workflow is active. Ask the user.", rel), call)
	case call.AgentID == "" && topic != "" && under(rel, topic):
		return c.deny(fmt.Sprintf("%s is an artifact of the workflow (%s); the orchestrator does not write it: launch the agent that owes it.", rel, topic), call)
	case topic != "" && under(rel, topic):
		agent, _ := coordAgent(call.AgentType)
		for _, o := range c.artifactOwners() {
			if under(rel, strings.TrimSuffix(o.dir, "/")) && !contains(o.agents, agent) {
				return c.deny(fmt.Sprintf("%s belongs to %s; %s does not write there.", rel, strings.Join(o.agents, " and "), orText(agent, call.AgentType)), call)
			}
		}
	}
	return Outcome{}
}

type artifactOwner struct {
	dir    string
	agents []string
}

// artifactOwners: who writes each directory of the topic.
func (c *Coord) artifactOwners() []artifactOwner {
	return []artifactOwner{
		{c.Paths.ReportsDir, []string{ResearchSpecialist}},
		{c.Paths.PlansDir, []string{PlanArchitect, ImplementationExec}},
		{c.Paths.DebugDir, []string{DebugAnalyst}},
		{c.Paths.SummariesDir, []string{DocWriter}},
	}
}

func (c *Coord) byTool(id string) *CoordLaunch {
	for _, l := range c.Launches {
		if l.ToolUseID == id {
			return l
		}
	}
	return nil
}

func (c *Coord) byAgent(id string) *CoordLaunch {
	for _, l := range c.Launches {
		if id != "" && l.AgentID == id {
			return l
		}
	}
	return nil
}

func (c *Coord) running(agent, parent string) []*CoordLaunch {
	var out []*CoordLaunch
	for _, l := range c.Launches {
		if l.Status == Running && l.Agent == agent && (parent == "*" || l.Parent == parent) {
			out = append(out, l)
		}
	}
	return out
}

// allowedHere: the coordinate agents the orchestrator launches in a state.
func (c *Coord) allowedHere() []string {
	switch c.Current {
	case CResearch:
		if c.Hierarchical {
			return []string{ResearchSupervisor}
		}
		return []string{ResearchSpecialist}
	case CPlan:
		return []string{PlanArchitect}
	case CImplement:
		return []string{ImplementationExec, ImplSupervisor}
	case CTest:
		return []string{TestSpecialist, TestSupervisor}
	case CDebug:
		return []string{DebugAnalyst}
	case CDocument:
		return []string{DocWriter}
	}
	return nil
}

func (c *Coord) preAgent(call *Call, env *CoordEnv) Outcome {
	name, ok := coordAgent(call.SubagentType)
	if !ok {
		if readOnlyAgents[call.SubagentType] {
			return Outcome{}
		}
		return c.deny(fmt.Sprintf("agent type %q is not part of the coordinate workflow; only its agents (orch-hook:<name>) and the read-only Explore and Plan may run.", orText(call.SubagentType, "general-purpose")), call)
	}
	if call.Isolation != "" {
		return c.deny("isolation on a workflow agent is not allowed.", call)
	}
	parent := ""
	if call.AgentID != "" {
		// A nested launch: only a supervisor launches, and only its workers.
		sup, _ := coordAgent(call.AgentType)
		worker, isSup := supervisorWorker[sup]
		if !isSup {
			return c.deny(fmt.Sprintf("%s may not launch agents; only the sub-supervisors launch their workers.", orText(sup, call.AgentType)), call)
		}
		if name != worker {
			return c.deny(fmt.Sprintf("%s launches %s workers, not %s.", sup, worker, name), call)
		}
		// Tie the supervisor's launch to its agent id at its first launch.
		if c.byAgent(call.AgentID) == nil {
			if l := c.running(sup, ""); len(l) > 0 && l[0].AgentID == "" {
				l[0].AgentID = call.AgentID
			}
		}
		parent = call.AgentID
		if sup == ImplSupervisor {
			track := trackNumber(call.Prompt)
			if track == 0 {
				return c.deny(fmt.Sprintf("an implementation track's prompt starts with `Track N: <phase title>` (N the plan's phase number in %s), so its dependencies can be checked.", c.Paths.PlanPath), call)
			}
			if _, known := c.TrackDeps[track]; len(c.TrackDeps) > 0 && !known {
				return c.deny(fmt.Sprintf("the plan %s has no phase %d (its phases: %s); a track is one of the plan's phases.", c.Paths.PlanPath, track, joinInts(trackNumbers(c.TrackDeps))), call)
			}
			if blocked := TrackBlockedBy(track, c.TrackDeps, c.tracksDone()); len(blocked) > 0 {
				return c.deny(fmt.Sprintf("track %d depends on track(s) %s (the plan's dependencies), which have not completed; launch those first and this one after they return.", track, joinInts(blocked)), call)
			}
		}
	} else {
		allowed := c.allowedHere()
		if !contains(allowed, name) {
			why := fmt.Sprintf("%s does not run in state %s (there: %s).", name, c.Current, strings.Join(allowed, ", "))
			if c.Current == CResearch && (name == ResearchSpecialist || name == ResearchSupervisor) {
				if c.Hierarchical {
					why = fmt.Sprintf("research has %d topics (4 or more): it goes through one research-sub-supervisor, which launches the research-specialists.", c.Topics)
				} else {
					why = fmt.Sprintf("research has %d topics (fewer than 4): launch research-specialists directly, one per topic, not research-sub-supervisor.", c.Topics)
				}
			}
			return c.deny(why, call)
		}
		if running := len(c.running(name, "")); name == ResearchSpecialist && len(c.Reports)+running >= c.Topics {
			return c.deny(fmt.Sprintf("research has %d topics and all are covered (%d reports verified, %d research-specialists running); wait for the running ones to return.", c.Topics, len(c.Reports), running), call)
		}
		if name != ResearchSpecialist && len(c.running(name, "")) > 0 {
			return c.deny(name+" is already running; wait for it to return.", call)
		}
	}
	l := &CoordLaunch{ToolUseID: call.ToolUseID, Agent: name, Parent: parent, Unit: shorten.Runes(firstLine(call.Prompt), 80), State: c.Current, Background: call.Background, Status: Running, Started: env.Now}
	if parent != "" && name == ImplementationExec {
		l.Track = trackNumber(call.Prompt)
	}
	c.Launches = append(c.Launches, l)
	o := Outcome{Changed: true}
	o.log(Record{Type: RecLaunch, AgentType: name, ToolUseID: call.ToolUseID, AgentID: call.AgentID, Reason: c.Current})
	return o
}

var reTrackPrompt = lazyRegexp(`(?i)^\s*track\s+(\d+)\b`)

// trackNumber reads N from a track worker's prompt "Track N: <title>"; 0
// when it has none.
func trackNumber(prompt string) int {
	m := reTrackPrompt.FindStringSubmatch(firstLine(prompt))
	if m == nil {
		return 0
	}
	n := 0
	fmt.Sscanf(m[1], "%d", &n)
	return n
}

// tracksDone lists the tracks completed by supervisors' workers (a
// relaunched supervisor keeps what the previous one finished).
func (c *Coord) tracksDone() []int {
	var out []int
	for _, l := range c.Launches {
		if l.Parent != "" && l.Track > 0 && l.Status == Returned {
			out = append(out, l.Track)
		}
	}
	return out
}

func trackNumbers(m map[int][]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (c *Coord) postAgent(call *Call) Outcome {
	l := c.byTool(call.ToolUseID)
	if l == nil {
		return Outcome{}
	}
	o := Outcome{}
	if call.LinkAgentID != "" && (l.AgentID != call.LinkAgentID || !l.Linked) {
		c.link(l, call.LinkAgentID)
		o.Changed = true
	}
	if call.Status == "completed" && call.DurationMs > 0 && l.DurationMs != call.DurationMs {
		l.DurationMs = call.DurationMs
		c.refreshWorker(l)
		o.Changed = true
	}
	if call.Status == "async_launched" && !l.Background {
		l.Background = true
		o.Changed = true
	}
	if l.Notice != "" && call.Status == "completed" {
		o.Context, l.Notice = l.Notice, ""
		o.Changed = true
	}
	return o
}

// link ties a launch to its agent id, as PostToolUse reports it. Parallel
// foreground agents of one kind may have stopped before it, each taken for
// the oldest unlinked launch of its kind: whatever was recorded for the
// agent moves to its true launch, and a guess the launch held moves to
// another unlinked one (its own PostToolUse corrects it in turn).
func (c *Coord) link(l *CoordLaunch, agentID string) {
	touched := []*CoordLaunch{l}
	if holder := c.byAgent(agentID); holder != nil && holder != l {
		swapResults(l, holder)
		touched = append(touched, holder)
	} else if l.AgentID != "" && l.AgentID != agentID {
		for _, u := range c.Launches {
			if u != l && !u.Linked && u.AgentID == "" && u.Status == Running && u.Agent == l.Agent {
				swapResults(l, u)
				touched = append(touched, u)
				break
			}
		}
	}
	l.AgentID, l.Linked = agentID, true
	for _, t := range touched {
		c.refreshWorker(t)
	}
}

// duration is how long a launch's agent ran: the client's measure when it
// gave one, else from launch to return as orch-hook saw them (0 while it
// runs).
func (l *CoordLaunch) duration() int64 {
	if l.DurationMs > 0 {
		return l.DurationMs
	}
	if l.Ended.IsZero() {
		return 0
	}
	return l.Ended.Sub(l.Started).Milliseconds()
}

var reUnitPrefix = lazyRegexp(`(?i)^\s*(?:topic|stage|track\s+\d+)\s*:\s*`)

// unitLabel is a worker's topic, stage or track title without the prefix
// its prompt starts with ("Topic: caching" -> "caching").
func unitLabel(unit string) string {
	if rest := reUnitPrefix.get().FindStringIndex(unit); rest != nil && rest[1] < len(unit) {
		return unit[rest[1]:]
	}
	return unit
}

// swapResults exchanges what was recorded of two launches' agents, keeping
// each launch's own identity (tool use, unit, start, parent).
func swapResults(a, b *CoordLaunch) {
	a.AgentID, b.AgentID = b.AgentID, a.AgentID
	a.Status, b.Status = b.Status, a.Status
	a.Ended, b.Ended = b.Ended, a.Ended
	a.Notice, b.Notice = b.Notice, a.Notice
	a.DurationMs, b.DurationMs = b.DurationMs, a.DurationMs
	a.Result, b.Result = b.Result, a.Result
}

// refreshWorker rewrites a supervisor's record of the worker l now holds
// with l's unit and duration, after link moved it.
func (c *Coord) refreshWorker(l *CoordLaunch) {
	if l.Parent == "" || l.AgentID == "" {
		return
	}
	for _, st := range c.Supervisors {
		for _, list := range [][]WorkerRecord{st.Workers, st.Tracks} {
			for i := range list {
				r := &list[i]
				if r.AgentID != l.AgentID {
					continue
				}
				if r.TrackName != "" || r.TrackID != "" {
					r.TrackName, r.TrackID = unitLabel(l.Unit), ""
					if l.Track > 0 {
						r.TrackID = fmt.Sprintf("track_%d", l.Track)
					}
				} else {
					r.Topic = unitLabel(l.Unit)
				}
				if d := l.duration(); d > 0 {
					r.DurationMs = d
				}
			}
		}
	}
}

// deliver hands a background agent's line over with its notification.
func (c *Coord) deliver(call *Call) Outcome {
	if call.Event != UserPromptSubmit || !isNotification(call.Prompt) {
		return Outcome{}
	}
	l := c.byAgent(firstMatch(reNotifyID, call.Prompt))
	if l == nil {
		l = c.byTool(firstMatch(reNotifyTool, call.Prompt))
	}
	if l == nil || l.Notice == "" {
		return Outcome{}
	}
	o := Outcome{Changed: true, Context: l.Notice}
	l.Notice = ""
	return o
}

// subagentStop verifies what a coordinate agent reports and advances.
func (c *Coord) subagentStop(call *Call, env *CoordEnv) Outcome {
	name, ok := coordAgent(call.AgentType)
	if !ok || call.AgentType == "" {
		return Outcome{}
	}
	l := c.byAgent(call.AgentID)
	if l == nil {
		// Not tied yet (a foreground agent's PostToolUse comes later): the
		// oldest running launch of its kind.
		for _, cand := range c.Launches {
			if cand.Status == Running && cand.Agent == name && cand.AgentID == "" && !cand.Linked {
				l = cand
				break
			}
		}
		if l == nil {
			return Outcome{}
		}
		l.AgentID = call.AgentID
	}
	if l.Status != Running {
		return Outcome{}
	}
	// A nudged agent's earlier report is read with this message, so an
	// answer holding only the result line completes it.
	text := joinKept(takeKept(&c.Kept, call.AgentID), call.Text)
	problem, line := c.verify(l, text, env)
	o := Outcome{Changed: true}
	if problem != "" {
		if !contains(c.Nudged, call.AgentID) {
			c.Nudged = append(c.Nudged, call.AgentID)
			c.Kept = keep(c.Kept, call.AgentID, text)
			reason := "orch-hook: " + problem + " Fix it, then reply with your complete report again, ending with the result line; the orchestrator cannot go on without it."
			o.Verdict, o.Reason = Block, reason
			o.log(Record{Type: RecDeny, AgentID: call.AgentID, AgentType: name, Reason: reason})
			return o
		}
		l.Status, l.Ended = Unrecognized, env.Now
		if l.Parent != "" {
			c.recordWorker(l, "", problem, env)
			o.log(Record{Type: RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "worker failed: " + problem})
			return o
		}
		c.LastError, c.FailedState = problem, c.Current
		line = fmt.Sprintf("[coordinate %s] %s returned, but %s Nothing advanced; relaunch it.", c.Current, name, problem)
		o.log(Record{Type: RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "rejected: " + problem})
		c.notify(l, line, &o)
		return o
	}
	l.Status, l.Ended = Returned, env.Now
	o.log(Record{Type: RecComplete, AgentID: call.AgentID, AgentType: name, Reason: "verified"})
	if line != "" {
		if strings.Contains(line, " -> ") {
			o.log(Record{Type: RecTransition, Reason: line})
		}
		if l.Parent == "" {
			c.notify(l, line, &o)
		}
	}
	return o
}

func (c *Coord) notify(l *CoordLaunch, line string, o *Outcome) {
	if l.Parent != "" {
		return // a supervisor's worker: the supervisor reports
	}
	// A background agent's line goes with its task notification, a
	// foreground agent's with its PostToolUse (which follows SubagentStop):
	// SubagentStop output never reaches the orchestrator.
	l.Notice = line
}

// verify checks an agent's result; it returns a problem (the step does not
// advance) or the checkpoint line.
func (c *Coord) verify(l *CoordLaunch, text string, env *CoordEnv) (problem, line string) {
	switch l.Agent {
	case ResearchSpecialist, DebugAnalyst, DocWriter:
		dir := map[string]string{ResearchSpecialist: c.Paths.ReportsDir, DebugAnalyst: c.Paths.DebugDir, DocWriter: c.Paths.SummariesDir}[l.Agent]
		paths := ParseReportCreated(text)
		if len(paths) == 0 {
			return fmt.Sprintf("your report must end with `%s <path>` naming the file you wrote under %s.", LineReportCreated, dir), ""
		}
		// One launch owes one file: the last REPORT_CREATED line counts, so
		// one agent cannot answer for every topic.
		paths = paths[len(paths)-1:]
		var rels []string
		for _, p := range paths {
			rel, why := c.checkArtifact(p, dir, l, env)
			if why != "" {
				return why, ""
			}
			rels = append(rels, rel)
		}
		switch {
		case l.Parent != "":
			c.recordWorker(l, rels[0], "", env)
			return "", ""
		case l.Agent == ResearchSpecialist:
			for _, r := range rels {
				if !contains(c.Reports, r) {
					c.Reports = append(c.Reports, r)
				}
			}
			if len(c.Reports) < c.Topics {
				return "", fmt.Sprintf("[coordinate research] report verified: %s (%d/%d) | waiting for the other topics", strings.Join(rels, ", "), len(c.Reports), c.Topics)
			}
			t, err := c.fire(OnResearchVerified)
			if err != nil {
				return err.Error(), ""
			}
			c.ended(t)
			return "", fmt.Sprintf("[coordinate research] %d/%d reports verified -> %s | next: %s", len(c.Reports), c.Topics, t.To, c.Next())
		case l.Agent == DebugAnalyst:
			if _, err := c.fire(OnDebugVerified); err != nil {
				return err.Error(), ""
			}
			round := "first debug round (debug-only)"
			if c.Retries > 0 {
				round = fmt.Sprintf("retry %d/%d", c.Retries, MaxDebugRetries)
			}
			return "", fmt.Sprintf("[coordinate debug] report %s verified -> test | %s: %s", rels[0], round, c.Next())
		default:
			if _, err := c.fire(OnSummaryVerified); err != nil {
				return err.Error(), ""
			}
			c.Outcome = "completed"
			return "", fmt.Sprintf("[coordinate document] summary %s verified -> complete | the workflow is complete", rels[0])
		}
	case PlanArchitect:
		p := planCreated(text)
		if p == "" {
			return fmt.Sprintf("your report must end with `%s <path>` naming the plan (%s).", LinePlanCreated, c.Paths.PlanPath), ""
		}
		rel, why := c.checkArtifact(p, c.Paths.PlansDir, l, env)
		if why != "" {
			return why, ""
		}
		if rel != c.Paths.PlanPath {
			return fmt.Sprintf("the plan is expected at %s; found %s.", c.Paths.PlanPath, rel), ""
		}
		if c.Scope == ScopeFullImplementation && env.Read != nil {
			deps := TrackDependencies(string(env.Read(rel)))
			if problems := CheckTrackDependencies(deps); len(problems) > 0 {
				return "the plan's phase dependencies cannot all be met: " + strings.Join(problems, " ") + " Fix the `dependencies: [N]` lines.", ""
			}
			c.TrackDeps = deps
		}
		t, err := c.fire(OnPlanVerified)
		if err != nil {
			return err.Error(), ""
		}
		if t.To == CComplete {
			c.Outcome = "completed at plan (" + c.Scope + ")"
		}
		return "", fmt.Sprintf("[coordinate plan] %s verified -> %s | next: %s", rel, t.To, c.Next())
	case ImplementationExec:
		if l.Parent != "" {
			switch FindResult(text, []string{LineImplComplete, LineImplBlocked}) {
			case LineImplComplete:
				l.Result = "COMPLETE"
				c.recordWorker(l, "", "", env)
			case LineImplBlocked:
				l.Status, l.Result = Failed, "BLOCKED"
				c.recordWorker(l, "", "track blocked: "+shorten.Runes(summaryOf(text, LineImplComplete, LineImplBlocked), 120), env)
			default:
				return missingLineProblem(text, []string{LineImplComplete, LineImplBlocked}), ""
			}
			return "", ""
		}
		switch FindResult(text, []string{LineImplComplete, LineImplBlocked}) {
		case LineImplComplete:
			if _, err := c.fire(OnImplemented); err != nil {
				return "", "[coordinate implement] IMPLEMENTATION STATUS: COMPLETE refused: " + err.Error()
			}
			return "", "[coordinate implement] IMPLEMENTATION STATUS: COMPLETE -> test | next: " + c.Next()
		case LineImplBlocked:
			return "", "[coordinate implement] IMPLEMENTATION STATUS: BLOCKED | relaunch implementation-executor once the blocker is cleared"
		}
		return missingLineProblem(text, []string{LineImplComplete, LineImplBlocked}), ""
	case TestSpecialist:
		if l.Parent != "" {
			pass, ok := ParseTests(text)
			if !ok {
				return missingLineProblem(text, []string{LineTestsPass, LineTestsFail}), ""
			}
			l.Result = map[bool]string{true: "PASS", false: "FAIL"}[pass]
			c.recordWorker(l, "", "", env)
			return "", ""
		}
		pass, ok := ParseTests(text)
		if !ok {
			return missingLineProblem(text, []string{LineTestsPass, LineTestsFail}), ""
		}
		return "", c.tested(pass, shorten.Runes(summaryOf(text, LineTestsPass, LineTestsFail), 120))
	case ResearchSupervisor, ImplSupervisor, TestSupervisor:
		return c.supervised(l, text, env)
	}
	return "", ""
}

// ended records how a research-only workflow ended.
func (c *Coord) ended(t Transition) {
	if t.To == CComplete {
		c.Outcome = "completed at research (" + c.Scope + ")"
	}
}

// tested applies a test result.
func (c *Coord) tested(pass bool, why string) string {
	if pass {
		t, err := c.fire(OnTestsPass)
		if err != nil {
			return "[coordinate test] TESTS: PASS refused: " + err.Error()
		}
		if t.To == CComplete {
			c.Outcome = "completed (debug-only: tests pass)"
		}
		return fmt.Sprintf("[coordinate test] TESTS: PASS -> %s | next: %s", t.To, c.Next())
	}
	c.LastError, c.FailedState = orText(why, "tests failed"), CTest
	t, err := c.fire(OnTestsFail)
	if err != nil {
		return "[coordinate test] TESTS: FAIL refused: " + err.Error()
	}
	if t.To == CDebug {
		c.Retries++ // a retry starts: debug, then test again
	}
	if t.To == CComplete {
		c.Outcome = fmt.Sprintf("completed with failing tests after %d debug retries: %s", c.Retries, c.LastError)
		return fmt.Sprintf("[coordinate test] TESTS: FAIL -> complete | debug retries %d/%d used; the failure is recorded: %s", c.Retries, MaxDebugRetries, c.LastError)
	}
	return fmt.Sprintf("[coordinate test] TESTS: FAIL -> debug | %s; next: %s", c.LastError, c.Next())
}

func planCreated(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if rest, ok := coordMarker(lines[i], LinePlanCreated); ok {
			return artifactPath(rest)
		}
	}
	return ""
}

// checkArtifact confines a path that l reports to the project and to dir,
// and checks that it exists, is not empty, and was written by l's agent
// (or a supervisor's worker) with its write tool, unchanged since
// (checkWriter); the problem says what was expected, what was found, and
// what to do.
func (c *Coord) checkArtifact(path, dir string, l *CoordLaunch, env *CoordEnv) (string, string) {
	dir = strings.TrimSuffix(dir, "/")
	fc := env.Inspect(path)
	if !fc.Inside {
		return "", fmt.Sprintf("%s is outside the project (a `..` or a symlink leaving it); artifacts go under %s.", path, dir)
	}
	if !under(fc.Rel, dir) {
		return "", fmt.Sprintf("%s is not under %s, where this step's artifacts go.", fc.Rel, dir)
	}
	if !fc.Exists || fc.Size == 0 {
		found := env.List(dir)
		what := "does not exist"
		if fc.Exists {
			what = "is empty"
		}
		return "", fmt.Sprintf("expected the file %s, but it %s; %s holds: %s. Check that the file was written where the prompt said.", fc.Rel, what, dir, orText(strings.Join(found, ", "), "nothing"))
	}
	if why := c.checkWriter(fc.Rel, l, env); why != "" {
		return "", why
	}
	return fc.Rel, ""
}

// supervisorKey is where a supervisor's state goes in supervisor_state.
func supervisorKey(agent string) string {
	switch agent {
	case ResearchSupervisor:
		return SupervisorKeyResearch
	case ImplSupervisor:
		return SupervisorKeyImplementation
	}
	return SupervisorKeyTesting
}

// recordWorker notes a supervisor's worker as orch-hook observed it.
func (c *Coord) recordWorker(l *CoordLaunch, output, failure string, env *CoordEnv) {
	var sup *CoordLaunch
	for _, s := range c.Launches {
		if s.AgentID == l.Parent {
			sup = s
		}
	}
	if sup == nil {
		return
	}
	st := c.supervisor(sup)
	rec := WorkerRecord{WorkerID: fmt.Sprintf("%s_%d", strings.ReplaceAll(l.Agent, "-", "_"), len(st.Workers)+len(st.Tracks)+1), AgentID: l.AgentID, Status: WorkerCompleted, OutputPath: output, DurationMs: l.duration()}
	if rec.DurationMs <= 0 {
		rec.DurationMs = env.Now.Sub(l.Started).Milliseconds() // recorded before the launch is marked ended
	}
	if failure != "" {
		rec.Status, rec.Error = WorkerFailed, failure
	}
	if l.Track > 0 {
		rec.TrackID = fmt.Sprintf("track_%d", l.Track)
	}
	switch sup.Agent {
	case ImplSupervisor:
		rec.TrackName = unitLabel(l.Unit)
		st.Tracks = append(st.Tracks, rec)
	default:
		rec.Topic = unitLabel(l.Unit)
		st.Workers = append(st.Workers, rec)
	}
	st.WorkerCount = len(st.Workers) + len(st.Tracks)
}

// tracksNotRun lists the plan's tracks that no supervisor's worker ran
// (returned, blocked or rejected) although every track they depend on
// completed: a supervisor may skip a track only when a dependency failed.
func (c *Coord) tracksNotRun() []int {
	ran := map[int]bool{}
	for _, l := range c.Launches {
		if l.Parent != "" && l.Track > 0 && l.Status != Running {
			ran[l.Track] = true
		}
	}
	done := c.tracksDone()
	var out []int
	for _, t := range trackNumbers(c.TrackDeps) {
		if !ran[t] && len(TrackBlockedBy(t, c.TrackDeps, done)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// workerSpan is the observed wall-clock time of a supervisor's workers:
// from the first launch to the last return.
func (c *Coord) workerSpan(parent string) time.Duration {
	var first, last time.Time
	for _, l := range c.Launches {
		if l.Parent != parent || parent == "" || l.Ended.IsZero() {
			continue
		}
		if first.IsZero() || l.Started.Before(first) {
			first = l.Started
		}
		if l.Ended.After(last) {
			last = l.Ended
		}
	}
	return last.Sub(first)
}

func (c *Coord) supervisor(sup *CoordLaunch) *SupervisorState {
	if c.Supervisors == nil {
		c.Supervisors = map[string]*SupervisorState{}
	}
	key := supervisorKey(sup.Agent)
	st := c.Supervisors[key]
	if st == nil || (sup.AgentID != "" && st.SupervisorID != sup.AgentID) {
		// A relaunched supervisor is judged by its own workers only.
		st = &SupervisorState{SupervisorName: sup.Agent, SupervisorID: sup.AgentID}
		c.Supervisors[key] = st
	}
	return st
}

// supervised checks a supervisor's SUPERVISOR_COMPLETE against what
// orch-hook observed of its workers, and advances.
func (c *Coord) supervised(l *CoordLaunch, text string, env *CoordEnv) (string, string) {
	res, failed, err := ParseSupervisor(text)
	if err != nil {
		return fmt.Sprintf("your report must end with `%s {json}` (or `%s {json}`): %v.", LineSupervisorComplete, LineSupervisorFailed, err), ""
	}
	st := c.supervisor(l)
	workers := append(append([]WorkerRecord(nil), st.Workers...), st.Tracks...)
	if failed {
		c.LastError, c.FailedState = "supervisor failed: "+strings.Join(res.Errors, "; "), c.Current
		return "", fmt.Sprintf("[coordinate %s] %s failed: %s | nothing advanced; relaunch it", c.Current, l.Agent, orText(strings.Join(res.Errors, "; "), "no errors given"))
	}
	for _, w := range c.Launches {
		if w.Parent == l.AgentID && w.Status == Running {
			return fmt.Sprintf("your worker %s (%s) has not returned; wait for every worker before you aggregate.", w.Agent, orText(unitLabel(w.Unit), w.ToolUseID)), ""
		}
	}
	if l.Agent == ImplSupervisor {
		if missing := c.tracksNotRun(); len(missing) > 0 {
			return fmt.Sprintf("the plan's track(s) %s were not run, and nothing they depend on failed; launch them (each prompt starting `Track N: <title>`) before you aggregate.", joinInts(missing)), ""
		}
	}
	proceed, failures := PartialFailure(workers)
	if !proceed {
		return fmt.Sprintf("fewer than %d of your workers succeeded (%s): report SUPERVISOR_FAILED with their errors (your instructions: do not relaunch failed workers).", MinSuccessfulWorkers, strings.Join(failures, "; ")), ""
	}
	// Paths compare in one form: relative to the project, as the workers'
	// REPORT_CREATED lines were recorded.
	sizes := map[string]int{}
	checked := *res
	checked.ReportsCreated = nil
	var rels []string
	for _, p := range res.ReportsCreated {
		rel, why := c.checkArtifact(p, c.Paths.ReportsDir, l, env)
		if why != "" {
			return why, ""
		}
		sizes[rel] = int(env.Inspect(p).Size)
		checked.ReportsCreated = append(checked.ReportsCreated, rel)
		rels = append(rels, rel)
	}
	if vio := CheckAggregation(&checked, workers, sizes); len(vio) > 0 {
		return "the aggregated metadata breaks the rules: " + strings.Join(vio, " "), ""
	}
	for _, rel := range rels {
		if !contains(c.Reports, rel) {
			c.Reports = append(c.Reports, rel)
		}
	}
	st.AggregatedMetadata = res
	note := ""
	if l.Agent == ResearchSupervisor {
		if len(c.Reports) < MinSuccessfulWorkers {
			return fmt.Sprintf("only %d report(s) verified; research needs at least %d.", len(c.Reports), MinSuccessfulWorkers), ""
		}
		total := 0
		for _, s := range sizes {
			total += s
		}
		red := ContextReduction(sizes, res.AggregatedChars())
		note = fmt.Sprintf("context reduction %.0f%% (%d report bytes -> %d characters of metadata)", red, total, res.AggregatedChars())
		if red < ContextReductionTarget {
			note += fmt.Sprintf(" (below the %.0f%% target: a warning only)", ContextReductionTarget)
		}
		c.ContextReduction = note
		if len(failures) > 0 {
			note += "; partial failures: " + strings.Join(failures, "; ")
		}
		t, err := c.fire(OnResearchVerified)
		if err != nil {
			return err.Error(), ""
		}
		c.ended(t)
		return "", fmt.Sprintf("[coordinate research] %s: %d reports verified, %s -> %s | next: %s", l.Agent, len(res.ReportsCreated), note, t.To, c.Next())
	}
	if l.Agent == ImplSupervisor {
		// One clock for both sides: the hooks' own launch and return times.
		var ds []int64
		for _, w := range c.Launches {
			if w.Parent == l.AgentID && !w.Ended.IsZero() {
				ds = append(ds, w.Ended.Sub(w.Started).Milliseconds())
			}
		}
		seq, par, pct := TimeSavings(ds, c.workerSpan(l.AgentID).Milliseconds())
		c.TimeSavings = fmt.Sprintf("sequential %dms vs parallel %dms (%d%% saved)", seq, par, pct)
		note := ""
		if len(failures) > 0 {
			note = "; partial failures: " + strings.Join(failures, "; ")
		}
		if _, err := c.fire(OnImplemented); err != nil {
			return "", fmt.Sprintf("[coordinate implement] %s refused: %v", l.Agent, err)
		}
		return "", fmt.Sprintf("[coordinate implement] %s: %d tracks, %s%s -> test | next: %s", l.Agent, len(workers), c.TimeSavings, note, c.Next())
	}
	var failedStages []string
	for _, w := range c.Launches {
		if w.Parent == l.AgentID && w.Result == "FAIL" {
			failedStages = append(failedStages, orText(unitLabel(w.Unit), w.ToolUseID))
		}
	}
	if res.TotalTests <= 0 {
		return "total_tests is missing: give total_tests, tests_passed and tests_failed from your stages' results.", ""
	}
	if res.TestsFailed == 0 && len(failedStages) > 0 {
		return fmt.Sprintf("tests_failed is 0, but stage(s) %s ended with %s; report the failures.", strings.Join(failedStages, ", "), LineTestsFail), ""
	}
	why := fmt.Sprintf("%d of %d tests failed", res.TestsFailed, res.TotalTests)
	if len(failedStages) > 0 {
		why += " (failing stages: " + strings.Join(failedStages, ", ") + ")"
	}
	return "", c.tested(res.TestsFailed == 0, why)
}

func (c *Coord) stop(call *Call, env *CoordEnv) Outcome {
	if c.Owner != "" && call.Session != "" && call.Session != c.Owner {
		return Outcome{}
	}
	// The main thread stopping proves some launches dead: a foreground agent
	// returns before its caller's turn goes on, and a background one is
	// confirmed by its PostToolUse at once. A launch with neither never ran
	// (its call was rejected or denied by another hook); it must not hold
	// the workflow.
	var stale Outcome
	for _, l := range c.Launches {
		if l.Status == Running && l.Parent == "" && (!l.Background || !l.Linked) {
			l.Status, l.Ended = Stale, env.Now
			stale.Changed = true
			stale.log(Record{Type: RecUpdate, AgentType: l.Agent, ToolUseID: l.ToolUseID, Reason: "launch never ran or never returned; cleared at Stop"})
		}
	}
	for _, l := range c.Launches {
		if l.Status == Running && l.Parent == "" || l.Notice != "" {
			return stale
		}
	}
	limit := env.StopCap
	if limit <= 0 {
		limit = DefaultStopCap
	}
	if c.StopBlocks >= limit {
		o := stale
		o.log(Record{Type: RecError, Reason: fmt.Sprintf("Stop allowed after %d consecutive blocks", c.StopBlocks)})
		return o
	}
	c.StopBlocks++
	r := c.reason(fmt.Sprintf("the workflow is not finished and the next step is yours (stop blocked %d/%d).", c.StopBlocks, limit))
	o := stale
	o.Verdict, o.Reason, o.Changed = Block, r, true
	o.log(Record{Type: RecDeny, Reason: r})
	return o
}

func (c *Coord) userPrompt(call *Call) Outcome {
	o := Outcome{}
	if c.StopBlocks > 0 {
		c.StopBlocks = 0
		o.Changed = true
	}
	if c.Owner == "" && call.Session != "" {
		c.Owner = call.Session
		o.Changed = true
	}
	name, ok := commandName(call.Prompt)
	if !ok || !strings.HasPrefix(strings.TrimSpace(call.Prompt), "/") {
		return o
	}
	switch name {
	case "coordinate", "orchestrate":
		r := c.reason("a workflow is already active here; end it with /orch-hook:abort before starting another.")
		b := Outcome{Verdict: Block, Reason: r}
		b.log(Record{Type: RecDeny, Reason: r})
		return b
	case "abort":
		if call.Session == "" || call.PromptID == "" || contains(c.Decisions, call.PromptID) {
			return o
		}
		c.Decisions = append(c.Decisions, call.PromptID)
		if !contains(c.Completed, c.Current) {
			c.Completed = append(c.Completed, c.Current)
		}
		c.Outcome = "aborted by the user at " + c.Current
		c.Current = CComplete
		a := Outcome{Changed: true, Context: "orch-hook: the user aborted the coordinate workflow; nothing is gated any more."}
		a.log(Record{Type: RecDecision, Reason: "abort"})
		return a
	}
	return o
}

// StartContext is what the orchestrator is told when a coordinate workflow
// starts.
func (c *Coord) StartContext() string {
	mode := "flat: one research-specialist per topic, in parallel"
	if c.Hierarchical {
		mode = "hierarchical: one research-sub-supervisor launches the research-specialists"
	}
	plan := c.Paths.PlanPath
	if c.Scope == ScopeResearchAndRevise {
		plan += " (the existing plan: revise it in place)"
	}
	return fmt.Sprintf("orch-hook: coordinate workflow started. Scope: %s (%s); terminal state %s. Topic: %s (%s). Research: %d topics (%s; %s). Reports: %s. Plan: %s. Debug: %s. Summaries: %s. Next: %s.",
		c.Scope, c.ScopeWhy, ScopeTerminal[c.Scope], c.Topic, c.Paths.TopicPath, c.Topics, c.ComplexWhy, mode,
		strings.Join(c.Paths.ReportPaths, ", "), plan, c.Paths.DebugDir, c.Paths.SummariesDir, c.Next())
}
