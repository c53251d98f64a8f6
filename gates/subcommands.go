package gates

import "strings"

// Subcommand is one of the binary's subcommands as the rules see it: the
// model may run a read-only one from Bash (to see the workflow), and
// nothing else. cmd/orch-hook checks that this table and its command line
// name the same subcommands.
type Subcommand struct {
	Name string
	// ReadOnly: it changes no state, setting or file.
	ReadOnly bool
	// WriteFlags make a read-only subcommand write (report -o FILE).
	WriteFlags []string
}

// Subcommands is the table.
var Subcommands = []Subcommand{
	{Name: "status", ReadOnly: true},
	{Name: "log", ReadOnly: true},
	{Name: "explain", ReadOnly: true},
	{Name: "graph", ReadOnly: true},
	{Name: "report", ReadOnly: true, WriteFlags: []string{"-o", "--o", "-output", "--output"}},
	{Name: "doctor", ReadOnly: true},
	{Name: "stats", ReadOnly: true},
	{Name: "config", ReadOnly: true},
	{Name: "migrate", ReadOnly: true, WriteFlags: []string{"-w", "--w", "-write", "--write"}},
	{Name: "verify", ReadOnly: true},
	{Name: "statusline", ReadOnly: true},
	{Name: "subagent-statusline", ReadOnly: true},
	{Name: "help", ReadOnly: true},
	{Name: "hook"},
	{Name: "start"},
	{Name: "repair"},
	{Name: "init"},
	{Name: "generate"},
}

// subcommand finds a table row.
func subcommand(name string) (Subcommand, bool) {
	for _, s := range Subcommands {
		if s.Name == name {
			return s, true
		}
	}
	return Subcommand{}, false
}

// ReadOnlyArgs reports whether the binary run with args (what follows the
// binary's name) changes nothing: a read-only subcommand without a write
// flag. The global flag --project (before the subcommand) is skipped;
// --version and --help alone are read-only; anything unknown is not.
func ReadOnlyArgs(args []string) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		flag, _, hasValue := strings.Cut(args[i], "=")
		switch flag {
		case "--project", "-project":
			if !hasValue {
				i++
			}
		case "--version", "-version", "-v", "--help", "-help", "-h":
		default:
			return false
		}
		i++
	}
	if i >= len(args) {
		return true // --version, --help, or nothing: prints help
	}
	sub, ok := subcommand(args[i])
	if !ok || !sub.ReadOnly {
		return false
	}
	for _, a := range args[i+1:] {
		flag, _, _ := strings.Cut(a, "=")
		for _, w := range sub.WriteFlags {
			if flag == w {
				return false
			}
		}
	}
	return true
}
