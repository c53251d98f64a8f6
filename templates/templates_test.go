package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
)

// repoRoot is the plugin root: the rendered files are committed there.
const repoRoot = ".."

// TestRenderedUpToDate fails when commands/, agents/, hooks/hooks.json or
// settings.json differ from what the templates render (run `make generate`).
// testVersion is the plugin version the tests render.
const testVersion = "1.2.3"

var plugin = Plugin(testVersion)

func TestRenderedUpToDate(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(repoRoot, ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Version string }
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	files, err := Render(Plugin(m.Version))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(repoRoot, path))
		if err != nil {
			t.Errorf("%s: %v (run make generate)", path, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run make generate", path)
		}
	}
	for _, dir := range []string{"commands", "agents"} {
		entries, _ := os.ReadDir(filepath.Join(repoRoot, dir))
		for _, e := range entries {
			if _, ok := files[dir+"/"+e.Name()]; !ok {
				t.Errorf("%s/%s is not rendered from a template: remove it or add its template", dir, e.Name())
			}
		}
	}
}

// availableTools is the main thread's tool list of Claude Code 2.1.328 (as
// observed in its requests); an agent naming anything else silently loses
// that tool.
var availableTools = map[string]bool{
	"Agent": true, "Bash": true, "Edit": true, "ListAgents": true, "Read": true,
	"ReportFindings": true, "ScheduleWakeup": true, "Skill": true, "ToolSearch": true,
	"Workflow": true, "DeferredToolPlaceholder": true, "Write": true,
}

// frontmatter reads the "key: value" lines between the leading --- lines.
func frontmatter(t *testing.T, name string, doc []byte) map[string]string {
	t.Helper()
	text := string(doc)
	if !strings.HasPrefix(text, "---\n") {
		t.Fatalf("%s: no frontmatter", name)
	}
	end := strings.Index(text[4:], "\n---\n")
	if end < 0 {
		t.Fatalf("%s: frontmatter not closed", name)
	}
	out := map[string]string{}
	for _, line := range strings.Split(text[4:4+end], "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: frontmatter line %q is not key: value", name, line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// agentDef is one rendered agent definition, checked by eachAgent.
type agentDef struct {
	target Target
	path   string
	doc    string
	fm     map[string]string
	tools  map[string]bool
}

// eachAgent renders agents for both targets, checks what every agent
// definition must hold (present, its name, a description, only tools that
// exist) and hands each to check for the rest.
func eachAgent(t *testing.T, agents []string, check func(a agentDef)) {
	t.Helper()
	for _, target := range []Target{plugin, Init} {
		files, err := Render(target)
		if err != nil {
			t.Fatal(err)
		}
		for _, agent := range agents {
			path := target.agentFile(agent)
			doc, ok := files[path]
			if !ok {
				t.Errorf("%s: the agent %s has no definition", target.Name, agent)
				continue
			}
			fm := frontmatter(t, path, doc)
			if fm["name"] != agent {
				t.Errorf("%s: name %q, want %q", path, fm["name"], agent)
			}
			if fm["description"] == "" {
				t.Errorf("%s: no description", path)
			}
			tools := map[string]bool{}
			for _, tool := range strings.Split(fm["tools"], ",") {
				tool = strings.TrimSpace(tool)
				tools[tool] = true
				if !availableTools[tool] {
					t.Errorf("%s: tool %q does not exist in Claude Code 2.1.328", path, tool)
				}
			}
			check(agentDef{target, path, string(doc), fm, tools})
		}
	}
}

func TestAgents(t *testing.T) {
	eachAgent(t, orchestrate.WorkflowAgents, func(a agentDef) {
		if a.tools["Agent"] {
			t.Errorf("%s: a workflow agent must not launch agents", a.path)
		}
	})
}

// TestCommands: the commands the workflow refers to exist; the user's
// decisions cannot be invoked by the model; no command runs the user's
// text through a shell.
func TestCommands(t *testing.T) {
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orchestrate", "approve", "request-changes", "resolve", "abort", "resume", "status", "protect", "statusline"} {
		doc, ok := files["commands/"+name+".md"]
		if !ok {
			t.Errorf("command %s is missing", name)
			continue
		}
		fm := frontmatter(t, name, doc)
		userOnly := name != "orchestrate" && name != "status"
		if userOnly && fm["disable-model-invocation"] != "true" {
			t.Errorf("command %s is the user's decision but lacks disable-model-invocation: true", name)
		}
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "!") && strings.Contains(line, "$ARGUMENTS") {
				t.Errorf("command %s runs the user's text in a shell: %s", name, line)
			}
		}
	}
	orchestrateCmd := string(files["commands/orchestrate.md"])
	for _, agent := range orchestrate.WorkflowAgents {
		if !strings.Contains(orchestrateCmd, "orch-hook:"+agent) {
			t.Errorf("the orchestrate command never names orch-hook:%s", agent)
		}
	}
}

