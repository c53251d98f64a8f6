package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// fsName names the filesystem dir is on: its type in /proc/self/mountinfo,
// else what statfs's magic number says.
func fsName(dir string) string {
	if name := mountType(dir); name != "" {
		return name
	}
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

// mountType is the filesystem type of the mount holding dir, from
// /proc/self/mountinfo (the longest mount point that is a prefix of dir),
// or "".
func mountType(dir string) string {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	best, bestType := -1, ""
	for _, line := range strings.Split(string(b), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		mp := strings.ReplaceAll(f[4], "\\040", " ")
		inside := real == mp || mp == "/" || strings.HasPrefix(real, mp+"/")
		if inside && len(mp) >= best {
			best, bestType = len(mp), g[0]
		}
	}
	return bestType
}
