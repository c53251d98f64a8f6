//go:build !linux

package state

import "os"

// datasync is f.Sync where the platform has no fdatasync.
func datasync(f *os.File) error { return f.Sync() }
