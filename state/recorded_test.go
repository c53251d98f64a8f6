package state

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The copies of the plan as orch-hook recorded it: 0600 files in a 0700
// directory of the state, replaced atomically, bounded, never followed
// through a link, archived with their workflow.
func TestRecordedCopies(t *testing.T) {
	s := tstCreate(t, "initialize")
	keep := map[string][]byte{"MASTER_PLAN.md": []byte("# Plan\n"), "task-01-a.md": []byte("# Task 01\n")}
	if err := s.SaveRecorded(keep, nil); err != nil {
		t.Fatal(err)
	}
	if m := tstMode(t, s.recordedDir()); m != 0o700 {
		t.Errorf("directory mode %v", m)
	}
	for name, want := range keep {
		if m := tstMode(t, filepath.Join(s.recordedDir(), name)); m != 0o600 {
			t.Errorf("%s mode %v", name, m)
		}
		if got, ok := s.ReadRecorded(name); !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: %q %v", name, got, ok)
		}
	}
	if got := filepath.Join(s.Root, RecordedDir); got != s.recordedDir() {
		t.Errorf("RecordedDir %s, store's %s", got, s.recordedDir())
	}

	// Replaced, dropped; no temp file left behind.
	if err := s.SaveRecorded(map[string][]byte{"MASTER_PLAN.md": []byte("# Plan v2\n")}, []string{"task-01-a.md", "never-kept.md"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ReadRecorded("MASTER_PLAN.md"); string(got) != "# Plan v2\n" {
		t.Errorf("replaced copy %q", got)
	}
	if _, ok := s.ReadRecorded("task-01-a.md"); ok {
		t.Error("dropped copy still read")
	}
	for _, dir := range []string{s.Dir, s.recordedDir()} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), tempPrefix) {
				t.Errorf("temp file left: %s", e.Name())
			}
		}
	}

	// Bounded: a file over the cap, or the stand-in for one too large to
	// read, gets no copy and loses the old one.
	big := bytes.Repeat([]byte("x"), MaxRecordedSize+1)
	if err := s.SaveRecorded(map[string][]byte{"MASTER_PLAN.md": big, "task-02-b.md": tooLargeText(5 << 20)}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"MASTER_PLAN.md", "task-02-b.md"} {
		if _, ok := s.ReadRecorded(name); ok {
			t.Errorf("%s: a copy over the cap is kept", name)
		}
	}
	exact := bytes.Repeat([]byte("y"), MaxRecordedSize)
	if err := s.SaveRecorded(map[string][]byte{"MASTER_PLAN.md": exact}, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.ReadRecorded("MASTER_PLAN.md"); !ok || len(got) != MaxRecordedSize {
		t.Errorf("a copy at the cap: %d bytes, %v", len(got), ok)
	}
	// A file grown past the cap behind orch-hook's back is not read.
	if err := os.WriteFile(filepath.Join(s.recordedDir(), "MASTER_PLAN.md"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ReadRecorded("MASTER_PLAN.md"); ok {
		t.Error("an oversized copy was read")
	}

	// Names that are not plain file names are neither written nor read.
	for _, name := range []string{"", ".", "..", "../checkpoint.json", "a/b", "a\x00b"} {
		if err := s.SaveRecorded(map[string][]byte{name: []byte("x")}, []string{name}); err != nil {
			t.Errorf("%q: %v", name, err)
		}
		if _, ok := s.ReadRecorded(name); ok {
			t.Errorf("%q read", name)
		}
	}
	if _, err := s.Load(); err != nil {
		t.Fatalf("the state after the odd names: %v", err)
	}

	// A link in a copy's place is not followed.
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret"), 0o600)
	link := filepath.Join(s.recordedDir(), "task-03-c.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.ReadRecorded("task-03-c.md"); ok {
		t.Errorf("read through a link: %q", got)
	}
	if err := s.SaveRecorded(map[string][]byte{"task-03-c.md": []byte("# Task 03\n")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := tstRead(t, secret); string(got) != "secret" {
		t.Errorf("written through a link: %q", got)
	}
	if got, ok := s.ReadRecorded("task-03-c.md"); !ok || string(got) != "# Task 03\n" {
		t.Errorf("the link was not replaced: %q %v", got, ok)
	}
}

// A finished workflow's copies are archived with it.
func TestRecordedCopiesArchived(t *testing.T) {
	s := tstCreate(t, "document")
	if err := s.SaveRecorded(map[string][]byte{"MASTER_PLAN.md": []byte("# Plan\n")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(tstTransition("complete")); err != nil {
		t.Fatal(err)
	}
	old, _ := s.Load()
	if err := s.Create(tstCheckpoint("initialize")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ReadRecorded("MASTER_PLAN.md"); ok {
		t.Error("the old workflow's copy is offered to the new one")
	}
	if got := tstRead(t, filepath.Join(s.ArchiveDir(), old.Lineage, "recorded", "MASTER_PLAN.md")); string(got) != "# Plan\n" {
		t.Errorf("archived copy %q", got)
	}
}

// WritePlanFile replaces a link in the file's place instead of writing
// through it, and stays inside the project.
func TestWritePlanFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".orchestrator", "tasks")
	os.MkdirAll(dir, 0o755)
	outside := filepath.Join(t.TempDir(), "outside.md")
	os.WriteFile(outside, []byte("outside"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "task-01-a.md"))
	if err := WritePlanFile(root, ".orchestrator/tasks", "task-01-a.md", []byte("# Task 01\n")); err != nil {
		t.Fatal(err)
	}
	if got := tstRead(t, outside); string(got) != "outside" {
		t.Errorf("written through the link: %q", got)
	}
	fi, err := os.Lstat(filepath.Join(dir, "task-01-a.md"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Fatalf("not a regular 0644 file: %v %v", fi, err)
	}
	if err := WritePlanFile(root, ".orchestrator/tasks", "../x", nil); err == nil {
		t.Error("a path for a name was written")
	}
	os.Symlink(t.TempDir(), filepath.Join(root, "away"))
	if err := WritePlanFile(root, "away", "x.md", nil); err == nil {
		t.Error("written outside the project")
	}
}
