package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// command is one process to time.
type command struct {
	// key identifies the command: scenarios giving the same key (a shared
	// floor) share one series of runs.
	key string
	// label is the short name shown when the command is a floor.
	label string
	path  string
	args  []string
	env   []string // added to the environment (which loses CLAUDE_PROJECT_DIR and ORCH_HOOK_*)
	stdin []byte   // nil: empty stdin
	// before, when set, runs untimed before every run of the command: use
	// it to put the state back when each run changes it.
	before func() error
	// check, when set, validates the stdout of the command's first run.
	check func(stdout []byte) error
	// every validates the stdout of each later run; when nil, it must be
	// the first run's. (A run that fails closed, say on a state its
	// before did not put back whole, answers otherwise and stops the
	// benchmark instead of being timed.)
	every func(stdout []byte) error
}

// sample is one timed run.
type sample struct {
	wall time.Duration // fork to wait, as seen by the harness
	cpu  time.Duration // the child's user + system time
}

// measure runs every distinct command of the scenarios warmup times, then n
// times timed, round-robin: each round runs each command once, starting one
// further along each round, so that no command always follows the same
// other one and slow spells of the machine fall on all of them.
func measure(h *harness, ps []preparedScenario, n, warmup int) (map[string][]sample, error) {
	var cmds []*runner
	seen := map[string]bool{}
	for _, p := range ps {
		for _, c := range []command{p.cmd, p.floor} {
			if seen[c.key] {
				continue
			}
			seen[c.key] = true
			r, err := newRunner(h, c, len(cmds))
			if err != nil {
				return nil, err
			}
			defer r.close()
			cmds = append(cmds, r)
		}
	}
	for _, r := range cmds {
		for i := 0; i < warmup; i++ {
			if _, err := r.run(); err != nil {
				return nil, err
			}
		}
	}
	samples := make(map[string][]sample, len(cmds))
	for i := 0; i < n; i++ {
		for j := range cmds {
			r := cmds[(i+j)%len(cmds)]
			s, err := r.run()
			if err != nil {
				return nil, err
			}
			samples[r.key] = append(samples[r.key], s)
		}
	}
	return samples, nil
}

// runner runs one command with stdin from a file and stdout and stderr to
// files, so that no harness goroutine copies bytes while it is timed.
type runner struct {
	command
	stdinPath   string
	out, errOut *os.File
	env         []string
	runs        int
	first       []byte // the stdout of the first run
}

func newRunner(h *harness, c command, i int) (*runner, error) {
	r := &runner{command: c, env: childEnv(c.env)}
	r.stdinPath = filepath.Join(h.bin, fmt.Sprintf("stdin-%d", i))
	if err := os.WriteFile(r.stdinPath, c.stdin, 0o600); err != nil {
		return nil, err
	}
	var err error
	if r.out, err = os.Create(filepath.Join(h.bin, fmt.Sprintf("stdout-%d", i))); err != nil {
		return nil, err
	}
	if r.errOut, err = os.Create(filepath.Join(h.bin, fmt.Sprintf("stderr-%d", i))); err != nil {
		r.out.Close()
		return nil, err
	}
	return r, nil
}

func (r *runner) close() {
	r.out.Close()
	r.errOut.Close()
}

func (r *runner) run() (sample, error) {
	if r.before != nil {
		if err := r.before(); err != nil {
			return sample{}, fmt.Errorf("%s: before: %w", r.key, err)
		}
	}
	for _, f := range []*os.File{r.out, r.errOut} {
		if err := f.Truncate(0); err != nil {
			return sample{}, err
		}
		if _, err := f.Seek(0, 0); err != nil {
			return sample{}, err
		}
	}
	stdin, err := os.Open(r.stdinPath)
	if err != nil {
		return sample{}, err
	}
	defer stdin.Close()
	cmd := exec.Command(r.path, r.args...)
	cmd.Env = r.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, r.out, r.errOut

	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)

	if err != nil {
		msg, _ := os.ReadFile(r.errOut.Name())
		return sample{}, fmt.Errorf("%s: %s %s: %v\n%s", r.key, r.path, strings.Join(r.args, " "), err, msg)
	}
	out, err := os.ReadFile(r.out.Name())
	if err != nil {
		return sample{}, err
	}
	switch r.runs++; {
	case r.runs == 1:
		r.first = out
		if r.check != nil {
			if err := r.check(out); err != nil {
				return sample{}, fmt.Errorf("%s: unexpected output: %w", r.key, err)
			}
		}
	case r.every != nil:
		if err := r.every(out); err != nil {
			return sample{}, fmt.Errorf("%s: run %d: unexpected output: %w", r.key, r.runs, err)
		}
	case string(out) != string(r.first):
		return sample{}, fmt.Errorf("%s: run %d: got %q, the first run printed %q", r.key, r.runs, out, r.first)
	}
	return sample{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, nil
}

// childEnv is the harness's environment without what would change what
// orch-hook does, plus extra.
func childEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CLAUDE_PROJECT_DIR" || strings.HasPrefix(k, "ORCH_HOOK_") || k == "GODEBUG" || k == "GOGC" || k == "GOMAXPROCS" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	// Active-workflow markers (see state) go to procbench's own cache.
	env = append(env, "XDG_CONFIG_HOME="+benchCache)
	return append(env, extra...)
}

// benchCache receives the markers (and keys) of procbench's workflows
// (newHarness makes it). It is procbench's own config directory too, so
// that state.Store.MarkerPath names the marker its children write (see
// snapshot).
var benchCache string

// stats summarizes a series of runs.
type stats struct {
	Runs      int           `json:"runs"`
	Min       time.Duration `json:"min_ns"`
	P10       time.Duration `json:"p10_ns"`
	Median    time.Duration `json:"median_ns"`
	P90       time.Duration `json:"p90_ns"`
	Max       time.Duration `json:"max_ns"`
	CPUMedian time.Duration `json:"cpu_median_ns"`
}

func summarize(s []sample) stats {
	if len(s) == 0 {
		return stats{}
	}
	wall := make([]time.Duration, len(s))
	cpu := make([]time.Duration, len(s))
	for i := range s {
		wall[i], cpu[i] = s[i].wall, s[i].cpu
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	return stats{
		Runs:      len(s),
		Min:       wall[0],
		P10:       quantile(wall, 0.10),
		Median:    quantile(wall, 0.5),
		P90:       quantile(wall, 0.90),
		Max:       wall[len(wall)-1],
		CPUMedian: quantile(cpu, 0.5),
	}
}

// quantile of sorted values, interpolating between the two nearest.
func quantile(sorted []time.Duration, q float64) time.Duration {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + time.Duration(frac*float64(sorted[i+1]-sorted[i]))
}

// outputIs builds a check that stdout is exactly want.
func outputIs(want string) func([]byte) error {
	return func(out []byte) error {
		if string(out) != want {
			return fmt.Errorf("got %q, want %q", out, want)
		}
		return nil
	}
}

// outputHasPrefix builds a check that stdout starts with prefix.
func outputHasPrefix(prefix string) func([]byte) error {
	return func(out []byte) error {
		if !strings.HasPrefix(string(out), prefix) {
			return fmt.Errorf("got %q, want it to start with %q", out, prefix)
		}
		return nil
	}
}
