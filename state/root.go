package state

import (
	"os"
	"path/filepath"
)

// FindRoot looks upward from dir for a directory holding .orchestrator/state
// and returns it, or dir itself when there is none (a project with no
// workflow yet).
func FindRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if fi, err := os.Stat(filepath.Join(d, Dir)); err == nil && fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}
