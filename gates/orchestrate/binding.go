package orchestrate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// Decisions are bound to what the user saw: the plan is hashed file by file
// when it validates (2 -> 3), and afterwards only a write orch-hook allowed
// may change a hash, and only to the content that write produces. Anything
// else (a Bash sed, a script, an Edit applied differently) is a change made
// outside orch-hook: it blocks progress, and the approval, until reverted
// or accepted by the user (/orch-hook:resolve accept-plan). README, "The
// rules in detail".

// PlanWrite is an allowed plan write and the hash it must produce.
type PlanWrite struct {
	ToolUseID string `json:"tool_use_id"`
	File      string `json:"file"`
	Hash      string `json:"hash"`
	// Restore: the write puts the file back to its recorded content
	// (allowed while the plan differs from what orch-hook recorded).
	Restore bool `json:"restore,omitempty"`
}

// maxPlanWrites bounds the allowed writes waiting for their PostToolUse.
const maxPlanWrites = 16

// hashContent is HashPlanFiles's hash of one file.
func hashContent(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// bindPlanWrite records, for an allowed write, the hash its file must have
// at PostToolUse.
func (w *Workflow) bindPlanWrite(c *gates.Call, name, next string, restore bool, o *gates.Outcome) {
	kept := w.PlanWrites[:0]
	for _, pw := range w.PlanWrites {
		if pw.ToolUseID != c.ToolUseID {
			kept = append(kept, pw)
		}
	}
	// A write whose PostToolUse never came (the tool failed) is dropped
	// once maxPlanWrites newer ones wait.
	if len(kept) >= maxPlanWrites {
		kept = append(kept[:0], kept[len(kept)-maxPlanWrites+1:]...)
	}
	w.PlanWrites = append(kept, PlanWrite{ToolUseID: c.ToolUseID, File: name, Hash: hashContent([]byte(next)), Restore: restore})
	o.Changed = true
}

// settlePlanWrite: at PostToolUse the written file must hash as its
// PreToolUse said; then (and only then) that file's recorded hash moves.
// It returns the write, whether there was one, and whether it matched.
func (w *Workflow) settlePlanWrite(c *gates.Call, name string, env *Env) (PlanWrite, bool, bool) {
	for i, pw := range w.PlanWrites {
		if pw.ToolUseID != c.ToolUseID || pw.File != name {
			continue
		}
		w.PlanWrites = append(w.PlanWrites[:i:i], w.PlanWrites[i+1:]...)
		got, ok := env.files()[name]
		if !ok || hashContent(got) != pw.Hash {
			return pw, true, false
		}
		if w.PlanHashes == nil {
			w.PlanHashes = map[string]string{}
		}
		w.PlanHashes[name] = pw.Hash
		return pw, true, true
	}
	return PlanWrite{}, false, false
}

// ticked is the approved snapshot with the ticks orch-hook allowed since
// (4c) applied: those are not changes the user has to accept.
func (w *Workflow) ticked() *PlanSnapshot {
	if w.Plan == nil {
		return nil
	}
	done := map[int]bool{}
	for _, n := range w.DoneTasks {
		done[n] = true
	}
	out := &PlanSnapshot{Phases: make([]PhaseSnap, len(w.Plan.Phases))}
	for i, ph := range w.Plan.Phases {
		out.Phases[i] = ph
		out.Phases[i].Tasks = append([]TaskSnap(nil), ph.Tasks...)
		for j := range out.Phases[i].Tasks {
			if t := &out.Phases[i].Tasks[j]; done[t.Number] {
				t.Checked = true
			}
		}
	}
	return out
}

// knownPhase is the last phase of the plan orch-hook binds (0: none).
func (w *Workflow) knownPhase() int {
	if w.Plan == nil || len(w.Plan.Phases) == 0 {
		return 0
	}
	return w.Plan.Phases[len(w.Plan.Phases)-1].Number
}

// pendingPhase is the phase appended after the last one orch-hook knows
// while 4a waits for one, not taken yet: it is taken at the next
// code-implementer launch (takeAppendedPhase, with its checks). 0: none,
// or more than one (only a change made outside orch-hook appends two; they
// go to the user as added tasks).
func (w *Workflow) pendingPhase(p *Plan) int {
	if w.Awaiting == "" || w.Plan == nil {
		return 0
	}
	known, n := w.knownPhase(), 0
	for _, ph := range p.Phases {
		if ph.Number > known {
			if n != 0 {
				return 0
			}
			n = ph.Number
		}
	}
	return n
}

// bindable is the snapshot of p orch-hook binds when the user accepts or
// approves the plan as it stands: the pending appended phase is left out,
// since the acceptance does not take it.
func (w *Workflow) bindable(p *Plan) *PlanSnapshot {
	snap := p.Snapshot()
	if n := w.pendingPhase(p); n != 0 {
		kept := snap.Phases[:0]
		for _, ph := range snap.Phases {
			if ph.Number != n {
				kept = append(kept, ph)
			}
		}
		snap.Phases = kept
	}
	return snap
}

// checkTicks: a plan may tick only tasks orch-hook saw done.
func (w *Workflow) checkTicks(p *Plan) error {
	done := map[int]bool{}
	for _, n := range w.DoneTasks {
		done[n] = true
	}
	var bad []int
	for _, ph := range p.Phases {
		for _, t := range ph.Tasks {
			if t.Checked && !done[t.Number] {
				bad = append(bad, t.Number)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s %s ticked ([x]) in %s before orch-hook saw %s done; untick %s", taskList(bad), gates.Pick(len(bad), "is", "are"), MasterPlan, gates.Pick(len(bad), "it", "them"), gates.Pick(len(bad), "it", "them"))
	}
	return nil
}

// markDone records a completed phase's tasks.
func (w *Workflow) markDone(phase int) {
	ph := w.Plan.Phase(phase)
	if ph == nil {
		return
	}
	for _, n := range ph.Numbers() {
		if !containsInt(w.DoneTasks, n) {
			w.DoneTasks = append(w.DoneTasks, n)
		}
	}
	sort.Ints(w.DoneTasks)
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// PlanChanges lists, file by file, what differs between two snapshots of
// the plan in what the gates read: ticks, UX/DX flags, Depends On, Files,
// and tasks or phases added or removed.
func PlanChanges(before, after *PlanSnapshot) []string {
	var out []string
	seen := map[int]bool{}
	if after != nil {
		for _, ph := range after.Phases {
			for _, t := range ph.Tasks {
				seen[t.Number] = true
				old := before.Task(t.Number)
				file := fmt.Sprintf("task %02d", t.Number)
				if old == nil {
					out = append(out, fmt.Sprintf("%s: added (phase %d)", file, ph.Number))
					continue
				}
				if old.UXDX != t.UXDX {
					out = append(out, fmt.Sprintf("%s: requires_ux_dx_review %v -> %v", file, old.UXDX, t.UXDX))
				}
				if !sameInts(old.DependsOn, t.DependsOn) {
					out = append(out, fmt.Sprintf("%s: Depends On %s -> %s", file, intsText(old.DependsOn), intsText(t.DependsOn)))
				}
				if strings.Join(old.Files, ",") != strings.Join(t.Files, ",") {
					out = append(out, fmt.Sprintf("%s: Files %s -> %s", file, gates.OrText(strings.Join(old.Files, ", "), "none"), gates.OrText(strings.Join(t.Files, ", "), "none")))
				}
				if old.Checked != t.Checked {
					out = append(out, fmt.Sprintf("%s: %s in %s", file, map[bool]string{true: "ticked [x]", false: "unticked [ ]"}[t.Checked], MasterPlan))
				}
			}
		}
	}
	if before != nil {
		for _, ph := range before.Phases {
			for _, t := range ph.Tasks {
				if !seen[t.Number] {
					out = append(out, fmt.Sprintf("task %02d: removed", t.Number))
				}
			}
		}
	}
	return out
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func intsText(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%02d", n)
	}
	return strings.Join(parts, ", ")
}

// acceptPlan is /orch-hook:resolve accept-plan: the user accepts the plan
// files as they now stand. They must validate; if what the gates read
// changed (a tick, a UX/DX flag, a dependency, a file, a task), the
// workflow goes back to step 3 for the user's approval, else it goes on.
func (w *Workflow) acceptPlan(env *Env) gates.Outcome {
	if w.PlanHashes == nil {
		return w.block("there is no validated plan yet; accept-plan applies once the plan validated (step 3 on).")
	}
	now := HashPlanFiles(env.files())
	changed := ChangedFiles(w.PlanHashes, now)
	if len(changed) == 0 {
		return w.block("the plan files are as orch-hook last allowed them; nothing to accept.")
	}
	p, err := env.plan()
	if err == nil {
		err = w.checkTicks(p)
	}
	if err != nil {
		return w.block(fmt.Sprintf("the plan as it now stands does not validate (%v); fix or revert it first.", err))
	}
	snap := w.bindable(p)
	what := PlanChanges(w.ticked(), snap)
	w.PlanHashes = now
	w.PlanWrites = nil
	o := gates.Outcome{Changed: true}
	if len(what) == 0 || w.Current == S3 {
		next := w.Next(env)
		if n := w.pendingPhase(p); n != 0 && w.Current == S4a {
			next = fmt.Sprintf("phase %d is appended: launch code-implementer for its tasks (orch-hook takes the phase then)", n)
		}
		w.Plan = snap
		o.Context = fmt.Sprintf("orch-hook: [RESOLVE] accept-plan | %s accepted as they stand (%s); nothing the gates read changed since the approval. Next: %s", strings.Join(changed, ", "), gates.OrText(strings.Join(what, "; "), "text only"), next)
		o.Log(gates.Record{Type: gates.RecDecision, Reason: "accept-plan: " + strings.Join(changed, ", ")})
		return o
	}
	from := w.Current
	w.Plan = snap
	w.moveTo(S3)
	w.WaitingOn = "approval"
	o.Context = fmt.Sprintf("orch-hook: [RESOLVE] accept-plan -> 3 | the plan changed in what the gates read (%s): back to step 3; present the plan and stop for the user's /orch-hook:approve", strings.Join(what, "; "))
	o.Log(gates.Record{Type: gates.RecDecision, Reason: fmt.Sprintf("accept-plan: %s -> 3 (%s)", from, strings.Join(what, "; "))})
	return o
}
