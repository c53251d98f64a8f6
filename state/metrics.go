package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MetricsFile is the benchmark log (seed 001: benchmarks accumulate across
// workflows in an append-only JSONL file), relative to the project root:
// one JSON line per finished workflow, appended by the writer that
// finished it and never rewritten. It is kept in .orchestrator/records/,
// not in the git-ignored state directory: a team may commit it, so it
// has a project file's modes (directory 0755, file 0644), not the
// state's 0700 and 0600.
const MetricsFile = ".orchestrator/records/metrics.jsonl"

const (
	metricsDirMode  = 0o755
	metricsFileMode = 0o644
)

// MetricsPath is the metrics file of the project at root.
func MetricsPath(root string) string { return filepath.Join(root, filepath.FromSlash(MetricsFile)) }

// AppendMetrics appends line, one JSON object without its newline, to the
// project's metrics file, unless a line of the same lineage is already
// there (a workflow has one line, however often it finishes: a follow-up
// reopens a completed one); it reports whether it wrote. Call it under the
// state lock (Committed), which keeps two writers from both finding no
// line and both appending.
//
// The line and its newline go in one write on an O_APPEND descriptor,
// then fsync: a crash leaves the line whole or absent, or torn (no newline
// yet). Readers ignore a torn last line, and the next append cuts it
// before writing, so the file stays one JSON object a line. Neither the
// records directory nor the file may be a symlink.
func (s *Store) AppendMetrics(lineage string, line []byte) (bool, error) {
	if lineage == "" {
		return false, errors.New("state: a metrics line without a lineage")
	}
	if bytes.IndexByte(line, '\n') >= 0 || !json.Valid(line) {
		return false, errors.New("state: a metrics line must be one JSON value on one line")
	}
	dir, err := metricsDir(s.Root, true)
	if err != nil {
		return false, err
	}
	path := filepath.Join(dir, filepath.Base(MetricsFile))
	created := false
	switch fi, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		return false, fmt.Errorf("%s is not a regular file (a symlink?); orch-hook appends its metrics to a plain file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|noFollow|nonBlock, metricsFileMode)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return false, err
	} else if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file", path)
	}
	if created {
		// Exactly 0644 whatever the umask, as the other project files
		// orch-hook writes (WritePlanFile).
		if err := f.Chmod(metricsFileMode); err != nil {
			return false, err
		}
	}
	end, size, found, err := scanMetrics(f, lineage)
	if err != nil {
		return false, err
	}
	if found {
		return false, nil
	}
	if end < size {
		// A torn last line, from an append that did not finish: cut it.
		if err := f.Truncate(end); err != nil {
			return false, err
		}
	}
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if created {
		if err := syncDir(dir); err != nil {
			return false, err
		}
	}
	return true, nil
}

// scanMetrics reads the metrics file from its start: where its last
// complete line ends, its size, and whether a complete line is of lineage.
func scanMetrics(f *os.File, lineage string) (end, size int64, found bool, err error) {
	r := bufio.NewReader(f)
	needle := []byte(lineage)
	for {
		line, rerr := r.ReadBytes('\n')
		size += int64(len(line))
		if n := len(line); n > 0 && line[n-1] == '\n' {
			end = size
			if !found && bytes.Contains(line, needle) {
				var probe struct {
					Lineage string `json:"lineage"`
				}
				found = json.Unmarshal(line, &probe) == nil && probe.Lineage == lineage
			}
		}
		if rerr == io.EOF {
			return end, size, found, nil
		}
		if rerr != nil {
			return 0, 0, false, rerr
		}
	}
}

// metricsDir is <root>/.orchestrator/records, refused when it or
// .orchestrator is a symlink (the records stay in the project) or not a
// directory; with create, made (0755) when missing, else fs.ErrNotExist.
func metricsDir(root string, create bool) (string, error) {
	dir := root
	for _, name := range []string{".orchestrator", "records"} {
		parent := dir
		dir = filepath.Join(dir, name)
		fi, err := os.Lstat(dir)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return "", fmt.Errorf("%s is a symlink; orch-hook keeps its records in a real directory of the project (remove the link)", dir)
		case err == nil && !fi.IsDir():
			return "", fmt.Errorf("%s exists and is not a directory", dir)
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist) || !create:
			return "", err
		}
		if err := os.Mkdir(dir, metricsDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := os.Chmod(dir, metricsDirMode); err != nil {
			return "", err
		}
		if err := syncDir(parent); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// MetricsLog is what ReadMetrics found in the metrics file.
type MetricsLog struct {
	// Lines are its complete lines without their newline, in order;
	// blank lines are left out.
	Lines [][]byte
	// Numbers are the Lines' line numbers in the file (1-based).
	Numbers []int
	// Torn: the file ends in an unfinished line (an append in progress,
	// or one a crash interrupted), which was ignored.
	Torn bool
}

// ReadMetrics reads the metrics file of the project at root without the
// lock: appends are whole lines, and a torn last line is ignored. A file
// that does not exist is fs.ErrNotExist; a symlink in its path is refused.
func ReadMetrics(root string) (*MetricsLog, error) {
	dir, err := metricsDir(root, false)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, filepath.Base(MetricsFile)), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", f.Name())
	}
	out := &MetricsLog{}
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		switch {
		case len(line) > 0 && line[len(line)-1] != '\n':
			out.Torn = true
		case len(bytes.TrimSpace(line)) > 0:
			out.Lines = append(out.Lines, bytes.TrimSuffix(line, []byte("\n")))
			out.Numbers = append(out.Numbers, n)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
