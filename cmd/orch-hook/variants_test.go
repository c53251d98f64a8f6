package main

// The model-variant matrix (issue 13, "Real models, real formats").
//
// Models do not write what the prompts say, character for character: they
// decorate result lines, name their task in a dozen ways, launch agents in
// the background or not, and tick the plan in one Write or in five Edits.
// Each variant here starts from a correct workflow (a base script, run to
// `complete` through the real hooks), changes one such thing, and declares
// what orch-hook must read of it (checked against `orch-hook status
// --json`) and which refusals it expects, each with the scripted answer a
// model would give (a fix). The driver classifies every variant:
//
//   - accepted: complete, every expectation met, nothing refused;
//   - refused-with-a-fix: every refusal was expected and its fix led on to
//     complete with every expectation met (a refusal is a deny, a block,
//     or a checkpoint line telling of a failure, see fix.told);
//   - misread: an expectation does not hold (expected vs read is printed),
//     or a refusal the variant expects never came (orch-hook accepted
//     what it should refuse);
//   - wedged: a refusal nobody scripted an answer for (the reason is
//     printed), a hook that failed, or a run that ends short of complete.
//
// The test fails on any misread or wedged variant, except for those marked
// pendingFix (a known orch-hook bug, reported with t.Log until it is fixed;
// once it passes, the mark must go).
//
// Layout: this file (variants, fixes, registry, classification, the
// test); variants_script_test.go (a workflow as actions, each with what
// must hold after it, and the builders and edits variants use);
// variants_base_test.go (the base scripts); variants_driver_test.go
// (actions to hook calls, run in-process); variants_check_test.go
// (expectations against status --json); and one
// variants_<category>_test.go per category, registering its variants with
// registerVariants in an init function. To add a category, add such a
// file: nothing else changes.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// variant is one change to a correct workflow.
type variant struct {
	name string
	// base is the workflow the variant starts from; nil is the standard
	// orchestrate workflow (orchestrateBase).
	base func() *script
	// change makes the one change: a prompt, a report, a launch mode, a
	// plan edit, a command inserted somewhere. It may also move what the
	// base expects where the change moves the workflow (a trajectory).
	change func(s *script)
	// expect adds checks of status --json (and of what the orchestrator was
	// told) after the named actions, or at the end.
	expect []point
	// fixes are the refusals the variant expects, each with what the model
	// does about it. A variant with fixes must be refused: a fix never
	// used is a misread (the bad input was accepted).
	fixes []fix
	// pendingFix marks a variant that shows a known orch-hook bug: it is
	// reported, not failed. The text says what is wrong.
	pendingFix string
}

// point is a check at a moment of the run: after the action named (its
// fixes included), or at the end when after is "".
type point struct {
	after string
	want  want
}

// fix is a refusal a variant expects and the model's scripted answer.
type fix struct {
	// match is a substring of the deny or block reason.
	match string
	// reply answers a blocked SubagentStop (the nudge): the agent's next
	// message, e.g. only the missing result line.
	reply string
	// redo is what the model does instead of a refused tool call (nil:
	// nothing, the script's next step is what the reason asks for). It
	// gets the script, as changed, to copy actions from.
	redo func(s *script) []*action
	// times is how often the refusal may come (0 means once); one more is
	// a wedge, so a fix cannot loop.
	times int
	// told: the refusal is not a deny or block but a checkpoint line that
	// reports a failure in what the orchestrator is told (a hook's
	// additionalContext), such as "[STEP 2] task-planner returned, but
	// the plan does not validate: ...": the call itself goes through, the
	// workflow stays where it was, and match is looked for in the
	// context. It counts as a refusal; redo is the model's answer.
	told bool
}

// Classes of a variant's outcome.
const (
	classAccepted = "accepted"
	classRefused  = "refused-with-a-fix"
	classMisread  = "misread"
	classWedged   = "wedged"
)

// outcome is how a variant ended.
type outcome struct {
	category, name string
	class          string
	detail         string // for misread and wedged: what and where
	refusals       []string
	pendingFix     string
	elapsed        time.Duration
}

// registry holds the categories' variants, filled by init functions.
var registry struct {
	sync.Mutex
	byCategory map[string][]variant
}

// registerVariants adds a category's variants; categories are run in name
// order. Call it from an init function of the category's own file.
func registerVariants(category string, vs ...variant) {
	registry.Lock()
	defer registry.Unlock()
	if registry.byCategory == nil {
		registry.byCategory = map[string][]variant{}
	}
	registry.byCategory[category] = append(registry.byCategory[category], vs...)
}

