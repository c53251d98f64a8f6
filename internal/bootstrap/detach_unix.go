//go:build unix

package bootstrap

import "syscall"

// detached starts the build in its own session, so it outlives the hook.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
