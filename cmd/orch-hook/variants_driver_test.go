package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/payloads"
)

// The driver turns a script of actions (what the orchestrator, the user
// and the agents do) into the hook calls Claude Code makes for them, built
// from the captured payload templates (testdata/payloads), and runs each
// through orch-hook's Main in-process.

// wrongError classifies a variant and ends its run.
type wrongError struct{ class, detail string }

// run is one variant's run.
type run struct {
	t      *testing.T
	work   string
	getenv func(string) string
	script *script
	// exec runs one hook call; nil is hookInProcess.
	exec  func(getenv func(string) string, input []byte) (code int, stdout, stderr string)
	fixes []fix
	used  []int

	refusals []string // "action: reason" of each refusal met
	trace    []string // every hook call and its answer, for failures
	told     []*strings.Builder
	queue    []*action // redo actions set off by fixes, run after the current action
	seq      int
}

func runVariant(t *testing.T, root, category string, v variant) outcome {
	return runScript(t, &run{t: t}, root, category, v)
}

// runScript runs v with r (whose exec, if set, runs the hook calls).
func runScript(t *testing.T, r *run, root, category string, v variant) (o outcome) {
	start := time.Now()
	o = outcome{category: category, name: v.name, pendingFix: v.pendingFix}
	base := v.base
	if base == nil {
		base = orchestrateBase
	}
	s := base()
	if v.change != nil {
		v.change(s)
	}
	work, err := os.MkdirTemp(root, "v-")
	if err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.EvalSymlinks(work)
	r.work, r.script, r.fixes, r.used = work, s, v.fixes, make([]int, len(v.fixes))
	r.getenv = func(k string) string {
		switch k {
		case "CLAUDE_PROJECT_DIR":
			return work
		case "HOME", "XDG_CONFIG_HOME":
			return os.Getenv(k)
		}
		return ""
	}
	defer func() {
		o.elapsed = time.Since(start)
		o.refusals = r.refusals
		e := recover()
		if e == nil {
			return
		}
		w, ok := e.(wrongError)
		if !ok {
			panic(e)
		}
		o.class, o.detail = w.class, w.detail
		t.Logf("trace:\n%s", strings.Join(r.trace, "\n"))
	}()
	points := map[string][]want{}
	for _, p := range v.expect {
		points[p.after] = append(points[p.after], p.want)
	}
	for _, a := range s.actions {
		r.perform(a, points)
	}
	// Every action done and the workflow not finished: nothing the model
	// was told leads on from there.
	if got := r.currentState(); s.end.state != "" && got != s.end.state {
		panic(wrongError{classWedged, fmt.Sprintf("the script is done, and the workflow is at %s, not %s", got, s.end.state)})
	}
	r.checkWant("the end", s.end, "")
	for _, w := range points[""] {
		r.checkWant("the end", w, "")
	}
	for i, f := range v.fixes {
		if r.used[i] == 0 {
			panic(wrongError{classMisread, fmt.Sprintf("expected a refusal matching %q, but orch-hook accepted the variant", f.match)})
		}
	}
	o.class = classAccepted
	if len(r.refusals) > 0 {
		o.class = classRefused
	}
	return o
}

// perform runs an action, then the redo actions its refusals set off, then
// checks what must hold after it.
func (r *run) perform(a *action, points map[string][]want) {
	told := &strings.Builder{}
	r.told = append(r.told, told)
	saved := r.queue
	r.queue = nil
	switch a.kind {
	case kindLaunch:
		r.launchGroup(a, []*action{a})
	case kindGroup:
		r.launchGroup(a, a.members)
	case kindPrompt:
		r.userPrompt(a)
	case kindWrite, kindEdit, kindTick:
		r.planWrite(a)
	case kindStop:
		r.stop(nil)
	case kindBash:
		r.hook(a, "pre-bash", map[string]any{"tool_input.command": a.command, "tool_input.description": "Run a command"})
	case kindDisk:
		for name, content := range a.files {
			if content == removed {
				if err := os.Remove(filepath.Join(r.work, name)); err != nil {
					r.t.Fatal(err)
				}
				continue
			}
			r.writeFile(name, content)
		}
	}
	for len(r.queue) > 0 {
		next := r.queue[0]
		r.queue = r.queue[1:]
		r.perform(next, points)
	}
	r.queue = saved
	r.told = r.told[:len(r.told)-1]
	r.checkWant(a.key, a.want, told.String())
	// Members of a group are checked on what the orchestrator was told
	// during the group; their state is the group's, after all of them.
	for _, m := range a.members {
		r.checkWant(m.key, want{context: m.want.context}, told.String())
	}
	for _, w := range points[a.key] {
		r.checkWant(a.key, w, told.String())
	}
}

