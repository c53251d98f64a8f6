//go:build unix

package state

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// tstInode is path's inode (0 where there is none).
func tstInode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// The marker is rewritten in place from the second write on: the same
// file (inode), its size a multiple of 512 that does not change, mode
// 0600, and it reads back as what was written.
func TestMarkerRewrittenInPlace(t *testing.T) {
	s := tstCreate(t, "research")
	path := s.MarkerPath()
	ino := tstInode(t, path)
	size := int64(len(tstMarkerBytes(t, s)))
	if size%512 != 0 {
		t.Fatalf("the first marker is %d bytes, want a multiple of 512", size)
	}
	for i, to := range []string{"plan", "implement", "test"} {
		if _, err := s.Update(tstTransition(to)); err != nil {
			t.Fatal(err)
		}
		if got := tstInode(t, path); got != ino {
			t.Fatalf("write %d replaced the marker (inode %d, was %d)", i+2, got, ino)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != size || fi.Mode().Perm() != 0o600 {
			t.Errorf("write %d: %d bytes mode %v, want %d bytes 0600", i+2, fi.Size(), fi.Mode().Perm(), size)
		}
		m, err := s.readMarker()
		if err != nil || m == nil || !m.summed || m.Serial != uint64(i+2) {
			t.Fatalf("write %d reads back as %+v (%v)", i+2, m, err)
		}
	}
	if cp, err := s.Load(); err != nil || cp.StateMachine.CurrentState != "test" {
		t.Fatalf("Load: %v", err)
	}
}

// Whatever is planted at the marker's path between the lock's read of
// the marker and its write (no sandbox: the model's shell runs as the
// user) is never written through, and never waited on: a symlink to
// another file, a hard link to one (two links), a FIFO (with and without
// a reader), a file of another mode, a file grown past what a marker
// read accepts. The other file keeps its content,
// and the marker is replaced by a new plain file (0600) that reads.
func TestMarkerNotWrittenThrough(t *testing.T) {
	const precious = "another file of the user's\n"
	cases := map[string]func(t *testing.T, path, victim string) (check func()){
		"symlink": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Remove(path))
			tstNoErr(t, os.Symlink(victim, path))
			return nil
		},
		"hardlink": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Remove(path))
			tstNoErr(t, os.Link(victim, path))
			return nil
		},
		"fifo": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Remove(path))
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return nil
		},
		"fifo with a reader": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Remove(path))
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			tstNoErr(t, err)
			return func() {
				defer r.Close()
				buf := make([]byte, 4096)
				if n, _ := r.Read(buf); n > 0 {
					t.Errorf("the FIFO's reader got %q", buf[:n])
				}
			}
		},
		"mode 0644": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Chmod(path, 0o644))
			return nil
		},
		// Grown (sparse) after the lock read it: padded to its size, the
		// rewrite allocated and wrote all of it (a GiB here, any size the
		// file system allows), holding the hook past its timeout.
		"grown past the read limit": func(t *testing.T, path, victim string) func() {
			tstNoErr(t, os.Truncate(path, 256<<20))
			return func() {
				if fi, err := os.Stat(path); err == nil && fi.Size() > 64<<10 {
					t.Errorf("the marker was rewritten at %d bytes", fi.Size())
				}
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			s := tstCreate(t, "research")
			victim := s.Root + "/victim"
			tstNoErr(t, os.WriteFile(victim, []byte(precious), 0o600))
			unlock, err := s.lock()
			tstNoErr(t, err)
			if _, err := s.prepareLocked(nil); err != nil {
				unlock()
				t.Fatal(err)
			}
			if !s.pin.marker.summed {
				unlock()
				t.Fatal("the marker read under the lock has no sum: the in-place path would not be tried")
			}
			check := plant(t, s.MarkerPath(), victim)
			done := make(chan error, 1)
			go func() { done <- s.markLocked() }()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("writing the marker waited")
			}
			unlock()
			tstNoErr(t, err)
			if check != nil {
				check()
			}
			if got := tstRead(t, victim); !bytes.Equal(got, []byte(precious)) {
				t.Errorf("the other file now holds %q", got)
			}
			fi, err := os.Lstat(s.MarkerPath())
			tstNoErr(t, err)
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Errorf("the marker is now %v with %d links", fi.Mode(), fi.Sys().(*syscall.Stat_t).Nlink)
			}
			if _, err := s.Load(); err != nil {
				t.Errorf("Load: %v", err)
			}
			// And the next write is in place again.
			ino := tstInode(t, s.MarkerPath())
			if _, err := s.Update(tstTransition("plan")); err != nil {
				t.Fatal(err)
			}
			if tstInode(t, s.MarkerPath()) != ino {
				t.Error("the marker that replaced the planted file was not rewritten in place next")
			}
		})
	}
}

func tstNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}
