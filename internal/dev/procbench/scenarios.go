package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
)

// scenario is one row of the table: a command timed against a floor.
type scenario struct {
	name string
	// target is the largest ratio median/floor median that meets it; 0
	// means the ratio is reported only.
	target float64
	// maxMedian, when set, is an absolute target instead: the command's
	// median wall time must be below it (the ratio is then reported only).
	maxMedian time.Duration
	// setup prepares the project directories (untimed) and returns the
	// command to time and its floor. Commands with the same key are run
	// once per round and shared, so a floor used by several scenarios is
	// timed once.
	setup func(h *harness) (cmd, floor command, err error)
}

// scenarios is the table procbench runs, in order. To add one, append a
// row: make its project with h.project (on h.tmpfs or h.disk), put state in
// it with h.orchHook (e.g. "test-bump --init"), with real hook calls
// (h.reach4a, h.step; see workflow.go) or by writing files, and return
// h.hook(...), h.hookCall(...) or h.bump(...) with its floor. A command
// that changes the state on every run restores it untimed in
// command.before (h.snapshot).
var scenarios = []scenario{
	{
		name:   "a. hook PreToolUse(Bash), no workflow",
		target: 1.3,
		setup: func(h *harness) (command, command, error) {
			p, err := h.project(h.disk, "no-workflow")
			if err != nil {
				return command{}, command{}, err
			}
			return h.hook("hook-no-workflow", p, preToolUseBash), h.floorTrivialCmd(), nil
		},
	},
	{
		name:   "b. hook PreToolUse(Bash `ls`), orchestrate at 4a, lock-free",
		target: 1.3,
		setup:  (*harness).bench4aBash,
	},
	{
		name:   "c. state change (test-bump), tmpfs",
		target: 2.5,
		setup: func(h *harness) (command, command, error) {
			p, err := h.project(h.tmpfs, "bump")
			if err == nil {
				err = h.orchHook("--project", p, "test-bump", "--init")
			}
			return h.bump("bump-tmpfs", p), h.floorTrivialCmd(), err
		},
	},
	{
		name: "d. state change (test-bump), disk",
		setup: func(h *harness) (command, command, error) {
			p, err := h.project(h.disk, "bump")
			if err != nil {
				return command{}, command{}, err
			}
			if err := h.orchHook("--project", p, "test-bump", "--init"); err != nil {
				return command{}, command{}, err
			}
			floor, err := h.floorIOCmd(p)
			return h.bump("bump-disk", p), floor, err
		},
	},
	{
		name:   "e. state change, tmpfs, 100,000 prior events",
		target: 1.2,
		setup: func(h *harness) (command, command, error) {
			var dirs [2]string
			for i, n := range []int{10, 100_000} {
				p, err := h.project(h.tmpfs, fmt.Sprintf("history-%d", n))
				if err == nil {
					err = h.orchHook("--project", p, "test-bump", "--init")
				}
				if err == nil {
					err = h.seedHistory(p, n)
				}

				if err != nil {
					return command{}, command{}, err
				}
				dirs[i] = p
			}
			floor := h.bump("bump-history-10", dirs[0])
			floor.label = "same, 10 prior events"
			return h.bump("bump-history-100k", dirs[1]), floor, nil
		},
	},
	{
		// Issue 15: at most 1.8x the trivial Go binary.
		name:   "f. Agent launch at 4a (PreToolUse), tmpfs",
		target: 1.8,
		setup:  (*harness).benchLaunch,
	},
	{
		// Issue 15: at most 1.8x the trivial Go binary.
		name:   "g. agent completion at 4a (SubagentStop), tmpfs",
		target: 1.8,
		setup:  (*harness).benchCompletion,
	},
	{
		// What the hooks.json wiring adds: the exact command line Claude
		// Code runs (sh -c, test -x, exec) against a plain command line.
		name:  "i. hooks.json command line vs a plain one (both via sh -c)",
		setup: (*harness).benchWiring,
	},
	{
		// Issue 17: the status line Claude Code runs after each turn, at
		// 4a, with Claude Code's JSON on stdin (its own time should stay
		// under 5 ms: reported as the ratio to the trivial Go binary).
		name:  "j. orch-hook statusline at 4a",
		setup: (*harness).benchStatusLine,
	},
	{
		// The target is absolute: the median wall time, not the ratio.
		name:      "h. orch-hook status at 4a, 100,000 logged events",
		maxMedian: 50 * time.Millisecond,
		setup:     func(h *harness) (command, command, error) { return h.benchStatus(100_000) },
	},
}

