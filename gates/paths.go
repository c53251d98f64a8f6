package gates

import (
	"fmt"
	"path/filepath"
	"strings"
)

// StateDir is orch-hook's own state, relative to the project root.
const StateDir = ".orchestrator/state"

// RelPath returns path relative to root, and whether it lies inside.
func RelPath(root, path string) (string, bool) {
	if root == "" || path == "" {
		return "", false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Under compares by Unicode case folding, component by component: on
// macOS and Windows ".Orchestrator/State" (or ".orcheſtrator/ſtate", with
// U+017F) is the same directory.
func Under(rel, dir string) bool {
	_, ok := UnderRest(rel, dir)
	return ok
}

// UnderRest is under, and the rest of rel below dir ("" for dir itself):
// a byte count of dir cannot cut rel, whose folded spelling may be longer.
func UnderRest(rel, dir string) (string, bool) {
	rc, dc := strings.Split(rel, "/"), strings.Split(dir, "/")
	if len(rc) < len(dc) {
		return "", false
	}
	for i := range dc {
		if !strings.EqualFold(rc[i], dc[i]) {
			return "", false
		}
	}
	return strings.Join(rc[len(dc):], "/"), true
}

// OutsideWhat refuses a write that does not resolve inside the project.
func OutsideWhat(path, root string, inside bool) string {
	if inside { // lexically inside, but not once resolved
		return fmt.Sprintf("%s cannot be resolved inside the project (%s): every symlink is followed, a path has at most %d bytes; while a workflow is active, files are written only inside it.", path, root, maxPathLen)
	}
	return fmt.Sprintf("%s is outside the project (%s); while a workflow is active, files are written only inside it.", path, root)
}

// maxPathLen is state.MaxPathLen (gates does not touch files).
const maxPathLen = 4096
