//go:build unix

package state

import "syscall"

// noFollow makes an open fail on a symlink instead of following it.
const noFollow = syscall.O_NOFOLLOW

// nonBlock makes an open of a FIFO return at once instead of waiting for
// a writer (regular files ignore it).
const nonBlock = syscall.O_NONBLOCK

// processAlive reports whether pid names a running process.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