// TestHooksFile: every event the workflow needs, gating events with a
// timeout well above the 5 s lock wait.
func TestHooksFile(t *testing.T) {
	var hf HooksFile
	files, _ := Render(plugin)
	if err := json.Unmarshal(files["hooks/hooks.json"], &hf); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{gates.SessionStart, gates.SessionEnd, gates.UserPromptSubmit, gates.UserPromptExpansion, gates.PreToolUse, gates.PostToolUse, gates.PostToolUseFailure, gates.SubagentStop, gates.Stop} {
		m, ok := hf.Hooks[ev]
		if !ok || len(m) == 0 || len(m[0].Hooks) == 0 {
			t.Errorf("no hook for %s", ev)
			continue
		}
		h := m[0].Hooks[0]
		if h.Timeout < 10 {
			t.Errorf("%s timeout %d s, want >= 10", ev, h.Timeout)
		}
		// The binary is told its budget: the timeout less a second.
		want := fmt.Sprintf(" hook --budget %ds %s;", h.Timeout-1, ev)
		if !strings.Contains(h.Command, PluginBinary(testVersion)) || !strings.Contains(h.Command, want) {
			t.Errorf("%s command %q does not run %s%s", ev, h.Command, PluginBinary(testVersion), want)
		}
	}
	pre := hf.Hooks[gates.PreToolUse][0].Matcher
	for _, tool := range []string{"Agent", "Task", "Write", "Edit", "NotebookEdit", "Bash", "Skill", "SendMessage", "Workflow"} {
		if !strings.Contains("|"+pre+"|", "|"+tool+"|") {
			t.Errorf("PreToolUse matcher %q misses %s", pre, tool)
		}
	}
}

// TestPluginSettings: the plugin renders its settings.json with exactly
// the subagentStatusLine that runs this version's binary, as the hooks do,
// and nothing else (Claude Code drops any other key of a plugin's
// settings, statusLine included); init renders none (a project's
// settings are its users').
func TestPluginSettings(t *testing.T) {
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "subagentStatusLine": {
    "type": "command",
    "command": "b=\"${CLAUDE_PLUGIN_DATA}/bin/1.2.3/orch-hook\"; [ -x \"$b\" ] && exec \"$b\" subagent-statusline; exit 0"
  }
}
`
	if got := string(files["settings.json"]); got != want {
		t.Errorf("settings.json:\n%s\nwant:\n%s", got, want)
	}
	var s map[string]struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	if err := json.Unmarshal(files["settings.json"], &s); err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s["subagentStatusLine"].Command != SubagentStatusLineCommand(plugin) {
		t.Errorf("settings.json sets %v, want subagentStatusLine alone", s)
	}
	// The hooks run the same binary.
	if !strings.Contains(Hooks(plugin)[gates.Stop][0].Hooks[0].Command, `b="`+PluginBinary(testVersion)+`"`) {
		t.Errorf("the hooks do not run %s", PluginBinary(testVersion))
	}
	initFiles, err := Render(Init)
	if err != nil {
		t.Fatal(err)
	}
	for path := range initFiles {
		if strings.HasSuffix(path, "settings.json") || strings.HasSuffix(path, "settings.local.json") {
			t.Errorf("init renders %s: its settings are merged by orch-hook init", path)
		}
	}
}

// TestSubagentStatusLineMissingBinary runs the plugin's subagentStatusLine
// as Claude Code does (sh -c, the agent panel's JSON on stdin) without a
// binary: it exits 0 and prints nothing, on stdout or stderr, whatever
// the data directory's path holds.
func TestSubagentStatusLineMissingBinary(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, odd := range []string{"plain", `q'"\%s%n $(touch pwned)`, "new\nline"} {
		pluginData := filepath.Join(t.TempDir(), odd)
		cmd := exec.Command(sh, "-c", SubagentStatusLineCommand(plugin))
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_PLUGIN_ROOT=" + t.TempDir(), "CLAUDE_PLUGIN_DATA=" + pluginData}
		cmd.Stdin = strings.NewReader(`{"tasks":[{"id":"a1","agentType":"orch-hook:code-implementer","status":"running"}]}`)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.Len() > 0 || stderr.Len() > 0 {
			t.Errorf("data dir %q, no binary: %v, stdout %q, stderr %q; want exit 0 and nothing", odd, err, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(filepath.Join(cmd.Dir, "pwned")); err == nil {
			t.Errorf("data dir %q: the path ran as a command", odd)
		}
	}
}

