package state_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/internal/dev/payloads"
	"github.com/orch-hook/orch-hook/state"
)

// The JSON Schema of checkpoint v2.0 (checkpoint-v2.0.schema.json; README,
// "State") against the seeds' own examples, against checkpoints orch-hook
// writes while the workflows really run (hook payloads through app.Run, as
// `orch-hook hook` runs them), and against broken checkpoints it must
// reject. An external test package: it drives internal/app, which imports
// state.

const (
	schemaFile = "checkpoint-v2.0.schema.json"
	schemaID   = "https://github.com/orch-hook/orch-hook/state/checkpoint-v2.0.schema.json"
)

// schemas are the compiled schema and the sub-schemas the tests use.
type schemas struct {
	root, storeFile, supervisorState *jsonschema.Schema
}

func compileSchemas(t *testing.T) *schemas {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", schemaFile, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // date-time is checked, not only annotated
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	compile := func(loc string) *jsonschema.Schema {
		s, err := c.Compile(loc) // checks the schema against the 2020-12 meta-schema too
		if err != nil {
			t.Fatalf("compiling %s: %v", loc, err)
		}
		return s
	}
	return &schemas{
		root:            compile(schemaID),
		storeFile:       compile(schemaID + "#/$defs/store_file"),
		supervisorState: compile(schemaID + "#/$defs/supervisor_state"),
	}
}

// decode reads JSON as the validator wants it (numbers as json.Number).
func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// leaves lists the innermost errors of a validation, each as "<instance
// pointer> <keyword>[: detail]", sorted: what a test compares.
func leaves(err error) []string {
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, describe(e))
	}
	walk(ve)
	sort.Strings(out)
	return slices.Compact(out)
}

// describe is one error as leaves lists it: the instance location ("/"
// for the root), the keyword, and for required and additionalProperties
// the property names.
func describe(e *jsonschema.ValidationError) string {
	loc := "/" + strings.Join(e.InstanceLocation, "/")
	kw := strings.Join(e.ErrorKind.KeywordPath(), "/")
	detail := ""
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		detail = strings.Join(slices.Sorted(slices.Values(k.Missing)), ",")
	case *kind.AdditionalProperties:
		detail = strings.Join(slices.Sorted(slices.Values(k.Properties)), ",")
	}
	if kw == "" {
		kw = fmt.Sprintf("%T", e.ErrorKind)
	}
	if detail != "" {
		return loc + " " + kw + ": " + detail
	}
	return loc + " " + kw
}

// TestSchemaSeedExamples validates the seeds' own examples: the ```json
// blocks of seed 000 (checkpoint v2.0) and seed 003 (supervisor_state),
// read from verbatim copies of the seed files (testdata/seeds). A whole
// checkpoint is validated against the schema, a supervisor_state fragment
// against $defs/supervisor_state. Where a seed's example is not in the
// format its own field tables and seed 000 define (not a spelling), the
// exact disagreement is expected, so that the rest of the example is
// still checked (README, "State", lists them).
func TestSchemaSeedExamples(t *testing.T) {
	s := compileSchemas(t)
	reBlock := regexp.MustCompile("(?ms)^[ \t]*```json[ \t]*\n(.*?)^[ \t]*```[ \t]*$")
	type example struct {
		name string
		body []byte
	}
	var examples []example
	for _, seed := range []string{"000_93e000ca0d3777e6.txt", "003_1c1c7c780845e960.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", "seeds", seed))
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range reBlock.FindAllSubmatch(b, -1) {
			examples = append(examples, example{fmt.Sprintf("%s#%d", seed[:3], i+1), m[1]})
		}
	}
	// What each example must give: nil is valid; otherwise the exact
	// errors, each one a disagreement of the seed with itself.
	want := map[string][]string{
		// Each validates against the seed's format (the root). Where it
		// writes what orch-hook does not (seed 000's research_supervisor
		// without seed 003's supervisor_id and workers; seed 003's
		// checkpoint_id, project_name and workflow_type at the top level,
		// no metadata, no transition_table or workflow_config), the
		// store's stricter form refuses it: strictStore.
		"000#1": nil,
		"000#2": nil,
		"003#1": nil,
	}
	strictStore := map[string]string{
		"000#1": "research_supervisor required: supervisor_id,workers",
		"003#1": "required: lineage,metadata",
	}
	var names []string
	for _, ex := range examples {
		names = append(names, ex.name)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(ex.body, &keys); err != nil {
			t.Errorf("%s: not a JSON object: %v", ex.name, err)
			continue
		}
		v := decode(t, ex.body)
		var err error
		switch {
		case keys["state_machine"] != nil:
			err = s.root.Validate(v)
		case len(keys) == 1 && keys["supervisor_state"] != nil:
			err = s.supervisorState.Validate(decode(t, keys["supervisor_state"]))
		default:
			t.Errorf("%s: neither a checkpoint nor a supervisor_state fragment; the test does not know what to check it against", ex.name)
			continue
		}
		if got, exp := leaves(err), want[ex.name]; !slices.Equal(got, exp) {
			t.Errorf("%s: the schema says\n  %s\nwant\n  %s", ex.name, strings.Join(got, "\n  "), strings.Join(exp, "\n  "))
		}
		if part, ok := strictStore[ex.name]; ok {
			if err := s.storeFile.Validate(v); err == nil || !strings.Contains(strings.Join(leaves(err), " "), part) {
				t.Errorf("%s: the store's form accepts the seed's spelling (%v)", ex.name, leaves(err))
			}
		}
	}
	if !slices.Equal(names, []string{"000#1", "000#2", "003#1"}) {
		t.Errorf("the seeds' JSON examples are %v; the test expects 000#1, 000#2 and 003#1", names)
	}
	// Seed 003's example holds all three supervisors, so the schema's
	// reading of the three field tables (workers[], tracks[], stages[])
	// was checked above on the seed's own data.
	var ex003 struct {
		SupervisorState map[string]json.RawMessage `json:"supervisor_state"`
	}
	for _, ex := range examples {
		if ex.name == "003#1" {
			_ = json.Unmarshal(ex.body, &ex003)
		}
	}
	for _, key := range []string{"research_supervisor", "implementation_supervisor", "testing_supervisor"} {
		if ex003.SupervisorState[key] == nil {
			t.Errorf("seed 003's example has no %s", key)
		}
	}
}