// launchGroup launches acts in one message (a single launch is a group of
// one) and runs them to their ends, as Claude Code sends the hooks.
func (r *run) launchGroup(a *action, acts []*action) {
	var started []*action
	for _, m := range acts {
		if !r.preAgent(m) {
			continue
		}
		if m.launchError != "" {
			r.hook(m, "post-agent-failure", r.agentFields(m, map[string]any{"error": m.launchError}))
			continue
		}
		started = append(started, m)
	}
	order := started
	if a.order != nil {
		order = nil
		for _, i := range a.order {
			if slices.Contains(started, acts[i]) {
				order = append(order, acts[i])
			}
		}
	}
	launched := func(m *action) {
		r.hook(m, "post-agent-bg", r.agentFields(m, map[string]any{
			"tool_response.agentId": "a-" + m.key, "tool_response.description": m.description, "tool_response.prompt": m.prompt,
		}))
	}
	// The orchestrator's turn ends once its Agent calls returned, while
	// background agents run: Stop must be allowed (they will wake it).
	// With an agent that ended before its PostToolUse, that is after it.
	allBackground, fastAgent := len(started) > 0, false
	for _, m := range started {
		switch {
		case !m.background():
			allBackground = false
		case m.arrival == arrivalStopBeforeLaunched:
			fastAgent = true
		default:
			launched(m)
		}
	}
	ended := map[*action]bool{}
	endTurn := func() {
		if allBackground {
			var running []*action
			for _, m := range started {
				if !ended[m] {
					running = append(running, m)
				}
			}
			r.stop(running)
		}
	}
	if !fastAgent {
		endTurn()
	}
	final := map[*action]string{}
	for _, m := range order {
		for _, w := range m.writes {
			r.agentWrite(m, w)
		}
		final[m] = m.report
		switch {
		case m.endStatus != "":
			r.notification(m, final[m])
			continue
		case m.arrival == arrivalNotificationFirst:
			r.notification(m, final[m])
			r.subagentStop(m)
			continue
		case m.arrival == arrivalPostFirst:
			r.postAgentFG(m, final[m])
			r.subagentStop(m)
			continue
		}
		if !m.noSubagentStop {
			final[m] = r.subagentStop(m)
		}
		if m.arrival == arrivalStopBeforeLaunched {
			ended[m] = true
			launched(m)
			endTurn()
		}
		if m.background() {
			r.notification(m, final[m])
		} else if !a.stopsFirst {
			r.postAgentFG(m, final[m])
		}
	}
	if a.stopsFirst {
		for _, m := range order {
			if !m.background() {
				r.postAgentFG(m, final[m])
			}
		}
	}
}

func (a *action) background() bool { return !a.foreground }

// agentFields are the tool_input fields of a launch.
func (r *run) agentFields(m *action, more map[string]any) map[string]any {
	f := map[string]any{
		"tool_use_id":              "t-" + m.key,
		"tool_input.subagent_type": "orch-hook:" + m.agent,
		"tool_input.prompt":        m.prompt,
		"tool_input.description":   m.description,
	}
	switch {
	case m.omitMode:
		f["-tool_input.run_in_background"] = nil
	default:
		f["tool_input.run_in_background"] = m.background()
	}
	if m.tool != "" {
		f["tool_name"] = m.tool
	}
	for k, v := range more {
		f[k] = v
	}
	return f
}

// preAgent sends the launch's PreToolUse; false when it was refused (and
// a fix applied).
func (r *run) preAgent(m *action) bool {
	return !r.hook(m, "pre-agent", r.agentFields(m, nil)).refused
}

