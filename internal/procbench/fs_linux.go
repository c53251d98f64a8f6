package main

import (
	"fmt"
	"syscall"
)

// Filesystem magic numbers (statfs(2)).
var fsMagic = map[int64]string{
	0x01021994: "tmpfs",
	0x858458f6: "ramfs",
	0xEF53:     "ext2/3/4",
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x794c7630: "overlayfs",
	0x2fc12fc1: "zfs",
	0xF2F52010: "f2fs",
	0x6969:     "nfs",
	0x01021997: "9p",
	0x65735546: "fuse",
}

// fsName names the filesystem dir is on.
func fsName(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	if name, ok := fsMagic[int64(st.Type)]; ok {
		return name
	}
	return fmt.Sprintf("fs magic %#x", st.Type)
}

// inMemory reports whether dir is on a filesystem that never reaches a disk.
func inMemory(dir string) bool {
	n := fsName(dir)
	return n == "tmpfs" || n == "ramfs"
}
