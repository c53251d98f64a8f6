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
	// Leaf helpers anyone may import: they import nothing of the module.
	leaf := map[string]bool{"internal/jsonenc": true, "internal/shorten": true}
	for pkg, deps := range m {
		for _, d := range deps {
			own := strings.TrimPrefix(d, module)
			isOwn := own != d
			switch {
			case leaf[pkg] && isOwn:
				t.Errorf("%s is a leaf helper but imports %s", pkg, own)
			case under(pkg, "gates") && io[d]:
				t.Errorf("%s imports %s: the workflows do no I/O (the caller reads files into gates.Env)", pkg, d)
			case under(pkg, "gates") && isOwn && !leaf[own] && !under(own, "gates"):
				t.Errorf("%s imports %s: the workflows depend on nothing of the module but leaf helpers", pkg, own)
			case pkg == "state" && isOwn && !leaf[own]:
				t.Errorf("state imports %s: the state files' package depends on nothing of the module but leaf helpers", own)
			case d == "github.com/gofrs/flock" && pkg != "state":
				t.Errorf("%s imports flock: only state locks and writes the state files", pkg)
			case pkg == "hooks" && isOwn && (under(own, "internal/status") || under(own, "internal/render") || under(own, "cmd")):
				t.Errorf("hooks imports %s: the hook path does not reach the CLI's packages", own)
			case !under(pkg, "internal/dev") && isOwn && under(own, "internal/dev"):
				t.Errorf("%s imports %s: product code never depends on the development machinery", pkg, own)
			case !under(pkg, "cmd") && isOwn && under(own, "cmd"):
				t.Errorf("%s imports %s: nothing depends on the command line", pkg, own)
			}
		}
	}
}