// payloadDir holds the captured Claude Code payloads the hook calls are
// built from.
var payloadDir = filepath.Join("..", payloads.Dir)

// project is a project whose workflow is driven by hook calls; every
// checkpoint it writes is validated.
type project struct {
	t      *testing.T
	s      *schemas
	root   string
	last   []byte            // the checkpoint last validated
	points int               // distinct checkpoints validated
	seen   map[string]bool   // supervisor_state and phase_data keys met
	files  map[string][]byte // named points of the run
	dumped bool              // a rejected checkpoint was logged
}

func newProject(t *testing.T, s *schemas) *project {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &project{t: t, s: s, root: root, seen: map[string]bool{}, files: map[string][]byte{}}
}

// hook runs one hook call, built from a captured payload template and
// overrides (package payloads' syntax), through app.Run as `orch-hook
// hook --budget 14s EVENT` does, then validates the checkpoint if it
// changed. It returns the hook's stdout.
func (p *project) hook(template string, overrides ...string) string {
	p.t.Helper()
	in, err := payloads.Build(payloadDir, template, p.root, "session-1", overrides...)
	if err != nil {
		p.t.Fatal(err)
	}
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(in, &ev)
	env := app.EnvFrom(func(k string) string {
		switch k {
		case "CLAUDE_PROJECT_DIR":
			return p.root
		case "HOME", "XDG_CONFIG_HOME":
			return os.Getenv(k)
		}
		return ""
	}, &bytes.Buffer{})
	env.Budget = 14 * time.Second
	var out bytes.Buffer
	if err := app.Run(env, bytes.NewReader(in), &out, ev.Name); err != nil {
		p.t.Fatalf("hook %s: %v", template, err)
	}
	p.validate(template)
	return out.String()
}

// expect runs a hook call whose answer must contain want: the workflow
// really moves as the test thinks, so what is validated is the state of
// a real run.
func (p *project) expect(want, template string, overrides ...string) {
	p.t.Helper()
	if out := p.hook(template, overrides...); !strings.Contains(out, want) {
		p.t.Fatalf("hook %s %v: the answer lacks %q:\n%s", template, overrides, want, out)
	}
}

// write puts a file in the project (what an agent's Write tool leaves).
func (p *project) write(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// agentWrite is an agent's Write of rel: the file, then its PostToolUse.
func (p *project) agentWrite(agentID, agent, rel, content string) {
	p.t.Helper()
	p.write(rel, content)
	p.hook("post-write-sub", "agent_id="+agentID, "agent_type=orch-hook:"+agent, "tool_input.file_path=$WORK/"+rel)
}

// run launches an agent in the foreground and runs it to its end: its
// artifact written with its Write tool (when rel is set), SubagentStop
// with its last message, PostToolUse. The PostToolUse's answer must
// contain want.
func (p *project) run(id, agent, prompt, rel, content, last, want string) {
	p.t.Helper()
	p.hook("pre-agent", "tool_use_id=t-"+id, "tool_input.subagent_type=orch-hook:"+agent, "tool_input.run_in_background:=false", "tool_input.prompt="+prompt)
	if rel != "" {
		p.agentWrite("a-"+id, agent, rel, content)
	}
	p.hook("subagent-stop", "agent_id=a-"+id, "agent_type=orch-hook:"+agent, "last_assistant_message="+last)
	p.expect(want, "post-agent-fg", "tool_use_id=t-"+id, "tool_response.agentId=a-"+id)
}

// mark keeps the current checkpoint as a named point.
func (p *project) mark(name string) {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.root, ".orchestrator", "state", "checkpoint.json"))
	if err != nil {
		p.t.Fatal(err)
	}
	p.files[name] = b
}

