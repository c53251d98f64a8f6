package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The marker is rewritten in place (writeMarker), with a sum that makes a
// torn or mixed file fail closed rather than read as another marker.

// TestEncodeMarker: the file is JSON that an orch-hook from before the
// sum reads as the same marker, padded to a multiple of 512 bytes and to
// at least the size asked (growing past it when longer), and only a file
// whose sum matches, byte for byte, reads back.
func TestEncodeMarker(t *testing.T) {
	m := Marker{Root: "/p", Lineage: "l", Serial: 7, Checkpoint: strings.Repeat("a", 64), LogSize: 10, LogTail: "t"}
	body, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		size int64
		want int
	}{{0, 512}, {511, 512}, {512, 512}, {513, 1024}, {1024, 1024}, {4096, 4096}} {
		b := encodeMarker(body, c.size)
		if len(b) != c.want || !bytes.HasPrefix(b, []byte(markerSumPrefix)) || b[len(b)-1] != '\n' {
			t.Errorf("size %d: %d bytes %q, want %d, starting with the sum, ending in a newline", c.size, len(b), b, c.want)
		}
		got, why := decodeMarker(b)
		if got == nil || !got.summed {
			t.Fatalf("size %d: does not read back: %s", c.size, why)
		}
		got.summed = false
		if *got != m {
			t.Errorf("size %d: read back %+v, want %+v", c.size, *got, m)
		}
		var old Marker // as an orch-hook from before the sum reads it
		if err := json.Unmarshal(b, &old); err != nil || old != m {
			t.Errorf("size %d: the previous reader gets %+v (%v)", c.size, old, err)
		}
	}
	long := m
	long.Lineage = strings.Repeat("x", 600)
	lb, _ := json.Marshal(&long)
	if b := encodeMarker(lb, 512); len(b) != 1024 {
		t.Errorf("a marker longer than the file: %d bytes, want it grown to 1024", len(b))
	}
	b := encodeMarker(body, 0)
	for i := range bytes.TrimRight(b, " \n") {
		// Every byte of the sum and the content counts: a change
		// anywhere (a torn sector holds other bytes) is refused.
		bad := bytes.Clone(b)
		bad[i] ^= 0x01
		if got, _ := decodeMarker(bad); got != nil {
			t.Fatalf("byte %d changed (%q), and the marker still read", i, bad[i])
		}
	}
	for _, n := range []int{len(markerSumPrefix) + 10, 100, len(b) / 2} {
		if got, _ := decodeMarker(b[:n]); got != nil {
			t.Errorf("the first %d bytes read as a marker", n)
		}
	}
}

// tstLstat is path's FileInfo (os.SameFile tells whether a write
// replaced the file).
func tstLstat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// tstMarkerBytes is the marker file as it is now.
func tstMarkerBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	return tstRead(t, s.MarkerPath())
}

// A marker whose sum does not match fails closed, under the lock as
// without it, with the TamperError and its hint: edited by hand, or torn
// (the first 512 bytes of one marker orch-hook wrote, the rest of the
// next, as a crash mid-write can leave it on disk). Accepting the state,
// as the hint says, writes a whole marker again; repair says there is
// nothing to restore from.
func TestMarkerMismatchFailsClosed(t *testing.T) {
	edit := func(t *testing.T, s *Store, a, b []byte) []byte {
		serial := []byte(`"serial":3,`)
		i := bytes.Index(b, serial)
		if i < 0 {
			t.Fatalf("no serial 3 in %s", b)
		}
		out := bytes.Clone(b)
		out[i+len(`"serial":`)] = '2'
		return out
	}
	torn := func(t *testing.T, s *Store, a, b []byte) []byte {
		if len(a) != len(b) || len(a) <= 512 {
			t.Fatalf("markers of %d and %d bytes: want the same size, over one sector", len(a), len(b))
		}
		mix := append(bytes.Clone(a[:512]), b[512:]...)
		if bytes.Equal(mix, a) || bytes.Equal(mix, b) {
			t.Fatal("the two markers do not differ on both sides of byte 512")
		}
		return mix
	}
	for name, damage := range map[string]func(t *testing.T, s *Store, a, b []byte) []byte{"edited": edit, "torn": torn} {
		t.Run(name, func(t *testing.T) {
			s := tstCreate(t, "research")
			if _, err := s.Update(tstTransition("plan")); err != nil {
				t.Fatal(err)
			}
			a := tstMarkerBytes(t, s)
			if _, err := s.Update(tstTransition("implement")); err != nil {
				t.Fatal(err)
			}
			b := tstMarkerBytes(t, s)
			if err := os.WriteFile(s.MarkerPath(), damage(t, s, a, b), 0o600); err != nil {
				t.Fatal(err)
			}
			var tamper *TamperError
			_, err := s.Update(tstTransition("test"))
			if !errors.As(err, &tamper) || !strings.Contains(err.Error(), "is not one orch-hook wrote") || !strings.Contains(tamper.Hint(), "accept-state") {
				t.Fatalf("Update over a %s marker: %v, want the TamperError", name, err)
			}
			if _, err := s.Load(); !errors.As(err, &tamper) {
				t.Fatalf("Load: %v, want the TamperError", err)
			}
			if _, err := s.Peek(); !errors.As(err, &tamper) {
				t.Fatalf("Peek: %v, want the TamperError", err)
			}
			if msg, err := s.Repair(); err == nil || !strings.Contains(err.Error(), "repair --accept") {
				t.Fatalf("Repair: %q %v, want it to name --accept", msg, err)
			}
			if _, err := s.AcceptState("the test"); err != nil {
				t.Fatal(err)
			}
			if cp, err := s.Load(); err != nil || cp.StateMachine.CurrentState != "implement" {
				t.Fatalf("after accepting: %v", err)
			}
		})
	}
}

