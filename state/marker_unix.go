//go:build unix

package state

import (
	"os"
	"syscall"
)

// openInPlace opens the marker at path for writing in place when it is a
// file orch-hook can safely overwrite: the open follows no symlink and
// does not wait on a FIFO (O_NONBLOCK: with no reader it fails, with one
// it opens and is refused below), and the open file is a regular file
// with exactly one link (a hard link would write into another name's
// file), owned by this user, mode 0600, and no larger than a marker read
// accepts (the write pads to the file's size: one grown to a GiB since it
// was read would be written whole). It returns the file and its size.
func openInPlace(path string) (*os.File, int64, bool) {
	f, err := os.OpenFile(path, os.O_WRONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, 0, false
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() == fileMode && fi.Size() <= maxMarker {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) == 1 && int64(st.Uid) == int64(os.Getuid()) {
			return f, fi.Size(), true
		}
	}
	f.Close()
	return nil, 0, false
}