// validate checks the checkpoint file, when it changed, against the schema
// (the seed's format) and $defs/store_file (what the store writes).
func (p *project) validate(after string) {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.root, ".orchestrator", "state", "checkpoint.json"))
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		p.t.Fatal(err)
	}
	if bytes.Equal(b, p.last) {
		return
	}
	p.last = b
	p.points++
	v := decode(p.t, b)
	for _, c := range []struct {
		name string
		s    *jsonschema.Schema
	}{{"the schema", p.s.root}, {"$defs/store_file", p.s.storeFile}} {
		if err := c.s.Validate(v); err != nil {
			p.t.Errorf("after %s (checkpoint %d): %s rejects it:\n  %s", after, p.points, c.name, strings.Join(leaves(err), "\n  "))
			if !p.dumped {
				p.dumped = true // one checkpoint in full is enough to see why
				p.t.Logf("checkpoint %d:\n%s", p.points, b)
			}
		}
	}
	var cp struct {
		PhaseData       map[string]json.RawMessage `json:"phase_data"`
		SupervisorState map[string]struct {
			Aggregated map[string]any `json:"aggregated_metadata"`
		} `json:"supervisor_state"`
	}
	if err := json.Unmarshal(b, &cp); err != nil {
		p.t.Fatal(err)
	}
	for k := range cp.PhaseData {
		p.seen["phase_data."+k] = true
	}
	for k, st := range cp.SupervisorState {
		p.seen["supervisor_state."+k] = true
		if len(st.Aggregated) == 0 {
			p.seen["supervisor_state."+k+" before aggregation"] = true
		} else {
			p.seen["supervisor_state."+k+" aggregated"] = true
		}
	}
}

// done validates the checkpoints the event log carries (each state
// change's last record holds the resulting checkpoint without its seal:
// what `orch-hook repair` restores) and reports how many were checked.
func (p *project) done() {
	p.t.Helper()
	events, _, err := state.Open(p.root).Events()
	if err != nil {
		p.t.Fatal(err)
	}
	logged := 0
	for _, ev := range events {
		if len(ev.Checkpoint) == 0 {
			continue
		}
		logged++
		if err := p.s.root.Validate(decode(p.t, ev.Checkpoint)); err != nil {
			p.t.Errorf("the log's checkpoint of serial %d: the schema rejects it:\n  %s", ev.Serial, strings.Join(leaves(err), "\n  "))
		}
	}
	if logged == 0 {
		p.t.Error("the log holds no checkpoint")
	}
	p.t.Logf("%d checkpoint files and %d logged checkpoints validated", p.points, logged)
	p.verifyRecords()
}

// verifyRecords: every record the run wrote (at its end, or at an
// escalation) verifies: its log replays through the gates.
func (p *project) verifyRecords() {
	p.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(p.root, ".orchestrator", "records", "*.json"))
	if len(paths) == 0 && p.state() != "complete" && p.state() != "aborted" {
		return // a run left in the middle has no record yet
	}
	if len(paths) == 0 {
		p.t.Error("the finished run wrote no record")
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			p.t.Fatal(err)
		}
		var rec app.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			p.t.Fatalf("%s: %v", path, err)
		}
		sum, err := app.Verify(&rec)
		if err != nil {
			p.t.Errorf("the record does not verify: %v", err)
			continue
		}
		p.t.Logf("record verified: %s %s, %d decisions replayed, accepted %v", rec.Workflow, rec.Outcome, sum.Replayed, sum.Accepted)
	}
}

// state reads the current state of the checkpoint on disk.
func (p *project) state() string {
	p.t.Helper()
	cp, err := state.ReadCheckpointFile(filepath.Join(p.root, ".orchestrator", "state", "checkpoint.json"))
	if err != nil {
		p.t.Fatal(err)
	}
	return cp.StateMachine.CurrentState
}

