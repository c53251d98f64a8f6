package coordinate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// A reported artifact counts only if the agent that reports it (or, for a
// supervisor, one of its workers) wrote it with its own Write, Edit or
// NotebookEdit call, and the file still holds what that write left. The
// writes are recorded at the tool's PostToolUse, by agent id, with the
// SHA-256 of the file read back from disk; a file's existence, size or
// mtime prove nothing (a shell command, a `touch`, a hard link make them).

// Bounds of the recorded writes: the record is rewritten under the lock
// at every subagent write, so it stays small.
const (
	// MaxWritesPerAgent bounds the files recorded for one agent.
	MaxWritesPerAgent = 256
	// MaxRecordedPath bounds the length of a project file's path recorded
	// for a track's or a test stage's worker (the topic's artifacts have
	// the paths orch-hook gave them).
	MaxRecordedPath = 512
)

// AgentWrites is what one agent wrote with its write tools: under the
// topic directory, and for a supervisor's implementation track or test
// generation worker anywhere in the project. Agent ids are not reused, so
// one agent id is one launch.
type AgentWrites struct {
	AgentID string          `json:"agent_id"`
	Agent   string          `json:"agent"` // its type, without the plugin prefix
	Files   []ArtifactWrite `json:"files"`
}

// ArtifactWrite is a file as the agent's last write of it left it.
type ArtifactWrite struct {
	Path   string    `json:"path"` // relative to the project root
	SHA256 string    `json:"sha256"`
	At     time.Time `json:"at"` // the write's PostToolUse, on the hooks' clock
}

// writeRef is one recorded write and who made it.
type writeRef struct {
	*ArtifactWrite
	by *AgentWrites
}

func (w writeRef) who() string { return fmt.Sprintf("%s (agent %s)", w.by.Agent, w.by.AgentID) }

// recordWrite notes a subagent's Write, Edit or NotebookEdit at its
// PostToolUse: the file's hash as the write left it. Under the topic
// directory for every agent (the artifacts); elsewhere in the project only
// for the workers whose project files are recorded (projectWriter), with a
// path of at most MaxRecordedPath bytes. Other writes are never reported
// artifacts, so they are not recorded (and cost no locked write).
func (c *Workflow) recordWrite(call *gates.Call, env *Env) gates.Outcome {
	topic := strings.TrimSuffix(c.Paths.TopicPath, "/")
	if call.AgentID == "" || call.Path == "" || call.Unresolved || topic == "" || env.Hash == nil {
		return gates.Outcome{}
	}
	lexical, inside := gates.RelPath(env.Root, call.Path)
	if !inside {
		return gates.Outcome{}
	}
	agent, ok := coordAgent(call.AgentType)
	project := !gates.Under(lexical, topic)
	if project && (!ok || !c.projectWriter(call.AgentID, agent)) {
		return gates.Outcome{}
	}
	if !ok {
		agent = gates.OrText(shorten.Runes(call.AgentType, 80), "an agent of no type")
	}
	rel, sum, err := env.Hash(call.Path)
	if err == nil && rel == "" {
		err = fmt.Errorf("%s did not resolve in the project", call.Path)
	}
	if project && rel != "" && len(rel) > MaxRecordedPath {
		err = fmt.Errorf("%s... is longer than %d bytes", shorten.Runes(rel, 80), MaxRecordedPath)
	} else if project && err != nil && rel != "" {
		// A project file that cannot be hashed (too large, gone again) is
		// still one the worker modified; it cannot back an artifact.
		sum, err = "", nil
	}
	if err != nil {
		// Nothing is recorded: a report naming the file is refused, saying so.
		o := gates.Outcome{}
		o.Log(gates.Record{Type: gates.RecError, AgentID: call.AgentID, AgentType: agent, ToolUseID: call.ToolUseID, Reason: "write not recorded: " + shorten.Runes(shorten.OneLine(err.Error()), 300)})
		return o
	}
	var mine *AgentWrites
	for _, aw := range c.Writes {
		if aw.AgentID == call.AgentID {
			mine = aw
		}
	}
	if mine == nil {
		mine = &AgentWrites{AgentID: call.AgentID, Agent: agent}
		c.Writes = append(c.Writes, mine)
	}
	o := gates.Outcome{Changed: true}
	for i := range mine.Files {
		f := &mine.Files[i]
		if strings.EqualFold(f.Path, rel) {
			if f.SHA256 == sum {
				return gates.Outcome{} // the same content again: nothing to record
			}
			f.Path, f.SHA256, f.At = rel, sum, env.Now
			o.Log(gates.Record{Type: gates.RecUpdate, AgentID: call.AgentID, AgentType: agent, ToolUseID: call.ToolUseID, Reason: fmt.Sprintf("write recorded: %s (sha256 %s)", rel, shortSum(sum))})
			return o
		}
	}
	if len(mine.Files) >= MaxWritesPerAgent {
		o := gates.Outcome{}
		o.Log(gates.Record{Type: gates.RecError, AgentID: call.AgentID, AgentType: agent, ToolUseID: call.ToolUseID, Reason: fmt.Sprintf("write not recorded: %s already wrote %d files", agent, MaxWritesPerAgent)})
		return o
	}
	mine.Files = append(mine.Files, ArtifactWrite{Path: rel, SHA256: sum, At: env.Now})
	o.Log(gates.Record{Type: gates.RecUpdate, AgentID: call.AgentID, AgentType: agent, ToolUseID: call.ToolUseID, Reason: fmt.Sprintf("write recorded: %s (sha256 %s)", rel, shortSum(sum))})
	return o
}

