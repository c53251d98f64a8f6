package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/orch-hook/orch-hook/"

// imports maps each package of the module (tests excluded) to its direct
// imports.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", module+"...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, list, _ := strings.Cut(line, " ")
		m[strings.TrimPrefix(pkg, module)] = strings.Split(list, ",")
	}
	return m
}

// under reports whether pkg is dir or inside it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestLayers: the rules, one per line of the README's layout.
func TestLayers(t *testing.T) {
	m := imports(t)
	if len(m) < 10 {
		t.Fatalf("go list found %d packages", len(m))
	}
	// I/O the workflows must not do: they are pure functions and data.
	io := map[string]bool{"os": true, "os/exec": true, "io/fs": true, "io/ioutil": true, "net": true, "net/http": true, "syscall": true, "github.com/gofrs/flock": true}
	// Leaf helpers anyone may import: they import nothing of the module
	// but one another.
	leaf := map[string]bool{"internal/jsonenc": true, "internal/jsonfast": true, "internal/shorten": true}
	// The workflow packages, and who may import them: the application
	// layer, and what presents a workflow's data (its status, its report
	// and graph, the agent definitions generated from its tables).
	workflow := map[string]bool{"gates/orchestrate": true, "gates/coordinate": true}
	reachesWorkflows := map[string]bool{"internal/app": true, "internal/status": true, "internal/render": true, "templates": true}
	for pkg, deps := range m {
		for _, d := range deps {
			own := strings.TrimPrefix(d, module)
			isOwn := own != d
			switch {
			case leaf[pkg] && isOwn && !leaf[own]:
				t.Errorf("%s is a leaf helper but imports %s", pkg, own)
			case under(pkg, "gates") && io[d]:
				t.Errorf("%s imports %s: the workflows do no I/O (the caller reads the files and passes them in)", pkg, d)
			case under(pkg, "gates") && isOwn && !leaf[own] && !under(own, "gates"):
				t.Errorf("%s imports %s: the workflows depend on nothing of the module but leaf helpers", pkg, own)
			case pkg == "gates" && isOwn && workflow[own]:
				t.Errorf("gates imports %s: the kernel knows no workflow", own)
			case workflow[pkg] && workflow[own]:
				t.Errorf("%s imports %s: one workflow does not depend on another; what both use belongs in gates", pkg, own)
			case isOwn && workflow[own] && !reachesWorkflows[pkg] && !workflow[pkg]:
				t.Errorf("%s imports %s: the CLI and the hook path reach the workflows only through internal/app", pkg, own)
			case pkg == "state" && isOwn && !leaf[own]:
				t.Errorf("state imports %s: the state files' package depends on nothing of the module but leaf helpers", own)
			case d == "github.com/gofrs/flock" && pkg != "state":
				t.Errorf("%s imports flock: only state locks and writes the state files", pkg)
			case pkg == "hooks" && isOwn && (under(own, "internal") && !leaf[own] || under(own, "cmd")):
				t.Errorf("hooks imports %s: hooks is the wire protocol: it reaches no application code", own)
			case !under(pkg, "internal/dev") && isOwn && under(own, "internal/dev"):
				t.Errorf("%s imports %s: product code never depends on the development machinery", pkg, own)
			case !under(pkg, "cmd") && isOwn && under(own, "cmd"):
				t.Errorf("%s imports %s: nothing depends on the command line", pkg, own)
			}
		}
	}
}

// TestHooksIsTheWireProtocol: package hooks decodes Claude Code's events and
// renders its answers; nothing it depends on, directly or not, is a
// workflow or the application layer (go list -deps).
func TestHooksIsTheWireProtocol(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"hooks").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list -deps hooks found %d packages", len(deps))
	}
	for _, d := range deps {
		own := strings.TrimPrefix(d, module)
		if own != d && (under(own, "gates/orchestrate") || under(own, "gates/coordinate") || under(own, "internal/app")) {
			t.Errorf("hooks depends on %s", own)
		}
	}
}
