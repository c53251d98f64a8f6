package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/state"
)

// RecordSchema names the record format (README, "Records").
const RecordSchema = "orch-hook.record/1"

// Record is a workflow's record: its whole event log as written (the hash
// chain, every decision's call and what it read, every checkpoint), the
// contents the decisions read, and a summary derived from the log, which
// `orch-hook verify` derives again and compares.
type Record struct {
	Schema   string `json:"schema"`
	Lineage  string `json:"lineage"`
	Workflow string `json:"workflow"`
	// Outcome is how the log ends: complete, aborted or escalated.
	Outcome string `json:"outcome"`
	// Rules are the transition tables' versions the workflow ran under.
	Rules map[string]int `json:"rules"`
	// Git is HEAD where the workflow started and where the record was
	// written: what was observed, not proven (verify cannot check it).
	Git GitHeads `json:"git"`
	// Files are, for an orchestrate workflow, the files its plan's tasks
	// name, with the SHA-256 each had when the record was written (""
	// when missing): observed, not proven.
	Files   map[string]string `json:"files,omitempty"`
	Summary Summary           `json:"summary"`
	// Log is events.jsonl, line by line, byte for byte.
	Log []string `json:"log"`
	// Blobs are the contents the decisions read, by id (text, or
	// "base64:..." for bytes that are not UTF-8).
	Blobs map[string]string `json:"blobs,omitempty"`
}

// GitHeads are the commits HEAD named.
type GitHeads struct {
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
}

// Summary is what a reviewer reads first; verify derives it from the log
// again.
type Summary struct {
	RequestSHA256 string `json:"request_sha256"`
	// Config is what the workflow's configuration set otherwise than the
	// defaults, and where it came from ("" file: none, the defaults).
	Config      *ConfigSummary `json:"config,omitempty"`
	Transitions []Transition   `json:"transitions"`
	// Refused counts the calls refused, and by gate; Passed the
	// transitions that passed a gate (orchestrate's gated rows), by gate.
	Refused   int            `json:"refused"`
	ByGate    map[string]int `json:"refused_by_gate,omitempty"`
	Passed    map[string]int `json:"passed_by_gate,omitempty"`
	Decisions []Decision     `json:"decisions,omitempty"`
	Agents    []AgentRun     `json:"agents,omitempty"`
	// FixIterations and Escalations: orchestrate's counts.
	FixIterations int `json:"fix_iterations,omitempty"`
	Escalations   int `json:"escalations"`
	// PlanSHA256 is the plan files' hashes as approved (orchestrate: at
	// the last /orch-hook:approve); PlanFiles as they stand at the end.
	PlanSHA256 string            `json:"plan_sha256,omitempty"`
	PlanFiles  map[string]string `json:"plan_files,omitempty"`
	// FilesWritten are the files agents wrote, with the hash orch-hook
	// recorded (coordinate: the writes it tied to their agent).
	FilesWritten map[string]string `json:"files_written,omitempty"`
	// Replayed is how many decisions replay; Accepted the state changes
	// the user made outside a hook call (start, adoption, accept-state,
	// repair), which verify takes as they are.
	Replayed int      `json:"replayed"`
	Accepted []string `json:"accepted,omitempty"`
	// ChainTail is the hash of the log's last record.
	ChainTail string `json:"chain_tail"`
}

// ConfigSummary is a record's configuration at a glance.
type ConfigSummary struct {
	File        string   `json:"file,omitempty"`
	SHA256      string   `json:"sha256,omitempty"`
	Git         string   `json:"git,omitempty"`
	Differences []string `json:"differences"`
}