// projectWriter says whether the project writes of agentID (of type
// agent) are recorded: those of a running worker of a supervisor that
// modifies the project, an implementation track (its files_modified) or
// a test generation worker (its test files). A foreground worker's agent
// id is known only when it returns, so a write of an agent not yet tied
// to a launch counts while such a worker of its type runs.
func (c *Workflow) projectWriter(agentID, agent string) bool {
	writer := func(l *Launch) bool {
		return l.Status == gates.Running && l.Parent != "" &&
			(l.Agent == ImplementationExec || l.Agent == TestSpecialist && l.Stage == StageGeneration)
	}
	if l := c.byAgent(agentID); l != nil {
		return writer(l)
	}
	for _, l := range c.Launches {
		if l.AgentID == "" && l.Agent == agent && writer(l) {
			return true
		}
	}
	return false
}

// projectFiles are the project files agentID wrote with its write tools,
// outside the topic directory (the workflow's artifacts are not the
// implementation's), relative to the project root, in the order first
// written; [] when none.
func (c *Workflow) projectFiles(agentID string) []string {
	topic := strings.TrimSuffix(c.Paths.TopicPath, "/")
	out := []string{}
	for _, aw := range c.Writes {
		if aw.AgentID != agentID || agentID == "" {
			continue
		}
		for _, f := range aw.Files {
			if topic == "" || !gates.Under(f.Path, topic) {
				out = append(out, f.Path)
			}
		}
	}
	return out
}

// distinctFiles are the files some of records modified, each once.
func distinctFiles(records []WorkerRecord) []string {
	var out []string
	for _, r := range records {
		for _, f := range r.FilesModified {
			if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, f) }) {
				out = append(out, f)
			}
		}
	}
	return out
}

