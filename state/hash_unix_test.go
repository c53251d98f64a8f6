//go:build unix

package state

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A FIFO named as an artifact is refused without being opened: opening it
// would block the hook until a writer came.
func TestHashProjectFileFIFO(t *testing.T) {
	root, _ := tstConfineDirs(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, sum, err := HashProjectFile(root, "fifo"); err == nil || sum != "" || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("HashProjectFile(fifo) = %q, %v; want refused as not a regular file", sum, err)
	}
}
