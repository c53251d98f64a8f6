package render

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/app"
	"github.com/orch-hook/orch-hook/state"
)

// go test ./internal/render -update rewrites the golden files.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (go test ./internal/render -update rewrites it):\n%s", path, firstDiff(string(want), got))
	}
}

// firstDiff shows the first line that differs.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(same lines)"
}

// The fixtures are real project states: testdata/complete,
// testdata/running and testdata/coordinate were produced by driving the
// real hooks in cmd/orch-hook/testdata/script/report_golden.txtar,
// report_running.txtar and coord_report.txtar (see testdata/README.md).
var fixtureNow = map[string]time.Time{
	"complete":   time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC),
	"running":    time.Date(2026, 11, 22, 10, 44, 0, 0, time.UTC),
	"coordinate": time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
}

// loadFixture reads a fixture project the way `orch-hook report` reads a
// project.
func loadFixture(t *testing.T, name string) ReportInput {
	t.Helper()
	root := filepath.Join("testdata", name)
	store := state.Open(root)
	cp, err := state.ReadCheckpointFile(store.CheckpointPath()) // a fixture: not sealed
	if err != nil {
		t.Fatal(err)
	}
	events, rep, err := store.Events()
	if err != nil || len(rep.BadLines) > 0 {
		t.Fatalf("events: %v %v", err, rep.BadLines)
	}
	in := ReportInput{
		Command: cp.StateMachine.WorkflowConfig.Command, Request: cp.StateMachine.WorkflowConfig.Description,
		State: cp.StateMachine.CurrentState, Created: cp.Metadata.CreatedAt,
		Events: events, Now: fixtureNow[name], Exists: map[string]bool{},
	}
	if in.Command == "coordinate" {
		c, err := app.LoadCoord(cp)
		if err != nil {
			t.Fatal(err)
		}
		in.Coordinate = c
		for _, p := range CoordinateArtifactPaths(c) {
			_, err := os.Stat(filepath.Join(root, p))
			in.Exists[p] = err == nil
		}
		return in // .orchestrator/ holds only the state
	}
	w, err := app.LoadWorkflow(cp)
	if err != nil {
		t.Fatal(err)
	}
	in.Workflow = w
	if w.Plan != nil {
		for _, ph := range w.Plan.Phases {
			for _, task := range ph.Tasks {
				for _, f := range task.Files {
					_, err := os.Stat(filepath.Join(root, f))
					in.Exists[f] = err == nil
				}
			}
		}
	}
	base := filepath.Join(root, ".orchestrator")
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "state" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		in.Artifacts = append(in.Artifacts, Artifact{Path: filepath.ToSlash(rel), Size: fi.Size()})
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sort.Slice(in.Artifacts, func(i, j int) bool { return in.Artifacts[i].Path < in.Artifacts[j].Path })
	return in
}
