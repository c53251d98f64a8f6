//go:build unix

package transcript

import "syscall"

// openFlags: a symlink is not followed (the open fails), and a FIFO put in
// the transcript's place does not block the hook waiting for a writer.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
