package orchestrate

import (
	"fmt"

	"github.com/orch-hook/orch-hook/gates"
)

// Adopt builds the workflow that continues a v1.3 checkpoint, which the
// user adopted (README, "Continuing a v1.3 checkpoint"). v1.3 numbered
// coordinate's phases, so the phase is given by its state name there:
// initialize resumes at 0a, research at 1 (discovery), plan at 2; any
// later phase at 3, for the user to approve the plan as it stands before
// anything more is implemented. A plan that does not validate sends the
// workflow to 2 instead, and complete stays complete. It returns the
// workflow and one line saying where it resumes and why.
func Adopt(request, session string, phase gates.State, env *Env) (*Workflow, string, error) {
	w, err := NewWorkflow(request, session)
	if err != nil {
		return nil, "", err
	}
	switch phase {
	case "initialize":
		return w, "resumes at step 0a (clarification): the v1.3 workflow had not started", nil
	case "research":
		w.moveTo(S1)
		w.Discovery, w.DiscoveryFrom = 1, 0
		return w, "resumes at step 1 (discovery): launch researcher and code-explorer", nil
	case "plan":
		w.moveTo(S2)
		return w, "resumes at step 2 (planning): launch task-planner", nil
	case "implement", "test", "debug", "document":
		p, err := env.plan()
		if err != nil {
			w.moveTo(S2)
			return w, fmt.Sprintf("resumes at step 2 (planning): the v1.3 workflow was at %s, but the plan under %s does not validate (%v); launch task-planner", phase, TasksDir, err), nil
		}
		for _, ph := range p.Phases {
			for _, t := range ph.Tasks {
				if t.Checked {
					w.DoneTasks = append(w.DoneTasks, t.Number)
				}
			}
		}
		w.moveTo(S2)
		w.moveTo(S3)
		w.Plan = p.Snapshot()
		w.PlanHashes = HashPlanFiles(env.files())
		w.WaitingOn = "approval"
		done := ""
		if n := len(w.DoneTasks); n > 0 {
			done = fmt.Sprintf("; %d ticked %s taken as done", n, gates.Pick(n, "task is", "tasks are"))
		}
		return w, fmt.Sprintf("resumes at step 3 (approval): the v1.3 workflow was at %s; present the plan (%d phases%s) and stop for the user's /orch-hook:approve", phase, len(p.Phases), done), nil
	case "complete":
		w.moveTo(Complete)
		return w, "is complete: the v1.3 workflow had ended", nil
	}
	return nil, "", fmt.Errorf("phase %q is not a v1.3 phase", phase)
}
