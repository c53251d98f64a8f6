package state

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// LockWait is how long a writer waits for the state lock unless its Store
// says otherwise (Store.Wait): a gating hook answers with a deny after it.
// 5 s: 16 launches at once on a busy 2-core machine (TestManyCompletions)
// queued past 2 s; the hook's timeout is 15 s.
var LockWait = 5 * time.Second

// LockHolder is written into the lock file by whoever holds it, so that a
// waiter that gives up can say who is in the way.
type LockHolder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// LockError says the lock could not be had in time and who holds it.
type LockError struct {
	Path   string
	Waited time.Duration
	Holder *LockHolder
}

func (e *LockError) Error() string {
	who := "an unknown process"
	switch h := e.Holder; {
	case h != nil && !processAlive(h.PID):
		// The holder that recorded itself has exited: whoever holds the
		// lock now did not record itself (not orch-hook; e.g. a flock(1)).
		who = fmt.Sprintf("a process that is not orch-hook (the last recorded holder, pid %d (%s), has exited; `fuser %s` names it)", h.PID, h.Command, e.Path)
	case h != nil:
		who = fmt.Sprintf("pid %d (%s) since %s", h.PID, h.Command, h.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("state lock %s is held by %s; gave up after %s", e.Path, who, e.Waited)
}

// Hint tells the user what to do about it.
func (e *LockError) Hint() string {
	return "if that process is gone or stuck, kill it; the lock is released when its holder exits"
}

// lock takes the exclusive lock on the sidecar lock file (never the file
// that is renamed over) and records the holder in it. It waits in the
// kernel (a blocking flock, woken when the holder releases) rather than
// polling, so waiters do not lose the lock to each other's sleep intervals;
// the wait is bounded by Store.Wait (LockWait when zero).
func (s *Store) lock() (unlock func(), err error) {
	s.mu.Lock()
	defer func() {
		if err != nil {
			s.mu.Unlock()
		}
	}()
	path := s.lockPath()
	fl := flock.New(path,
		flock.SetFlag(os.O_CREATE|os.O_RDWR|noFollow),
		flock.SetPermissions(fileMode))
	start := time.Now()
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("state lock %s: %w", path, err)
	}
	if !ok {
		wait := s.Wait
		if wait <= 0 {
			wait = LockWait
		}
		if err := lockWithin(fl, wait); err != nil {
			if errors.Is(err, errLockTimeout) {
				return nil, &LockError{Path: path, Waited: time.Since(start).Round(time.Millisecond), Holder: readHolder(path)}
			}
			return nil, fmt.Errorf("state lock %s: %w", path, err)
		}
	}
	holder, _ := jsonenc.Marshal(&LockHolder{PID: os.Getpid(), Command: commandLine(), Since: time.Now().UTC()})
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|noFollow, fileMode); err == nil {
		f.Write(holder)
		f.Close()
	}
	return func() { fl.Unlock(); s.mu.Unlock() }, nil
}

var errLockTimeout = errors.New("lock wait timed out")

// lockWithin blocks in flock(2) for at most wait. The blocked call cannot be
// interrupted, so on time-out it is abandoned: if it gets the lock later it
// releases it at once (a hook process exits long before that anyway).
func lockWithin(fl *flock.Flock, wait time.Duration) error {
	var mu sync.Mutex
	abandoned := false
	done := make(chan error, 1)
	go func() {
		err := fl.Lock()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				fl.Unlock()
			}
			return
		}
		done <- err
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case err := <-done: // acquired as the timer fired
		return err
	default:
		abandoned = true
		return errLockTimeout
	}
}

func readHolder(path string) *LockHolder {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var h LockHolder
	if jsonfast.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

func commandLine() string {
	s := strings.Join(os.Args, " ")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}