// benchStatus is `orch-hook status` on a workflow at 4a whose log holds
// events events: the real ones of reaching 4a, then denials, so that the
// last transitions are at the very start of the log (status's worst case:
// it looks back past every denial for them).
func (h *harness) benchStatus(events int) (command, command, error) {
	key := fmt.Sprintf("status-%d", events)
	p, err := h.project(h.disk, key)
	if err != nil {
		return command{}, command{}, err
	}
	if err := h.reach4a(p); err != nil {
		return command{}, command{}, err
	}
	logPath := filepath.Join(p, ".orchestrator", "state", "events.jsonl")
	raw, err := os.ReadFile(logPath)
	if err != nil {
		return command{}, command{}, err
	}
	have := bytes.Count(raw, []byte("\n"))
	var snap struct {
		Serial uint64 `json:"serial"`
	}
	b, err := os.ReadFile(filepath.Join(p, ".orchestrator", "state", "checkpoint.json"))
	if err == nil {
		err = json.Unmarshal(b, &snap)
	}
	if err != nil {
		return command{}, command{}, err
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return command{}, command{}, err
	}
	w := bufio.NewWriter(f)
	for i := have; i < events; i++ {
		fmt.Fprintf(w, `{"time":"2026-11-22T10:00:00Z","serial":%d,"type":"deny","session":"s","hook_event":"PreToolUse","tool_use_id":"toolu_%05d","state_before":"4a","reason":"orch-hook: a denial seeded by procbench"}`+"\n", snap.Serial, i)
	}
	if err := w.Flush(); err != nil {
		return command{}, command{}, err
	}
	if err := f.Close(); err != nil {
		return command{}, command{}, err
	}
	// Denials appended by hand: sealed as the user accepting them does.
	if err := h.orchHook("--project", p, "repair", "--accept"); err != nil {
		return command{}, command{}, err
	}
	return command{
		key:   key,
		label: "orch-hook status",
		path:  h.orch,
		args:  []string{"--project", p, "status"},
		check: outputHasPrefix("orch-hook orchestrate workflow"),
		every: outputHasPrefix("orch-hook orchestrate workflow"), // its ages move with the clock
	}, h.floorTrivialCmd(), nil
}

// preToolUseBash is a PreToolUse(Bash) payload as Claude Code 2.1.328 sends
// it (cmd/orch-hook/testdata/payloads/pre-bash.json), with PROJECT standing
// for the project directory.
const preToolUseBash = `{
  "session_id": "f9c93cc8-09f9-4e57-b7b8-d70b6d53e2b7",
  "transcript_path": "/home/user/.claude/projects/-home-user-project/f9c93cc8-09f9-4e57-b7b8-d70b6d53e2b7.jsonl",
  "cwd": "PROJECT",
  "prompt_id": "dbff619a-af86-4dae-a7fd-b54a7739d5a9",
  "permission_mode": "bypassPermissions",
  "effort": {
    "level": "medium"
  },
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {
    "command": "cat hello.txt && echo to-stderr >&2",
    "description": "Show the file"
  },
  "tool_use_id": "toolu_main_f79afd1b_t1_b0"
}
`

