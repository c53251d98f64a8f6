package layers

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// maxInitAllocs bounds what one package of the module may allocate at
// init. Every hook call is a new process and pays for every package's
// init, used or not: parsing templates or building tables there (the
// report's templates once cost each call 0.3 ms) belongs in a
// sync.OnceValue. Allocations, unlike times, are the same on every run.
const maxInitAllocs = 300

// TestInitIsCheap runs the binary with GODEBUG=inittrace=1 and reads each
// of the module's packages' init allocations.
func TestInitIsCheap(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "orch-hook")
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, module+"cmd/orch-hook")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("orch-hook --version: %v\n%s", err, out)
	}
	re := regexp.MustCompile(`(?m)^init (` + regexp.QuoteMeta(module) + `\S+) @.* (\d+) bytes, (\d+) allocs$`)
	found := re.FindAllStringSubmatch(string(out), -1)
	if len(found) < 3 {
		t.Fatalf("inittrace names %d of the module's packages:\n%s", len(found), out)
	}
	for _, m := range found {
		if allocs, _ := strconv.Atoi(m[3]); allocs > maxInitAllocs {
			t.Errorf("%s allocates %s bytes in %d allocations at init (at most %d): move the work to first use", m[1], m[2], allocs, maxInitAllocs)
		}
	}
}
