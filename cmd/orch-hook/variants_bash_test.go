package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/internal/status"
)

// Bash reads (README, "Threat model", "Bash reads"): the orchestrator
// reads the plan from Bash at several steps of the standard workflow
// (4a, 4b, F2, 4c, and 3 before the approval). A read is allowed and
// changes nothing: the checkpoint's serial, step and recorded plan hashes
// are the same after it as before. Each read's shape is paired with a
// write of the same shape next to .orchestrator, which is denied with
// the reason and the way to read; the model then goes on with the script
// (the fix has no redo), or, in one variant, reads the plan the way the
// reason suggests. Only the PreToolUse of a Bash call is gated and no
// command runs here, so a denied write changes nothing on disk either.

// checkpointFingerprint is what a read must leave as it was: the
// checkpoint's serial, its step and the plan hashes orch-hook recorded.
func checkpointFingerprint(r *status.Report) string {
	raw, err := os.ReadFile(filepath.Join(r.Project, ".orchestrator", "state", "checkpoint.json"))
	if err != nil {
		return "(no checkpoint: " + err.Error() + ")"
	}
	var cp struct {
		Serial       uint64 `json:"serial"`
		StateMachine struct {
			CurrentState string `json:"current_state"`
		} `json:"state_machine"`
		Workflow struct {
			PlanHashes map[string]string `json:"plan_hashes"`
		} `json:"workflow"`
	}
	if err := json.Unmarshal(raw, &cp); err != nil {
		return "(checkpoint unreadable: " + err.Error() + ")"
	}
	var hashes []string
	for _, name := range slices.Sorted(maps.Keys(cp.Workflow.PlanHashes)) {
		hashes = append(hashes, name+"="+cp.Workflow.PlanHashes[name])
	}
	return fmt.Sprintf("serial %d, step %s, plan hashes [%s]", cp.Serial, cp.StateMachine.CurrentState, strings.Join(hashes, " "))
}

// bashAt inserts the orchestrator's Bash command cmd before the action
// named before, with a check that it changed nothing in the checkpoint:
// a probe (an action without any hook call) reads the fingerprint first.
func bashAt(before, key, cmd string) func(s *script) {
	return func(s *script) {
		var was string
		s.insertBefore(before,
			onDisk(key+"-probe", nil).expecting(want{check: func(r *status.Report) string {
				was = checkpointFingerprint(r)
				return ""
			}}),
			bashCommand(key, cmd).expecting(want{check: func(r *status.Report) string {
				if now := checkpointFingerprint(r); now != was {
					return fmt.Sprintf("Bash %q to change nothing: before it %s; after it %s", cmd, was, now)
				}
				return ""
			}}),
		)
	}
}

// bashSteps are where the reads are inserted: before the action named,
// in the step given.
var bashSteps = []struct{ before, step string }{
	{"approve", "3"},
	{"i3", "4a"},
	{"q1", "4b"},
	{"fx", "F2"},
	{"tick1", "4c"},
}

// commandName is a command as a variant's name: a name may not hold '/'
// (a subtest level), so it is written as U+2215, which reads the same.
func commandName(cmd string) string { return strings.ReplaceAll(cmd, "/", "\u2215") }

// deniedBash is the start of the reason of a denied write next to the
// plan; the rest says how to read it instead.
const deniedBash = "commands that name .orchestrator/state, or change or remove anything under .orchestrator, are not allowed: it is orch-hook's state and plan."

func init() {
	var vs []variant
	reads := []string{
		"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null",
		"ls .orchestrator 2>&1",
		"head -n 20 .orchestrator/tasks/task-01-parser.md >/dev/null",
		"git diff -- .orchestrator",
		"git log --oneline -- .orchestrator/tasks",
		"git show HEAD:.orchestrator/tasks/MASTER_PLAN.md",
		"git status --short .orchestrator",
		"grep -n Depends .orchestrator/tasks/*.md 2>/dev/null",
		"git --no-pager log -p -3 -- .orchestrator/tasks 2>&1 | head -50",
		"cat .orchestrator/tasks/MASTER_PLAN.md | grep -c '\\[x\\]'",
	}
	// Each read at two steps, the steps taken in turn.
	for i, cmd := range reads {
		for j := range 2 {
			at := bashSteps[(2*i+j)%len(bashSteps)]
			vs = append(vs, variant{name: fmt.Sprintf("read in %s: %s", at.step, commandName(cmd)), change: bashAt(at.before, "bash", cmd)})
		}
	}
	// The writes of the same shapes: denied, and the script goes on.
	writes := []struct{ cmd, match string }{
		{"cat x > .orchestrator/tasks/MASTER_PLAN.md", deniedBash},
		{"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null > .orchestrator/tasks/task-01-parser.md", deniedBash},
		{"ls .orchestrator 2>&1 >.orchestrator/x", deniedBash},
		{"git diff > .orchestrator/x", deniedBash},
		{"git -c diff.external=sh diff -- .orchestrator", deniedBash},
		{"GIT_EXTERNAL_DIFF=./x git diff .orchestrator", deniedBash},
		{"git diff --output=.orchestrator/tasks/MASTER_PLAN.md", deniedBash},
		{"git checkout -- .orchestrator/tasks", deniedBash},
		{"sed -i s/a/b/ .orchestrator/tasks/task-01-parser.md", deniedBash},
		{"time -o .orchestrator/tasks/MASTER_PLAN.md true", deniedBash},
		{"cat .orchestrator/tasks/MASTER_PLAN.md | tee .orchestrator/tasks/copy.md", deniedBash},
		{"bash -c 'git diff > .orchestrator/x'", deniedBash},
	}
	for i, w := range writes {
		at := bashSteps[(i+1)%len(bashSteps)]
		vs = append(vs, variant{
			name:   fmt.Sprintf("refused in %s: %s", at.step, commandName(w.cmd)),
			change: bashAt(at.before, "bash", w.cmd),
			fixes:  []fix{{match: w.match}},
		})
	}
	// The state is never named, read or not.
	vs = append(vs, variant{
		name:   "refused in 4b: " + commandName("cat .orchestrator/state/checkpoint.json 2>/dev/null"),
		change: bashAt("q1", "bash", "cat .orchestrator/state/checkpoint.json 2>/dev/null"),
		fixes:  []fix{{match: "commands that name .orchestrator/state"}},
	})
	// A denied write, then the read its reason suggests.
	vs = append(vs, variant{
		name:   "refused in 4c: cp of the plan, then the read the reason suggests",
		change: bashAt("tick1", "bash", "cp .orchestrator/tasks/MASTER_PLAN.md /tmp/plan.md"),
		fixes: []fix{{match: "To read the plan from Bash, use a command that only reads", redo: func(*script) []*action {
			s := &script{actions: []*action{stopTurn("here")}}
			bashAt("here", "bash-read", "cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null")(s)
			return s.actions[:len(s.actions)-1]
		}}},
	})
	registerVariants("bash reads", vs...)
}
