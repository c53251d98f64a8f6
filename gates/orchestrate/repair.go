package orchestrate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// A changed plan can always be repaired (issue 13). orch-hook keeps a copy
// of each plan file as it recorded it (package state, RecordedDir; package
// hooks writes it whenever a recorded hash changes). The copy is not
// trusted: the recorded hash in the sealed checkpoint decides, and a copy
// that does not hash to it is never offered. While the plan differs from
// what orch-hook recorded:
//
//   - the refusal shows a short diff per changed file (recorded -> now) and
//     says how to repair it;
//   - a Write or Edit (by anyone) whose whole resulting file hashes to the
//     file's recorded hash is allowed, and is the only plan write allowed;
//     its PostToolUse confirms it like any allowed write (settlePlanWrite);
//   - a file orch-hook never recorded cannot be restored by a write: only
//     the user removes it, or accepts the plan.

// RecordedDir is where orch-hook keeps its copies of the plan files as it
// recorded them (state.RecordedDir), relative to the project root.
const RecordedDir = gates.StateDir + "/recorded"

// MaxRecordedCopy is the largest plan file orch-hook keeps a copy of
// (state.MaxRecordedSize): a larger one gets no copy, so a change to it is
// refused without a diff.
const MaxRecordedCopy = 256 << 10

// Bounds of the refusal's diffs.
const (
	diffLinesPerFile = 20 // changed lines shown per file
	diffLinesTotal   = 60 // changed lines shown in one refusal
	maxDriftFiles    = 8  // files shown with their diff or note
)

// The kinds of a changed plan file.
const (
	driftRestorable = iota // recorded, and the copy hashes to the recorded hash
	driftNoCopy            // recorded, but no copy was kept
	driftBadCopy           // recorded, but the copy does not hash to it
	driftUnrecorded        // never recorded: a new file
)

// driftFile is one file of the plan that differs from what orch-hook
// recorded.
type driftFile struct {
	name string
	kind int
	copy []byte // the verified copy (driftRestorable)
}

// classifyDrift sorts the changed files by what can be done about them.
// The copies are read only here, while the plan differs from the record.
func (w *Workflow) classifyDrift(changed []string, recorded func(string) ([]byte, bool)) []driftFile {
	out := make([]driftFile, 0, len(changed))
	for _, name := range changed {
		want, ok := w.PlanHashes[name]
		if !ok {
			out = append(out, driftFile{name: name, kind: driftUnrecorded})
			continue
		}
		var b []byte
		found := false
		if recorded != nil {
			b, found = recorded(name)
		}
		switch {
		case !found:
			out = append(out, driftFile{name: name, kind: driftNoCopy})
		case hashContent(b) != want:
			out = append(out, driftFile{name: name, kind: driftBadCopy})
		default:
			out = append(out, driftFile{name: name, kind: driftRestorable, copy: b})
		}
	}
	return out
}

// planDrift lists the plan files that differ from what orch-hook last
// recorded (changed, added or removed). A non-nil Outcome refuses because
// the plan cannot be read.
func (w *Workflow) planDrift(env *Env) ([]string, *gates.Outcome) {
	if w.PlanHashes == nil || w.Current == S2 {
		return nil, nil
	}
	files := env.files()
	if env.loadErr != nil {
		o := w.deny(0, fmt.Sprintf("cannot read %s (%v), so the plan cannot be checked; fix the directory's permissions.", TasksDir, env.loadErr))
		return nil, &o
	}
	if files == nil {
		return nil, nil
	}
	return ChangedFiles(w.PlanHashes, HashPlanFiles(files)), nil
}

// recordedView is the plan files as orch-hook recorded them, for a step
// that must read the plan while it differs from the record (an agent's
// completion): each changed file replaced by orch-hook's copy of it, a file
// orch-hook never recorded left out. ok is false when a changed file has
// no copy that hashes to its recorded hash: then the record cannot be
// read, and the files as they stand must not be read instead.
func (w *Workflow) recordedView(env *Env, changed []string) (PlanFiles, bool) {
	view := make(PlanFiles, len(env.files()))
	for name, b := range env.files() {
		view[name] = b
	}
	for _, d := range w.classifyDrift(changed, env.Recorded) {
		switch d.kind {
		case driftRestorable:
			view[d.name] = d.copy
		case driftUnrecorded:
			delete(view, d.name)
		default:
			return nil, false
		}
	}
	return view, true
}

// restores reports whether a write that leaves name holding next puts the
// file back to the content orch-hook recorded, from content that differs
// (or from a deleted file).
func (w *Workflow) restores(env *Env, name, next string) bool {
	want, ok := w.PlanHashes[name]
	if !ok || hashContent([]byte(next)) != want {
		return false
	}
	current, exists := env.files()[name]
	return !exists || hashContent(current) != want
}