// wantSeen fails unless the run validated checkpoints holding each of keys.
func (p *project) wantSeen(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		if !p.seen[k] {
			p.t.Errorf("no checkpoint validated had %s (seen: %v)", k, sortedKeys(p.seen))
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// researchFlat: two research-specialists launched by the orchestrator,
// each writing and reporting its report; the second one's answer must
// contain next.
func (p *project) researchFlat(topic, next string) {
	p.t.Helper()
	p.run("r1", "research-specialist", "Topic 1: sessions", topic+"/reports/001_sessions.md", "# Sessions\nServer-side sessions.\n",
		"Sessions researched.\nREPORT_CREATED: "+topic+"/reports/001_sessions.md", "(1/2)")
	p.run("r2", "research-specialist", "Topic 2: tokens", topic+"/reports/002_tokens.md", "# Tokens\nTokens rotate hourly.\n",
		"Tokens researched.\nREPORT_CREATED: "+topic+"/reports/002_tokens.md", next)
}

// TestSchemaCheckpointsWritten validates the checkpoints orch-hook writes
// while each coordinate scope and the orchestrate workflow run, at every
// change of the state (start, each step, end): the user's typed command
// starts the workflow, agents are launched, write their artifacts with
// their Write tool and report, all as hook calls. The full-implementation
// run goes through all three supervisors: research with a failed worker,
// implementation tracks, and testing stages (a run failing at execution,
// then one through generation, execution and validation).
func TestSchemaCheckpointsWritten(t *testing.T) {
	s := compileSchemas(t)

	t.Run("research-only", func(t *testing.T) {
		p := newProject(t, s)
		p.expect("Scope: research-only", "user-prompt", "prompt=/orch-hook:coordinate --scope research-only Research authentication patterns")
		p.researchFlat("specs/001_authentication_patterns", "2/2 reports verified -> complete")
		if st := p.state(); st != "complete" {
			t.Fatalf("state %s, want complete", st)
		}
		p.wantSeen("phase_data.initialize", "phase_data.research")
		p.done()
	})

	t.Run("research-and-plan", func(t *testing.T) {
		p := newProject(t, s)
		topic := "specs/001_authentication_system"
		p.expect("Scope: research-and-plan", "user-prompt", "prompt=/orch-hook:coordinate --scope research-and-plan Research and plan authentication system")
		p.researchFlat(topic, "2/2 reports verified -> plan")
		plan := topic + "/plans/001_authentication_system_plan.md"
		p.run("pa", "plan-architect", "Plan it", plan, "# Plan: authentication\n\n### Phase 1: Sessions\ndependencies: []\n",
			"PLAN_CREATED: "+plan, "verified -> complete")
		p.wantSeen("phase_data.initialize", "phase_data.research", "phase_data.plan")
		p.done()
	})

	t.Run("research-and-revise", func(t *testing.T) {
		p := newProject(t, s)
		// The plan to revise exists before the workflow starts.
		topic := "specs/003_authentication_system"
		plan := topic + "/plans/002_old_auth_plan.md"
		p.write(plan, "# Plan: authentication\nSessions only.\n")
		p.expect("Scope: research-and-revise", "user-prompt", "prompt=/orch-hook:coordinate --scope research-and-revise Revise the authentication system plan to use OAuth")
		p.researchFlat(topic, "2/2 reports verified -> plan")
		// plan-architect revises it in place with its Edit tool.
		p.hook("pre-agent", "tool_use_id=t-pa", "tool_input.subagent_type=orch-hook:plan-architect", "tool_input.run_in_background:=false", "tool_input.prompt=Revise the plan")
		p.write(plan, "# Plan: authentication\nSessions, then OAuth.\n")
		p.hook("post-edit", "agent_id=a-pa", "agent_type=orch-hook:plan-architect", "tool_input.file_path=$WORK/"+plan)
		p.hook("subagent-stop", "agent_id=a-pa", "agent_type=orch-hook:plan-architect", "last_assistant_message=PLAN_CREATED: "+plan)
		p.expect("verified -> complete", "post-agent-fg", "tool_use_id=t-pa", "tool_response.agentId=a-pa")
		p.wantSeen("phase_data.plan")
		p.done()
	})

	t.Run("debug-only", func(t *testing.T) {
		p := newProject(t, s)
		topic := "specs/001_fix_token_refresh_bug"
		p.expect("Scope: debug-only", "user-prompt", "prompt=/orch-hook:coordinate --scope debug-only fix the token refresh bug")
		p.researchFlat(topic, "2/2 reports verified -> debug")
		// The first debug round, then two retries; the third failure ends
		// the workflow with error_state set.
		for i, want := range []string{"first debug round", "retry 1/2", "retry 2/2"} {
			n := fmt.Sprint(i + 1)
			p.run("d"+n, "debug-analyst", "Debug round "+n, topic+"/debug/001_d.md", "# Debug round "+n+"\nThe refresh races the expiry.\n",
				"REPORT_CREATED: "+topic+"/debug/001_d.md", want)
			next := "TESTS: FAIL -> debug"
			if i == 2 {
				next = "TESTS: FAIL -> complete"
			}
			p.run("t"+n, "test-specialist", "Run the tests", "", "", "Still broken.\nTESTS: FAIL", next)
		}
		cp, err := state.ReadCheckpointFile(filepath.Join(p.root, ".orchestrator", "state", "checkpoint.json"))
		if err != nil {
			t.Fatal(err)
		}
		if cp.ErrorState.LastError == nil || cp.ErrorState.FailedState == nil || cp.ErrorState.RetryCount != 2 {
			t.Fatalf("error_state %+v: the failure is not recorded, so the schema's strings were not checked", cp.ErrorState)
		}
		p.done()
	})

	t.Run("full-implementation", func(t *testing.T) {
		p := newProject(t, s)
		// 4 research topics (distributed, microservices): research goes
		// through research-sub-supervisor, whose workers orch-hook records.
		topic := "specs/001_implement_distributed_cache_microservices"
		p.expect("Scope: full-implementation", "user-prompt", "prompt=/orch-hook:coordinate --scope full-implementation Implement a distributed cache for our microservices")
		p.hook("pre-agent", "tool_use_id=t-s", "tool_input.subagent_type=orch-hook:research-sub-supervisor", "tool_input.run_in_background:=false", "tool_input.prompt=Research 4 topics")
		sup := []string{"agent_id=sup-1", "agent_type=orch-hook:research-sub-supervisor"}
		topics := []string{"eviction", "consistency", "sharding", "invalidation"}
		var reports []string
		var sum int64
		for i, name := range topics {
			n := fmt.Sprint(i + 1)
			rel := fmt.Sprintf("%s/reports/%03d_%s.md", topic, i+1, name)
			p.hook("pre-agent", append(sup, "tool_use_id=w-"+n, "tool_input.subagent_type=orch-hook:research-specialist", "tool_input.run_in_background:=false", "tool_input.prompt=Topic: "+name)...)
			stop := []string{"agent_id=a-w" + n, "agent_type=orch-hook:research-specialist", "last_assistant_message=REPORT_CREATED: $WORK/" + rel}
			if name == "invalidation" {
				// The fourth worker reports a file it never wrote: blocked
				// once, then recorded as a failed worker.
				p.expect(`"decision":"block"`, "subagent-stop", stop...)
				p.hook("subagent-stop", append(stop, "stop_hook_active:=true")...)
			} else {
				p.agentWrite("a-w"+n, "research-specialist", rel, "# "+name+"\n\n"+strings.ToUpper(name[:1])+name[1:]+" for the cache: the load tests say so.\n\n## Key findings\n- "+name+" matters\n")
				p.hook("subagent-stop", stop...)
				reports = append(reports, "$WORK/"+rel)
			}
			d := int64(9000 + 1000*i)
			if name != "invalidation" {
				sum += d
			}
			p.hook("post-agent-fg", append(sup, "tool_use_id=w-"+n, "tool_response.agentId=a-w"+n, fmt.Sprintf("tool_response.totalDurationMs:=%d", d))...)
		}
		p.wantSeen("supervisor_state.research_supervisor before aggregation")
		res := map[string]any{
			"supervisor_id":     "research_sub_supervisor_20261124_100000",
			"topics_researched": 3,
			"reports_created":   reports,
			"summary":           "Use LRU with a TTL, write-through replication and consistent hashing.",
			"key_findings":      []string{"eviction matters", "consistency matters", "sharding matters"},
			"total_duration_ms": sum,
			"context_tokens":    1,
		}
		// context_tokens is checked against the result's size (characters/4).
		b, _ := json.Marshal(res)
		res["context_tokens"] = (len(strings.ReplaceAll(string(b), "$WORK", p.root)) + 3) / 4
		b, _ = json.Marshal(res)
		p.hook("subagent-stop", append(sup, "last_assistant_message=All workers reported; invalidation failed.\nSUPERVISOR_COMPLETE: "+string(b))...)
		p.expect("-> plan", "post-agent-fg", "tool_use_id=t-s", "tool_response.agentId=sup-1")
		p.wantSeen("supervisor_state.research_supervisor aggregated")

		plan := topic + "/plans/001_implement_distributed_cache_microservices_plan.md"
		p.run("pa", "plan-architect", "Plan the cache", plan, "# Plan: distributed cache\n\n### Phase 1: Cache\ndependencies: []\n\n### Phase 2: Eviction\ndependencies: [1]\n",
			"PLAN_CREATED: "+plan, "verified -> implement")

		// Implementation in two tracks, each worker writing project files.
		p.hook("pre-agent", "tool_use_id=t-is", "tool_input.subagent_type=orch-hook:implementation-sub-supervisor", "tool_input.run_in_background:=false", "tool_input.prompt=Plan: "+plan)
		isup := []string{"agent_id=sup-i", "agent_type=orch-hook:implementation-sub-supervisor"}
		for i, track := range []struct{ name, file string }{{"Cache", "src/cache.go"}, {"Eviction", "src/evict.go"}} {
			n := fmt.Sprint(i + 1)
			p.hook("pre-agent", append(isup, "tool_use_id=i-"+n, "tool_input.subagent_type=orch-hook:implementation-executor", "tool_input.run_in_background:=false", "tool_input.prompt=Track "+n+": "+track.name)...)
			p.agentWrite("a-i"+n, "implementation-executor", track.file, "package cache\n")
			p.hook("subagent-stop", "agent_id=a-i"+n, "agent_type=orch-hook:implementation-executor", "last_assistant_message=Changed "+track.file+".\nIMPLEMENTATION STATUS: COMPLETE")
			p.hook("post-agent-fg", append(isup, "tool_use_id=i-"+n, "tool_response.agentId=a-i"+n, "tool_response.totalDurationMs:=20000")...)
		}
		p.wantSeen("supervisor_state.implementation_supervisor before aggregation")
		p.hook("subagent-stop", append(isup, "last_assistant_message="+supervisorComplete(map[string]any{
			"supervisor_id": "implementation_sub_supervisor_20261124_100000", "tracks_completed": 2, "files_modified": 2, "total_lines": 40,
			"summary": "Track 1 added the cache, track 2 its eviction.", "total_duration_ms": 40000, "sequential_duration_ms": 40000,
		}))...)
		p.expect("-> test", "post-agent-fg", "tool_use_id=t-is", "tool_response.agentId=sup-i")
		p.wantSeen("supervisor_state.implementation_supervisor aggregated")

		// Testing through its stages: the first run fails at execution.
		p.testingRun("1", []string{"Stage: generation", "Stage: execution"}, map[string]string{
			"Stage: generation": "TESTS_CREATED: 6 in tests/cache_test.go",
			"Stage: execution":  "Two fail.\nTESTS: FAIL (4 passed, 2 failed)",
		}, `SUPERVISOR_FAILED: {"errors": ["execution: 2 of 6 tests failed"]}`, "TESTS: FAIL -> debug | stage execution failed")
		p.wantSeen("supervisor_state.testing_supervisor", "supervisor_state.testing_supervisor aggregated")
		p.run("da", "debug-analyst", "Debug", topic+"/debug/001_why.md", "# Debug: the TTL\n", "REPORT_CREATED: "+topic+"/debug/001_why.md", "retry 1/2")
		// The second run passes all three stages.
		p.testingRun("2", []string{"Stage: generation", "Stage: execution", "Stage: validation"}, map[string]string{
			"Stage: generation": "TESTS_CREATED: 6 in tests/cache_test.go",
			"Stage: execution":  "TESTS: PASS (6 passed, 0 failed, coverage 82%)",
			"Stage: validation": "VALIDATION: PASS (coverage 82%)",
		}, supervisorComplete(map[string]any{
			"supervisor_id": "testing_sub_supervisor_20261124_100000", "summary": "Six cache tests written, run and validated.",
			"total_duration_ms": 17000, "total_tests": 6, "tests_passed": 6, "tests_failed": 0, "coverage_percent": 82,
		}), "TESTS: PASS -> document")
		p.run("dw", "doc-writer", "Document it", topic+"/summaries/001_summary.md", "# Summary: distributed cache\n",
			"REPORT_CREATED: "+topic+"/summaries/001_summary.md", "verified -> complete")
		p.mark("end")
		// The entry validated holds a failed worker and the partial
		// failures orch-hook observed, not only the happy fields; the
		// tracks their files and metadata; the testing run its three
		// stages.
		for _, want := range []string{`"status":"failed"`, `"partial_failures":["Failed: invalidation (`, `"worker_status":["completed","completed","completed","failed"]`,
			`"files_modified":["src/cache.go"]`, `"metadata":{"phase":2,"title":"Eviction","dependencies":[1],"result":"COMPLETE"`,
			`"stages":[{"stage_id":"generation","stage_name":"Test Generation","workers":[{"worker_id":"test_specialist_1","agent_id":"a-t2-1","status":"completed","duration_ms":8000,"tests_created":6,"test_files":["tests/cache_test.go"]}],"status":"completed"`,
			`{"stage_id":"validation","stage_name":"Test Validation"`, `"total_tests":6`} {
			if !bytes.Contains(p.files["end"], []byte(want)) {
				t.Errorf("the final checkpoint lacks %s", want)
			}
		}
		p.wantSeen("phase_data.initialize", "phase_data.research", "phase_data.plan", "supervisor_state.research_supervisor")
		p.done()
		checkRejected(t, s, p.files["end"])
	})

	t.Run("orchestrate", func(t *testing.T) {
		p := newProject(t, s)
		p.expect("workflow started (step 0a)", "user-prompt", "prompt=/orch-hook:orchestrate Add a CSV export to the report page")
		p.run("ra", "requirements-analyst", "Analyse the request", "", "", "The request is complete.\n\nREQUIREMENTS_CLEAR", "-> 2")
		p.hook("pre-agent", "tool_use_id=t-tp", "tool_input.subagent_type=orch-hook:task-planner", "tool_input.run_in_background:=false", "tool_input.prompt=Write the plan")
		for name, content := range orchestratePlan {
			p.write(".orchestrator/tasks/"+name, content)
		}
		p.hook("post-write-sub", "agent_id=a-tp", "agent_type=orch-hook:task-planner", "tool_input.file_path=$WORK/.orchestrator/tasks/MASTER_PLAN.md")
		p.hook("subagent-stop", "agent_id=a-tp", "agent_type=orch-hook:task-planner", "last_assistant_message=Plan written: 1 phase, 2 tasks.")
		p.expect("-> 3", "post-agent-fg", "tool_use_id=t-tp", "tool_response.agentId=a-tp")
		p.expect("APPROVED -> 4a", "user-prompt", "prompt=/orch-hook:approve", "prompt_id=p-approve")
		// Tasks 01 and 02 in parallel, in the background.
		for _, n := range []string{"1", "2"} {
			p.hook("pre-agent", "tool_use_id=t-"+n, "tool_input.subagent_type=orch-hook:code-implementer", "tool_input.prompt=Task 0"+n+": part "+n)
		}
		for _, n := range []string{"1", "2"} {
			p.hook("post-agent-bg", "tool_use_id=t-"+n, "tool_response.agentId=a-"+n)
		}
		for _, n := range []string{"1", "2"} {
			p.hook("subagent-stop", "agent_id=a-"+n, "agent_type=orch-hook:code-implementer", "last_assistant_message=IMPLEMENTATION STATUS: COMPLETE")
			p.hook("notification", "prompt=<task-notification>\n<task-id>a-"+n+"</task-id>\n<tool-use-id>t-"+n+"</tool-use-id>\n<status>completed</status>\n<result>IMPLEMENTATION STATUS: COMPLETE</result>\n</task-notification>")
		}
		if st := p.state(); st != "4b" {
			t.Fatalf("state %s, want 4b", st)
		}
		// Three failed quality gates: the workflow escalates, with
		// error_state set.
		for i := 1; i <= 3; i++ {
			n := fmt.Sprint(i)
			if i > 1 {
				p.run("fa"+n, "task-planner", "FAILURE_ANALYSIS", "", "", "FAILURE_ANALYSIS: COMPLETE", "-> F2")
				p.run("fx"+n, "code-implementer", "Task 02: fix the padding", "", "", "IMPLEMENTATION STATUS: COMPLETE", "-> 4b")
			}
			want := "4b FAIL -> F1"
			if i == 3 {
				want = "-> escalated"
			}
			p.run("q"+n, "code-quality", "Quality gate", "", "", "Trailing space.\nPHASE GATE STATUS: FAIL\nFAILING TASKS: 02", want)
		}
		p.mark("escalated")
		p.expect("aborted", "user-prompt", "prompt=/orch-hook:abort", "prompt_id=p-abort")
		cp, err := state.ReadCheckpointFile(filepath.Join(p.root, ".orchestrator", "state", "checkpoint.json"))
		if err != nil {
			t.Fatal(err)
		}
		if cp.StateMachine.CurrentState != "aborted" {
			t.Fatalf("state %s, want aborted", cp.StateMachine.CurrentState)
		}
		if !bytes.Contains(p.files["escalated"], []byte(`"failed_state":"4b"`)) {
			t.Errorf("the escalated checkpoint has no error_state of 4b:\n%s", p.files["escalated"])
		}
		p.done()
	})

	// A v1.3 checkpoint the user adopted (`orch-hook migrate --write`,
	// app.AdoptV13): the store's file, sealed, with the workflow it
	// continues and the original under phase_data["v1.3"].
	t.Run("adopted v1.3", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("testdata", "v13.json"))
		if err != nil {
			t.Fatal(err)
		}
		store := state.Open(t.TempDir())
		if _, _, err := app.AdoptV13(store, b, app.Adoption{}, "the test"); err != nil {
			t.Fatalf("adopt: %v", err)
		}
		out, err := os.ReadFile(store.CheckpointPath())
		if err != nil {
			t.Fatal(err)
		}
		for name, sch := range map[string]*jsonschema.Schema{"root": s.root, "store_file": s.storeFile} {
			if err := sch.Validate(decode(t, out)); err != nil {
				t.Errorf("%s rejects the adopted checkpoint:\n  %s\n%s", name, strings.Join(leaves(err), "\n  "), out)
			}
		}
		if !bytes.Contains(out, []byte(`"v1.3"`)) {
			t.Errorf("the adopted checkpoint keeps no phase_data[\"v1.3\"], so that part of the schema was not checked:\n%s", out)
		}
	})
}

