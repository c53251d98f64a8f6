package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/orch-hook/orch-hook/internal/status"
)

// What a variant declares is checked against `orch-hook status --json`
// (and what the orchestrator was told); a difference ends the run as
// misread, with expected vs read.

// statusMu serializes in-process `status`: unlike the hook path, it goes
// through the command line (urfave/cli), which writes package-level values
// while it parses (its help command's setup, the shared --project flag):
// the race detector reports it without the lock.
var statusMu sync.Mutex

// status is `orch-hook status --json` on the project, decoded.
func (r *run) status() *status.Report {
	statusMu.Lock()
	var out, errb bytes.Buffer
	code := Main([]string{"orch-hook", "status", "--json", "--project", r.work}, strings.NewReader(""), &out, &errb, r.getenv)
	statusMu.Unlock()
	if code != 0 {
		panic(wrongError{classWedged, fmt.Sprintf("orch-hook status exited %d: %s", code, strings.TrimSpace(errb.String()))})
	}
	var rep status.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		r.t.Fatalf("status --json: %v", err)
	}
	return &rep
}

// currentState is the workflow's state as the checkpoint holds it.
func (r *run) currentState() string {
	raw, err := os.ReadFile(filepath.Join(r.work, ".orchestrator", "state", "checkpoint.json"))
	if err != nil {
		return "(no checkpoint: " + err.Error() + ")"
	}
	var cp struct {
		StateMachine struct {
			CurrentState string `json:"current_state"`
		} `json:"state_machine"`
	}
	if err := json.Unmarshal(raw, &cp); err != nil {
		return "(checkpoint unreadable: " + err.Error() + ")"
	}
	return cp.StateMachine.CurrentState
}

// checkWant checks w after the action named where; told is what the
// orchestrator was told during it. A failure ends the run as misread.
func (r *run) checkWant(where string, w want, told string) {
	for _, c := range w.context {
		if !strings.Contains(told, c) {
			r.misread(where, "the orchestrator to be told %q", c, "it was told:\n"+strings.TrimSpace(told))
		}
	}
	if w.failing == nil && w.fixIterations == nil && w.plan == nil && w.check == nil {
		// A step's bare state: read from the checkpoint, which status
		// prints as workflow.state, to keep a run of some 20 steps short
		// (status also reads the log's tail). What a variant declares
		// beyond the state is read in status --json.
		if w.state != "" && r.currentState() != w.state {
			rep := r.status()
			r.misread(where, "state %s", w.state, fmt.Sprintf("state %s (%s); recent: %s", rep.Workflow.State, rep.Workflow.Where, recentOf(rep)))
		}
		return
	}
	rep := r.status()
	if rep.Workflow == nil {
		r.misread(where, "a workflow", "", "no workflow in status --json")
	}
	if w.state != "" && rep.Workflow.State != w.state {
		r.misread(where, "state %s", w.state, fmt.Sprintf("state %s (%s); recent: %s", rep.Workflow.State, rep.Workflow.Where, recentOf(rep)))
	}
	if w.failing != nil {
		if got := failingOf(rep); !slices.Equal(got, *w.failing) {
			r.misread(where, "failing tasks %v", *w.failing, fmt.Sprintf("failing tasks %v", got))
		}
	}
	if w.fixIterations != nil {
		if got := counterOf(rep, "fix iterations"); got != *w.fixIterations {
			r.misread(where, "fix iterations %d", *w.fixIterations, fmt.Sprintf("fix iterations %d", got))
		}
	}
	if w.plan != nil {
		if got := readPlan(rep); got != w.plan.String() {
			r.misread(where, "the plan read as\n%s", w.plan.String(), "it read\n"+got)
		}
	}
	if w.check != nil {
		if why := w.check(rep); why != "" {
			r.misread(where, "%s", why, "")
		}
	}
}

func (r *run) misread(where, format string, expected any, read string) {
	panic(wrongError{classMisread, fmt.Sprintf("after %s: expected "+format+"; read: %s", where, expected, read)})
}

func recentOf(rep *status.Report) string {
	if rep.Recent == nil || len(rep.Recent.Transitions) == 0 {
		return "(no transitions)"
	}
	var out []string
	for _, ev := range rep.Recent.Transitions {
		line, _, _ := strings.Cut(ev.Reason, "\n")
		out = append(out, line)
	}
	return strings.Join(out, " / ")
}

func failingOf(rep *status.Report) []int {
	out := []int{}
	if rep.Plan == nil {
		return out
	}
	for _, ph := range rep.Plan.Phases {
		for _, t := range ph.Tasks {
			if t.Failing {
				out = append(out, t.Number)
			}
		}
	}
	return out
}

func counterOf(rep *status.Report, name string) int {
	for _, c := range rep.Counters {
		if c.Name == name {
			return c.Value
		}
	}
	return -1
}

// String prints a plan expectation the way readPlan prints what status
// shows, so the two compare as text and a difference reads plainly.
func (p *planWant) String() string {
	var b strings.Builder
	for i, ph := range p.phases {
		fmt.Fprintf(&b, "phase %d:", i+1)
		for _, n := range ph {
			deps := p.deps[n]
			if deps == nil {
				deps = []int{}
			}
			files := p.files[n]
			if files == nil {
				files = []string{}
			}
			fmt.Fprintf(&b, " [%02d depends_on=%v files=%v ux=%v]", n, deps, files, slices.Contains(p.ux, n))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func readPlan(rep *status.Report) string {
	if rep.Plan == nil {
		return "(no plan)"
	}
	var b strings.Builder
	for i, ph := range rep.Plan.Phases {
		fmt.Fprintf(&b, "phase %d:", i+1)
		for _, t := range ph.Tasks {
			fmt.Fprintf(&b, " [%02d depends_on=%v files=%v ux=%v]", t.Number, t.DependsOn, t.Files, t.UXDX)
		}
		b.WriteString("\n")
	}
	return b.String()
}
