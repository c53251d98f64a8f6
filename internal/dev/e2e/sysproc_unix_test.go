//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the CLI in its own process group so that a timeout
// kills its hooks and tools too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killProcessGroup kills the CLI's process group if it was started.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