func (r *run) postAgentFG(m *action, final string) {
	r.hook(m, "post-agent-fg", r.agentFields(m, map[string]any{
		"tool_response.agentId":   "a-" + m.key,
		"tool_response.agentType": "orch-hook:" + m.agent,
		"tool_response.prompt":    m.prompt,
		"tool_response.content":   []any{map[string]any{"type": "text", "text": final}},
	}))
}

// subagentStop sends the agent's end; a nudge (block) is answered by the
// variant's fix. It returns the agent's last message.
func (r *run) subagentStop(m *action) string {
	msg, active := m.report, false
	for {
		res := r.hook(m, "subagent-stop", map[string]any{
			"agent_id": "a-" + m.key, "agent_type": "orch-hook:" + m.agent,
			"last_assistant_message": msg, "stop_hook_active": active,
			"agent_transcript_path": "/tmp/transcripts/agent-a-" + m.key + ".jsonl",
			"background_tasks":      []any{map[string]any{"id": "a-" + m.key, "type": "subagent", "status": "running", "description": m.description, "agent_type": "orch-hook:" + m.agent}},
		})
		if !res.refused {
			return msg
		}
		msg, active = res.reply, true
	}
}

// notification is a background agent's <task-notification>, as Claude
// Code sends it (the captured one, with this agent's ids and last message).
func (r *run) notification(m *action, final string) {
	text := notificationTemplate()
	status := "completed"
	if m.endStatus != "" {
		status = m.endStatus
	}
	text = strings.NewReplacer(
		"<status>completed</status>", "<status>"+status+"</status>",
		"a2f03c94f3c85c69d", "a-"+m.key,
		"toolu_main_4ef43f3d_t0_b0", "t-"+m.key,
		"Implement feature X", m.description,
		"IMPLEMENTER-FINAL-REPORT (bg): created impl.txt.", final,
	).Replace(text)
	r.hook(m, "notification", map[string]any{"prompt": text})
}

var notificationTemplate = sync.OnceValue(func() string {
	raw, err := os.ReadFile(filepath.Join(payloadDir, "notification.json"))
	if err != nil {
		panic(err)
	}
	var p struct{ Prompt string }
	if err := json.Unmarshal(raw, &p); err != nil {
		panic(err)
	}
	return p.Prompt
})

// stop is the orchestrator's Stop while the launches listed run in the
// background.
func (r *run) stop(running []*action) {
	tasks := []any{}
	for _, m := range running {
		tasks = append(tasks, map[string]any{"id": "a-" + m.key, "type": "subagent", "status": "running", "description": m.description, "agent_type": "orch-hook:" + m.agent})
	}
	r.hook(nil, "stop", map[string]any{"background_tasks": tasks, "last_assistant_message": "Waiting.", "stop_hook_active": false})
}

func (r *run) userPrompt(a *action) {
	r.seq++
	r.hook(a, "user-prompt", map[string]any{"prompt": a.text, "prompt_id": fmt.Sprintf("p-%s-%d", a.key, r.seq)})
}

// agentWrite is a subagent's Write: PreToolUse, the file, PostToolUse.
func (r *run) agentWrite(m *action, w fileWrite) {
	path := filepath.Join(r.work, w.path)
	ids := map[string]any{"agent_id": "a-" + m.key, "agent_type": "orch-hook:" + m.agent, "tool_use_id": "t-" + m.key + "-w-" + w.path}
	pre := map[string]any{"tool_input.file_path": path, "tool_input.content": w.content}
	if r.hook(m, "pre-write-sub", merge(ids, pre)).refused {
		return
	}
	old := r.writeFile(w.path, w.content)
	r.hook(m, "post-write-sub", merge(ids, pre, map[string]any{
		"tool_response.filePath": path, "tool_response.content": w.content, "tool_response.originalFile": old,
		"tool_response.type": map[bool]string{true: "create", false: "update"}[old == ""],
	}))
}

