package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

// The orch-hook scenarios run the real Claude Code CLI with a copy of this
// repository's plugin (commands, agents, hooks/hooks.json, the dispatcher,
// settings.json)
// shipping the binary under test the way a release archive does: as
// bin/orch-hook-<os>-<arch>, pinned by the copy's hooks/release.sha256. The
// first SessionStart of every session in a new HOME installs it into the
// plugin's data directory, so every scenario also runs the dispatcher. The
// copy's bin/orch-hook is the same binary, for the tests' own status calls.

var (
	buildMu sync.Mutex
	built   = map[string]string{} // build tags -> plugin dir
)

// pluginCopy builds orch-hook (with extra build tags, e.g. the gate-3
// mutant) once per test process and returns a plugin directory holding it.
func pluginCopy(t *testing.T, tags string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if dir, ok := built[tags]; ok {
		return dir
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "orch-hook-plugin-")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".claude-plugin/plugin.json", ".claude-plugin/marketplace.json", "hooks/hooks.json", "hooks/bootstrap.sh", "settings.json"} {
		copyFile(t, filepath.Join(root, p), filepath.Join(dir, p))
	}
	for _, sub := range []string{"commands", "agents"} {
		entries, err := os.ReadDir(filepath.Join(root, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			copyFile(t, filepath.Join(root, sub, e.Name()), filepath.Join(dir, sub, e.Name()))
		}
	}
	version := pluginVersionOf(t, root)
	allTags := "urfave_cli_no_docs"
	if tags != "" {
		allTags += "," + tags
	}
	bin := filepath.Join(dir, "bin", "orch-hook")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", allTags, "-ldflags", "-X main.version="+version, "-o", bin, "./cmd/orch-hook")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build orch-hook (tags %s): %v\n%s", allTags, err, out)
	}
	shipped := "orch-hook-" + runtime.GOOS + "-" + runtime.GOARCH
	copyFile(t, bin, filepath.Join(dir, "bin", shipped))
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	pin := fmt.Sprintf("%x  v%s/%s\n", sha256.Sum256(b), version, shipped)
	if err := os.WriteFile(filepath.Join(dir, "hooks", "release.sha256"), []byte(pin), 0o644); err != nil {
		t.Fatal(err)
	}
	built[tags] = dir
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// scenario loads testdata/NAME.txtar with {{PROJECT}} pointing at project.
func scenario(t *testing.T, name, project string) *mockapi.Script {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := mockapi.ParseTxtar([]byte(strings.ReplaceAll(string(b), "{{PROJECT}}", project)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// statusOf runs `orch-hook status --json` of the plugin's binary.
// statusOf runs status --json with the plugin's bin/orch-hook, or bin.
func statusOf(t *testing.T, plugin, project string, bin ...string) map[string]any {
	t.Helper()
	exe := filepath.Join(plugin, "bin", "orch-hook")
	if len(bin) > 0 {
		exe = bin[0]
	}
	out, err := exec.Command(exe, "--project", project, "status", "--json").Output()
	if err != nil {
		t.Fatalf("orch-hook status: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return m
}

func workflowState(st map[string]any) string {
	wf, _ := st["workflow"].(map[string]any)
	s, _ := wf["state"].(string)
	return s
}

// checks collects a scenario's failed expectations, so that the mutant
// test can assert that a scenario fails without failing itself.
type checks struct{ problems []string }

func (c *checks) errorf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// wantText: the model was told text (system or user content, hook context).
func (c *checks) wantText(run *Run, text string) {
	if _, ok := run.Mock.FindText(text); !ok {
		if _, _, ok := run.Mock.FindToolResult(text); !ok {
			c.errorf("the model was never told %q", text)
		}
	}
}

// wantDenied: a tool call was refused with a reason containing text.
func (c *checks) wantDenied(run *Run, text string) {
	_, tr, ok := run.Mock.FindToolResult(text)
	if !ok {
		c.errorf("no tool call was refused with %q", text)
		return
	}
	if !tr.IsError || !strings.Contains(tr.Text, "hook error") {
		c.errorf("the tool_result with %q is not a hook refusal: %q", text, tr.Text)
	}
}

func (c *checks) report(t *testing.T, run *Run) {
	t.Helper()
	for _, p := range c.problems {
		t.Error(p)
	}
	if len(c.problems) > 0 {
		t.Logf("requests:\n%s", run.Mock.Summary())
		if os.Getenv("ORCH_HOOK_E2E_VERBOSE") != "" {
			dumpNewText(t, run)
		}
	}
}

func newProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// TestFlow is scenario 1: the whole workflow, 0a to complete.
func TestFlow(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "flow", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-FLOW]] Build a greeting module", "/orch-hook:approve"},
		MaxTurns:   40,
		Timeout:    120 * time.Second,
	})
	var c checks
	for _, line := range []string{
		"[STEP 0a] REQUIREMENTS_CLEAR -> 2",
		"[STEP 2] MASTER_PLAN.md created -> 3 | 1 phases, 2 tasks",
		"[STEP 3] APPROVED -> 4a | phase 1 of 1: launch code-implementer for Task 01, Task 02 (in parallel, one message)",
		"[PHASE 1 | Tasks 01-02] 4a OK -> 4b | 2 tasks implemented",
		"PHASE METADATA EXTRACTION - Phase 1",
		"[PHASE 1 | Tasks 01-02] 4b OK -> 4c",
		"[PHASE 1 | Tasks 01-02] 4c OK -> 5a",
		"[STEP 5a] PASS -> 6",
		"[STEP 6] SUCCESS_EXTRACTION -> complete",
	} {
		c.wantText(run, line)
	}
	st := statusOf(t, plugin, project)
	if got := workflowState(st); got != "complete" {
		c.errorf("final state %q, want complete", got)
	}
	wf, _ := st["workflow"].(map[string]any)
	completed, _ := json.Marshal(wf["completed_states"])
	if string(completed) != `["0a","2","3","4a","4b","4c","5a","6"]` {
		c.errorf("completed_states %s", completed)
	}
	// Each agent's tokens, read from its transcript at its SubagentStop:
	// the scenario's scripted usage summed, the task-planner's second
	// response (two content blocks, two transcript records) once.
	checkTokens(&c, run, st, map[string]tokenCounts{
		"ra": {Input: 3101, Output: 41, CacheWrite: 5101, CacheRead: 7101, Responses: 1},
		"tp": {Input: 3201 + 3202 + 3203, Output: 42 + 43 + 44, CacheWrite: 5201 + 5202 + 5203, CacheRead: 7201 + 7202 + 7203, Responses: 3},
		"i1": {Input: 3301 + 3302, Output: 45 + 46, CacheWrite: 5301 + 5302, CacheRead: 7301 + 7302, Responses: 2},
		"i2": {Input: 3401 + 3402, Output: 47 + 48, CacheWrite: 5401 + 5402, CacheRead: 7401 + 7402, Responses: 2},
	})
	verifyRecords(t, &c, plugin, project, "record_e2e_orchestrate.json")
	for _, f := range []string{"src/greet.txt", "src/greet_test.txt"} {
		if _, err := os.Stat(filepath.Join(project, f)); err != nil {
			c.errorf("the implementer's %s was not written: %v", f, err)
		}
	}
	if len(run.Mock.Overflows()) > 0 {
		c.errorf("a conversation ran out of turns: %v", run.Mock.Overflows())
	}
	// The project is not protected: the user is told so, once, and the
	// model is not.
	shown := 0
	for _, e := range run.Events {
		if e.Type == "system" && e.Subtype == "informational" && strings.Contains(string(e.Raw), "this workflow runs without Claude Code's sandbox") {
			shown++
		}
	}
	if shown != 1 {
		c.errorf("the user was told %d times that the workflow runs unprotected, want once", shown)
	}
	if _, ok := run.Mock.FindText("runs without Claude Code's sandbox"); ok {
		c.errorf("the model was told the user's protection notice")
	}
	c.report(t, run)
}

// TestFollowUpSkill: after completion the user asks for more; the
// orchestrator triages it into a LIGHTWEIGHT follow-up through the
// orch-hook:follow-up skill (the Skill tool's PreToolUse hook applies it).
func TestFollowUpSkill(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "followup", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-FUP]] Build a greeting module", "/orch-hook:approve", "[[FUP-MORE]] Also print a farewell."},
		MaxTurns:   50,
		Timeout:    150 * time.Second,
	})
	var c checks
	c.wantText(run, "[STEP 6] SUCCESS_EXTRACTION -> complete")
	c.wantText(run, "orch-hook: LIGHTWEIGHT follow-up -> 4a")
	st := statusOf(t, plugin, project)
	if got := workflowState(st); got != "4a" {
		c.errorf("state %q after the follow-up, want 4a", got)
	}
	c.report(t, run)
}

