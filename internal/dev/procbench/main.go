// Command procbench measures orch-hook as Claude Code runs it: one whole
// process per hook call, start to exit, against floors that are the least
// any Go program doing the same job could cost.
//
// It builds, into a temporary directory, the real binary (with the
// orchhook_bench tag, which adds the hidden test-bump subcommand) and two
// floor programs: one that only reads stdin and prints a fixed answer, and
// one that does the durable I/O of one state change (append + fsync, temp
// file + fsync, rename, fsync of the directory) and nothing else. Every
// command of every scenario is then run -n times, round-robin in one loop so
// that machine noise falls on all of them alike: that is one run of the
// benchmark, giving each scenario the median wall time of its command, the
// median of its floor and their ratio. The benchmark is run -runs times
// (3 by default) on the same binaries and projects, and each scenario
// reports the median over the runs of its ratio (and of its two medians),
// with every run's ratio beside it, and whether the median ratio meets the
// scenario's target (or, for an absolute target, whether the median over
// the runs of its command's median is under it).
//
// Targets are reported, not asserted: procbench exits non-zero only when
// something fails to build or run, or a scenario's setup or the check of a
// command's output fails: the first run's against what the scenario
// expects, every later run's against the first (or the scenario's own
// check), so that a run taking another path (failing closed on a state
// not put back whole, say) stops the benchmark instead of being timed
// (see workflow.go for the scenarios that drive the real orchestrate
// workflow).
//
// Usage (from the module root; make bench runs it):
//
//	go run ./internal/dev/procbench [-n 300] [-runs 3] [-json] [-run REGEXP] [-diskdir DIR] [-tags TAGS] [-keep]
//
// Scenarios are the table in scenarios.go; add one there.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	opts := options{}
	flag.IntVar(&opts.n, "n", 300, "timed runs of each command in each run of the benchmark")
	flag.IntVar(&opts.runs, "runs", 3, "runs of the whole benchmark; each scenario reports the median over them")
	flag.IntVar(&opts.warmup, "warmup", 5, "untimed runs of each command first")
	flag.BoolVar(&opts.json, "json", false, "print JSON instead of Markdown")
	flag.StringVar(&opts.run, "run", "", "run only the scenarios whose name matches this regexp")
	flag.StringVar(&opts.diskDir, "diskdir", "", "directory on a disk filesystem for the on-disk scenarios (default: the system temp dir if it is on disk, else the current directory)")
	flag.StringVar(&opts.tags, "tags", "", "more build tags for orch-hook, comma-separated (orchhook_bench and the release's urfave_cli_no_docs are always set)")
	flag.BoolVar(&opts.keep, "keep", false, "keep the temporary directories and print where they are")
	flag.Parse()
	if flag.NArg() > 0 || opts.n < 1 || opts.runs < 1 || opts.warmup < 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "procbench:", err)
		os.Exit(1)
	}
}

type options struct {
	n, runs int
	warmup  int
	json    bool
	run     string
	diskDir string
	tags    string
	keep    bool
}

func run(opts options, stdout, stderr io.Writer) error {
	start := time.Now()
	var filter *regexp.Regexp
	if opts.run != "" {
		re, err := regexp.Compile(opts.run)
		if err != nil {
			return fmt.Errorf("-run: %v", err)
		}
		filter = re
	}
	var chosen []scenario
	for _, s := range scenarios {
		if filter == nil || filter.MatchString(s.name) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		return fmt.Errorf("no scenario matches -run %q", opts.run)
	}

	h, err := newHarness(opts.diskDir, stderr)
	if err != nil {
		return err
	}
	if opts.keep {
		defer fmt.Fprintf(stderr, "procbench: kept %s\n", strings.Join(h.dirs, " "))
	} else {
		defer h.cleanup()
	}
	if err := h.build(opts.tags); err != nil {
		return err
	}

	prepared := make([]preparedScenario, 0, len(chosen))
	for _, s := range chosen {
		cmd, floor, err := s.setup(h)
		if err != nil {
			return fmt.Errorf("scenario %q: setup: %w", s.name, err)
		}
		prepared = append(prepared, preparedScenario{scenario: s, cmd: cmd, floor: floor})
	}
	perRun := make([][]runResult, len(prepared)) // [scenario][run]
	for run := 1; run <= opts.runs; run++ {
		fmt.Fprintf(stderr, "procbench: run %d of %d: %d scenarios, %d timed runs of each command...\n", run, opts.runs, len(prepared), opts.n)
		samples, err := measure(h, prepared, opts.n, opts.warmup)
		if err != nil {
			return err
		}
		for i, p := range prepared {
			c, f := summarize(samples[p.cmd.key]), summarize(samples[p.floor.key])
			perRun[i] = append(perRun[i], runResult{
				Median:      c.Median,
				FloorMedian: f.Median,
				Ratio:       float64(c.Median) / float64(f.Median),
				Cmd:         c,
				FloorStats:  f,
			})
		}
	}

	rep := report{
		Go:         runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:       runtime.NumCPU(),
		CPUModel:   cpuModel(),
		Date:       time.Now().UTC().Format(time.RFC3339),
		Samples:    opts.n,
		Runs:       opts.runs,
		Tags:       h.tags,
		TmpfsDir:   filepath.Dir(h.tmpfs),
		TmpfsFS:    h.tmpfsFS,
		DiskDir:    filepath.Dir(h.disk),
		DiskFS:     h.diskFS,
		BinarySize: h.binarySize,
	}
	for i, p := range prepared {
		runs := perRun[i]
		r := result{
			Name:        p.name,
			Floor:       p.floor.label,
			Median:      medianOf(runs, func(r runResult) time.Duration { return r.Median }),
			FloorMedian: medianOf(runs, func(r runResult) time.Duration { return r.FloorMedian }),
			Ratio:       medianOf(runs, func(r runResult) float64 { return r.Ratio }),
			Target:      p.target,
			MaxMedian:   p.maxMedian,
			Runs:        runs,
		}
		switch {
		case p.maxMedian > 0:
			r.Met = r.Median < p.maxMedian
		default:
			r.Met = p.target == 0 || r.Ratio <= p.target
		}
		rep.Results = append(rep.Results, r)
	}
	rep.Seconds = time.Since(start).Seconds()
	if opts.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printMarkdown(stdout, &rep)
	return nil
}

