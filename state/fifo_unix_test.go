//go:build unix

package state

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// A FIFO put in place of a state file (no sandbox: the model's shell can)
// is refused at once, never waited on: a hook that hung until Claude
// Code's timeout would let the call through.
func TestFIFONotWaitedOn(t *testing.T) {
	s := tstCreate(t, "research")
	for _, name := range []string{s.CheckpointPath(), s.LogPath()} {
		if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(name, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Load()
		if err == nil {
			_, _, err = s.Events()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO in place of the checkpoint and the log was read as a state")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading the state waited on a FIFO")
	}
	if _, err := ReadRegular(s.CheckpointPath(), 100); err == nil {
		t.Error("ReadRegular read a FIFO")
	}
}