// driftRefusal is the refusal while the plan differs from what orch-hook
// recorded: what changed, a short diff per file, and how to repair it.
// target is the plan file a refused write names ("" for another call).
// The log keeps the first paragraph; the model sees the diffs too.
func (w *Workflow) driftRefusal(env *Env, changed []string, c *gates.Call, target string) gates.Outcome {
	head, blocks := w.driftReport(env, changed, c, target)
	r := &gates.Refusal{Rule: head, Where: w.Where(), Next: "once the plan is back as orch-hook recorded it (or accepted), " + w.Next(nil), Detail: blocks}
	return w.refuse(gates.Deny, r, gates.Record{})
}

// driftNotice is the drift refusal for a step that cannot be taken while
// the plan differs from what orch-hook recorded (an agent's completion):
// what changed and how to repair it, then (what waits), then the diffs.
func (w *Workflow) driftNotice(env *Env, changed []string, then string) string {
	head, blocks := w.driftReport(env, changed, nil, "")
	out := head + " " + then
	if blocks != "" {
		out += "\n\n" + blocks
	}
	return out
}

// driftReport is driftRefusal's text: the first paragraph (what changed,
// how to repair it) and the diffs ("" when none can be shown).
func (w *Workflow) driftReport(env *Env, changed []string, c *gates.Call, target string) (string, string) {
	drift := w.classifyDrift(changed, env.Recorded)
	var recorded, unrecorded []string
	diffs := false
	for _, d := range drift {
		switch d.kind {
		case driftUnrecorded:
			unrecorded = append(unrecorded, d.name)
			continue
		case driftRestorable:
			diffs = true
		}
		recorded = append(recorded, d.name)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "the plan changed outside orch-hook (not through an allowed Write/Edit): %s under %s.", nameList(changed), TasksDir)
	if target != "" && c != nil && contains(recorded, target) {
		fmt.Fprintf(&head, " This %s does not give %s its recorded content.", gates.OrText(c.Tool, "write"), target)
	}
	switch {
	case diffs:
		head.WriteString(" Progress is blocked until every file is back to the content orch-hook recorded. To repair: Write the file back with exactly its recorded content (shown in the diff), or ask the user to type /orch-hook:resolve accept-plan.")
	case len(recorded) > 0:
		head.WriteString(" Progress is blocked until every file is back to the content orch-hook recorded. To repair: Write the file back with exactly its recorded content (no diff can be shown, see below), or ask the user to type /orch-hook:resolve accept-plan.")
	default:
		fmt.Fprintf(&head, " Progress is blocked until %s removed.", gates.Pick(len(unrecorded), "it is", "they are"))
	}
	if len(unrecorded) > 0 {
		var rm []string
		for i, n := range unrecorded {
			if i == maxTaskList-2 && len(unrecorded) > maxTaskList {
				rm = append(rm, fmt.Sprintf("... (%d more)", len(unrecorded)-i))
				break
			}
			rm = append(rm, shellWord(TasksDir+"/"+n))
		}
		fmt.Fprintf(&head, " %s %s never recorded by orch-hook (new): no write can remove %s; only the user can, with `rm %s` in their terminal, or the user accepts the plan with /orch-hook:resolve accept-plan.",
			nameList(unrecorded), gates.Pick(len(unrecorded), "was", "were"), gates.Pick(len(unrecorded), "it", "them"), strings.Join(rm, " "))
	}
	var blocks []string
	budget, shown := diffLinesTotal, 0
	for _, d := range drift {
		if d.kind == driftUnrecorded {
			continue
		}
		if shown == maxDriftFiles {
			blocks = append(blocks, fmt.Sprintf("... and %d more changed %s not shown (what orch-hook recorded is in %s/, by name).", len(recorded)-shown, gates.Pick(len(recorded)-shown, "file", "files"), RecordedDir))
			break
		}
		shown++
		blocks = append(blocks, w.driftBlock(env, d, &budget))
	}
	return head.String(), strings.Join(blocks, "\n\n")
}