// Transition is one state change with what caused it.
type Transition struct {
	Serial uint64    `json:"serial"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Cause  string    `json:"cause"` // the event's type and hook event
	Time   time.Time `json:"time"`
}

// Decision is one decision the user typed.
type Decision struct {
	Serial uint64 `json:"serial"`
	By     string `json:"by"` // "user"
	What   string `json:"what"`
}

// AgentRun is one agent launch as the final checkpoint has it.
type AgentRun struct {
	Agent      string `json:"agent"`
	Work       string `json:"work,omitempty"`
	State      string `json:"state"`
	Status     string `json:"status"`
	DurationMs int64  `json:"duration_ms"`
	// Tokens are what the agent used, as its transcript said at its
	// SubagentStop (absent: none recorded).
	Tokens *gates.Tokens `json:"tokens,omitempty"`
}

// recordOutcome is the outcome a record is written at ("" for none): a
// change that finishes the workflow, or escalates it.
func recordOutcome(prev, next *state.Checkpoint) string {
	if o := outcomeOf(next); o != "running" && o != outcomeOf(prev) {
		return o
	}
	return ""
}

// writeRecord writes the workflow's record at a finish or an escalation
// (called under the lock, from committed).
func writeRecord(store *state.Store, prev, next *state.Checkpoint) error {
	if recordOutcome(prev, next) == "" {
		return nil
	}
	lines, err := store.LogLinesLocked()
	if err != nil {
		return fmt.Errorf("the workflow's record: %w", err)
	}
	rec, err := BuildRecord(lines, func(id string) ([]byte, error) { return store.ReadBlob(id) })
	if err != nil {
		return fmt.Errorf("the workflow's record: %w", err)
	}
	rec.Git.End = gitHead(store.Root)
	rec.Files = planFiles(store.Root, next)
	b, err := jsonenc.Indent(rec)
	if err != nil {
		return err
	}
	return store.WriteRecord(next.Lineage, append(b, '\n'))
}

// BuildRecord makes the record of a log (its lines as written); blob reads
// a content the decisions read.
func BuildRecord(lines [][]byte, blob func(string) ([]byte, error)) (*Record, error) {
	rec := &Record{Schema: RecordSchema, Rules: rulesVersions(), Blobs: map[string]string{}}
	for _, l := range lines {
		rec.Log = append(rec.Log, string(l))
	}
	if len(rec.Log) == 0 {
		return nil, errors.New("the log is empty")
	}
	events, err := parseLog(rec.Log)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		for _, id := range blobIDs(ev) {
			if _, ok := rec.Blobs[id]; ok {
				continue
			}
			b, err := blob(id)
			if err != nil {
				return nil, fmt.Errorf("content %.12s a decision read: %w", id, err)
			}
			rec.Blobs[id] = blobText(b)
		}
	}
	sum, last, err := summarize(events, rec.Log[len(rec.Log)-1])
	if err != nil {
		return nil, err
	}
	rec.Summary = sum
	rec.Lineage, rec.Workflow = last.Lineage, last.StateMachine.WorkflowConfig.Command
	rec.Outcome = outcomeOf(last)
	rec.Git.Start = startHead(events)
	return rec, nil
}

func rulesVersions() map[string]int {
	return map[string]int{"orchestrate": orchestrate.TableVersion, "coordinate": coordinate.TableVersion}
}

// outcomeOf is how a workflow's last checkpoint ends it.
func outcomeOf(cp *state.Checkpoint) string {
	switch {
	case cp.StateMachine.CurrentState == orchestrate.Aborted || bytes.Contains(cp.Workflow, []byte(`"outcome":"aborted`)):
		return "aborted"
	case cp.Finished():
		return "complete"
	case cp.StateMachine.CurrentState == orchestrate.Escalated || bytes.Contains(cp.Workflow, []byte(`"escalation":{`)):
		return "escalated"
	}
	return "running"
}

// parseLog reads a record's log lines.
func parseLog(log []string) ([]state.Event, error) {
	events := make([]state.Event, 0, len(log))
	for i, l := range log {
		var ev state.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			return nil, &VerifyError{Line: i + 1, Problem: "the record does not read: " + err.Error()}
		}
		events = append(events, ev)
	}
	return events, nil
}