// hook is "orch-hook hook EVENT" as hooks.json runs it, in project, with
// payload (PROJECT replaced by the project's path) on stdin. The event is
// read from the payload. It must allow silently.
func (h *harness) hook(key, project, payload string) command {
	var probe struct {
		Event string `json:"hook_event_name"`
	}
	json.Unmarshal([]byte(payload), &probe)
	quoted, _ := json.Marshal(project)
	stdin := strings.ReplaceAll(payload, `"PROJECT"`, string(quoted))
	args := []string{"hook"}
	if probe.Event != "" {
		args = append(args, probe.Event)
	}
	return command{
		key:   key,
		label: "orch-hook hook",
		path:  h.orch,
		args:  args,
		env:   []string{"CLAUDE_PROJECT_DIR=" + project},
		stdin: []byte(stdin),
		check: outputIs(""),
	}
}

// bump is one state change: "orch-hook --project DIR test-bump --count 1".
func (h *harness) bump(key, project string) command {
	return command{
		key:   key,
		label: "test-bump",
		path:  h.orch,
		args:  []string{"--project", project, "test-bump", "--count", "1"},
		check: outputHasPrefix("committed "),
		every: outputHasPrefix("committed "), // one serial further each run
	}
}

// floorTrivialCmd is floor (a), with the same stdin as the hook scenarios.
func (h *harness) floorTrivialCmd() command {
	return command{
		key:   "floor-trivial",
		label: "trivial Go",
		path:  h.floorTrivial,
		stdin: []byte(preToolUseBash),
		check: outputIs("{}\n"),
	}
}

// floorIOCmd is floor (b) in a fresh directory next to project, writing a
// line and a snapshot the sizes of project's.
func (h *harness) floorIOCmd(project string) (command, error) {
	dir := filepath.Join(project, ".orchestrator", "state")
	snap, err := os.ReadFile(filepath.Join(dir, "checkpoint.json"))
	if err != nil {
		return command{}, err
	}
	log, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return command{}, err
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(log, []byte("\n")), []byte("\n"))
	lineN := len(lines[len(lines)-1]) + 1
	floorDir, err := h.project(filepath.Dir(project), "fsync-floor")
	if err != nil {
		return command{}, err
	}
	return command{
		key:   "floor-io-" + floorDir,
		label: "fsync+rename Go",
		path:  h.floorIO,
		args:  []string{floorDir, strconv.Itoa(len(snap)), strconv.Itoa(lineN)},
		check: outputIs("committed\n"),
	}, nil
}

