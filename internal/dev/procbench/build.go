package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// harness holds the binaries and the directories scenarios work in.
type harness struct {
	log io.Writer // progress, on stderr

	module string // the module root (where go.mod is)
	bin    string // temp dir holding the built binaries

	orch         string // orch-hook, built with -tags orchhook_bench
	floorTrivial string // floor (a): read stdin, print a fixed answer
	floorIO      string // floor (b): the durable I/O of one state change
	binarySize   int64
	tags         string // orch-hook's build tags

	tmpfs, tmpfsFS string // base dir for tmpfs projects and its filesystem
	disk, diskFS   string // base dir for on-disk projects and its filesystem

	dirs []string // everything to remove at the end
	seq  int      // numbers project directories
}

func newHarness(diskDir string, log io.Writer) (_ *harness, err error) {
	h := &harness{log: log}
	defer func() {
		if err != nil {
			h.cleanup()
		}
	}()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("run procbench from inside the orch-hook module (go env GOMOD is empty)")
	}
	h.module = filepath.Dir(gomod)

	if h.bin, err = h.mkdirTemp("", "procbench-bin-"); err != nil {
		return nil, err
	}
	if benchCache, err = h.mkdirTemp("", "procbench-cache-"); err != nil {
		return nil, err
	}
	if err := os.Setenv("XDG_CONFIG_HOME", benchCache); err != nil {
		return nil, err
	}

	// tmpfs: /dev/shm when it exists, else the temp dir (labelled as what
	// it is).
	shm := "/dev/shm"
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
		shm = ""
	}
	if h.tmpfs, err = h.mkdirTemp(shm, "procbench-tmpfs-"); err != nil {
		return nil, err
	}
	h.tmpfsFS = fsName(h.tmpfs)

	// disk: -diskdir, else the temp dir if it is not in memory, else the
	// current directory.
	base := diskDir
	if base == "" {
		base = os.TempDir()
		if inMemory(base) {
			if base, err = os.Getwd(); err != nil {
				return nil, err
			}
		}
	}
	if h.disk, err = h.mkdirTemp(base, "procbench-disk-"); err != nil {
		return nil, err
	}
	h.diskFS = fsName(h.disk)
	if inMemory(h.disk) {
		fmt.Fprintf(log, "procbench: warning: %s is on %s, not a disk; the on-disk scenario measures memory\n", h.disk, h.diskFS)
	}
	return h, nil
}

func (h *harness) mkdirTemp(base, pattern string) (string, error) {
	dir, err := os.MkdirTemp(base, pattern)
	if err != nil {
		return "", err
	}
	h.dirs = append(h.dirs, dir)
	return dir, nil
}

func (h *harness) cleanup() {
	for _, d := range h.dirs {
		os.RemoveAll(d)
	}
}

// project returns a new empty directory under base (h.tmpfs or h.disk).
func (h *harness) project(base, name string) (string, error) {
	h.seq++
	dir := filepath.Join(base, fmt.Sprintf("%02d-%s", h.seq, name))
	return dir, os.Mkdir(dir, 0o700)
}

// build compiles orch-hook (with extraTags besides orchhook_bench) and the
// two floors. The floors are built by the
// same toolchain with the same (default) flags as orch-hook, each in its
// own throwaway module so that nothing of orch-hook's links into them.
func (h *harness) build(extraTags string) error {
	fmt.Fprintf(h.log, "procbench: building orch-hook and the floors in %s\n", h.bin)
	// The tags and flags of the release build (Makefile): urfave_cli_no_docs
	// drops the man-page renderer's package init from every call.
	h.tags = "orchhook_bench,urfave_cli_no_docs"
	if extraTags != "" {
		h.tags += "," + extraTags
	}
	h.orch = filepath.Join(h.bin, "orch-hook")
	if err := goBuild(h.module, "-tags", h.tags, "-o", h.orch, "./cmd/orch-hook"); err != nil {
		return err
	}
	fi, err := os.Stat(h.orch)
	if err != nil {
		return err
	}
	h.binarySize = fi.Size()
	h.floorTrivial = filepath.Join(h.bin, "floor-trivial")
	if err := h.buildFloor("floor-trivial", floorTrivialSrc, h.floorTrivial); err != nil {
		return err
	}
	h.floorIO = filepath.Join(h.bin, "floor-io")
	return h.buildFloor("floor-io", floorIOSrc, h.floorIO)
}

func (h *harness) buildFloor(name, src, out string) error {
	dir := filepath.Join(h.bin, name+"-src")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module procbench/"+name+"\n\ngo 1.22\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		return err
	}
	return goBuild(dir, "-o", out, ".")
}

func goBuild(dir string, args ...string) error {
	// Release flags, for orch-hook and the floors alike.
	cmd := exec.Command("go", append([]string{"build", "-trimpath", "-ldflags=-s -w"}, args...)...)
	cmd.Dir = dir
	// GOWORK=off: a go.work around the temp dir must not change the build.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return nil
}

// floorTrivialSrc is floor (a): the least a hook binary can do.
const floorTrivialSrc = `// Command floor-trivial reads stdin to EOF and prints a fixed answer.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString("{}\n")
}
`

// floorIOSrc is floor (b): one state change's durable I/O with nothing
// around it (no lock, no JSON). Usage: floor-io DIR SNAPSHOT_BYTES LINE_BYTES.
const floorIOSrc = `// Command floor-io does the durable I/O of one orch-hook state change.
package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

func check(err error) {
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}

func main() {
	_, err := io.Copy(io.Discard, os.Stdin)
	check(err)
	dir := os.Args[1]
	snapN, err := strconv.Atoi(os.Args[2])
	check(err)
	lineN, err := strconv.Atoi(os.Args[3])
	check(err)
	line := append(bytes.Repeat([]byte("x"), lineN-1), '\n')
	snap := append(bytes.Repeat([]byte("y"), snapN-1), '\n')

	// Append the event and sync the log.
	f, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	check(err)
	_, err = f.Write(line)
	check(err)
	check(f.Sync())
	check(f.Close())

	// Replace the snapshot: temp file, sync, close, rename, sync the dir.
	tmp := filepath.Join(dir, "checkpoint.json.tmp-"+strconv.Itoa(os.Getpid()))
	f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	check(err)
	_, err = f.Write(snap)
	check(err)
	check(f.Sync())
	check(f.Close())
	check(os.Rename(tmp, filepath.Join(dir, "checkpoint.json")))
	d, err := os.Open(dir)
	check(err)
	check(d.Sync())
	check(d.Close())
	os.Stdout.WriteString("committed\n")
}
`
