package state

import "testing"

// BenchmarkMarkLocked is the marker's rewrite after a state change
// (markLocked: two stats and writeMarker), in orch-hook's config
// directory: TestMain puts it under $TMPDIR, on disk unless that is tmpfs
// (the project itself is on tmpfs, benchStore).
func BenchmarkMarkLocked(b *testing.B) {
	s := benchStore(b)
	unlock, err := s.lock()
	if err != nil {
		b.Fatal(err)
	}
	defer unlock()
	if _, err := s.prepareLocked(nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.markLocked(); err != nil {
			b.Fatal(err)
		}
	}
}