// blobIDs are the contents an event's decision read.
func blobIDs(ev state.Event) []string {
	if len(ev.Reads) == 0 {
		return nil
	}
	var r reads
	if json.Unmarshal(ev.Reads, &r) != nil {
		return nil
	}
	var ids []string
	for _, m := range []map[string]string{r.Plan, r.Recorded, r.Read} {
		for _, id := range m {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// summarize derives the summary from the log; it returns the last
// checkpoint too.
func summarize(events []state.Event, lastLine string) (Summary, *state.Checkpoint, error) {
	s := Summary{ByGate: map[string]int{}, Passed: map[string]int{}}
	var last *state.Checkpoint
	var approved string
	seenEnv, stopCap, root := false, 0, ""
	for i, ev := range events {
		switch ev.Type {
		case state.EventDeny:
			s.Refused++
			if ev.Gate > 0 {
				s.ByGate[fmt.Sprint(ev.Gate)]++
			}
		case state.EventUserDecision:
			s.Decisions = append(s.Decisions, Decision{Serial: ev.Serial, By: "user", What: firstWord(ev.Reason)})
		}
		if len(ev.Reads) > 0 {
			// What a decision reads of its environment is the record's
			// word: a Stop cap or project root that changes within a
			// workflow is listed (--strict fails it), since replay takes
			// either as recorded.
			var env struct {
				Root    string `json:"root"`
				StopCap int    `json:"stop_cap"`
			}
			if json.Unmarshal(ev.Reads, &env) == nil {
				if seenEnv && env.StopCap != stopCap {
					s.Accepted = append(s.Accepted, fmt.Sprintf("stop cap %d -> %d at serial %d", stopCap, env.StopCap, ev.Serial))
				}
				if seenEnv && env.Root != root {
					s.Accepted = append(s.Accepted, fmt.Sprintf("project root changed at serial %d", ev.Serial))
				}
				seenEnv, stopCap, root = true, env.StopCap, env.Root
			}
		}
		if len(ev.Checkpoint) == 0 {
			continue
		}
		cp, _, err := state.Decode(ev.Checkpoint)
		if err != nil {
			return s, nil, &VerifyError{Line: i + 1, Problem: "its checkpoint does not read: " + err.Error()}
		}
		if ev.StateBefore != ev.StateAfter || last == nil {
			s.Transitions = append(s.Transitions, Transition{Serial: ev.Serial, From: ev.StateBefore, To: ev.StateAfter, Cause: strings.TrimSpace(ev.Type + " " + ev.HookEvent), Time: ev.Time})
			if g := gateOf(cp.StateMachine.WorkflowConfig.Command, ev.StateBefore, ev.StateAfter); g > 0 {
				s.Passed[fmt.Sprint(g)]++
			}
		}
		if ev.StateAfter == orchestrate.Escalated && ev.StateBefore != orchestrate.Escalated ||
			bytes.Contains(cp.Workflow, []byte(`"escalation":{`)) && last != nil && !bytes.Contains(last.Workflow, []byte(`"escalation":{`)) {
			s.Escalations++
		}
		if ev.Type == state.EventUserDecision && strings.HasPrefix(ev.Reason, "approve") && cp.StateMachine.WorkflowConfig.Command == "orchestrate" {
			if w, err := LoadWorkflow(cp); err == nil {
				approved = planDigest(w.PlanHashes)
			}
		}
		if len(ev.Call) > 0 {
			s.Replayed++
		} else if i > 0 || ev.Type == state.EventMigrate {
			s.Accepted = append(s.Accepted, fmt.Sprintf("%s at serial %d", ev.Type, ev.Serial))
		}
		last = cp
	}
	if last == nil {
		return s, nil, errors.New("the log holds no checkpoint")
	}
	s.RequestSHA256 = state.BlobID([]byte(last.StateMachine.WorkflowConfig.Description))
	if h, redacted := gates.RedactedHash(last.StateMachine.WorkflowConfig.Description); redacted {
		s.RequestSHA256 = h // the workflow kept only the request's hash
	}
	if snap := ConfigOf(last); snap != nil {
		s.Config = &ConfigSummary{File: snap.File, SHA256: snap.Hash, Git: snap.Git, Differences: snap.Settings.Differences()}
		if s.Config.Differences == nil {
			s.Config.Differences = []string{}
		}
	}
	s.PlanSHA256 = approved
	switch last.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		if w, err := LoadWorkflow(last); err == nil {
			s.FixIterations = w.FixIterations
			s.PlanFiles = w.PlanHashes
			for _, l := range w.Launches {
				s.Agents = append(s.Agents, AgentRun{Agent: l.Agent, Work: l.Job + taskSuffix(l.Task), State: string(l.State), Status: l.Status, DurationMs: durationOf(l.Started, l.Ended), Tokens: l.Tokens})
			}
		}
	case "coordinate":
		if c, err := LoadCoord(last); err == nil {
			for _, l := range c.Launches {
				s.Agents = append(s.Agents, AgentRun{Agent: l.Agent, Work: l.Unit, State: string(l.State), Status: l.Status, DurationMs: durationOf(l.Started, l.Ended), Tokens: l.Tokens})
			}
			s.FilesWritten = map[string]string{}
			for _, aw := range c.Writes {
				for _, f := range aw.Files {
					s.FilesWritten[f.Path] = f.SHA256
				}
			}
		}
	}
	if len(s.ByGate) == 0 {
		s.ByGate = nil
	}
	if len(s.Passed) == 0 {
		s.Passed = nil
	}
	s.ChainTail = state.LineHash([]byte(lastLine))
	return s, last, nil
}

// gateOf is the gate of the orchestrate row from -> to (0 when none).
func gateOf(workflow, from, to string) int {
	if workflow != "orchestrate" {
		return 0
	}
	for _, t := range orchestrate.Transitions {
		if string(t.From) == from && string(t.To) == to && t.Gate > 0 {
			return t.Gate
		}
	}
	return 0
}

// planFiles are the files an orchestrate plan's tasks name, with their
// SHA-256 in the project now ("" when missing or unreadable).
func planFiles(root string, last *state.Checkpoint) map[string]string {
	if last.StateMachine.WorkflowConfig.Command != "orchestrate" {
		return nil
	}
	w, err := LoadWorkflow(last)
	if err != nil || w.Plan == nil {
		return nil
	}
	out := map[string]string{}
	for _, ph := range w.Plan.Phases {
		for _, t := range ph.Tasks {
			for _, f := range t.Files {
				if _, seen := out[f]; seen || len(out) >= 512 {
					continue
				}
				_, sum, err := state.HashProjectFile(root, f)
				if err != nil {
					sum = ""
				}
				out[f] = sum
			}
		}
	}
	return out
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(s), ":")
	return strings.TrimSpace(w)
}

func taskSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (Task %02d)", n)
}