// TestMissingBinary runs the hook command lines exactly as Claude Code
// does (through sh) in a plugin root without a binary: during an active
// workflow a gating call is denied with the build command; without one,
// or for other events, it passes silently.
func TestMissingBinary(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	pluginRoot := t.TempDir()
	pluginData := t.TempDir()
	project := t.TempDir()
	hooks := Hooks(plugin)
	run := func(event string) (string, error) {
		cmd := exec.Command(sh, "-c", hooks[event][0].Hooks[0].Command)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_PLUGIN_ROOT=" + pluginRoot, "CLAUDE_PLUGIN_DATA=" + pluginData, "CLAUDE_PROJECT_DIR=" + project}
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{}}`)
		out, err := cmd.Output()
		return string(out), err
	}
	if out, err := run(gates.PreToolUse); err != nil || out != "" {
		t.Errorf("no workflow, missing binary: got %q, %v; want silent allow", out, err)
	}
	stateDir := filepath.Join(project, ".orchestrator", "state")
	os.MkdirAll(stateDir, 0o700)
	checkpoint := filepath.Join(stateDir, "checkpoint.json")
	os.WriteFile(checkpoint, []byte(`{"schema_version":"2.0","state_machine":{"current_state":"4a"}}`), 0o600)
	out, err := run(gates.PreToolUse)
	if err != nil {
		t.Fatal(err)
	}
	var deny struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &deny); err != nil {
		t.Fatalf("active workflow, missing binary: output %q is not JSON: %v", out, err)
	}
	if deny.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(deny.HookSpecificOutput.PermissionDecisionReason, "CLAUDE_PLUGIN_DATA='"+pluginData+"' sh '"+pluginRoot+"/hooks/bootstrap.sh' install "+testVersion) {
		t.Errorf("active workflow, missing binary: got %+v, want a deny naming the install command", deny.HookSpecificOutput)
	}
	if out, err := run(gates.Stop); err != nil || out != "" {
		t.Errorf("Stop with a missing binary must pass silently; got %q, %v", out, err)
	}
	os.WriteFile(checkpoint, []byte(`{"schema_version":"2.0","state_machine":{"current_state":"complete"}}`), 0o600)
	if out, _ := run(gates.PreToolUse); out != "" {
		t.Errorf("finished workflow, missing binary: got %q, want silent allow", out)
	}
}

// coordSupervisors are the coordinate workflow's sub-supervisors, by the
// kind of the shared partial that renders them.
var coordSupervisors = map[string]string{
	coordinate.ResearchSupervisor: "research",
	coordinate.ImplSupervisor:     "implementation",
	coordinate.TestSupervisor:     "testing",
}

// TestCoordAgents: every coordinate agent is defined for both targets, its
// frontmatter parses and names only tools that exist; supervisors can
// launch agents and name their worker as the target spells it, workers
// cannot launch agents.
func TestCoordAgents(t *testing.T) {
	eachAgent(t, coordinate.Agents, func(a agentDef) {
		agent := a.fm["name"]
		kind, supervisor := coordSupervisors[agent]
		if a.tools["Agent"] != supervisor {
			t.Errorf("%s: tools %q: Agent must be listed exactly for the sub-supervisors", a.path, a.fm["tools"])
		}
		if supervisor {
			worker := supervisors[kind].Worker
			if want := `subagent_type: "` + a.target.Agent(worker) + `"`; !strings.Contains(a.doc, want) {
				t.Errorf("%s does not launch its workers as %s", a.path, want)
			}
		}
		if a.target.AgentPrefix == "" && strings.Contains(a.doc, gates.PluginPrefix) {
			t.Errorf("%s names a plugin-namespaced agent in the init install", a.path)
		}
	})
}

// TestSupervisorExamples: the SUPERVISOR_COMPLETE example each supervisor
// is taught parses, uses only fields of coordinate.SupervisorResult, and keeps
// the aggregation rules orch-hook checks; its SUPERVISOR_FAILED example
// parses as a failure with errors.
func TestSupervisorExamples(t *testing.T) {
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	for agent, kind := range coordSupervisors {
		doc := string(files["agents/"+agent+".md"])
		res, failed, err := coordinate.ParseSupervisor(doc)
		if err != nil || !failed || len(res.Errors) == 0 {
			t.Errorf("%s: the last example is not a SUPERVISOR_FAILED with errors: %+v, %v, %v", agent, res, failed, err)
		}
		cut := strings.LastIndex(doc, "\n"+coordinate.LineSupervisorFailed)
		res, failed, err = coordinate.ParseSupervisor(doc[:cut])
		if err != nil || failed {
			t.Fatalf("%s: the SUPERVISOR_COMPLETE example does not parse: %v (failed %v)", agent, err, failed)
		}
		dec := json.NewDecoder(strings.NewReader(res.Raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&coordinate.SupervisorResult{}); err != nil {
			t.Errorf("%s: the example has a field coordinate.SupervisorResult does not: %v", agent, err)
		}
		if !strings.HasPrefix(res.SupervisorID, strings.ReplaceAll(agent, "-", "_")+"_") {
			t.Errorf("%s: supervisor_id %q", agent, res.SupervisorID)
		}
		// Workers as orch-hook would have observed them.
		var workers []coordinate.WorkerRecord
		switch kind {
		case "research":
			for _, p := range res.ReportsCreated {
				workers = append(workers, coordinate.WorkerRecord{Status: coordinate.WorkerCompleted, OutputPath: p, DurationMs: res.TotalDurationMs / int64(len(res.ReportsCreated))})
			}
			if res.TopicsResearched != len(res.ReportsCreated) || res.TopicsResearched < 4 {
				t.Errorf("%s: topics_researched %d, reports %d", agent, res.TopicsResearched, len(res.ReportsCreated))
			}
		case "implementation":
			workers = []coordinate.WorkerRecord{{Status: coordinate.WorkerCompleted, DurationMs: res.TotalDurationMs}}
			if res.TracksCompleted == 0 || res.SequentialDurationMs != res.TotalDurationMs || res.ParallelDurationMs == 0 ||
				int64(res.TimeSavingsPercent) != (res.SequentialDurationMs-res.ParallelDurationMs)*100/res.SequentialDurationMs {
				t.Errorf("%s: implementation fields inconsistent: %+v", agent, res)
			}
		case "testing":
			workers = []coordinate.WorkerRecord{{Status: coordinate.WorkerCompleted, DurationMs: res.TotalDurationMs}}
			if res.TotalTests == 0 || res.TestsPassed+res.TestsFailed != res.TotalTests {
				t.Errorf("%s: test counts inconsistent: %+v", agent, res)
			}
			raw := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(res.Raw), "}"))
			if !strings.HasSuffix(raw, `"tests_failed": 0`) || !strings.Contains(raw, `"tests_passed"`) {
				t.Errorf("%s: the example does not end with tests_passed and tests_failed", agent)
			}
		}
		if v := coordinate.CheckAggregation(res, workers, nil); len(v) > 0 {
			t.Errorf("%s: the example breaks the aggregation rules: %v", agent, v)
		}
	}
}

// TestSupervisorsSharePartial: the three sub-supervisors are rendered from
// templates/partials/supervisor.md.tmpl: their templates only include it,
// and its sentences appear in all three.
func TestSupervisorsSharePartial(t *testing.T) {
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	shared := []string{
		"and return aggregated metadata only: the orchestrator never reads the workers' full outputs.",
		"Do not relaunch failed workers.",
		"(orch-hook checks them against the workers it observed, and refuses the result otherwise)",
	}
	for agent, kind := range coordSupervisors {
		src, err := sources.ReadFile("agents/" + agent + ".md.tmpl")
		if err != nil {
			t.Fatal(err)
		}
		if want := `{{template "supervisor" (supervisor . "` + kind + `")}}`; !strings.Contains(string(src), want) {
			t.Errorf("agents/%s.md.tmpl does not include the shared partial as %s", agent, want)
		}
		doc := string(files["agents/"+agent+".md"])
		for _, s := range shared {
			if !strings.Contains(doc, s) {
				t.Errorf("agents/%s.md lacks the partial's sentence %q", agent, s)
			}
		}
	}
}

// TestCoordinateCommand: the coordinate command exists for both targets,
// takes a description, names every coordinate agent and every scope, and no
// command runs the user's text through a shell.
func TestCoordinateCommand(t *testing.T) {
	for _, target := range []Target{plugin, Init} {
		files, err := Render(target)
		if err != nil {
			t.Fatal(err)
		}
		path := target.commandFile("coordinate")
		doc, ok := files[path]
		if !ok {
			t.Errorf("%s: %s is missing", target.Name, path)
			continue
		}
		fm := frontmatter(t, path, doc)
		if fm["argument-hint"] == "" || fm["description"] == "" {
			t.Errorf("%s: frontmatter %v lacks description or argument-hint", path, fm)
		}
		text := string(doc)
		if !strings.Contains(text, "\n$ARGUMENTS\n") {
			t.Errorf("%s does not quote the user's description", path)
		}
		for _, agent := range coordinate.Agents {
			if !strings.Contains(text, "`"+target.Agent(agent)+"`") {
				t.Errorf("%s never names %s", path, target.Agent(agent))
			}
		}
		for _, scope := range coordinate.Scopes {
			if !strings.Contains(text, "| "+scope+" |") {
				t.Errorf("%s does not give the path of scope %s", path, scope)
			}
		}
		for file, body := range files {
			if !strings.HasSuffix(file, ".md") || !strings.Contains(file, "commands/") {
				continue
			}
			for _, line := range strings.Split(string(body), "\n") {
				if strings.HasPrefix(line, "!") && strings.Contains(line, "$ARGUMENTS") {
					t.Errorf("%s runs the user's text in a shell: %s", file, line)
				}
			}
		}
	}
}

// owedLine is a result line as an agent's definition must teach it: the
// exact line, or (value set) the key with its separator followed by a
// value the example fills in (a path, task numbers, a JSON object).
type owedLine struct {
	line  string
	value *regexp.Regexp
	// bare: the line may also be shown without its value (the commands
	// name TESTS: PASS without the counts the agent gives).
	bare bool
}

var (
	taskListValue = regexp.MustCompile(`^(\d{2}(, \d{2})*|none)$`)
	pathValue     = regexp.MustCompile(`^<absolute path>$`)
	jsonValue     = regexp.MustCompile(`^\{`)
	countsValue   = regexp.MustCompile(`^\(\d+ passed, \d+ failed(, coverage \d+%)?\)$`)
	createdValue  = regexp.MustCompile(`^\d+( in [\w./-]+(, [\w./-]+)*)?$`)
)

// agentJobs are the orchestrate workflow's jobs, by the agent that does
// them (launchRules in gates/orchestrate/launches.go): every job of
// gates/orchestrate/workflow.go but read-only and unsupported.
var agentJobs = map[string][]string{
	orchestrate.Analyst:     {orchestrate.JobClarify},
	orchestrate.Researcher:  {orchestrate.JobDiscovery},
	orchestrate.Explorer:    {orchestrate.JobDiscovery},
	orchestrate.Planner:     {orchestrate.JobPlan, orchestrate.JobPhase, orchestrate.JobAnalysis, orchestrate.JobExtraction},
	orchestrate.Implementer: {orchestrate.JobImplement, orchestrate.JobFix},
	orchestrate.Quality:     {orchestrate.JobGate, orchestrate.JobFinal},
	orchestrate.UXDX:        {orchestrate.JobUXDX},
}

// owedByAgent is what each agent of both workflows ends with: the lines
// orchestrate.OwedLines gives its jobs (plus the task lists a gate FAIL and
// FAILURE_ANALYSIS add), and the coordinate workflow's markers.
func owedByAgent(t *testing.T) map[string][]owedLine {
	t.Helper()
	out := map[string][]owedLine{}
	add := func(agent string, o owedLine) {
		for _, have := range out[agent] {
			if have.line == o.line {
				return
			}
		}
		out[agent] = append(out[agent], o)
	}
	for agent, jobs := range agentJobs {
		out[agent] = nil
		for _, job := range jobs {
			for _, l := range orchestrate.OwedLines(job) {
				add(agent, owedLine{line: l})
			}
		}
	}
	add(orchestrate.Quality, owedLine{line: orchestrate.LineFailingTasks, value: taskListValue})
	add(orchestrate.Planner, owedLine{line: lines["fix-tasks"], value: taskListValue})
	for _, agent := range []string{coordinate.ResearchSpecialist, coordinate.DebugAnalyst, coordinate.DocWriter} {
		add(agent, owedLine{line: coordinate.LineReportCreated, value: pathValue})
	}
	add(coordinate.PlanArchitect, owedLine{line: coordinate.LinePlanCreated, value: pathValue})
	add(coordinate.ImplementationExec, owedLine{line: gates.LineImplComplete})
	add(coordinate.ImplementationExec, owedLine{line: gates.LineImplBlocked})
	add(coordinate.TestSpecialist, owedLine{coordinate.LineTestsPass, countsValue, true})
	add(coordinate.TestSpecialist, owedLine{coordinate.LineTestsFail, countsValue, true})
	add(coordinate.TestSpecialist, owedLine{strings.TrimSuffix(coordinate.LineTestsCreated, ":") + ":", createdValue, false})
	add(coordinate.TestSpecialist, owedLine{line: coordinate.LineValidationPass})
	add(coordinate.TestSpecialist, owedLine{line: coordinate.LineValidationFail})
	for agent := range coordSupervisors {
		add(agent, owedLine{line: coordinate.LineSupervisorComplete, value: jsonValue})
		add(agent, owedLine{line: coordinate.LineSupervisorFailed, value: jsonValue})
	}
	for _, agent := range append(append([]string(nil), orchestrate.WorkflowAgents...), coordinate.Agents...) {
		if _, ok := out[agent]; !ok {
			t.Errorf("the agent %s has no entry in owedByAgent: add what it ends with", agent)
		}
	}
	return out
}

var numberedRe = regexp.MustCompile(`^\d{1,3}[.)]\s+`)

// lineKey reads s as the result-line grammar does (gates/resultline.go):
// leading decoration skipped, a key of letters and digits joined by
// spaces, '_', '-' or '/' (canonical: upper case, one space), sep when ':'
// or '=' follows, rest after it.
func lineKey(s string) (key string, sep bool, rest string) {
	s = strings.TrimLeft(strings.TrimSpace(s), ">-+*#_` \t")
	if m := numberedRe.FindString(s); m != "" {
		s = s[len(m):]
	}
	end, letters := 0, 0
	for end < len(s) {
		c := s[end]
		switch {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			letters++
		case c >= '0' && c <= '9' && letters > 0:
		case c == ' ' || c == '\t' || c == '_' || c == '-' || c == '/' || c == '*' || c == '`':
		default:
			goto done
		}
		end++
	}
done:
	if letters == 0 {
		return "", false, ""
	}
	key = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '/':
			return ' '
		case '*', '`':
			return -1
		}
		return unicode.ToUpper(r)
	}, s[:end])), " ")
	rest = s[end:]
	if strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "=") {
		sep, rest = true, rest[1:]
	}
	return key, sep, strings.TrimSpace(rest)
}