// TestModelVariants runs every registered variant to complete through the
// real hooks (in-process, see hookInProcess) and fails on any misread or
// wedged one. It logs the counts per category and class.
func TestModelVariants(t *testing.T) {
	checkBases(t)
	root := variantsRoot(t)
	// The seal's keys and markers (state.ConfigDir) next to the projects,
	// on the same tmpfs: every state change rewrites and syncs a marker.
	// The in-process hooks read it from the environment, as the binary
	// does; no other test runs meanwhile (t.Setenv refuses parallel tests).
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Run("in-process equals subprocess", testInProcessMatchesBinary)

	registry.Lock()
	categories := make([]string, 0, len(registry.byCategory))
	for c := range registry.byCategory {
		categories = append(categories, c)
	}
	registry.Unlock()
	sort.Strings(categories)

	var mu sync.Mutex
	var outcomes []outcome
	start := time.Now()
	type job struct {
		category string
		v        variant
	}
	var jobs []job
	for _, cat := range categories {
		seen := map[string]bool{}
		for _, v := range registry.byCategory[cat] {
			if seen[v.name] || strings.Contains(v.name, "/") {
				t.Fatalf("%s: variant %q: names are unique in a category, without '/' (a subtest level)", cat, v.name)
			}
			seen[v.name] = true
			jobs = append(jobs, job{cat, v})
		}
	}
	t.Run("variants", func(t *testing.T) {
		// Workers rather than t.Parallel: a run waits on fsync more than
		// it computes (every state change syncs the checkpoint, the log
		// and the seal's marker), so more runs than cores keep the cores
		// busy, whatever -parallel says.
		next := make(chan job)
		var wg sync.WaitGroup
		for range variantWorkers() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					t.Run(j.category+"/"+j.v.name, func(t *testing.T) {
						o := runVariant(t, root, j.category, j.v)
						mu.Lock()
						outcomes = append(outcomes, o)
						mu.Unlock()
						report(t, j.v, o)
					})
				}
			}()
		}
		for _, j := range jobs {
			next <- j
		}
		close(next)
		wg.Wait()
	})
	summarize(t, outcomes, time.Since(start))
}

// report fails (or, for a pendingFix variant, logs) what went wrong.
func report(t *testing.T, v variant, o outcome) {
	for _, r := range o.refusals {
		t.Logf("refused: %s", r)
	}
	bad := o.class == classMisread || o.class == classWedged
	switch {
	case v.pendingFix != "" && bad:
		t.Logf("pendingFix (%s): %s: %s", v.pendingFix, o.class, o.detail)
	case v.pendingFix != "":
		t.Errorf("marked pendingFix (%s) but now %s: remove the mark", v.pendingFix, o.class)
	case bad:
		t.Errorf("%s: %s", o.class, o.detail)
	}
}

// summarize logs the counts per category and class, and the runtime.
func summarize(t *testing.T, outcomes []outcome, elapsed time.Duration) {
	classes := []string{classAccepted, classRefused, classMisread, classWedged}
	counts := map[string]map[string]int{}
	pending := map[string]int{}
	var cats []string
	for _, o := range outcomes {
		if counts[o.category] == nil {
			counts[o.category] = map[string]int{}
			cats = append(cats, o.category)
		}
		counts[o.category][o.class]++
		if o.pendingFix != "" {
			pending[o.category]++
		}
	}
	sort.Strings(cats)
	var b strings.Builder
	fmt.Fprintf(&b, "%d variants in %s\n", len(outcomes), elapsed.Round(10*time.Millisecond))
	fmt.Fprintf(&b, "%-22s %9s %19s %8s %7s %12s %6s\n", "category", classes[0], classes[1], classes[2], classes[3], "(pendingFix)", "total")
	total := map[string]int{}
	for _, c := range cats {
		n := 0
		fmt.Fprintf(&b, "%-22s", c)
		for i, cl := range classes {
			fmt.Fprintf(&b, " %*d", []int{9, 19, 8, 7}[i], counts[c][cl])
			n += counts[c][cl]
			total[cl] += counts[c][cl]
		}
		fmt.Fprintf(&b, " %12d %6d\n", pending[c], n)
	}
	fmt.Fprintf(&b, "%-22s", "all")
	n, np := 0, 0
	for i, cl := range classes {
		fmt.Fprintf(&b, " %*d", []int{9, 19, 8, 7}[i], total[cl])
		n += total[cl]
	}
	for _, p := range pending {
		np += p
	}
	fmt.Fprintf(&b, " %12d %6d", np, n)
	t.Log("model variants:\n" + b.String())
}

// variantWorkers is how many variants run at once: ORCH_HOOK_VARIANT_WORKERS,
// else twice the cores.
func variantWorkers() int {
	if n, err := strconv.Atoi(os.Getenv("ORCH_HOOK_VARIANT_WORKERS")); err == nil && n > 0 {
		return n
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// variantsRoot is where the variants' projects live: a tmpfs when there is
// one (each hook call that changes the state fsyncs several files, and on
// a disk that dominates the run), else the test's temporary directory.
func variantsRoot(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "orch-hook-variants-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