func shortSum(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// writersOf names the agents whose writes count for l's artifacts: l's own
// agent, and a supervisor's workers.
func (c *Workflow) writersOf(l *Launch) []string {
	if l.AgentID == "" {
		return nil
	}
	ids := []string{l.AgentID}
	if _, sup := supervisorWorker[l.Agent]; sup {
		for _, w := range c.Launches {
			if w.Parent == l.AgentID && w.AgentID != "" {
				ids = append(ids, w.AgentID)
			}
		}
	}
	return ids
}

// lastWrite is the latest recorded write of rel by an agent that by
// accepts.
func (c *Workflow) lastWrite(rel string, by func(agentID string) bool) *writeRef {
	var last *writeRef
	for _, aw := range c.Writes {
		if !by(aw.AgentID) {
			continue
		}
		for i := range aw.Files {
			f := &aw.Files[i]
			if strings.EqualFold(f.Path, rel) && (last == nil || !f.At.Before(last.At)) {
				last = &writeRef{f, aw}
			}
		}
	}
	return last
}

// copyOf finds a recorded write of another path with the content sum, by
// an agent not in except: rel is then a hard link or a copy of it.
func (c *Workflow) copyOf(rel, sum string, except []string) *writeRef {
	for _, aw := range c.Writes {
		if slices.Contains(except, aw.AgentID) {
			continue
		}
		for i := range aw.Files {
			f := &aw.Files[i]
			if f.SHA256 == sum && !strings.EqualFold(f.Path, rel) {
				return &writeRef{f, aw}
			}
		}
	}
	return nil
}

// checkWriter applies the writer rule to rel, an existing non-empty file
// that l reports; it returns the problem, or "" when l's agent (or one of
// a supervisor's workers) wrote rel with a write tool and the file still
// holds what that write left.
func (c *Workflow) checkWriter(rel string, l *Launch, env *Env) string {
	by := "this agent"
	fix := func(agentFix string) string { return agentFix }
	if _, sup := supervisorWorker[l.Agent]; sup {
		// A supervisor writes nothing: its workers did, or the report is
		// not one.
		by = "any of your workers"
		fix = func(string) string {
			return "list only the reports your workers wrote with the Write tool during this launch"
		}
	}
	if env.Hash == nil {
		return fmt.Sprintf("%s cannot be checked: orch-hook cannot read files here; %s.", rel, fix("write it with the Write tool"))
	}
	_, sum, err := env.Hash(rel)
	if err != nil {
		return fmt.Sprintf("%s cannot be read to check who wrote it (%s); %s.", rel, shorten.Runes(shorten.OneLine(err.Error()), 200), fix("write it with the Write tool"))
	}
	writers := c.writersOf(l)
	isWriter := func(id string) bool { return slices.Contains(writers, id) }
	if own := c.lastWrite(rel, isWriter); own != nil {
		if own.SHA256 != sum {
			return fmt.Sprintf("%s was changed after %s last wrote it with Write or Edit at %s (it no longer holds what that write left): %s.", rel, own.who(), stamp(own.At), fix("write it again with the Write tool, and change it only with Write or Edit"))
		}
		if dup := c.copyOf(rel, sum, writers); dup != nil {
			return fmt.Sprintf("%s has the same content as %s, written by %s: a copy of another artifact does not count; %s.", rel, dup.Path, dup.who(), fix("write this run's own report with the Write tool"))
		}
		return ""
	}
	if dup := c.copyOf(rel, sum, nil); dup != nil {
		return fmt.Sprintf("%s was not written with the Write tool by %s and has the same content as %s, written by %s: a hard link or copy of another artifact does not count; %s.", rel, by, dup.Path, dup.who(), fix("write it with the Write tool"))
	}
	if other := c.lastWrite(rel, func(id string) bool { return !isWriter(id) }); other != nil {
		if other.At.Before(l.Started) {
			return fmt.Sprintf("%s was written by an earlier launch (%s, at %s), before this agent was launched at %s: it is not this run's work; %s.", rel, other.who(), stamp(other.At), stamp(l.Started), fix("write it anew with the Write tool"))
		}
		return fmt.Sprintf("%s was written by %s, not by %s: an agent reports only the file it wrote itself; %s.", rel, other.who(), by, fix("write your own report with the Write tool"))
	}
	return fmt.Sprintf("%s was not written with the Write tool by %s: a file created by a shell command does not count; %s.", rel, by, fix("write it with the Write tool"))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