type preparedScenario struct {
	scenario
	cmd, floor command
}

// report is the whole output; -json prints it as it is.
type report struct {
	Go         string   `json:"go"`
	OS         string   `json:"os"`
	CPUs       int      `json:"cpus"`
	CPUModel   string   `json:"cpu_model,omitempty"`
	Date       string   `json:"date"`
	Samples    int      `json:"samples"` // timed runs of each command in each run
	Runs       int      `json:"runs"`    // runs of the whole benchmark
	Tags       string   `json:"build_tags"`
	TmpfsDir   string   `json:"tmpfs_dir"`
	TmpfsFS    string   `json:"tmpfs_fs"`
	DiskDir    string   `json:"disk_dir"`
	DiskFS     string   `json:"disk_fs"`
	BinarySize int64    `json:"binary_bytes"`
	Results    []result `json:"results"`
	Seconds    float64  `json:"seconds"`
}

// result is one scenario over every run of the benchmark: Median,
// FloorMedian and Ratio are each the median over the runs (so Ratio need
// not be Median/FloorMedian).
type result struct {
	Name        string        `json:"name"`
	Floor       string        `json:"floor"`
	Median      time.Duration `json:"median_ns"`
	FloorMedian time.Duration `json:"floor_median_ns"`
	Ratio       float64       `json:"ratio"`
	// Target is the largest ratio that meets the target; 0: report only.
	Target float64 `json:"target,omitempty"`
	// MaxMedian, when set, is an absolute target on Median instead.
	MaxMedian time.Duration `json:"max_median_ns,omitempty"`
	Met       bool          `json:"met"`
	Runs      []runResult   `json:"runs"`
}

// runResult is one scenario in one run of the benchmark.
type runResult struct {
	Median      time.Duration `json:"median_ns"`
	FloorMedian time.Duration `json:"floor_median_ns"`
	Ratio       float64       `json:"ratio"`
	Cmd         stats         `json:"cmd"`
	FloorStats  stats         `json:"floor_stats"`
}

// medianOf is the median of one value of each run (the mean of the two
// middle ones for an even count).
func medianOf[T time.Duration | float64](runs []runResult, value func(runResult) T) T {
	v := make([]T, len(runs))
	for i, r := range runs {
		v[i] = value(r)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func printMarkdown(w io.Writer, rep *report) {
	fmt.Fprintf(w, "orch-hook procbench: %s %s, %d CPUs", rep.Go, rep.OS, rep.CPUs)
	if rep.CPUModel != "" {
		fmt.Fprintf(w, " (%s)", rep.CPUModel)
	}
	fmt.Fprintf(w, ", %s.  \n", rep.Date)
	fmt.Fprintf(w, "%d runs of the benchmark, each %d timed runs of each command, round-robin; median over the runs. tmpfs: %s (%s); disk: %s (%s). orch-hook built with -tags %s: %.1f MB.\n\n",
		rep.Runs, rep.Samples, rep.TmpfsDir, rep.TmpfsFS, rep.DiskDir, rep.DiskFS, rep.Tags, float64(rep.BinarySize)/1e6)
	fmt.Fprintln(w, "| scenario | median | floor median | ratio | ratio of each run | target | met |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|:---:|")
	for _, r := range rep.Results {
		target, met := "report only", "n/a"
		switch {
		case r.MaxMedian > 0:
			target = "< " + ms(r.MaxMedian)
		case r.Target > 0:
			target = fmt.Sprintf("≤ %.1fx", r.Target)
		}
		if r.MaxMedian > 0 || r.Target > 0 {
			met = "no"
			if r.Met {
				met = "yes"
			}
		}
		each := make([]string, len(r.Runs))
		for i, run := range r.Runs {
			each[i] = fmt.Sprintf("%.2fx", run.Ratio)
		}
		fmt.Fprintf(w, "| %s | %s | %s (%s) | %.2fx | %s | %s | %s |\n",
			r.Name, ms(r.Median), ms(r.FloorMedian), r.Floor, r.Ratio, strings.Join(each, " "), target, met)
	}
	fmt.Fprintf(w, "\nTotal %.0f s.\n", rep.Seconds)
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
