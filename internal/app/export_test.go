package app

// SetMaxReplayBytes lowers verify's replay budget for a test; the returned
// function puts it back.
func SetMaxReplayBytes(n int64) func() {
	old := maxReplayBytes
	maxReplayBytes = n
	return func() { maxReplayBytes = old }
}
