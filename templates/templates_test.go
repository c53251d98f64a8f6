package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// repoRoot is the plugin root: the rendered files are committed there.
const repoRoot = ".."

// TestRenderedUpToDate fails when commands/, agents/ or hooks/hooks.json
// differ from what the templates render (run `make generate`).
func TestRenderedUpToDate(t *testing.T) {
	files, err := Render(Plugin)
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

// availableTools is the main thread's tool list of Claude Code 2.1.328
// (FACTS.md); an agent naming anything else silently loses that tool.
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
	for _, target := range []Target{Plugin, Init} {
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
	eachAgent(t, gates.WorkflowAgents, func(a agentDef) {
		if a.tools["Agent"] {
			t.Errorf("%s: a workflow agent must not launch agents", a.path)
		}
	})
}

// TestResultLinesOwed: every result line a job owes appears in the agent
// that does the job, alone on its line.
func TestResultLinesOwed(t *testing.T) {
	files, err := Render(Plugin)
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{
		gates.JobClarify: gates.Analyst, gates.JobGate: gates.Quality, gates.JobFinal: gates.Quality,
		gates.JobUXDX: gates.UXDX, gates.JobImplement: gates.Implementer, gates.JobFix: gates.Implementer,
		gates.JobAnalysis: gates.Planner, gates.JobExtraction: gates.Planner,
	}
	for job, agent := range owner {
		doc := "\n" + string(files["agents/"+agent+".md"]) + "\n"
		for _, line := range gates.OwedLines(job) {
			if !strings.Contains(doc, "\n"+line+"\n") {
				t.Errorf("agents/%s.md does not teach the line %q that %s owes", agent, line, job)
			}
		}
	}
	if !strings.Contains(string(files["agents/code-quality.md"]), gates.LineFailingTasks) {
		t.Errorf("code-quality does not teach %q", gates.LineFailingTasks)
	}
}

// TestCommands: the commands the workflow refers to exist; the user's
// decisions cannot be invoked by the model; no command runs the user's
// text through a shell.
func TestCommands(t *testing.T) {
	files, err := Render(Plugin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orchestrate", "approve", "request-changes", "resolve", "abort", "resume", "status"} {
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
	orchestrate := string(files["commands/orchestrate.md"])
	for _, agent := range gates.WorkflowAgents {
		if !strings.Contains(orchestrate, "orch-hook:"+agent) {
			t.Errorf("the orchestrate command never names orch-hook:%s", agent)
		}
	}
}

// TestHooksFile: every event the workflow needs, gating events with a
// timeout well above the 2 s lock wait.
func TestHooksFile(t *testing.T) {
	var hf HooksFile
	files, _ := Render(Plugin)
	if err := json.Unmarshal(files["hooks/hooks.json"], &hf); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PostToolUse", "PostToolUseFailure", "SubagentStop", "Stop"} {
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
		if !strings.Contains(h.Command, PluginBinary) || !strings.Contains(h.Command, want) {
			t.Errorf("%s command %q does not run %s%s", ev, h.Command, PluginBinary, want)
		}
	}
	pre := hf.Hooks["PreToolUse"][0].Matcher
	for _, tool := range []string{"Agent", "Task", "Write", "Edit", "NotebookEdit", "Bash", "Skill", "SendMessage", "Workflow"} {
		if !strings.Contains("|"+pre+"|", "|"+tool+"|") {
			t.Errorf("PreToolUse matcher %q misses %s", pre, tool)
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
	project := t.TempDir()
	hooks := Hooks(Plugin)
	run := func(event string) (string, error) {
		cmd := exec.Command(sh, "-c", hooks[event][0].Hooks[0].Command)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_PLUGIN_ROOT=" + pluginRoot, "CLAUDE_PROJECT_DIR=" + project}
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_input":{}}`)
		out, err := cmd.Output()
		return string(out), err
	}
	if out, err := run("PreToolUse"); err != nil || out != "" {
		t.Errorf("no workflow, missing binary: got %q, %v; want silent allow", out, err)
	}
	stateDir := filepath.Join(project, ".orchestrator", "state")
	os.MkdirAll(stateDir, 0o700)
	checkpoint := filepath.Join(stateDir, "checkpoint.json")
	os.WriteFile(checkpoint, []byte(`{"schema_version":"2.0","state_machine":{"current_state":"4a"}}`), 0o600)
	out, err := run("PreToolUse")
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
	if deny.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(deny.HookSpecificOutput.PermissionDecisionReason, "cd "+pluginRoot+" && make build") {
		t.Errorf("active workflow, missing binary: got %+v, want a deny naming the build command", deny.HookSpecificOutput)
	}
	if out, err := run("Stop"); err != nil || out != "" {
		t.Errorf("Stop with a missing binary must pass silently; got %q, %v", out, err)
	}
	os.WriteFile(checkpoint, []byte(`{"schema_version":"2.0","state_machine":{"current_state":"complete"}}`), 0o600)
	if out, _ := run("PreToolUse"); out != "" {
		t.Errorf("finished workflow, missing binary: got %q, want silent allow", out)
	}
}

// coordSupervisors are the coordinate workflow's sub-supervisors, by the
// kind of the shared partial that renders them.
var coordSupervisors = map[string]string{
	gates.ResearchSupervisor: "research",
	gates.ImplSupervisor:     "implementation",
	gates.TestSupervisor:     "testing",
}

// TestCoordAgents: every coordinate agent is defined for both targets, its
// frontmatter parses and names only tools that exist; supervisors can
// launch agents and name their worker as the target spells it, workers
// cannot launch agents.
func TestCoordAgents(t *testing.T) {
	eachAgent(t, gates.CoordAgents, func(a agentDef) {
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

// TestCoordResultLinesOwed: every result line the coordinate engine expects
// appears in the agent that owes it, alone on its line.
func TestCoordResultLinesOwed(t *testing.T) {
	files, err := Render(Plugin)
	if err != nil {
		t.Fatal(err)
	}
	report := gates.LineReportCreated + " <absolute path>"
	owed := map[string][]string{
		gates.ResearchSpecialist: {report},
		gates.DebugAnalyst:       {report},
		gates.DocWriter:          {report},
		gates.PlanArchitect:      {gates.LinePlanCreated + " <absolute path>"},
		gates.ImplementationExec: {gates.LineImplComplete, gates.LineImplBlocked},
		gates.TestSpecialist:     {gates.LineTestsPass, gates.LineTestsFail},
		gates.ResearchSupervisor: {gates.LineSupervisorComplete + " {"},
		gates.ImplSupervisor:     {gates.LineSupervisorComplete + " {"},
		gates.TestSupervisor:     {gates.LineSupervisorComplete + " {"},
	}
	for _, agent := range gates.CoordAgents {
		lines, ok := owed[agent]
		if !ok {
			t.Errorf("no result line is known for the coordinate agent %s: add it here", agent)
			continue
		}
		doc := "\n" + string(files["agents/"+agent+".md"]) + "\n"
		for _, line := range lines {
			if !strings.Contains(doc, "\n"+line+"\n") {
				t.Errorf("agents/%s.md does not teach the line %q alone on its line", agent, line)
			}
		}
		if _, supervisor := coordSupervisors[agent]; supervisor && !strings.Contains(doc, "\n"+gates.LineSupervisorFailed+" {") {
			t.Errorf("agents/%s.md does not teach %s", agent, gates.LineSupervisorFailed)
		}
	}
}

// TestSupervisorExamples: the SUPERVISOR_COMPLETE example each supervisor
// is taught parses, uses only fields of gates.SupervisorResult, and keeps
// the aggregation rules orch-hook checks; its SUPERVISOR_FAILED example
// parses as a failure with errors.
func TestSupervisorExamples(t *testing.T) {
	files, err := Render(Plugin)
	if err != nil {
		t.Fatal(err)
	}
	for agent, kind := range coordSupervisors {
		doc := string(files["agents/"+agent+".md"])
		res, failed, err := gates.ParseSupervisor(doc)
		if err != nil || !failed || len(res.Errors) == 0 {
			t.Errorf("%s: the last example is not a SUPERVISOR_FAILED with errors: %+v, %v, %v", agent, res, failed, err)
		}
		cut := strings.LastIndex(doc, "\n"+gates.LineSupervisorFailed)
		res, failed, err = gates.ParseSupervisor(doc[:cut])
		if err != nil || failed {
			t.Fatalf("%s: the SUPERVISOR_COMPLETE example does not parse: %v (failed %v)", agent, err, failed)
		}
		dec := json.NewDecoder(strings.NewReader(res.Raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&gates.SupervisorResult{}); err != nil {
			t.Errorf("%s: the example has a field gates.SupervisorResult does not: %v", agent, err)
		}
		if !strings.HasPrefix(res.SupervisorID, strings.ReplaceAll(agent, "-", "_")+"_") {
			t.Errorf("%s: supervisor_id %q", agent, res.SupervisorID)
		}
		// Workers as orch-hook would have observed them.
		var workers []gates.WorkerRecord
		switch kind {
		case "research":
			for _, p := range res.ReportsCreated {
				workers = append(workers, gates.WorkerRecord{Status: gates.WorkerCompleted, OutputPath: p, DurationMs: res.TotalDurationMs / int64(len(res.ReportsCreated))})
			}
			if res.TopicsResearched != len(res.ReportsCreated) || res.TopicsResearched < 4 {
				t.Errorf("%s: topics_researched %d, reports %d", agent, res.TopicsResearched, len(res.ReportsCreated))
			}
		case "implementation":
			workers = []gates.WorkerRecord{{Status: gates.WorkerCompleted, DurationMs: res.TotalDurationMs}}
			if res.TracksCompleted == 0 || res.SequentialDurationMs != res.TotalDurationMs || res.ParallelDurationMs == 0 ||
				int64(res.TimeSavingsPercent) != (res.SequentialDurationMs-res.ParallelDurationMs)*100/res.SequentialDurationMs {
				t.Errorf("%s: implementation fields inconsistent: %+v", agent, res)
			}
		case "testing":
			workers = []gates.WorkerRecord{{Status: gates.WorkerCompleted, DurationMs: res.TotalDurationMs}}
			if res.TotalTests == 0 || res.TestsPassed+res.TestsFailed != res.TotalTests {
				t.Errorf("%s: test counts inconsistent: %+v", agent, res)
			}
			raw := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(res.Raw), "}"))
			if !strings.HasSuffix(raw, `"tests_failed": 1`) || !strings.Contains(raw, `"tests_passed"`) {
				t.Errorf("%s: the example does not end with tests_passed and tests_failed", agent)
			}
		}
		if v := gates.CheckAggregation(res, workers, nil); len(v) > 0 {
			t.Errorf("%s: the example breaks the aggregation rules: %v", agent, v)
		}
	}
}

// TestSupervisorsSharePartial: the three sub-supervisors are rendered from
// templates/partials/supervisor.md.tmpl: their templates only include it,
// and its sentences appear in all three.
func TestSupervisorsSharePartial(t *testing.T) {
	files, err := Render(Plugin)
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
	for _, target := range []Target{Plugin, Init} {
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
		for _, agent := range gates.CoordAgents {
			if !strings.Contains(text, "`"+target.Agent(agent)+"`") {
				t.Errorf("%s never names %s", path, target.Agent(agent))
			}
		}
		for _, scope := range gates.Scopes {
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
