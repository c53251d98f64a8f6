//go:build !unix

package state

import "os"

// openInPlace: without a link count and an owner to check, the marker is
// always replaced atomically here.
func openInPlace(string) (*os.File, int64, bool) { return nil, 0, false }
