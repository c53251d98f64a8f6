// Command orch-hook is the binary behind the orch-hook Claude Code plugin:
// Claude Code runs "orch-hook hook" on every hook event, and people run the
// other subcommands to see and repair the workflow.
package main

import "os"

func main() {
	os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
