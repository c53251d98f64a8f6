package state

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tstMetricsLine(lineage string) []byte {
	return []byte(`{"schema":"test","lineage":"` + lineage + `","duration_ms":1}`)
}

func tstAppend(t *testing.T, s *Store, lineage string) bool {
	t.Helper()
	wrote, err := s.AppendMetrics(lineage, tstMetricsLine(lineage))
	if err != nil {
		t.Fatalf("AppendMetrics(%s): %v", lineage, err)
	}
	return wrote
}

func tstReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// One line per lineage, whole, in order; a lineage already there is not
// written again; the directory and the file have a project file's modes.
func TestAppendMetricsOncePerLineage(t *testing.T) {
	s := tstOpen(t)
	if _, err := ReadMetrics(s.Root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadMetrics with no file: %v, want fs.ErrNotExist", err)
	}
	if !tstAppend(t, s, "aaa") || !tstAppend(t, s, "bbb") {
		t.Fatal("a new lineage was not written")
	}
	if tstAppend(t, s, "aaa") {
		t.Error("lineage aaa written twice")
	}
	// Another lineage that contains this one is not the same.
	if !tstAppend(t, s, "aa") {
		t.Error("lineage aa taken for aaa")
	}
	path := MetricsPath(s.Root)
	want := string(tstMetricsLine("aaa")) + "\n" + string(tstMetricsLine("bbb")) + "\n" + string(tstMetricsLine("aa")) + "\n"
	if got := tstReadFile(t, path); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	for p, mode := range map[string]os.FileMode{filepath.Dir(path): 0o755, path: 0o644} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), mode)
		}
	}
	log, err := ReadMetrics(s.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Lines) != 3 || log.Torn || string(log.Lines[1]) != string(tstMetricsLine("bbb")) || log.Numbers[2] != 3 {
		t.Errorf("ReadMetrics: %d lines %q, numbers %v, torn %v", len(log.Lines), log.Lines, log.Numbers, log.Torn)
	}
	for _, bad := range []string{"{\"lineage\":\"x\"}\n{}", "{not json", ""} {
		if _, err := s.AppendMetrics("x", []byte(bad)); err == nil {
			t.Errorf("AppendMetrics(%q) accepted", bad)
		}
	}
	if _, err := s.AppendMetrics("", tstMetricsLine("")); err == nil {
		t.Error("a line without a lineage accepted")
	}
}

// A torn last line (an append a crash interrupted: no newline) is ignored
// by readers and cut by the next append, which then writes a whole line;
// a torn line of the very lineage being appended does not count as its
// line.
func TestAppendMetricsCutsATornLine(t *testing.T) {
	s := tstOpen(t)
	tstAppend(t, s, "aaa")
	path := MetricsPath(s.Root)
	torn := `{"schema":"test","lineage":"bbb","dura`
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()
	log, err := ReadMetrics(s.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Lines) != 1 || !log.Torn {
		t.Fatalf("ReadMetrics over a torn line: %q, torn %v", log.Lines, log.Torn)
	}
	if !tstAppend(t, s, "bbb") {
		t.Fatal("the torn line's lineage was taken as written")
	}
	want := string(tstMetricsLine("aaa")) + "\n" + string(tstMetricsLine("bbb")) + "\n"
	if got := tstReadFile(t, path); got != want {
		t.Errorf("after the append:\n%s\nwant:\n%s", got, want)
	}
	if log, err := ReadMetrics(s.Root); err != nil || log.Torn || len(log.Lines) != 2 {
		t.Errorf("after the append: %v, %+v", err, log)
	}
	// A torn line of another lineage, then a blank and an unreadable line
	// (readers skip those; the append keeps them: it never rewrites).
	f, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("\nnot json\n{\"lineage\":\"zz")
	f.Close()
	if !tstAppend(t, s, "ccc") {
		t.Fatal("ccc not written")
	}
	want += "\nnot json\n" + string(tstMetricsLine("ccc")) + "\n"
	if got := tstReadFile(t, path); got != want {
		t.Errorf("after the second append:\n%s\nwant:\n%s", got, want)
	}
	log, err = ReadMetrics(s.Root)
	if err != nil || len(log.Lines) != 4 || log.Torn || log.Numbers[2] != 4 || log.Numbers[3] != 5 {
		t.Errorf("ReadMetrics: %v, %q %v", err, log.Lines, log.Numbers)
	}
}

// The records directory, .orchestrator and the file must not be symlinks:
// the metrics stay inside the project, and nothing is written through one.
func TestAppendMetricsRefusesSymlinks(t *testing.T) {
	for _, link := range []string{".orchestrator", ".orchestrator/records", MetricsFile} {
		t.Run(strings.ReplaceAll(link, "/", "_"), func(t *testing.T) {
			s := tstOpen(t)
			outside := t.TempDir()
			target := filepath.Join(outside, "target")
			if link == MetricsFile {
				if err := os.WriteFile(target, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(s.Root, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendMetrics("aaa", tstMetricsLine("aaa")); err == nil {
				t.Fatal("appended through a symlink")
			}
			if _, err := ReadMetrics(s.Root); err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("ReadMetrics through a symlink: %v", err)
			}
			var written []string
			filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if fi, _ := d.Info(); fi != nil && fi.Size() > 0 {
						written = append(written, p)
					}
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("written outside the project: %v", written)
			}
		})
	}
}
