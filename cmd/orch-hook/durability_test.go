package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/state"
)

// orchHook returns the path of this test binary installed as orch-hook on
// PATH by testscript.Main (see TestMain).
func orchHook(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("orch-hook")
	if err != nil {
		t.Fatalf("orch-hook not on PATH (TestMain should have put it there): %v", err)
	}
	return path
}

func initWorkflow(t *testing.T, bin, dir string) {
	t.Helper()
	out, err := exec.Command(bin, "--project", dir, "test-bump", "--init").CombinedOutput()
	if err != nil {
		t.Fatalf("test-bump --init: %v\n%s", err, out)
	}
}

// TestConcurrentWriters runs 64 real orch-hook processes at once against one
// state directory, each making one state change: every change must land,
// once, in order.
func TestConcurrentWriters(t *testing.T) {
	const n = 64
	bin := orchHook(t)
	dir := t.TempDir()
	initWorkflow(t, bin, dir)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "--project", dir, "test-bump", "--count", "1", "--lock-wait", "60s")
			<-start
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	store := state.Open(dir)
	cp, err := store.Load()
	if err != nil {
		t.Fatalf("state does not load after concurrent writes: %v", err)
	}
	if cp.Serial != 1+n {
		t.Errorf("serial = %d, want %d", cp.Serial, 1+n)
	}
	var bumps int
	if err := json.Unmarshal(cp.PhaseData["bump"], &bumps); err != nil || bumps != n {
		t.Errorf("phase_data.bump = %s, want %d", cp.PhaseData["bump"], n)
	}
	events, rep, err := store.Events()
	if err != nil || len(rep.BadLines) > 0 {
		t.Fatalf("events: %v, bad lines %v", err, rep.BadLines)
	}
	updates := 0
	seen := map[uint64]bool{}
	for _, ev := range events {
		if ev.Type != state.EventUpdate {
			continue
		}
		updates++
		if seen[ev.Serial] {
			t.Errorf("serial %d logged twice", ev.Serial)
		}
		seen[ev.Serial] = true
	}
	if updates != n {
		t.Errorf("%d update events, want exactly %d", updates, n)
	}
	for s := uint64(2); s <= 1+n; s++ {
		if !seen[s] {
			t.Errorf("no event for serial %d", s)
		}
	}
}

// TestCrashDurability kills writers with SIGKILL at random moments, at
// least 200 times. After every kill the state must load, and every change a
// writer reported as committed must be in the log.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	const kills = 200
	const parallel = 2
	bin := orchHook(t)
	dir := t.TempDir()
	initWorkflow(t, bin, dir)
	store := state.Open(dir)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seed := time.Now().UnixNano()
	rng.Seed(seed)
	t.Logf("seed %d; %d kills, %d writers at a time", seed, kills, parallel)

	var mu sync.Mutex
	committed := map[uint64]bool{}
	killed := 0
	for killed < kills {
		var wg sync.WaitGroup
		for p := 0; p < parallel; p++ {
			delay := time.Duration(rng.Intn(40000)) * time.Microsecond
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(bin, "--project", dir, "test-bump", "--count", "100000", "--lock-wait", "60s")
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Error(err)
					return
				}
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					sc := bufio.NewScanner(stdout)
					for sc.Scan() {
						if s, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
							n, _ := strconv.ParseUint(s, 10, 64)
							mu.Lock()
							committed[n] = true
							mu.Unlock()
						}
					}
				}()
				time.Sleep(delay)
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				cmd.Wait()
			}()
		}
		wg.Wait()
		killed += parallel

		if _, err := store.Load(); err != nil {
			t.Fatalf("after %d kills the state does not load: %v", killed, err)
		}
		events, rep, err := store.Events()
		if err != nil {
			t.Fatalf("after %d kills the log does not read: %v", killed, err)
		}
		if len(rep.BadLines) > 0 {
			t.Fatalf("after %d kills unreadable log lines %v before the tail", killed, rep.BadLines)
		}
		logged := map[uint64]bool{}
		for _, ev := range events {
			if len(ev.Checkpoint) > 0 {
				logged[ev.Serial] = true
			}
		}
		mu.Lock()
		for s := range committed {
			if !logged[s] {
				t.Fatalf("after %d kills: change %d was reported committed but is not in the log", killed, s)
			}
		}
		mu.Unlock()
	}

	// One clean write recovers the tail; then every serial from 1 to the
	// last has exactly one checkpoint record, and the snapshot agrees.
	out, err := exec.Command(bin, "--project", dir, "test-bump", "--count", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("write after the crashes failed: %v\n%s", err, out)
	}
	cp, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	events, _, err := store.Events()
	if err != nil {
		t.Fatal(err)
	}
	perSerial := map[uint64]int{}
	recovered := 0
	for _, ev := range events {
		if ev.Type == state.EventRecover {
			recovered++
		}
		if len(ev.Checkpoint) > 0 {
			perSerial[ev.Serial]++
		}
	}
	for s := uint64(1); s <= cp.Serial; s++ {
		if perSerial[s] != 1 {
			t.Errorf("serial %d has %d checkpoint records, want 1", s, perSerial[s])
		}
	}
	raw, err := os.ReadFile(store.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("the log still ends in a torn record after recovery")
	}
	entries, _ := os.ReadDir(store.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "checkpoint.json.tmp-") {
			t.Errorf("temp file %s left behind after a clean write", e.Name())
		}
	}
	t.Logf("%d kills, %d changes reported committed, final serial %d, %d log tails recovered", killed, len(committed), cp.Serial, recovered)
}
