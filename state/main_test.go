package state

import (
	"os"
	"testing"
)

// TestMain keeps the active-workflow markers the tests make out of the
// user's real cache directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orch-hook-state-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
