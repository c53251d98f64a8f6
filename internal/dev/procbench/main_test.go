package main

import (
	"testing"
	"time"
)

// TestMedianOf: the median over the runs of the benchmark, of a ratio or
// a duration, for an odd and an even number of runs.
func TestMedianOf(t *testing.T) {
	runs := []runResult{{Ratio: 1.9, Median: 3 * time.Millisecond}, {Ratio: 1.5, Median: time.Millisecond}, {Ratio: 2.4, Median: 2 * time.Millisecond}}
	ratio := func(r runResult) float64 { return r.Ratio }
	median := func(r runResult) time.Duration { return r.Median }
	if got := medianOf(runs, ratio); got != 1.9 {
		t.Errorf("median ratio of 3 = %v, want 1.9", got)
	}
	if got := medianOf(runs, median); got != 2*time.Millisecond {
		t.Errorf("median of 3 medians = %v, want 2ms", got)
	}
	if got := medianOf(runs[:2], median); got != 2*time.Millisecond {
		t.Errorf("median of 2 medians = %v, want 2ms", got)
	}
	if got := medianOf(runs[:1], ratio); got != 1.9 {
		t.Errorf("median of 1 = %v, want 1.9", got)
	}
}
