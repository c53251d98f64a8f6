//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package state

import (
	"os"
	"syscall"
)

// stampOf is what a file's metadata says about its content: inode, size
// and change time. No one but root can set a change time, so a file whose
// stamp is the one recorded after orch-hook's last write has not been
// written since (up to the kernel clock's granularity; README, "State").
func stampOf(fi os.FileInfo) Stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stamp{Size: fi.Size(), Time: fi.ModTime().UnixNano()}
	}
	sec, nsec := ctime(st)
	return Stamp{Ino: uint64(st.Ino), Size: fi.Size(), Time: sec*1e9 + nsec}
}
