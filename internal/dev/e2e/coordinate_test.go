package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// coordTopicDir is the topic directory orch-hook pre-calculates for the
// scenario's description (the first topic of a fresh project).
const coordTopicDir = "specs/001_distributed_cache_microservices"

// TestCoordinateResearchAndPlan is scenario 7: /orch-hook:coordinate with
// scope research-and-plan and 4 research topics, so research is
// hierarchical: research-sub-supervisor launches its 4 research-specialist
// workers from inside itself (nested Agent calls), SUPERVISOR_COMPLETE is
// checked against the workers orch-hook recorded -> plan; plan-architect's
// PLAN_CREATED -> complete.
func TestCoordinateResearchAndPlan(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "coordinate", project),
		Messages:   []string{"/orch-hook:coordinate Research and plan a distributed cache for our microservices"},
		MaxTurns:   30,
		Timeout:    120 * time.Second,
	})
	var c checks

	// The lines the orchestrator (main thread) received, in its requests.
	plan := coordTopicDir + "/plans/001_distributed_cache_microservices_plan.md"
	for _, line := range []string{
		"orch-hook: coordinate workflow started. Scope: research-and-plan",
		"Research: 4 topics (base 2; +2 (distributed) = 4; hierarchical: one research-sub-supervisor launches the research-specialists)",
		"[coordinate research] research-sub-supervisor: 4 reports verified, context reduction ",
		"-> plan | next: launch plan-architect to write " + plan,
		"[coordinate plan] " + plan + " verified -> complete | next: nothing; the workflow is complete",
	} {
		c.wantMainText(run, line)
	}
	if _, ok := run.Mock.FindText("hook error"); ok {
		c.errorf("a hook refused something")
	}
	if _, _, ok := run.Mock.FindToolResult("hook error"); ok {
		c.errorf("a tool call was refused by a hook")
	}
	if _, ok := run.Mock.FindText("Stop hook feedback:"); ok {
		c.errorf("a Stop or SubagentStop was blocked")
	}
	if len(run.Mock.Overflows()) > 0 {
		c.errorf("a conversation ran out of turns: %v", run.Mock.Overflows())
	}
	verifyRecords(t, &c, plugin, project, "record_e2e_coordinate.json")

	// The final state.
	st := statusOf(t, plugin, project)
	if got := workflowState(st); got != "complete" {
		c.errorf("final state %q, want complete", got)
	}
	wf, _ := st["workflow"].(map[string]any)
	completed, _ := json.Marshal(wf["completed_states"])
	if string(completed) != `["initialize","research","plan"]` {
		c.errorf("completed_states %s, want [initialize research plan]", completed)
	}
	// Every agent's tokens, the supervisor's workers' (nested agents) too,
	// read from its own transcript: as many responses as it made.
	checkTokens(&c, run, st, nil)

	// The agent ids the client gave each conversation (its requests'
	// x-claude-code-agent-id header).
	idOf := map[string]string{} // conversation -> agent id
	for id, conv := range run.Mock.AgentIDs() {
		if prev, dup := idOf[conv]; dup {
			c.errorf("conversation %s ran as two agents: %s and %s", conv, prev, id)
		}
		idOf[conv] = id
	}

	// The checkpoint: the supervisor and the 4 workers orch-hook recorded
	// from their own hook events.
	cp := readCheckpoint(t, project)
	var coord struct {
		Owner string `json:"owner_session"`
	}
	_ = json.Unmarshal(cp.Workflow, &coord)
	if coord.Owner != run.SessionID {
		c.errorf("the workflow's owner_session is %q, the run's session %q", coord.Owner, run.SessionID)
	}
	raw, ok := cp.SupervisorState["research_supervisor"]
	if !ok {
		c.errorf("supervisor_state has no research_supervisor: %s", keysOf(cp.SupervisorState))
		c.report(t, run)
		return
	}
	var sup struct {
		SupervisorID   string `json:"supervisor_id"`
		AgentID        string `json:"agent_id"`
		SupervisorName string `json:"supervisor_name"`
		WorkerCount    int    `json:"worker_count"`
		Workers        []struct {
			WorkerID   string `json:"worker_id"`
			AgentID    string `json:"agent_id"`
			Topic      string `json:"topic"`
			Status     string `json:"status"`
			OutputPath string `json:"output_path"`
			DurationMs int64  `json:"duration_ms"`
		} `json:"workers"`
		Aggregated *struct {
			TopicsResearched int      `json:"topics_researched"`
			ReportsCreated   []string `json:"reports_created"`
		} `json:"aggregated_metadata"`
	}
	if err := json.Unmarshal(raw, &sup); err != nil {
		c.errorf("research_supervisor: %v\n%s", err, raw)
	}
	if sup.SupervisorName != "research-sub-supervisor" || !reSupervisorID.MatchString(sup.SupervisorID) || sup.AgentID != idOf["sup"] {
		c.errorf("research_supervisor is %q with id %q and agent id %q; want research-sub-supervisor, an id in seed 003's form (research_sub_supervisor_YYYYMMDD_HHMMSS) and the supervisor's agent id %q", sup.SupervisorName, sup.SupervisorID, sup.AgentID, idOf["sup"])
	}
	if sup.WorkerCount != 4 || len(sup.Workers) != 4 {
		c.errorf("research_supervisor records %d workers (worker_count %d), want 4:\n%s", len(sup.Workers), sup.WorkerCount, raw)
	}
	want := map[string][2]string{ // agent id -> topic, report
		idOf["w1"]: {"cache topology", coordTopicDir + "/reports/001_cache_topology.md"},
		idOf["w2"]: {"consistency and invalidation", coordTopicDir + "/reports/002_consistency_invalidation.md"},
		idOf["w3"]: {"eviction policies", coordTopicDir + "/reports/003_eviction_policies.md"},
		idOf["w4"]: {"failure modes", coordTopicDir + "/reports/004_failure_modes.md"},
	}
	seen := map[string]bool{}
	var sum int64
	for _, w := range sup.Workers {
		sum += w.DurationMs
		t.Logf("worker %s (%s): %s, %d ms, %s", w.AgentID, w.Topic, w.Status, w.DurationMs, w.OutputPath)
		exp, ok := want[w.AgentID]
		switch {
		case w.AgentID == "" || !ok:
			c.errorf("worker %s has agent id %q, not one of the workers' (%v)", w.WorkerID, w.AgentID, idOf)
			continue
		case seen[w.AgentID]:
			c.errorf("worker agent %s is recorded twice", w.AgentID)
		}
		seen[w.AgentID] = true
		if !strings.Contains(w.Topic, exp[0]) {
			c.errorf("worker %s: topic %q, want %q", w.AgentID, w.Topic, exp[0])
		}
		if w.OutputPath != exp[1] {
			c.errorf("worker %s: output_path %q, want %q", w.AgentID, w.OutputPath, exp[1])
		}
		if w.Status != "completed" {
			c.errorf("worker %s: status %q, want completed", w.AgentID, w.Status)
		}
		if w.DurationMs < 21000 {
			c.errorf("worker %s: duration_ms %d, want the observed duration (its Bash sleeps at least 21 s)", w.AgentID, w.DurationMs)
		}
	}
	t.Logf("the workers' durations sum to %d ms; the supervisor said 92000 (10%% tolerance)", sum)
	if sup.Aggregated == nil || sup.Aggregated.TopicsResearched != 4 || len(sup.Aggregated.ReportsCreated) != 4 {
		c.errorf("research_supervisor.aggregated_metadata is not the supervisor's result: %s", raw)
	}

	// The worker launches are the supervisor's (nested): their PreToolUse
	// carried its agent id.
	var launches []struct {
		Agent, AgentID, Parent, Status string
	}
	var wfRaw struct {
		Launches json.RawMessage `json:"launches"`
	}
	_ = json.Unmarshal(cp.Workflow, &wfRaw)
	_ = json.Unmarshal(wfRaw.Launches, &launches)
	var parents []string
	for _, l := range launches {
		if l.Agent == "research-specialist" {
			parents = append(parents, l.Parent)
		}
	}
	sort.Strings(parents)
	if len(parents) != 4 || parents[0] != idOf["sup"] || parents[3] != idOf["sup"] {
		c.errorf("research-specialist launches have parents %q, want 4 times the supervisor %s", parents, idOf["sup"])
	}

	if len(c.problems) > 0 {
		t.Logf("launches in the checkpoint: %s\nagent ids of the conversations: %v", wfRaw.Launches, idOf)
	}

	// The artifacts.
	for _, f := range []string{want[idOf["w1"]][1], want[idOf["w2"]][1], want[idOf["w3"]][1], want[idOf["w4"]][1], plan} {
		if fi, err := os.Stat(filepath.Join(project, f)); err != nil || fi.Size() == 0 {
			c.errorf("%s was not written: %v", f, err)
		}
	}
	c.report(t, run)
}

// wantMainText: the orchestrator (a main-thread request, no agent id) was
// told text.
func (c *checks) wantMainText(run *Run, text string) {
	for _, r := range run.Mock.MessageRequests() {
		if r.AgentID != "" {
			continue
		}
		if r.HasText(text) || strings.Contains(r.NewText(), text) {
			return
		}
	}
	c.errorf("the orchestrator was never told %q", text)
}

// checkpoint is the part of .orchestrator/state/checkpoint.json the
// scenario reads.
type checkpoint struct {
	SupervisorState map[string]json.RawMessage `json:"supervisor_state"`
	Workflow        json.RawMessage            `json:"workflow"`
}

func readCheckpoint(t *testing.T, project string) checkpoint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(project, ".orchestrator", "state", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatalf("checkpoint.json: %v", err)
	}
	return cp
}

func keysOf(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reSupervisorID is seed 003's supervisor_id form.
var reSupervisorID = regexp.MustCompile(`^research_sub_supervisor_\d{8}_\d{6}$`)
