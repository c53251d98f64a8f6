package e2e

import (
	"os"
	"testing"
)

// TestMain gives the tests one config directory of their own, which the
// CLI's hooks get too (cliEnv): orch-hook keeps each workflow's marker and
// key there, and the test's own `orch-hook status` must find the same.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "orch-hook-e2e-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	// The plugin copies pluginCopy built for the whole run.
	buildMu.Lock()
	for _, d := range built {
		os.RemoveAll(d)
	}
	buildMu.Unlock()
	os.Exit(code)
}