func ownKey(o owedLine) string {
	k, _, _ := lineKey(o.line)
	return k
}

// mention is a place in a text that shows a line the model might write:
// a line of a fenced block, a code span, or a prose line.
type mention struct {
	text    string
	prose   bool
	line    int // 1-based, in the body
	section string
}

// mentions lists the fenced lines, code spans and prose lines of body,
// each with the "## " section it is in ("" before the first).
func mentions(body string) []mention {
	var out []mention
	fence, section := false, ""
	for i, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			out = append(out, mention{strings.TrimSpace(line), false, i + 1, section})
			continue
		}
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
		}
		for _, m := range spanRe.FindAllString(line, -1) {
			out = append(out, mention{strings.TrimSpace(strings.Trim(m, "`")), false, i + 1, section})
		}
		out = append(out, mention{strings.TrimSpace(line), true, i + 1, section})
	}
	return out
}

// hit reports whether m shows a result line of one of the keys: in a
// fence or code span when it reads as the key (or, in capitals, the key
// run into a value); in prose only with its separator, or alone.
func hit(m mention, owed []owedLine) bool {
	text := m.text
	if m.prose {
		text = spanRe.ReplaceAllString(text, "``")
	}
	key, sep, rest := lineKey(text)
	for _, o := range owed {
		k := ownKey(o)
		switch {
		case key == k && (!m.prose || sep || strings.Trim(rest, ".!* ") == ""):
			return true
		case m.prose && keyWithSep(k).MatchString(text):
			// "..., then PHASE GATE STATUS: PASS if all pass."
			return true
		case !m.prose && !sep && strings.HasPrefix(key, k+" ") && strings.ToUpper(m.text) == m.text:
			// "PHASE GATE STATUS PASS"; not a JSON field (tests_failed).
			return true
		}
	}
	return false
}