// orchHook runs orch-hook once, untimed, to set a project up.
func (h *harness) orchHook(args ...string) error {
	cmd := exec.Command(h.orch, args...)
	cmd.Env = childEnv(nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("orch-hook %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// seedHistory gives project's workflow a history of n committed state
// changes: serials 1..n, each record carrying its checkpoint as a real one
// does, and the snapshot at serial n. The records are written directly
// from one template (a record of serial s is committed when s <= the
// snapshot's serial; see state.Event), so 100,000 (85 MB) take well under
// a second. Then one test-bump checks that orch-hook takes the history as
// it is.
func (h *harness) seedHistory(project string, n int) error {
	dir := filepath.Join(project, ".orchestrator", "state")
	snapPath := filepath.Join(dir, "checkpoint.json")
	raw, err := os.ReadFile(snapPath)
	if err != nil {
		return err
	}
	var cp map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cp); err != nil {
		return fmt.Errorf("%s: %v", snapPath, err)
	}
	var sm struct {
		Current string `json:"current_state"`
	}
	if err := json.Unmarshal(cp["state_machine"], &sm); err != nil {
		return fmt.Errorf("%s: state_machine: %v", snapPath, err)
	}

	// A serial no real value contains marks where each record's goes.
	const mark = "98765432109876"
	delete(cp, "seal") // the records carry the checkpoint without it
	cp["serial"] = json.RawMessage(mark)
	cpJSON, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	line, err := json.Marshal(struct {
		Time        string          `json:"time"`
		Serial      json.RawMessage `json:"serial"`
		Type        string          `json:"type"`
		StateBefore string          `json:"state_before"`
		StateAfter  string          `json:"state_after"`
		Reason      string          `json:"reason"`
		Checkpoint  json.RawMessage `json:"checkpoint"`
	}{time.Now().UTC().Format(time.RFC3339Nano), json.RawMessage(mark), "update", sm.Current, sm.Current, "seeded by procbench", cpJSON})
	if err != nil {
		return err
	}
	parts := bytes.Split(line, []byte(mark))
	if len(parts) != 3 {
		return fmt.Errorf("the record template holds the serial %d times, want 2", len(parts)-1)
	}
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var num []byte
	for i := 1; i <= n; i++ {
		num = strconv.AppendInt(num[:0], int64(i), 10)
		w.Write(parts[0])
		w.Write(num)
		w.Write(parts[1])
		w.Write(num)
		w.Write(parts[2])
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	cp["serial"] = json.RawMessage(strconv.Itoa(n))
	if cpJSON, err = json.Marshal(cp); err != nil {
		return err
	}
	tmp := snapPath + ".procbench"
	if err := os.WriteFile(tmp, append(cpJSON, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, snapPath); err != nil {
		return err
	}

	// Written by hand: sealed as the user accepting it does (serial n+1).
	if err := h.orchHook("--project", project, "repair", "--accept"); err != nil {
		return err
	}
	// orch-hook must commit serial n+2 on top of that history, cutting
	// nothing (a cut would log a "recover" record).
	cmd := exec.Command(h.orch, "--project", project, "test-bump", "--count", "1")
	cmd.Env = childEnv(nil)
	out, err := cmd.CombinedOutput()
	if want := fmt.Sprintf("committed %d\n", n+2); err != nil || string(out) != want {
		return fmt.Errorf("test-bump on the seeded history: %v: got %q, want %q", err, out, want)
	}
	tail, err := readTail(filepath.Join(dir, "events.jsonl"), 64<<10)
	if err != nil {
		return err
	}
	if bytes.Contains(tail, []byte(`"type":"recover"`)) {
		return fmt.Errorf("orch-hook cut the seeded history: %s", tail[bytes.LastIndex(tail, []byte(`"type":"recover"`)):])
	}
	return nil
}

// readTail returns at most the last n bytes of path.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	_, err = f.ReadAt(buf, off)
	return buf, err
}

// benchWiring times the PreToolUse hook of the no-workflow scenario as
// Claude Code runs it, through hooks/hooks.json's command line and sh, in a
// plugin root whose bin/orch-hook is the binary under test; its floor is a
// plain command line, also through sh.
func (h *harness) benchWiring() (command, command, error) {
	p, err := h.project(h.disk, "wiring")
	if err != nil {
		return command{}, command{}, err
	}
	// The binary where the plugin's hooks run it: the plugin's data
	// directory, one directory per version (README, "How the plugin gets
	// its binary").
	data, err := h.project(h.disk, "plugin-data")
	if err != nil {
		return command{}, command{}, err
	}
	version, err := bootstrap.PluginVersion(h.module)
	if err != nil {
		return command{}, command{}, err
	}
	bin := filepath.Join(data, "bin", version, "orch-hook")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return command{}, command{}, err
	}
	if err := os.Symlink(h.orch, bin); err != nil {
		return command{}, command{}, err
	}
	var hooksFile struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(filepath.Join(h.module, "hooks", "hooks.json"))
	if err == nil {
		err = json.Unmarshal(b, &hooksFile)
	}
	if err != nil {
		return command{}, command{}, fmt.Errorf("hooks/hooks.json: %v", err)
	}
	line := hooksFile.Hooks["PreToolUse"][0].Hooks[0].Command
	wired := h.hook("hook-wiring-sh", p, preToolUseBash)
	wired.label = "sh -c hooks.json line"
	wired.path = "/bin/sh"
	wired.args = []string{"-c", line}
	wired.env = append(wired.env, "CLAUDE_PLUGIN_DATA="+data)
	// Claude Code runs every hook command through a shell, so the floor is
	// a plain "<binary> hook PreToolUse" line, through sh too.
	plain := wired
	plain.key = "hook-wiring-plain"
	plain.label = "sh -c plain command"
	plain.args = []string{"-c", `"$CLAUDE_PLUGIN_DATA/bin/` + version + `/orch-hook" hook PreToolUse`}
	return wired, plain, nil
}
