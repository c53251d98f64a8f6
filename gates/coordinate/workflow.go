package coordinate

import (
	"slices"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

// Workflow is the coordinate workflow's runtime data (the checkpoint's
// "workflow" section); Current and Completed mirror state_machine.
type Workflow struct {
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

	Launches []*Launch `json:"launches,omitempty"`
	// Reports are the verified research reports (relative paths).
	Reports []string `json:"reports,omitempty"`
	// Writes are the files agents wrote under the topic directory with
	// their write tools: what a reported artifact is checked against.
	Writes      []*AgentWrites              `json:"writes,omitempty"`
	Supervisors map[string]*SupervisorState `json:"supervisors,omitempty"`
	// TrackDeps are the plan's phase (track) dependencies, read when the
	// plan is verified; a track is not launched before those it needs.
	TrackDeps map[int][]int `json:"track_dependencies,omitempty"`
	// PhaseTitles are the plan's phase headings' titles, read with
	// TrackDeps: a track's metadata names its phase as the plan does.
	PhaseTitles map[int]string `json:"phase_titles,omitempty"`
	// Scale is what the verified plan declares about its size, which
	// decides flat or supervised implementation and testing (scale.go).
	Scale *Scale `json:"plan_scale,omitempty"`
	// ContextReduction and TimeSavings are the supervisors' measured
	// effects, as shown by status.
	ContextReduction string `json:"context_reduction,omitempty"`
	TimeSavings      string `json:"time_savings,omitempty"`
	Retries          int    `json:"retries"`
	// Config is the team's configuration as the workflow started with it
	// (nil: started by an orch-hook without one; the defaults).
	Config *gates.ConfigSnapshot `json:"config,omitempty"`
	// Failures are the failed launches of the current state: what
	// retries are counted against (Limits.Retries); Escalation is open
	// once one work failed past them (failures.go).
	Failures    *gates.Failures `json:"failures,omitempty"`
	Escalation  *Escalation     `json:"escalation,omitempty"`
	KnownIssues []string        `json:"known_issues,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	FailedState gates.State     `json:"failed_state,omitempty"`
	Outcome     string          `json:"outcome,omitempty"` // how it ended
	Nudged      []string        `json:"nudged,omitempty"`
	// Kept are nudged agents' reports, read with their next message.
	Kept       []gates.KeptReport `json:"kept_reports,omitempty"`
	StopBlocks int                `json:"stop_blocks"`
	Decisions  []string           `json:"decisions,omitempty"`

	Current   gates.State   `json:"-"`
	Completed []gates.State `json:"-"`
}

// Launch is one coordinate agent launch (by the orchestrator, or a
// worker by its supervisor).
type Launch struct {
	ToolUseID string `json:"tool_use_id"`
	AgentID   string `json:"agent_id,omitempty"`
	Agent     string `json:"agent"`
	Parent    string `json:"parent,omitempty"` // the supervisor's agent_id
	Unit      string `json:"unit,omitempty"`   // a worker's topic, track or stage
	Track     int    `json:"track,omitempty"`  // an implementation track's number
	Stage     string `json:"stage,omitempty"`  // a test stage's id (stages.go)
	// Linked: PostToolUse confirmed AgentID (a SubagentStop before it only
	// guesses).
	Linked bool `json:"linked,omitempty"`
	// DurationMs is the client's own measure of a foreground agent's run
	// (PostToolUse totalDurationMs): what a supervisor is told and sums.
	DurationMs int64 `json:"duration_ms,omitempty"`
	// Result is the agent's own verdict: PASS or FAIL (a test run or
	// stage), COMPLETE or BLOCKED (an implementation or a track).
	Result string `json:"result,omitempty"`
	// Output is the artifact verified for this launch (relative to the
	// project): a report, the plan, a debug report or the summary. The
	// report tells who produced what from it.
	Output     string      `json:"output,omitempty"`
	State      gates.State `json:"state"`
	Background bool        `json:"background"`
	Status     string      `json:"status"`
	Started    time.Time   `json:"started"`
	Ended      time.Time   `json:"ended,omitempty"`
	Notice     string      `json:"notice,omitempty"`
	// Tokens are what the agent used, read from its transcript at its
	// SubagentStop (nil: none was recorded). Informational: no rule reads
	// them.
	Tokens *gates.Tokens `json:"tokens,omitempty"`
}

// TokenUse sums the tokens of the launches that ended, in total and by
// phase: the state each agent was launched in (research, plan, implement,
// test, debug, document), a supervisor's workers with it.
func (c *Workflow) TokenUse() gates.TokenUse {
	var u gates.TokenUse
	for _, l := range c.Launches {
		u.Count(string(l.State), l.Tokens, l.Status != gates.Running)
	}
	return u
}

// DecodeWorkflow reads the workflow section of a coordinate checkpoint.
func DecodeWorkflow(raw []byte) (*Workflow, error) { return gates.DecodeSection[Workflow](raw) }

// Encode writes the workflow section.
func (c *Workflow) Encode() ([]byte, error) { return jsonenc.Marshal(c) }

// limits are the counts this workflow stops at (its configuration).
func (c *Workflow) limits() gates.Limits { return c.Config.Effective().Limits }

// Settings are the rules this workflow runs by.
func (c *Workflow) Settings() gates.Settings { return c.Config.Effective() }

// FileCheck is what the caller found at a path an agent reported.
type FileCheck struct {
	Rel    string // relative to the project root, when inside
	Inside bool   // inside the project, symlinks resolved
	Exists bool
	Size   int64
}

// Env is what a coordinate decision may consult: the clock, the Stop
// cap, and read-only looks at the project the caller provides.
type Env struct {
	Root    string // the project root
	Now     time.Time
	StopCap int
	// ConfigHash reads the configuration file's hash now (see
	// orchestrate.Env.ConfigHash).
	ConfigHash gates.ConfigEnv
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
	// Tokens are the stopping agent's token counts, read from its
	// transcript at a SubagentStop (nil otherwise, or not read); kept with
	// its launch, never decided on.
	Tokens *gates.Tokens
}

// NewWorkflow initializes the coordinate workflow (state initialize done):
// scope (given or detected), topic, research topics, paths.
func NewWorkflow(description, scope, session, topicDir string) (*Workflow, error) {
	c := &Workflow{Kind: "coordinate", Description: description, Owner: session, Current: CInitialize}
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

// byTool finds a launch by its tool_use_id.
func (c *Workflow) byTool(id string) *Launch {
	return gates.Find(c.Launches, func(l *Launch) bool { return l.ToolUseID == id })
}

// byAgent finds a launch by its agent_id ("" finds none).
func (c *Workflow) byAgent(id string) *Launch {
	return gates.Find(c.Launches, func(l *Launch) bool { return id != "" && l.AgentID == id })
}

func (c *Workflow) running(agent, parent string) []*Launch {
	var out []*Launch
	for _, l := range c.Launches {
		if l.Status == gates.Running && l.Agent == agent && (parent == "*" || l.Parent == parent) {
			out = append(out, l)
		}
	}
	return out
}

// duration is how long a launch's agent ran: the client's measure when it
// gave one, else from launch to return as orch-hook saw them (0 while it
// runs).
func (l *Launch) duration() int64 {
	if l.DurationMs > 0 {
		return l.DurationMs
	}
	if l.Ended.IsZero() {
		return 0
	}
	return l.Ended.Sub(l.Started).Milliseconds()
}

// ResearchData is phase_data.research (seed 000): what research produced,
// written once research is done.
type ResearchData struct {
	ReportsCreated []string `json:"reports_created"`
	Topics         int      `json:"topics"`
	Complexity     string   `json:"complexity,omitempty"` // why that many topics
	Hierarchical   bool     `json:"hierarchical"`
	DurationMs     int64    `json:"duration_ms"` // first research launch to last return
}

// PlanData is phase_data.plan: the verified plan and its phases (tracks).
type PlanData struct {
	PlanPath string `json:"plan_path"`
	Phases   []int  `json:"phases"`
}

// PhaseData is the checkpoint's phase_data for the states this workflow
// has completed (nil for one it has not): research and plan.
func (c *Workflow) PhaseData() (research *ResearchData, plan *PlanData) {
	if slices.Contains(c.Completed, CResearch) {
		var first, last time.Time
		for _, l := range c.Launches {
			if l.State != CResearch || l.Ended.IsZero() {
				continue
			}
			if first.IsZero() || l.Started.Before(first) {
				first = l.Started
			}
			if l.Ended.After(last) {
				last = l.Ended
			}
		}
		research = &ResearchData{ReportsCreated: append([]string{}, c.Reports...), Topics: c.Topics, Complexity: c.ComplexWhy, Hierarchical: c.Hierarchical}
		if !first.IsZero() {
			research.DurationMs = last.Sub(first).Milliseconds()
		}
	}
	if slices.Contains(c.Completed, CPlan) {
		plan = &PlanData{PlanPath: c.Paths.PlanPath, Phases: trackNumbers(c.TrackDeps)}
	}
	return research, plan
}