// A marker written by an orch-hook from before the sum (no sum, not
// padded) is read as it was: a workflow running at the upgrade goes on.
// The next write under the lock replaces it with a summed one (never in
// place: a read racing that write could not tell a mix), and the one
// after rewrites that in place.
func TestMarkerWithoutSum(t *testing.T) {
	s := tstCreate(t, "research")
	m, err := s.readMarker()
	if err != nil || m == nil || !m.summed {
		t.Fatalf("readMarker: %+v %v", m, err)
	}
	old, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(s.MarkerPath(), append(old, '\n')); err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Load(); err != nil || cp.Serial != 1 {
		t.Fatalf("Load with the previous format: %v", err)
	}
	if m, err := s.readMarker(); err != nil || m == nil || m.summed {
		t.Fatalf("readMarker: %+v %v, want it read without a sum", m, err)
	}
	before := tstLstat(t, s.MarkerPath())
	if _, err := s.Update(tstTransition("plan")); err != nil {
		t.Fatal(err)
	}
	first := tstLstat(t, s.MarkerPath())
	if b := tstMarkerBytes(t, s); !bytes.HasPrefix(b, []byte(markerSumPrefix)) || len(b)%512 != 0 {
		t.Fatalf("the marker after the upgrade's first write: %q", b)
	}
	if os.SameFile(first, before) {
		t.Error("a marker without a sum was rewritten in place")
	}
	if _, err := s.Update(tstTransition("implement")); err != nil {
		t.Fatal(err)
	}
	if second := tstLstat(t, s.MarkerPath()); !os.SameFile(second, first) {
		t.Error("the summed marker was not rewritten in place")
	}
	if cp, err := s.Load(); err != nil || cp.Serial != 3 {
		t.Fatalf("Load: %v", err)
	}
}

// Lock-free readers racing writers that rewrite the marker in place never
// see tampering: readMarker itself, against a goroutine rewriting the
// marker as fast as it can (each read is one of the markers written),
// and the store's Load, from another Store (as another process), against
// a stream of state changes.
func TestMarkerReadersRaceInPlaceWrites(t *testing.T) {
	const writes = 400
	t.Run("readMarker", func(t *testing.T) {
		s := tstCreate(t, "research")
		m, err := s.readMarker()
		if err != nil || m == nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var reads atomic.Int64
		var wg sync.WaitGroup
		for r := 0; r < 2; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reader := Open(s.Root)
				for {
					select {
					case <-stop:
						return
					default:
					}
					got, err := reader.readMarker()
					if err != nil || got == nil {
						t.Errorf("a read racing the writer: %v", err)
						return
					}
					first := got.Serial == m.Serial && got.LogTail == m.LogTail
					if got.Lineage != m.Lineage || !first && got.LogTail != strings.Repeat("f", int(got.Serial%64)) {
						t.Errorf("read a marker never written: %+v", got)
						return
					}
					reads.Add(1)
				}
			}()
		}
		// At least as many reads as writes, both sides running together
		// (on tmpfs, where fdatasync costs nothing, the writes alone take
		// a few milliseconds).
		for i := 1; i <= writes || reads.Load() < writes && i < 100*writes; i++ {
			next := *m
			// Content of varying length, the file's size kept.
			next.Serial, next.LogTail = uint64(i), strings.Repeat("f", i%64)
			if err := s.writeMarker(&next, true); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
	})
	t.Run("Load", func(t *testing.T) {
		s := tstCreate(t, "research")
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			reader := Open(s.Root)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := reader.Load(); err != nil {
					t.Errorf("a lock-free read racing the writes: %v", err)
					return
				}
			}
		}()
		for i := 0; i < writes/4; i++ {
			if _, err := s.Update(benchBump); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
	})
}
