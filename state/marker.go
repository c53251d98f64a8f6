package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// An active workflow leaves a marker outside the project, in the user's
// cache directory (~/.cache/orch-hook/active/<hash of the root>). If the
// project's state then vanishes (deleted by a command the hooks could not
// see), a hook finds the marker and fails closed instead of reading the
// project as one without a workflow, which would gate nothing.

// markerPath is the marker of the project at root ("" when the user has no
// cache directory).
func (s *Store) markerPath() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		base = dir
	}
	sum := sha256.Sum256([]byte(s.Root))
	return filepath.Join(base, "orch-hook", "active", hex.EncodeToString(sum[:12]))
}

// setMarker records (or clears) that the project has an active workflow.
// Failures are ignored: the marker is a safety net, not the state.
func (s *Store) setMarker(cp *Checkpoint) {
	path := s.markerPath()
	if path == "" {
		return
	}
	if cp == nil || cp.Finished() {
		os.Remove(path)
		return
	}
	want := s.Root + "\n" + cp.Lineage + "\n"
	if b, err := os.ReadFile(path); err == nil && string(b) == want {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return
	}
	writeFileAtomic(path, []byte(want))
}

// vanished reports whether a marker says a workflow was active here though
// its state is gone; it returns the lineage the marker names.
func (s *Store) vanished() (string, bool) {
	path := s.markerPath()
	if path == "" {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if len(lines) < 2 || lines[0] != s.Root {
		return "", false
	}
	return lines[1], true
}

// VanishedError: the project's state is gone while a workflow was active.
type VanishedError struct {
	Dir     string
	Lineage string
}

func (e *VanishedError) Error() string {
	return fmt.Sprintf("the workflow's state is gone (%s does not exist) but workflow %s was active here", e.Dir, e.Lineage)
}

// Hint says how to recover.
func (e *VanishedError) Hint() string {
	return "restore .orchestrator/state (from a backup or git), or run `orch-hook repair` to forget the workflow"
}

// forgetVanished removes the marker of a vanished workflow (orch-hook
// repair); it reports whether there was one.
func (s *Store) forgetVanished() (string, bool) {
	lineage, ok := s.vanished()
	if !ok {
		return "", false
	}
	if err := os.Remove(s.markerPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return lineage, true
}
