//go:build !unix

package state

// noFollow is not available on this platform; state files are still
// created with O_EXCL (temp files) where it matters.
const noFollow = 0

// nonBlock: FIFOs do not wait an open on this platform's files.
const nonBlock = 0

// processAlive cannot tell here; the holder is taken at its word.
func processAlive(int) bool { return true }
