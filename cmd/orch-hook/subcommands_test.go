package main

import (
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// The rules' table of subcommands (which ones the model may run from Bash)
// names exactly the command line's subcommands.
func TestSubcommandTableMatchesCommandLine(t *testing.T) {
	app := NewApp(&env{stdin: nil, stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var cli, table []string
	for _, c := range app.Commands {
		cli = append(cli, c.Name)
	}
	for _, s := range gates.Subcommands {
		if s.Name != "help" { // urfave/cli's own
			table = append(table, s.Name)
		}
	}
	sort.Strings(cli)
	sort.Strings(table)
	if len(cli) != len(table) {
		t.Fatalf("command line %q, table %q", cli, table)
	}
	for i := range cli {
		if cli[i] != table[i] {
			t.Fatalf("command line %q, table %q", cli, table)
		}
	}
}

func TestReadOnlyArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"status"}, true},
		{[]string{"status", "--json"}, true},
		{[]string{"stats", "--json"}, true},
		{[]string{"--project", "/p", "log", "-n", "5"}, true},
		{[]string{"--project=/p", "report", "--format", "html"}, true},
		{[]string{"report", "-o", "r.md"}, false},
		{[]string{"report", "--output=r.md"}, false},
		{[]string{"migrate", "f.json"}, true},
		{[]string{"migrate", "-w", "f.json"}, false},
		{[]string{"migrate", "--write", "f.json"}, false},
		{[]string{"hook", gates.PreToolUse}, false},
		{[]string{"--project", "hook", "status"}, true}, // "hook" is --project's value
		{[]string{"start", "x"}, false},
		{[]string{"repair"}, false},
		{[]string{"init", "--dry-run"}, false},
		{[]string{"--version"}, true},
		{[]string{}, true},
		{[]string{"--bogus", "status"}, false},
		{[]string{"approve"}, false},
	} {
		if got := gates.ReadOnlyArgs(tc.args); got != tc.want {
			t.Errorf("ReadOnlyArgs(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// The commands whose errors come as one JSON object under --json are the
// command table's commands with a --json flag: today the seven README,
// "Exit codes" names.
func TestJSONCommandsFromTable(t *testing.T) {
	e := &env{stdin: nil, stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	cmds := newMainApp(e, nil).Commands
	var got []string
	for _, c := range cmds {
		if jsonRequested([]string{"orch-hook", "--project", "/p", c.Name, "x", "--json"}, cmds) {
			got = append(got, c.Name)
		}
	}
	sort.Strings(got)
	if want := []string{"config", "doctor", "explain", "init", "start", "stats", "status"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("JSON commands %q, want %q (README, \"Exit codes\")", got, want)
	}
	for _, args := range [][]string{
		{"orch-hook", "status"},
		{"orch-hook", "log", "--json"},
		{"orch-hook", "status", "--", "--json"},
		{"orch-hook", "bogus", "--json"},
	} {
		if jsonRequested(args, cmds) {
			t.Errorf("jsonRequested(%q) = true", args)
		}
	}
}
