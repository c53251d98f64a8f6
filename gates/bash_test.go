package gates

import "testing"

func TestTouchesState(t *testing.T) {
	for cmd, want := range map[string]bool{
		"rm -rf .orchestrator":                         true,
		"cd .orchestrator && rm -rf state":             true,
		"cat .orchestrator//state/checkpoint.json":     true,
		"ls .orchestrator/./state":                     true,
		"cat .orchestrator/tasks/MASTER_PLAN.md":       false,
		"ls .orchestrator":                             false,
		"echo x > .orchestrator/tasks/MASTER_PLAN.md":  true,
		"git checkout -- .orchestrator/tasks":          true,
		"go test ./...":                                false,
		"sed -i s/a/b/ .orchestrator/tasks/task-01.md": true,
		"find .orchestrator -name x -delete":           true,
		"grep -r foo .orchestrator/tasks":              false,
		// Reads with output to a device or a descriptor, and git's
		// reads, each beside a write of the same shape.
		"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null":          false,
		"cat x > .orchestrator/state.json":                            true,
		"ls .orchestrator 2>&1":                                       false,
		"ls .orchestrator 2>&1 >.orchestrator/x":                      true,
		"echo x 2>/dev/null":                                          false,
		"echo x 2>.orchestrator/checkpoint.json":                      true,
		"cat .orchestrator/x 2>/dev/null | head":                      false,
		"cat .orchestrator/x 2>/dev/null | tee .orchestrator/y":       true,
		"git diff -- .orchestrator":                                   false,
		"git diff > .orchestrator/x":                                  true,
		"git diff --output=.orchestrator/checkpoint.json":             true,
		"git -c diff.external=sh diff -- .orchestrator":               true,
		"GIT_EXTERNAL_DIFF=./x git diff .orchestrator":                true,
		"git log -- .orchestrator":                                    false,
		"git log -o x .orchestrator":                                  true,
		"git show HEAD:.orchestrator/tasks/MASTER_PLAN.md":            false,
		"git show --output=x HEAD:.orchestrator/tasks/MASTER_PLAN.md": true,
		"git status .orchestrator":                                    false,
		"git checkout -- .orchestrator":                               true,
		"git stash -- .orchestrator":                                  true,
		"git restore .orchestrator":                                   true,
		"git apply --directory=.orchestrator p.diff":                  true,
		"bash -c 'git diff > .orchestrator/x'":                        true,
		`eval "cat x 2>/dev/null > .orchestrator/y"`:                  true,
		// env's split string is the command line env runs.
		`env --split-string='GIT_EXTERNAL_DIFF="truncate -s0" git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`: true,
		`env -S'LC_ALL=C git' diff .orchestrator`:                                       true,
		`env -S'git' diff .orchestrator`:                                                false,
		"sort -o .orchestrator/tasks/MASTER_PLAN.md .orchestrator/tasks/MASTER_PLAN.md": true,
		"sort .orchestrator/tasks/MASTER_PLAN.md":                                       false,
		// The state is named: refused, read or not.
		"cat .orchestrator/state/checkpoint.json 2>/dev/null": true,
		"git log -- .orchestrator/state":                      true,
	} {
		if got := (&Call{Command: cmd}).TouchesState(); got != want {
			t.Errorf("touchesState(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestSweeps(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git clean -fdx":           true,
		"git clean -fd":            true, // -d removes untracked directories: the plan (red-team pass)
		"git clean -fd src":        false,
		"git stash -a":             true,
		"git stash --all":          true,
		"git stash push -m x --al": true,
		"git stash save -ka":       true,
		"git stash -u":             true, // takes untracked files away: the plan is untracked
		"git stash":                false,
		"git stash list --all":     false,
		"git stash show -p":        false,
		// Options computed on the command line, or from stdin.
		"X=-delete; find . $X":           true,
		"X=-delete; find src -name x $X": false,
		"ls | xargs find":                true,
		"S=clean; git $S -fdx":           true,
		"echo -x | xargs git clean -f":   true,
		"R=--delete; rsync -a $R src/ .": true,
		"git commit -m \"$(date)\"":      false,
		// A command run on every file found or searched.
		"fd -H . -x rm":             true,
		"fd -e md -X sed -i s/a/b/": true,
		"rg --pre rm Task":          true,
		"fd -e md":                  false,
		"rg Task":                   false,
		// Formatters of Markdown and JSON over the project root (they walk
		// dot directories); other formatters change no file there.
		"prettier --write .":                    true,
		"npx prettier -w '**/*.md'":             true,
		"prettier --write '*/tasks/*.md'":       true,
		"mdformat .":                            true,
		"markdownlint --fix .":                  true,
		"biome format --write":                  true,
		"dprint fmt":                            true,
		"deno fmt":                              true,
		"git ls-files | xargs prettier --write": true,
		"prettier --write src":                  false,
		"prettier --write '*.md'":               false,
		"prettier --check .":                    false,
		"biome format --write src":              false,
		"gofmt -w .":                            false,
		"black .":                               false,
		"ruff format .":                         false,
		"eslint --fix .":                        false,
	} {
		if got := (&Call{Command: cmd}).sweeps(); got != want {
			t.Errorf("sweeps(%q) = %v, want %v", cmd, got, want)
		}
	}
	// From a subdirectory: the root is .. (one level down) or named.
	for _, tc := range []struct {
		cmd, cwd string
		want     bool
	}{
		{"fd -H . -x rm", "src", false},
		{"fd -H . .. -x rm", "src", true},
		{"prettier --write .", "src", false},
		{"prettier --write ..", "src", true},
		{"mdformat ..", "src/x", false},
	} {
		if got := (&Call{Command: tc.cmd, CwdRel: tc.cwd}).sweeps(); got != tc.want {
			t.Errorf("sweeps(%q in %q) = %v, want %v", tc.cmd, tc.cwd, got, tc.want)
		}
	}
}