// planWrite is the orchestrator's Write or Edit of a plan file; a refused
// one changes nothing.
func (r *run) planWrite(a *action) {
	rel := filepath.Join(".orchestrator", "tasks", a.file)
	path := filepath.Join(r.work, rel)
	current, _ := os.ReadFile(path)
	ids := map[string]any{"tool_use_id": fmt.Sprintf("t-%s", a.key), "tool_input.file_path": path}
	if a.kind == kindEdit {
		in := map[string]any{"tool_input.old_string": a.old, "tool_input.new_string": a.new, "tool_input.replace_all": a.replaceAll}
		if r.hook(a, "pre-edit", merge(ids, in)).refused {
			return
		}
		n := 1
		if a.replaceAll {
			n = -1
		}
		next := strings.Replace(string(current), a.old, a.new, n)
		if !strings.Contains(string(current), a.old) {
			panic(wrongError{classWedged, fmt.Sprintf("%s: the Edit was allowed, but its old_string is not in %s (Claude Code would fail it)", a.key, a.file)})
		}
		r.writeFile(rel, next)
		r.hook(a, "post-edit", merge(ids, in, map[string]any{
			"tool_response.filePath": path, "tool_response.oldString": a.old, "tool_response.newString": a.new,
			"tool_response.originalFile": string(current), "tool_response.replaceAll": a.replaceAll,
		}))
		return
	}
	content := a.content
	if a.kind == kindTick {
		content = tickedPlan(string(current), a.phase)
	}
	in := map[string]any{"tool_input.content": content}
	if r.hook(a, "pre-write", merge(ids, in)).refused {
		return
	}
	r.writeFile(rel, content)
	r.hook(a, "post-write", merge(ids, in, map[string]any{
		"tool_response.filePath": path, "tool_response.content": content, "tool_response.originalFile": string(current),
	}))
}