// driftBlock is one recorded file's part of the refusal: its diff, or why
// none can be shown and what to do instead.
func (w *Workflow) driftBlock(env *Env, d driftFile, budget *int) string {
	path := TasksDir + "/" + d.name
	orElse := fmt.Sprintf("Write it back with its recorded content if you know it (for example from `git show HEAD:%s`, if it was committed as recorded), or ask the user to type /orch-hook:resolve accept-plan.", path)
	switch d.kind {
	case driftNoCopy:
		return fmt.Sprintf("%s: orch-hook kept no copy of its recorded content (none is kept of a file over %d KiB), so no diff can be shown. %s", d.name, MaxRecordedCopy>>10, orElse)
	case driftBadCopy:
		return fmt.Sprintf("%s: orch-hook's copy of its recorded content (%s/%s) does not match the recorded hash: it was changed outside orch-hook, so it cannot be offered (tell the user). %s", d.name, RecordedDir, d.name, orElse)
	}
	now, exists := env.files()[d.name]
	to := d.name + " (now)"
	lead := ""
	if !exists {
		to = d.name + " (now: deleted)"
		lead = d.name + " was deleted; Write it back with its recorded content (the lines removed below):\n"
	}
	whole := fmt.Sprintf("Read the whole recorded content in %s/%s and Write it back", RecordedDir, d.name)
	if *budget <= 0 {
		return fmt.Sprintf("%s: changed (diff not shown: this refusal shows at most %d changed lines); %s.", d.name, diffLinesTotal, whole)
	}
	diff, n, complete := gates.UnifiedDiff(d.name+" (recorded)", to, string(d.copy), string(now), min(diffLinesPerFile, *budget))
	*budget -= n
	if !complete {
		diff += fmt.Sprintf("\n(Not the whole change: %s.)", whole)
	}
	return lead + diff
}

// nameList joins file names for a message, at most maxTaskList of them.
func nameList(names []string) string {
	if len(names) > maxTaskList {
		return strings.Join(names[:maxTaskList-2], ", ") + fmt.Sprintf(" and %d more", len(names)-maxTaskList+2)
	}
	return strings.Join(names, ", ")
}

// shellWord quotes a path for a command the user types, when it needs it.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+,:@%", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// restoredContext is the PostToolUse line of a confirmed restore.
func (w *Workflow) restoredContext(env *Env, name string) string {
	still := ChangedFiles(w.PlanHashes, HashPlanFiles(env.files()))
	if len(still) == 0 {
		return fmt.Sprintf("orch-hook: %s is back to the content orch-hook recorded; the plan is as orch-hook recorded it again. Next: %s.", name, w.Next(env))
	}
	return fmt.Sprintf("orch-hook: %s is back to the content orch-hook recorded; still changed outside orch-hook: %s (repair them the same way, or ask the user to type /orch-hook:resolve accept-plan).", name, nameList(still))
}

// RecordedCopies says which copies of the plan files to keep after a
// decision moved the recorded hashes from before to after: each file whose
// recorded hash changed, with the content it was recorded from (files, as
// the decision read or produced them), and the names whose copy goes (no
// longer recorded, or recorded from content not at hand). Nothing when no
// hash changed: the hot path pays for nothing.
func RecordedCopies(before, after map[string]string, files PlanFiles) (keep PlanFiles, drop []string) {
	for name, h := range after {
		if before[name] == h {
			continue
		}
		if b, ok := files[name]; ok && hashContent(b) == h {
			if keep == nil {
				keep = PlanFiles{}
			}
			keep[name] = b
			continue
		}
		drop = append(drop, name)
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			drop = append(drop, name)
		}
	}
	sort.Strings(drop)
	return keep, drop
}

// PlanRestore is what `orch-hook repair --plan` may do with a plan changed
// outside orch-hook: the files it writes back (name -> the recorded
// content, from a copy that hashes to the recorded hash), and those it
// cannot restore, by why.
type PlanRestore struct {
	Write      map[string][]byte
	NoCopy     []string // recorded, no copy kept
	BadCopy    []string // recorded, the copy does not match its hash
	Unrecorded []string // never recorded: only the user removes them
}

// RestorePlan compares the plan files with what orch-hook recorded and
// says which can be written back from verified copies. Nothing while the
// plan is not bound: before it validated, while the task-planner writes it
// (step 2), and once the workflow is finished.
func (w *Workflow) RestorePlan(files PlanFiles, recorded func(string) ([]byte, bool)) PlanRestore {
	var r PlanRestore
	if w.PlanHashes == nil || w.Current == S2 || Finished(w.Current) {
		return r
	}
	for _, d := range w.classifyDrift(ChangedFiles(w.PlanHashes, HashPlanFiles(files)), recorded) {
		switch d.kind {
		case driftRestorable:
			if r.Write == nil {
				r.Write = map[string][]byte{}
			}
			r.Write[d.name] = d.copy
		case driftNoCopy:
			r.NoCopy = append(r.NoCopy, d.name)
		case driftBadCopy:
			r.BadCopy = append(r.BadCopy, d.name)
		case driftUnrecorded:
			r.Unrecorded = append(r.Unrecorded, d.name)
		}
	}
	return r
}
