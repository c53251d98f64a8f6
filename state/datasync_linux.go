package state

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data, and its size when it changed, to the disk
// (fdatasync: not its times, which nothing reads back after a crash).
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = unix.Fdatasync(int(fd)); serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}