// writeFile writes a project file and returns what it held.
func (r *run) writeFile(rel, content string) string {
	path := filepath.Join(r.work, rel)
	old, _ := os.ReadFile(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return string(old)
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// hookResult is orch-hook's answer to one call.
type hookResult struct {
	refused bool   // denied or blocked (and a fix applied)
	reply   string // a nudge's answer (the fix's reply)
}

// hookOutput is what orch-hook prints (hooks/output.go).
type hookOutput struct {
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hook builds the payload from template with the fields set, runs it, and
// handles a refusal: by the variant's fix (queued redo, or the reply for a
// nudge), else the run is wedged. a is the action the call belongs to.
func (r *run) hook(a *action, template string, set map[string]any) hookResult {
	input := r.payload(template, set)
	exec := r.exec
	if exec == nil {
		exec = hookInProcess
	}
	code, stdout, stderr := exec(r.getenv, input)
	where := template
	if a != nil {
		where = a.key + " " + template
	}
	r.dump(where, input, stdout)
	r.trace = append(r.trace, fmt.Sprintf("%s -> exit %d %s%s", where, code, strings.TrimSpace(stdout), strings.TrimSpace(stderr)))
	if code != 0 {
		panic(wrongError{classWedged, fmt.Sprintf("%s: orch-hook exited %d: %s", where, code, strings.TrimSpace(stderr))})
	}
	var out hookOutput
	if stdout != "" {
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			panic(wrongError{classWedged, fmt.Sprintf("%s: the hook's answer is not JSON: %v: %s", where, err, stdout)})
		}
	}
	if m := out.SystemMessage; strings.Contains(m, "not recorded") || strings.Contains(m, "could not") {
		panic(wrongError{classWedged, fmt.Sprintf("%s: the user was told: %s", where, m)})
	}
	reason := out.Reason
	if out.HookSpecificOutput.PermissionDecision == "deny" {
		reason = out.HookSpecificOutput.PermissionDecisionReason
	} else if out.Decision != "block" {
		reason = ""
	}
	for _, b := range r.told {
		b.WriteString(out.HookSpecificOutput.AdditionalContext + "\n" + reason + "\n")
	}
	if reason == "" {
		r.toldFailure(where, out.HookSpecificOutput.AdditionalContext)
		return hookResult{}
	}
	r.refusals = append(r.refusals, where+": "+reason)
	nudge := template == "subagent-stop"
	for i, f := range r.fixes {
		// A nudge is answered by the agent (reply); a refused tool call by
		// the orchestrator (redo, or nothing).
		if f.told || !strings.Contains(reason, f.match) || r.used[i] >= max(f.times, 1) || nudge != (f.reply != "") {
			continue
		}
		r.used[i]++
		if nudge {
			return hookResult{refused: true, reply: f.reply}
		}
		if f.redo != nil {
			r.queue = append(r.queue, f.redo(r.script)...)
		}
		return hookResult{refused: true}
	}
	panic(wrongError{classWedged, fmt.Sprintf("%s was refused and no fix answers it: %s", where, reason)})
}

// toldFailure handles a checkpoint line that reports a failure (a fix
// with told set): the call went through, but the orchestrator was told
// the step did not complete. It counts as a refusal, answered by the
// fix's redo; told once more than the fix allows is a wedge.
func (r *run) toldFailure(where, context string) {
	if context == "" {
		return
	}
	for i, f := range r.fixes {
		if !f.told || !strings.Contains(context, f.match) {
			continue
		}
		if r.used[i] >= max(f.times, 1) {
			panic(wrongError{classWedged, fmt.Sprintf("%s: the orchestrator was told of the failure again and no fix answers it: %s", where, context)})
		}
		r.used[i]++
		r.refusals = append(r.refusals, where+" (told): "+context)
		if f.redo != nil {
			r.queue = append(r.queue, f.redo(r.script)...)
		}
		return
	}
}

// dump writes the call's payload and answer under $ORCH_HOOK_VARIANTS_DUMP
// (one directory per variant, one file per call, in order), to replay a
// variant's calls by hand: orch-hook hook EVENT < FILE.
func (r *run) dump(where string, input []byte, stdout string) {
	dir := os.Getenv("ORCH_HOOK_VARIANTS_DUMP")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(r.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	name := fmt.Sprintf("%03d-%s", len(r.trace), strings.ReplaceAll(where, " ", "-"))
	os.WriteFile(filepath.Join(dir, name+".json"), input, 0o644)
	os.WriteFile(filepath.Join(dir, name+".answer"), []byte(stdout), 0o644)
}

// payload builds a hook payload from a captured template: the project
// and session set (package payloads), then the fields. A key "a.b" sets a
// nested field; "-a.b" deletes it. $WORK in a string is the project's
// path (an agent reporting an absolute path).
func (r *run) payload(template string, set map[string]any) []byte {
	raw, err := payloads.Build(payloadDir, template, r.work, "session-1")
	if err != nil {
		r.t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		r.t.Fatal(err)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, "-"), ".")
		m := p
		for _, part := range parts[:len(parts)-1] {
			next, ok := m[part].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[part] = next
			}
			m = next
		}
		v := set[k]
		if str, ok := v.(string); ok {
			v = strings.ReplaceAll(str, "$WORK", r.work)
		}
		if strings.HasPrefix(k, "-") {
			delete(m, parts[len(parts)-1])
		} else {
			m[parts[len(parts)-1]] = v
		}
	}
	out, err := json.Marshal(p)
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// hookInProcess runs `orch-hook hook --budget 14s EVENT` on input through
// Main, in this process, as hooks.json runs the binary: a process per call
// would cost more than orch-hook's own work, for some 25,000 calls. It is
// safe, concurrently too: the hook path (Main -> handleHook -> app.Run)
// builds no command line and takes everything from its arguments (stdin,
// stdout, the environment through getenv: the project from
// CLAUDE_PROJECT_DIR; the working directory is read only for a payload
// that does not decode, or a relative path, and the payloads have
// neither); it keeps nothing between calls but regexps and tables built
// under sync.Once; the state's lock is flock(2) on a file of each
// project, which excludes within one process as between two. The one
// process-wide input is $XDG_CONFIG_HOME (state.ConfigDir reads it with
// os.Getenv: the seal's keys and markers), which TestModelVariants sets
// for its whole run and execHook passes to a subprocess alike. What
// Claude Code sees is stdout and the exit code: testInProcessMatchesBinary
// requires them to be the binary's, call for call, on the base workflow,
// and the race detector finds nothing in concurrent runs (go test -race
// -run TestModelVariants).
func hookInProcess(getenv func(string) string, input []byte) (code int, stdout, stderr string) {
	var ev struct {
		Name string `json:"hook_event_name"`
	}
	_ = json.Unmarshal(input, &ev)
	var out, errb bytes.Buffer
	code = Main([]string{"orch-hook", "hook", "--budget", "14s", ev.Name}, bytes.NewReader(input), &out, &errb, getenv)
	return code, out.String(), errb.String()
}
