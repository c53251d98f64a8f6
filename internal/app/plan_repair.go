package app

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// PlanStillChangedError: `orch-hook repair --plan` could not put every
// plan file back; the message already said which and why.
type PlanStillChangedError struct{ Files []string }

func (e *PlanStillChangedError) Error() string {
	return "the plan still differs from what orch-hook recorded: " + strings.Join(e.Files, ", ")
}

// Hint says what is left to the user.
func (e *PlanStillChangedError) Hint() string {
	return "restore those files yourself, or type /orch-hook:resolve accept-plan in Claude Code"
}

// RepairPlan is the user's `orch-hook repair --plan`: under the state's
// lock (the state must be as orch-hook wrote it), each plan file that
// differs from what orch-hook recorded is written back from orch-hook's
// copy of it, when that copy hashes to the hash the sealed checkpoint
// records. The workflow's state does not change (the files are again what
// it records); what was written is logged. A file orch-hook never recorded
// is left for the user to remove. It returns what it did, and a
// *PlanStillChangedError when files are left changed.
func RepairPlan(store *state.Store) (string, error) {
	var msg string
	var left []string
	_, err := store.Update(func(cp *state.Checkpoint) ([]state.Event, error) {
		if cp.StateMachine.WorkflowConfig.Command != "orchestrate" {
			msg = fmt.Sprintf("the active workflow (%s) has no plan bound by orch-hook; nothing to repair", cp.StateMachine.WorkflowConfig.Command)
			return nil, state.ErrNoChange
		}
		w, err := LoadWorkflow(cp)
		if err != nil {
			return nil, err
		}
		files, err := state.ReadDirFiles(store.Root, orchestrate.TasksDir)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", orchestrate.TasksDir, err)
		}
		r := w.RestorePlan(files, store.ReadRecorded)
		var lines, wrote []string
		names := make([]string, 0, len(r.Write))
		for name := range r.Write {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := state.WritePlanFile(store.Root, orchestrate.TasksDir, name, r.Write[name]); err != nil {
				lines = append(lines, fmt.Sprintf("%s: could not be written back (%s)", name, shorten.OneLine(err.Error())))
				left = append(left, name)
				continue
			}
			wrote = append(wrote, name)
		}
		for _, name := range r.NoCopy {
			lines = append(lines, fmt.Sprintf("%s: changed, and orch-hook kept no copy of it as recorded (a file over %d KiB gets none); restore it yourself (with git, for example)", name, state.MaxRecordedSize>>10))
		}
		for _, name := range r.BadCopy {
			lines = append(lines, fmt.Sprintf("%s: changed, and orch-hook's copy of it (%s/%s) no longer matches the recorded hash: something other than orch-hook changed it, so it is not used; restore the file yourself (with git, for example)", name, state.RecordedDir, name))
		}
		for _, name := range r.Unrecorded {
			lines = append(lines, fmt.Sprintf("%s: never recorded by orch-hook (a new file), left in place; remove it (rm %s/%s) if it should not be there", name, orchestrate.TasksDir, name))
		}
		left = append(append(append(left, r.NoCopy...), r.BadCopy...), r.Unrecorded...)
		switch {
		case len(wrote) > 0:
			lines = append([]string{fmt.Sprintf("wrote back %s from orch-hook's copies of the plan as it recorded it (each checked against the hash in the sealed checkpoint)", strings.Join(wrote, ", "))}, lines...)
		case len(lines) == 0:
			lines = []string{"the plan files are as orch-hook recorded them; nothing to repair"}
			if w.PlanHashes == nil || w.Current == orchestrate.S2 || orchestrate.Finished(w.Current) {
				lines = []string{fmt.Sprintf("the plan is not bound at step %s (orch-hook records it when it validates, and checks it until the workflow ends); nothing to repair", w.Current)}
			}
		}
		if len(left) > 0 {
			lines = append(lines, "or accept the plan as it stands: type /orch-hook:resolve accept-plan in Claude Code")
		}
		msg = strings.Join(lines, "\n")
		if len(wrote) == 0 {
			return nil, state.ErrNoChange
		}
		ev := state.Event{Type: state.EventRepair, Reason: "the user (orch-hook repair --plan) wrote back " + strings.Join(wrote, ", ") + " from orch-hook's copies as recorded"}
		return []state.Event{ev}, state.ErrNoChange
	})
	if err != nil {
		return "", err
	}
	if len(left) > 0 {
		sort.Strings(left)
		return msg, &PlanStillChangedError{Files: left}
	}
	return msg, nil
}

// PlanChanged lists the plan files of an active orchestrate workflow that
// differ from what orch-hook recorded (read without the lock; for a hint).
func PlanChanged(store *state.Store) []string {
	cp, err := store.Load()
	if err != nil || cp.StateMachine.WorkflowConfig.Command != "orchestrate" {
		return nil
	}
	w, err := LoadWorkflow(cp)
	if err != nil || w.PlanHashes == nil || w.Current == orchestrate.S2 || orchestrate.Finished(w.Current) {
		return nil
	}
	files, err := state.ReadDirFiles(store.Root, orchestrate.TasksDir)
	if err != nil {
		return nil
	}
	return orchestrate.ChangedFiles(w.PlanHashes, orchestrate.HashPlanFiles(files))
}