var spanRe = regexp.MustCompile("`[^`]+`")

// keyWithSep finds a key, in any spelling, followed by ':' or '=' anywhere
// in a line.
func keyWithSep(key string) *regexp.Regexp {
	words := strings.Fields(key)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?i)\b` + strings.Join(words, `[ _/*-]+`) + `\**\s*[:=]`)
}

// matches returns the owed line m spells exactly (nil: none).
func matches(m mention, owed []owedLine) *owedLine {
	for i, o := range owed {
		if (o.value == nil || o.bare) && m.text == o.line {
			return &owed[i]
		}
		if v, ok := strings.CutPrefix(m.text, o.line+" "); ok && o.value != nil && o.value.MatchString(v) {
			return &owed[i]
		}
	}
	return nil
}

// body is a rendered file without its frontmatter: what the model reads
// as the agent's instructions.
func body(doc string) string {
	if rest, ok := strings.CutPrefix(doc, "---\n"); ok {
		if i := strings.Index(rest, "\n---\n"); i >= 0 {
			return rest[i+5:]
		}
	}
	return doc
}

// TestResultLinesOnceAtTheEnd: every agent that owes a result line states
// its line(s) once, in its last section ("## Result ..."), exactly as the
// gates expect them (orchestrate.OwedLines, the coordinate markers), every
// alternative there; no other line of the body shows one of its keys, in
// any spelling. An agent that owes none has no such section. Commands
// spell every result line they mention as the gates do.
func TestResultLinesOnceAtTheEnd(t *testing.T) {
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	byAgent := owedByAgent(t)
	var all []owedLine
	for agent, owed := range byAgent {
		path := "agents/" + agent + ".md"
		doc, ok := files[path]
		if !ok {
			t.Errorf("%s is not rendered", path)
			continue
		}
		ms := mentions(body(string(doc)))
		last := ""
		if len(ms) > 0 {
			last = ms[len(ms)-1].section
		}
		if len(owed) == 0 {
			if strings.HasPrefix(last, "Result") {
				t.Errorf("%s owes no result line but ends with a %q section", path, last)
			}
			continue
		}
		all = append(all, owed...)
		if !strings.HasPrefix(last, "Result") {
			t.Errorf("%s does not end with a \"## Result line\" section stating %s", path, owedList(owed))
		}
		seen := map[string]int{}
		for _, m := range ms {
			if !hit(m, owed) {
				continue
			}
			if m.section != last {
				t.Errorf("%s line %d states a result line outside its last section (%q): %q; state each line once, at the end", path, m.line, last, m.text)
				continue
			}
			o := matches(m, owed)
			if o == nil {
				if !m.prose {
					t.Errorf("%s line %d: %q is not spelled as the gates expect: %s", path, m.line, m.text, owedList(owed))
				} else {
					t.Errorf("%s line %d: the prose line %q reads as a result line", path, m.line, m.text)
				}
				continue
			}
			seen[o.line]++
		}
		for _, o := range owed {
			switch n := seen[o.line]; {
			case n == 0:
				t.Errorf("%s: its last section does not give the line %q", path, example(o))
			case n > 1 && o.value == nil:
				t.Errorf("%s: its last section gives %q %d times; once is enough", path, o.line, n)
			}
		}
	}
	// Commands may name any agent's line (the orchestrator's tables), as
	// long as it is spelled as the gates read it.
	for i, o := range all {
		if o.value != nil {
			all[i].value = regexp.MustCompile(o.value.String() + `|^(NN, NN|\{json\})$`)
		}
	}
	for path, doc := range files {
		if !strings.HasPrefix(path, "commands/") {
			continue
		}
		for _, m := range mentions(body(string(doc))) {
			if hit(m, all) && !m.prose && matches(m, all) == nil {
				t.Errorf("%s line %d: %q is not a result line as the gates spell it", path, m.line, m.text)
			}
		}
	}
}

func example(o owedLine) string {
	if o.value == nil {
		return o.line
	}
	return o.line + " ..."
}

func owedList(owed []owedLine) string {
	var s []string
	for _, o := range owed {
		s = append(s, "`"+example(o)+"`")
	}
	return strings.Join(s, ", ")
}

// lastSectionMentions are the fenced lines and code spans of an agent's
// last section that state one of its result lines.
func lastSectionMentions(t *testing.T, agent string) []string {
	t.Helper()
	files, err := Render(plugin)
	if err != nil {
		t.Fatal(err)
	}
	ms := mentions(body(string(files["agents/"+agent+".md"])))
	owed := owedByAgent(t)[agent]
	var out []string
	for _, m := range ms {
		if m.section == ms[len(ms)-1].section && !m.prose && matches(m, owed) != nil {
			out = append(out, m.text)
		}
	}
	return out
}

// TestResultExamplesRead: the lines the agents are taught, as rendered,
// are read by the gates as the result they stand for, the task lists
// included (FIX TASKS through a FAILURE_ANALYSIS completion in F1, since
// gates exports no constant for it).
func TestResultExamplesRead(t *testing.T) {
	for agent, jobs := range agentJobs {
		for _, job := range jobs {
			owed := orchestrate.OwedLines(job)
			for _, line := range lastSectionMentions(t, agent) {
				k, _, _ := lineKey(line)
				for _, form := range owed {
					if fk, _, _ := lineKey(form); fk == k {
						if got := gates.FindResult("Report.\n"+line, owed); got != line {
							t.Errorf("%s (%s): the taught line %q reads as %q", agent, job, line, got)
						}
					}
				}
			}
		}
	}
	failing := 0
	for _, line := range lastSectionMentions(t, orchestrate.Quality) {
		if strings.HasPrefix(line, orchestrate.LineFailingTasks) && !strings.HasSuffix(line, "none") {
			failing++
			if got := orchestrate.FailingTasks(orchestrate.LineGateFail + "\n" + line); len(got) == 0 {
				t.Errorf("code-quality's example %q names no failing task for the gates", line)
			}
		}
	}
	if failing == 0 {
		t.Errorf("code-quality is not shown a %s line naming tasks", orchestrate.LineFailingTasks)
	}
	// test-specialist: each line it is taught reads as its stage's line,
	// the TESTS lines with their counts (the execution stage's).
	taught := map[string]int{}
	for _, line := range lastSectionMentions(t, coordinate.TestSpecialist) {
		switch k, _, _ := lineKey(line); k {
		case "TESTS":
			if _, ok := coordinate.ParseTests(line); !ok {
				t.Errorf("test-specialist's %q is not read as a TESTS line", line)
			}
			if _, _, _, problem := coordinate.ParseExecution(line); problem != "" {
				t.Errorf("test-specialist's %q is not read as the execution stage's line: %s", line, problem)
			}
		case "TESTS CREATED":
			if _, _, problem := coordinate.ParseTestsCreated(line); problem != "" {
				t.Errorf("test-specialist's %q is not read as the generation stage's line: %s", line, problem)
			}
		case "VALIDATION":
			if _, _, _, problem := coordinate.ParseValidation(line); problem != "" {
				t.Errorf("test-specialist's %q is not read as the validation stage's line: %s", line, problem)
			}
		default:
			t.Errorf("test-specialist is taught %q, which no stage reads", line)
		}
		k, _, _ := lineKey(line)
		taught[k]++
	}
	if taught["TESTS"] == 0 || taught["TESTS CREATED"] == 0 || taught["VALIDATION"] == 0 {
		t.Errorf("test-specialist is not taught every stage's line: %v", taught)
	}
	for _, agent := range []string{coordinate.ResearchSpecialist, coordinate.DebugAnalyst, coordinate.DocWriter} {
		for _, line := range lastSectionMentions(t, agent) {
			if len(coordinate.ParseReportCreated(line)) != 1 {
				t.Errorf("%s's %q is not read as a report path", agent, line)
			}
		}
	}

	// FIX TASKS: a FAILURE_ANALYSIS after a gate that named no task.
	var fix string
	for _, line := range lastSectionMentions(t, orchestrate.Planner) {
		if strings.HasPrefix(line, lines["fix-tasks"]) {
			fix = line
		}
	}
	if fix == "" {
		t.Fatalf("task-planner is not shown a %s line", lines["fix-tasks"])
	}
	master := "# Master Plan: x\n\nProgress: 0/6\n\n## Phase 1: One\nStatus: in progress\n"
	plan := orchestrate.PlanFiles{}
	for n := 1; n <= 6; n++ {
		master += fmt.Sprintf("- [ ] Task %02d: t%d\n", n, n)
		plan[fmt.Sprintf("task-%02d.md", n)] = []byte(fmt.Sprintf("# Task %02d\nFiles: f%d.go\nrequires_ux_dx_review: false\n", n, n))
	}
	plan[orchestrate.MasterPlan] = []byte(master)
	w := &orchestrate.Workflow{Kind: "orchestrate", Current: orchestrate.SF1, Phase: 1, Plan: orchestrate.ParsePlan(plan).Snapshot(),
		Launches: []*orchestrate.Launch{{ToolUseID: "t1", AgentID: "a1", Agent: orchestrate.Planner, Job: orchestrate.JobAnalysis, Phase: 1, State: orchestrate.SF1, Status: gates.Running}}}
	report := "Root cause: ...\n" + fix + "\n" + orchestrate.LineAnalysis
	orchestrate.Decide(w, &gates.Call{Event: gates.SubagentStop, AgentID: "a1", AgentType: plugin.Agent(orchestrate.Planner), Text: report}, &orchestrate.Env{Root: "/p", Files: plan, Now: time.Now()})
	want := orchestrate.FailingTasks(strings.Replace(fix, lines["fix-tasks"], orchestrate.LineFailingTasks, 1))
	if w.Current != orchestrate.SF2 || len(want) == 0 || fmt.Sprint(w.FailingTasks) != fmt.Sprint(want) {
		t.Errorf("FAILURE_ANALYSIS ending %q: state %s, tasks to fix %v; want F2 fixing %v", report, w.Current, w.FailingTasks, want)
	}
}

// TestMissingBinaryOddPaths: the deny printed while the binary is missing
// stays valid JSON (an invalid answer lets the call through) whatever the
// plugin's paths hold: quotes, backslashes, percent signs, tabs, newlines.
func TestMissingBinaryOddPaths(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, odd := range []string{`q'"\%s%n`, "tab\there", "new\nline", "cr\rbell\a\x1b[31m"} {
		pluginRoot := filepath.Join(t.TempDir(), odd)
		pluginData := filepath.Join(t.TempDir(), odd)
		project := t.TempDir()
		stateDir := filepath.Join(project, ".orchestrator", "state")
		os.MkdirAll(stateDir, 0o700)
		os.WriteFile(filepath.Join(stateDir, "checkpoint.json"), []byte(`{"schema_version":"2.0","state_machine":{"current_state":"4a"}}`), 0o600)
		cmd := exec.Command(sh, "-c", Hooks(plugin)[gates.PreToolUse][0].Hooks[0].Command)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_PLUGIN_ROOT=" + pluginRoot, "CLAUDE_PLUGIN_DATA=" + pluginData, "CLAUDE_PROJECT_DIR=" + project}
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{}}`)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var deny struct {
			HookSpecificOutput struct {
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &deny); err != nil || deny.HookSpecificOutput.PermissionDecision != "deny" {
			t.Errorf("paths holding %q: output %q is not a JSON deny (%v): the call would be let through", odd, out, err)
		}
	}
}
