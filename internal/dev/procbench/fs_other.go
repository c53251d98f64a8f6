//go:build !linux

package main

// fsName names the filesystem dir is on; only Linux is told apart.
func fsName(dir string) string { return "unknown" }

// inMemory reports whether dir is on a filesystem that never reaches a disk.
func inMemory(dir string) bool { return false }