func durationOf(start, end time.Time) int64 {
	if end.IsZero() || start.IsZero() {
		return 0
	}
	return end.Sub(start).Milliseconds()
}

// planDigest is one hash of a plan's files' hashes.
func planDigest(hashes map[string]string) string {
	if len(hashes) == 0 {
		return ""
	}
	names := make([]string, 0, len(hashes))
	for n := range hashes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + " " + hashes[n] + "\n")
	}
	return state.BlobID([]byte(b.String()))
}

// startInput is what a start record notes: the git HEAD the workflow
// starts from, for its record.
func startInput(root string) json.RawMessage {
	head := gitHead(root)
	if head == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"git_head": head})
	return b
}

// startHead is the git HEAD the start record noted.
func startHead(events []state.Event) string {
	for _, ev := range events {
		if ev.Type == state.EventStart {
			var in struct {
				GitHead string `json:"git_head"`
			}
			_ = json.Unmarshal(ev.Input, &in)
			return in.GitHead
		}
	}
	return ""
}

// gitHead reads the commit HEAD names from .git, without running git
// (nothing orch-hook reads is run): a detached HEAD, a loose ref, or a
// packed one, in the repository's git directory (a worktree's .git file
// followed). Each file is read as a bounded regular file. "" when there is
// none.
func gitHead(root string) string {
	gitDir := gitDirOf(root)
	if gitDir == "" {
		return ""
	}
	head, err := state.ReadRegular(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	h := strings.TrimSpace(string(head))
	ref, ok := strings.CutPrefix(h, "ref: ")
	if !ok {
		return validSHA(h)
	}
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return ""
	}
	for _, dir := range []string{gitDir, gitCommonDir(gitDir)} {
		if b, err := state.ReadRegular(filepath.Join(dir, filepath.FromSlash(ref)), 4096); err == nil {
			return validSHA(strings.TrimSpace(string(b)))
		}
	}
	packed, err := state.ReadRegular(filepath.Join(gitCommonDir(gitDir), "packed-refs"), maxPackedRefs)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if sha, name, ok := strings.Cut(line, " "); ok && name == ref {
			return validSHA(sha)
		}
	}
	return ""
}

// maxPackedRefs bounds packed-refs (a repository with many tags).
const maxPackedRefs = 64 << 20

func validSHA(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return ""
		}
	}
	return s
}

// maxReplayBytes bounds what the replay of one record hands the gates, in
// all: a real workflow's decisions read its plan files (at most 500 of
// 1 MiB each, a decision) a few hundred times; a forged record could name
// one content thousands of times a decision, and cost hours.
var maxReplayBytes int64 = 4 << 30