// supervisorComplete is a SUPERVISOR_COMPLETE line with res, its
// context_tokens fitted to its size (characters/4).
func supervisorComplete(res map[string]any) string {
	for range 3 {
		b, _ := json.Marshal(res)
		res["context_tokens"] = (len(b) + 3) / 4
	}
	b, _ := json.Marshal(res)
	return "Done.\nSUPERVISOR_COMPLETE: " + string(b)
}

// testingRun launches testing-sub-supervisor (agent sup-t<run>) and runs
// its stages in order, one worker each (a-t<run>-<n>, durations 8, 5 and 4
// seconds), each ending with its line; the generation worker writes
// tests/cache_test.go first. The supervisor ends with last; its
// PostToolUse's answer must contain want.
func (p *project) testingRun(run string, stages []string, lines map[string]string, last, want string) {
	p.t.Helper()
	p.hook("pre-agent", "tool_use_id=t-ts"+run, "tool_input.subagent_type=orch-hook:testing-sub-supervisor", "tool_input.run_in_background:=false", "tool_input.prompt=Run the test stages")
	sup := []string{"agent_id=sup-t" + run, "agent_type=orch-hook:testing-sub-supervisor"}
	for i, stage := range stages {
		n := fmt.Sprint(i + 1)
		id := "a-t" + run + "-" + n
		p.hook("pre-agent", append(sup, "tool_use_id=s-"+run+"-"+n, "tool_input.subagent_type=orch-hook:test-specialist", "tool_input.run_in_background:=false", "tool_input.prompt="+stage)...)
		if strings.HasSuffix(stage, "generation") {
			p.agentWrite(id, "test-specialist", "tests/cache_test.go", "package cache\n\nfunc TestGet(t *testing.T) {}\n")
		}
		p.hook("subagent-stop", "agent_id="+id, "agent_type=orch-hook:test-specialist", "last_assistant_message="+lines[stage])
		p.hook("post-agent-fg", append(sup, "tool_use_id=s-"+run+"-"+n, "tool_response.agentId="+id, fmt.Sprintf("tool_response.totalDurationMs:=%d", []int{8000, 5000, 4000}[i]))...)
	}
	p.hook("subagent-stop", append(sup, "last_assistant_message="+last)...)
	p.expect(want, "post-agent-fg", "tool_use_id=t-ts"+run, "tool_response.agentId=sup-t"+run)
}