// TestImplementerBeforeApproval is scenario 2: code-implementer launched
// before the user approved the plan is denied, and the model's next
// request holds the reason. It also checks the plugin's settings.json:
// the CLI loads it (its debug log names the key), and its
// subagentStatusLine, run as the TUI runs it, labels the analyst's row.
func TestImplementerBeforeApproval(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	debug := filepath.Join(t.TempDir(), "debug.txt")
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "early", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-EARLY]] Build a greeting module"},
		MaxTurns:   20,
		Args:       []string{"--debug-file", debug},
	})
	var c checks
	c.wantDenied(run, "PreToolUse:Agent hook error: orch-hook: code-implementer may not run before the user approves the plan. Now: step 3, waiting for the user's approval.")
	if got := workflowState(statusOf(t, plugin, project)); got != "3" {
		c.errorf("state %q, want 3", got)
	}
	if _, err := os.Stat(filepath.Join(project, "src", "greet.txt")); err == nil {
		c.errorf("the denied implementer ran")
	}
	checkSubagentStatusLine(t, &c, run, plugin, debug)
	c.report(t, run)
}

// checkSubagentStatusLine checks the plugin's settings.json after a run
// that launched requirements-analyst: the CLI's debug log says it took its
// subagentStatusLine (the TUI alone runs that command, so the run cannot
// show a row), and the command, run as the TUI runs it (sh -c in the
// project, the plugin's variables set, the agent panel's JSON on stdin),
// finds the binary the dispatcher installed and labels the analyst's row
// by the agent id the real hooks recorded, and no other row.
func checkSubagentStatusLine(t *testing.T, c *checks, run *Run, plugin, debug string) {
	t.Helper()
	log, err := os.ReadFile(debug)
	if err != nil {
		c.errorf("no debug log: %v", err)
	} else if !strings.Contains(string(log), "Cached plugin settings with keys: subagentStatusLine") {
		c.errorf("the CLI did not take the plugin's subagentStatusLine: its debug log does not say %q", "Cached plugin settings with keys: subagentStatusLine")
	}
	var settings struct {
		SubagentStatusLine struct {
			Command string `json:"command"`
		} `json:"subagentStatusLine"`
	}
	b, err := os.ReadFile(filepath.Join(plugin, "settings.json"))
	if err == nil {
		err = json.Unmarshal(b, &settings)
	}
	if err != nil || settings.SubagentStatusLine.Command == "" {
		c.errorf("the plugin's settings.json sets no subagentStatusLine command: %v", err)
		return
	}
	var cp any
	b, err = os.ReadFile(filepath.Join(run.ProjectDir, ".orchestrator", "state", "checkpoint.json"))
	if err == nil {
		err = json.Unmarshal(b, &cp)
	}
	if err != nil {
		c.errorf("checkpoint: %v", err)
		return
	}
	analyst := launchAgentID(cp, "requirements-analyst")
	if analyst == "" {
		c.errorf("no requirements-analyst launch with an agent id in the checkpoint:\n%s", b)
		return
	}
	in := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"columns":114,"tasks":[{"id":%q,"type":"local_agent","agentType":"orch-hook:requirements-analyst","status":"completed","description":"Analyse","label":"Analyse"},{"id":"a0000000000000000","type":"local_agent","agentType":"general-purpose","status":"running","description":"Other","label":"Other"}]}`, run.SessionID, run.ProjectDir, analyst)
	cmd := exec.Command("sh", "-c", settings.SubagentStatusLine.Command)
	cmd.Dir = run.ProjectDir
	// The CLI's environment (cliEnv: the tests' config directory holds the
	// workflow's marker), and what the plugin's command gets besides.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + run.Home, "XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME"), "CLAUDE_PROJECT_DIR=" + run.ProjectDir,
		"CLAUDE_PLUGIN_ROOT=" + plugin, "CLAUDE_PLUGIN_DATA=" + filepath.Join(run.Home, ".claude", "plugins", "data", "orch-hook-inline")}
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if want := fmt.Sprintf(`{"id":%q,"content":"requirements-analyst · clarification · 0a"}`+"\n", analyst); err != nil || string(out) != want {
		c.errorf("the plugin's subagentStatusLine: %v, output %q, want %q", err, out, want)
	}
}

// launchAgentID finds, anywhere in a decoded checkpoint, the agent id of
// a launch of agent.
func launchAgentID(v any, agent string) string {
	switch v := v.(type) {
	case map[string]any:
		if id, ok := v["agent_id"].(string); ok && id != "" && v["agent"] == agent {
			return id
		}
		for _, e := range v {
			if id := launchAgentID(e, agent); id != "" {
				return id
			}
		}
	case []any:
		for _, e := range v {
			if id := launchAgentID(e, agent); id != "" {
				return id
			}
		}
	}
	return ""
}

// runFailThrice is scenario 3, shared with the mutant test.
func runFailThrice(t *testing.T, plugin string) (*Run, *checks, string) {
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "fail3", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-FAIL3]] Build a greeting module", "/orch-hook:approve"},
		MaxTurns:   60,
		Timeout:    120 * time.Second,
	})
	c := &checks{}
	c.wantDenied(run, "orch-hook: [Gate 3] code-implementer before FAILURE_ANALYSIS is not allowed. Now: phase 1, step F1, fix iteration 1/3. Next: launch task-planner for FAILURE_ANALYSIS.")
	c.wantText(run, "4b FAIL -> F1 | Task 01 failed: Greeting is misspelled. (fix iteration 1/3)")
	c.wantText(run, "F1 OK -> F2 | fix only Task 01")
	c.wantText(run, "4b FAIL -> escalated | fix iteration 3/3 used up")
	esc, err := os.ReadFile(filepath.Join(project, ".orchestrator", "ESCALATION.md"))
	if err != nil {
		c.errorf("ESCALATION.md was not written: %v", err)
	} else if !strings.Contains(string(esc), "**Iteration**: 3/3 (maximum reached)") || !strings.Contains(string(esc), "/orch-hook:resolve retry") {
		c.errorf("ESCALATION.md lacks its format (iteration 3/3, /orch-hook:resolve retry):\n%s", esc)
	}
	if got := workflowState(statusOf(t, plugin, project)); got != "escalated" {
		c.errorf("state %q, want escalated", got)
	}
	if _, ok := run.Mock.FindText("Stop hook feedback:"); ok {
		c.errorf("a Stop was blocked, but Stop is allowed while escalated")
	}
	return run, c, project
}

// TestFailThrice is scenario 3: three 4b FAILs, F1/F2 enforced in between
// (a fix without FAILURE_ANALYSIS is denied), then escalation.
func TestFailThrice(t *testing.T) {
	run, c, _ := runFailThrice(t, pluginCopy(t, ""))
	c.report(t, run)
}

// TestMutantGate3IsCaught runs scenario 3 against a build whose Gate 3
// check is disabled (-tags orchhook_mutant_gate3): the scenario must fail,
// or the suite could not see a broken gate.
func TestMutantGate3IsCaught(t *testing.T) {
	run, c, _ := runFailThrice(t, pluginCopy(t, "orchhook_mutant_gate3"))
	if len(c.problems) == 0 {
		t.Fatalf("scenario 3 passed against the Gate 3 mutant: the suite cannot see a broken gate\n%s", run.Mock.Summary())
	}
	t.Logf("scenario 3 failed against the mutant, as it must: %s", c.problems[0])
}

// TestSelfApproval is scenario 4: the model tries to approve its own plan
// through Bash and through the Skill tool; both are refused.
func TestSelfApproval(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "selfapprove", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-SELF]] Build a greeting module"},
		MaxTurns:   20,
	})
	var c checks
	c.wantDenied(run, "PreToolUse:Bash hook error: orch-hook: running orch-hook approve from Bash is not allowed")
	// The client itself refuses a Skill call of a disable-model-invocation
	// command before any hook runs; orch-hook's own Skill rule (tested in
	// the testscripts) is the second line. Either way it must be refused.
	if _, tr, ok := run.Mock.FindToolResult("orch-hook:approve"); !ok || !tr.IsError && !strings.Contains(tr.Text, "tool_use_error") {
		c.errorf("the Skill call of orch-hook:approve was not refused: %+v", tr)
	}
	if got := workflowState(statusOf(t, plugin, project)); got != "3" {
		c.errorf("state %q, want 3 (still waiting for the user's approval)", got)
	}
	c.report(t, run)
}

var reStopBlock = regexp.MustCompile(`stop blocked (\d)/3`)

// TestStopMidLoop is scenario 5: the model tries to stop in the middle of
// the implementation loop; it is blocked with the next step, then released
// by the cap (no endless loop).
func TestStopMidLoop(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "stop", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-STOP]] Build a greeting module", "/orch-hook:approve"},
		MaxTurns:   30,
	})
	var c checks
	blocks := map[string]bool{}
	for _, r := range run.Mock.Requests() {
		for _, text := range r.UserTexts() {
			if strings.HasPrefix(text, "Stop hook feedback:") {
				if m := reStopBlock.FindStringSubmatch(text); m != nil {
					blocks[m[1]] = true
				}
				if !strings.Contains(text, "Next: launch code-implementer for Task 01.") {
					c.errorf("the Stop block does not name the next step: %q", text)
				}
			}
		}
	}
	for _, n := range []string{"1", "2", "3"} {
		if !blocks[n] {
			c.errorf("no Stop block %s/3 reached the model (saw %v)", n, blocks)
		}
	}
	if len(run.Results()) == 0 {
		c.errorf("the run never ended: the cap did not release the Stop")
	}
	if got := workflowState(statusOf(t, plugin, project)); got != "4a" {
		c.errorf("state %q, want 4a", got)
	}
	c.report(t, run)
}

// TestWhoWrites is scenario 6: a code-implementer subagent edits project
// files; the main agent editing a source file during 4a is denied.
func TestWhoWrites(t *testing.T) {
	plugin := pluginCopy(t, "")
	project := newProject(t)
	run := runClaude(t, Config{
		PluginDir:  plugin,
		ProjectDir: project,
		Script:     scenario(t, "writes", project),
		Messages:   []string{"/orch-hook:orchestrate [[E2E-WRITES]] Build a greeting module", "/orch-hook:approve"},
		MaxTurns:   30,
	})
	var c checks
	c.wantDenied(run, "PreToolUse:Write hook error: orch-hook: the orchestrator may not edit src/greet.txt now")
	b, err := os.ReadFile(filepath.Join(project, "src", "greet.txt"))
	if err != nil || string(b) != "hello from the implementer\n" {
		c.errorf("src/greet.txt = %q, %v; want the implementer's content", b, err)
	}
	c.report(t, run)
}

func dumpNewText(t *testing.T, run *Run) {
	for _, r := range run.Mock.Requests() {
		t.Logf("#%d %s NEW: %.600q", r.Seq, r.Conversation, r.NewText())
	}
}

// verifyRecords runs the plugin's `orch-hook verify` on the records the
// run wrote (README, "Records"): there must be one, and it must verify.
// With ORCH_HOOK_KEEP_RECORD=1 it is kept as internal/app/testdata/<keep>,
// the real-CLI record the unit tests verify.
func verifyRecords(t *testing.T, c *checks, plugin, project, keep string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(project, ".orchestrator", "records", "*.json"))
	if len(paths) != 1 {
		c.errorf("records written: %v, want one", paths)
		return
	}
	out, err := exec.Command(filepath.Join(plugin, "bin", "orch-hook"), "verify", paths[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), ": ok: ") {
		c.errorf("orch-hook verify of the run's record: %v\n%s", err, out)
	}
	if os.Getenv("ORCH_HOOK_KEEP_RECORD") == "1" {
		b, err := os.ReadFile(paths[0])
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "app", "testdata", keep), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