// VerifyError names the first record of a log that fails verification.
type VerifyError struct {
	Line    int // 1-based line of the log
	Serial  uint64
	Problem string
}

func (e *VerifyError) Error() string {
	if e.Line == 0 {
		return e.Problem
	}
	return fmt.Sprintf("log line %d (serial %d): %s", e.Line, e.Serial, e.Problem)
}

// Verify checks a record: its format and rules version, the log's hash
// chain, that every decision replays through this binary's gates to the
// checkpoint the log holds (a deny to the same refusal), that every other
// state change is one the user makes (start, adoption, accept-state,
// repair), and that the summary and outcome are the log's. It returns the
// summary of what it checked.
func Verify(rec *Record) (*Summary, error) {
	if rec.Schema != RecordSchema {
		return nil, &VerifyError{Problem: fmt.Sprintf("unknown record schema %q (this orch-hook reads %s)", rec.Schema, RecordSchema)}
	}
	if want := rulesVersions()[rec.Workflow]; want == 0 || rec.Rules[rec.Workflow] != want {
		return nil, &VerifyError{Problem: fmt.Sprintf("the record was written under %s rules version %d; this orch-hook knows version %d", gates.OrText(rec.Workflow, "(no workflow)"), rec.Rules[rec.Workflow], want)}
	}
	if len(rec.Log) == 0 {
		return nil, &VerifyError{Problem: "the record holds no log"}
	}
	events, err := parseLog(rec.Log)
	if err != nil {
		return nil, err
	}
	prev := ""
	for i, l := range rec.Log {
		if events[i].Prev != prev {
			return nil, &VerifyError{Line: i + 1, Serial: events[i].Serial, Problem: "the hash chain breaks here: this record does not follow the one before it (a record was edited, removed, inserted or moved)"}
		}
		prev = state.LineHash([]byte(l))
		if i > 0 && events[i].Serial < events[i-1].Serial {
			return nil, &VerifyError{Line: i + 1, Serial: events[i].Serial, Problem: fmt.Sprintf("serial %d after serial %d", events[i].Serial, events[i-1].Serial)}
		}
	}
	checked := map[string]bool{}
	var handed int64
	blob := func(id string) ([]byte, error) {
		t, ok := rec.Blobs[id]
		if !ok {
			return nil, errors.New("not in the record")
		}
		b, err := textBlob(t)
		if err == nil && !checked[id] {
			if state.BlobID(b) != id {
				return nil, errors.New("its content does not hash to its id")
			}
			checked[id] = true
		}
		// Each decision reads its contents afresh, as the hook did; a
		// record whose decisions read more than a workflow's would (one
		// content named many times over) is not replayed to the end.
		if handed += int64(len(b)); handed > maxReplayBytes {
			return nil, fmt.Errorf("the record's decisions read more than %d MiB in all: not replayed further", maxReplayBytes>>20)
		}
		return b, err
	}
	var cur *state.Checkpoint
	for i, ev := range events {
		fail := func(format string, args ...any) error {
			return &VerifyError{Line: i + 1, Serial: ev.Serial, Problem: fmt.Sprintf(format, args...)}
		}
		if cur == nil {
			if len(ev.Checkpoint) == 0 || (ev.Type != state.EventStart && ev.Type != state.EventMigrate) {
				return nil, fail("the log must begin with the workflow's start (or its adoption), with its checkpoint; found %s", ev.Type)
			}
			if cur, _, err = state.Decode(ev.Checkpoint); err != nil {
				return nil, fail("its checkpoint does not read: %v", err)
			}
			if ev.Type == state.EventStart {
				// A start writes a new workflow, made from the request
				// alone: nothing done, nothing approved.
				if diff := checkStart(cur); diff != "" {
					return nil, fail("not the checkpoint a start writes (%s)", diff)
				}
			}
			continue
		}
		switch {
		case len(ev.Call) > 0:
			next, denied, err := replay(cur, ev, blob)
			if err != nil {
				return nil, fail("%v", err)
			}
			// The call leads to the checkpoint the log holds (none: no
			// change), and is refused exactly when the log says so, with
			// the refusal the gates give.
			recorded := cur
			if len(ev.Checkpoint) > 0 {
				if recorded, _, err = state.Decode(ev.Checkpoint); err != nil {
					return nil, fail("its checkpoint does not read: %v", err)
				}
			}
			if diff := diffCheckpoints(next, recorded); diff != "" {
				if len(ev.Checkpoint) == 0 {
					return nil, fail("the log records no change, but replayed through the gates, the call changes the state (%s)", diff)
				}
				return nil, fail("replayed through the gates, the call does not lead to the checkpoint the log holds (%s)", diff)
			}
			switch {
			case ev.Type == state.EventDeny && denied != ev.Reason:
				return nil, fail("replayed, the call is not refused the way the log says (the gates say %q)", shortReason(denied))
			case ev.Type != state.EventDeny && denied != "":
				return nil, fail("the log lets the call through (%s), but replayed, the gates refuse it (%q)", ev.Type, shortReason(denied))
			}
			cur = recorded
		case len(ev.Checkpoint) > 0:
			switch ev.Type {
			case state.EventAccept, state.EventRepair:
			case state.EventStart, state.EventMigrate:
				// A start, or an adoption, begins a log: the workflow it
				// replaces goes to the archive with its own.
				return nil, fail("a %s in the middle of a log: a workflow starts (or is adopted) in a log of its own", ev.Type)
			default:
				return nil, fail("a state change (%s) with no recorded call: it cannot have been made by a hook", ev.Type)
			}
			recorded, _, err := state.Decode(ev.Checkpoint)
			if err != nil {
				return nil, fail("its checkpoint does not read: %v", err)
			}
			if ev.Type == state.EventRepair {
				// orch-hook repair restores (or rebuilds) the last state
				// orch-hook wrote: the state before it.
				if diff := diffCheckpoints(cur, recorded); diff != "" {
					return nil, fail("a repair puts back the state before it; this one changes it (%s)", diff)
				}
			}
			cur = recorded
		}
	}
	sum, last, err := summarize(events, rec.Log[len(rec.Log)-1])
	if err != nil {
		return nil, err
	}
	if got := outcomeOf(last); got != rec.Outcome {
		return nil, &VerifyError{Problem: fmt.Sprintf("the record says the workflow ended %s; its log ends it %s", rec.Outcome, got)}
	} else if got == "running" {
		// orch-hook writes a record when a workflow ends or escalates: a
		// log that leaves it running was cut short.
		return nil, &VerifyError{Problem: "its log leaves the workflow running: orch-hook writes a record when a workflow completes, is aborted or escalates, so this log was cut short"}
	}
	if last.Lineage != rec.Lineage || last.StateMachine.WorkflowConfig.Command != rec.Workflow {
		return nil, &VerifyError{Problem: "the record's lineage or workflow is not its log's"}
	}
	a, _ := jsonenc.Marshal(sum)
	b, _ := jsonenc.Marshal(rec.Summary)
	if !bytes.Equal(a, b) {
		return nil, &VerifyError{Problem: "the record's summary is not what its log says (derive it again with a record written by orch-hook)"}
	}
	return &sum, nil
}