// orchestratePlan is a one-phase plan of two parallel tasks.
var orchestratePlan = map[string]string{
	"MASTER_PLAN.md":           "# Master Plan: CSV export\n\nProgress: 0/2\n\n## Phase 1: Export building blocks\nStatus: pending\n- [ ] Task 01: Export button\n- [ ] Task 02: CSV writer\n",
	"task-01-export-button.md": "# Task 01: Export button\nParallel With: 02\nFiles: src/button.ts\nrequires_ux_dx_review: false\n",
	"task-02-csv-writer.md":    "# Task 02: CSV writer\nParallel With: 01\nFiles: src/csv.ts\nrequires_ux_dx_review: false\n",
}

// checkRejected breaks a valid checkpoint orch-hook wrote, one way at a
// time, and requires the schema to reject each at the place broken: the
// schema bites.
func checkRejected(t *testing.T, s *schemas, valid []byte) {
	t.Helper()
	if err := s.storeFile.Validate(decode(t, valid)); err != nil {
		t.Fatalf("the checkpoint to break is not valid: %v", leaves(err))
	}
	obj := func(v any, path ...string) map[string]any {
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v.(map[string]any)
	}
	cases := []struct {
		name    string
		schema  *jsonschema.Schema
		breakIt func(cp map[string]any)
		want    string
	}{
		{"an unknown top-level key", s.root, func(cp map[string]any) { cp["checkpoint"] = "x" }, "/ additionalProperties: checkpoint"},
		{"an unknown key in state_machine", s.root, func(cp map[string]any) { obj(cp, "state_machine")["phase"] = "4a" }, "/state_machine additionalProperties: phase"},
		{"an unknown key in workflow_config", s.root, func(cp map[string]any) { obj(cp, "state_machine", "workflow_config")["mode"] = "x" }, "/state_machine/workflow_config additionalProperties: mode"},
		{"an unknown key in a research worker", s.root, func(cp map[string]any) {
			obj(cp, "supervisor_state", "research_supervisor")["workers"].([]any)[0].(map[string]any)["tokens"] = 5
		}, "/supervisor_state/research_supervisor/workers/0 additionalProperties: tokens"},
		{"an implementation field in research metadata", s.root, func(cp map[string]any) {
			obj(cp, "supervisor_state", "research_supervisor", "aggregated_metadata")["total_lines"] = 5
		}, "/supervisor_state/research_supervisor/aggregated_metadata additionalProperties: total_lines"},
		{"a serial that is a string", s.root, func(cp map[string]any) { cp["serial"] = "7" }, "/serial type"},
		{"a retry_count that is a string", s.root, func(cp map[string]any) { obj(cp, "error_state")["retry_count"] = "2" }, "/error_state/retry_count type"},
		{"a successor list that is not a string", s.root, func(cp map[string]any) { obj(cp, "state_machine", "transition_table")["research"] = []any{"plan"} }, "/state_machine/transition_table/research type"},
		{"a created_at that is not a date-time", s.root, func(cp map[string]any) { obj(cp, "metadata")["created_at"] = "yesterday" }, "/metadata/created_at format"},
		{"a completed state twice", s.root, func(cp map[string]any) {
			sm := obj(cp, "state_machine")
			sm["completed_states"] = append(sm["completed_states"].([]any), "initialize")
		}, "/state_machine/completed_states uniqueItems"},
		{"a completed worker without its metadata", s.root, func(cp map[string]any) {
			delete(obj(cp, "supervisor_state", "research_supervisor")["workers"].([]any)[0].(map[string]any), "metadata")
		}, "/supervisor_state/research_supervisor/workers/0 required: metadata"},
		{"a worker status the seed does not have", s.root, func(cp map[string]any) {
			obj(cp, "supervisor_state", "research_supervisor")["workers"].([]any)[0].(map[string]any)["status"] = "done"
		}, "/supervisor_state/research_supervisor/workers/0/status enum"},
		{"a supervisor without aggregated_metadata", s.root, func(cp map[string]any) {
			delete(obj(cp, "supervisor_state", "research_supervisor"), "aggregated_metadata")
		}, "/supervisor_state/research_supervisor required: aggregated_metadata"},
		{"a research phase with a wrong type", s.root, func(cp map[string]any) { obj(cp, "phase_data", "research")["reports_created"] = "a.md" }, "/phase_data/research/reports_created type"},
		{"both version spellings", s.root, func(cp map[string]any) { cp["version"] = "2.0" }, "/ oneOf"},
		{"schema version 3.0", s.root, func(cp map[string]any) { cp["schema_version"] = "3.0" }, "/schema_version const"},
		{"a workflow section without its kind", s.root, func(cp map[string]any) { delete(obj(cp, "workflow"), "kind") }, "/workflow required: kind"},
		{"a store file without its seal", s.storeFile, func(cp map[string]any) { delete(cp, "seal") }, "/ required: seal"},
		{"a completed track without files_modified", s.root, func(cp map[string]any) {
			delete(obj(cp, "supervisor_state", "implementation_supervisor")["tracks"].([]any)[0].(map[string]any), "files_modified")
		}, "/supervisor_state/implementation_supervisor/tracks/0 required: files_modified"},
		{"a completed track without metadata", s.root, func(cp map[string]any) {
			delete(obj(cp, "supervisor_state", "implementation_supervisor")["tracks"].([]any)[0].(map[string]any), "metadata")
		}, "/supervisor_state/implementation_supervisor/tracks/0 required: metadata"},
		{"a testing supervisor's workers outside its stages", s.root, func(cp map[string]any) {
			ts := obj(cp, "supervisor_state", "testing_supervisor")
			ts["workers"] = ts["stages"]
			delete(ts, "stages")
		}, "/supervisor_state/testing_supervisor required: stages"},
		{"an unknown key in a stage's worker", s.root, func(cp map[string]any) {
			obj(cp, "supervisor_state", "testing_supervisor")["stages"].([]any)[0].(map[string]any)["workers"].([]any)[0].(map[string]any)["topic"] = "unit"
		}, "/supervisor_state/testing_supervisor/stages/0/workers/0 additionalProperties: topic"},
		{"a completed stage without its duration", s.root, func(cp map[string]any) {
			delete(obj(cp, "supervisor_state", "testing_supervisor")["stages"].([]any)[1].(map[string]any), "duration_ms")
		}, "/supervisor_state/testing_supervisor/stages/1 required: duration_ms"},
	}
	for _, c := range cases {
		cp := decode(t, valid).(map[string]any)
		c.breakIt(cp)
		got := leaves(c.schema.Validate(cp))
		if !slices.Contains(got, c.want) {
			t.Errorf("%s: want the error %q, got %q", c.name, c.want, got)
		}
	}
}