func shortReason(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

// replay decides a recorded call again on cur with what it read, and
// returns the checkpoint the decision leads to, or the refusal it gives.
func replay(cur *state.Checkpoint, ev state.Event, blob func(string) ([]byte, error)) (*state.Checkpoint, string, error) {
	var call gates.Call
	if err := json.Unmarshal(ev.Call, &call); err != nil {
		return nil, "", fmt.Errorf("its call does not read: %v", err)
	}
	r := &reads{}
	if len(ev.Reads) > 0 {
		if err := json.Unmarshal(ev.Reads, r); err != nil {
			return nil, "", fmt.Errorf("what it read does not read: %v", err)
		}
	}
	if p := r.Tokens.Problem(); p != "" {
		return nil, "", fmt.Errorf("the tokens it read are not a transcript's: %s", p)
	}
	next := cur.Clone()
	var out gates.Outcome
	switch cur.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		w, err := LoadWorkflow(next)
		if err != nil {
			return nil, "", err
		}
		out = orchestrate.Decide(w, &call, r.replayOrchestrate(blob))
		if err := saveWorkflow(next, w); err != nil {
			return nil, "", err
		}
	case "coordinate":
		c, err := LoadCoord(next)
		if err != nil {
			return nil, "", err
		}
		out = coordinate.Decide(c, &call, r.replayCoordinate(blob))
		if err := saveCoord(next, c); err != nil {
			return nil, "", err
		}
	default:
		return nil, "", fmt.Errorf("no gates for a %q workflow", cur.StateMachine.WorkflowConfig.Command)
	}
	if len(r.missing) > 0 {
		return nil, "", fmt.Errorf("replayed, the decision reads what the record does not hold: %s", strings.Join(r.missing, "; "))
	}
	if !out.Changed {
		// A hook writes nothing for a decision that changes nothing
		// (transact), whatever the gates did to their copy.
		next = cur
	}
	denied := ""
	if out.Verdict != gates.Allow {
		denied = out.Reason
	}
	return next, denied, nil
}

// diffCheckpoints names the first section where two checkpoints differ
// in what the gates decide ("" when they agree): the state machine, the
// workflow, error_state, phase_data and supervisor_state.
func diffCheckpoints(a, b *state.Checkpoint) string {
	sections := []struct {
		name string
		a, b any
	}{
		{"current_state", a.StateMachine.CurrentState, b.StateMachine.CurrentState},
		{"state_machine", a.StateMachine, b.StateMachine},
		{"workflow", json.RawMessage(a.Workflow), json.RawMessage(b.Workflow)},
		{"error_state", a.ErrorState, b.ErrorState},
		{"phase_data", a.PhaseData, b.PhaseData},
		{"supervisor_state", a.SupervisorState, b.SupervisorState},
	}
	for _, s := range sections {
		x, _ := jsonenc.Marshal(s.a)
		y, _ := jsonenc.Marshal(s.b)
		if !bytes.Equal(canonical(x), canonical(y)) {
			if s.name == "current_state" {
				return fmt.Sprintf("the gates lead to %s, the log to %s", a.StateMachine.CurrentState, b.StateMachine.CurrentState)
			}
			return s.name + " differs"
		}
	}
	return ""
}

// canonical re-encodes JSON with sorted keys.
func canonical(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}

// checkStart compares a log's first checkpoint, written by a start, with
// the one a start writes for its request ("" when they agree in what the
// gates decide): the workflow's first state, nothing launched, done or
// approved. What a start reads from the project (a coordinate workflow's
// topic directory, the plan a revision revises) is taken as recorded.
func checkStart(cp *state.Checkpoint) string {
	cfg := cp.StateMachine.WorkflowConfig
	want := &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		StateMachine: state.StateMachine{
			WorkflowConfig: state.WorkflowConfig{Command: cfg.Command, Description: cfg.Description},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
	}
	if snap := ConfigOf(cp); snap != nil {
		if err := ValidateSettings(snap.Settings); err != nil {
			return "its configuration is not one orch-hook reads: " + err.Error()
		}
	}
	switch cfg.Command {
	case "orchestrate":
		w0, err := LoadWorkflow(cp)
		if err != nil {
			return err.Error()
		}
		w, err := orchestrate.NewWorkflow(cfg.Description, w0.Owner)
		if err == nil {
			w.Config = w0.Config // read from the project: as recorded
			err = saveWorkflow(want, w)
		}
		if err != nil {
			return err.Error()
		}
	case "coordinate":
		c0, err := LoadCoord(cp)
		if err != nil {
			return err.Error()
		}
		scope := ""
		if c0.ScopeWhy == "given with --scope" {
			scope = c0.Scope
		}
		c, err := coordinate.NewWorkflow(cfg.Description, scope, c0.Owner, c0.Paths.TopicPath)
		if err != nil {
			return err.Error()
		}
		if c.Scope == coordinate.ScopeResearchAndRevise {
			c.Topic, c.Paths.PlanPath = c0.Topic, c0.Paths.PlanPath
		}
		c.Config = c0.Config // read from the project: as recorded
		if c.Settings().RedactRequest {
			// What the description decides (scope, topic, research
			// topics) cannot be read from its hash: as recorded.
			c.Scope, c.ScopeWhy, c.Topic, c.Topics, c.ComplexWhy, c.Hierarchical, c.Paths = c0.Scope, c0.ScopeWhy, c0.Topic, c0.Topics, c0.ComplexWhy, c0.Hierarchical, c0.Paths
		}
		if err := saveCoord(want, c); err != nil {
			return err.Error()
		}
	default:
		return fmt.Sprintf("no gates for a %q workflow", cfg.Command)
	}
	return diffCheckpoints(want, cp)
}
