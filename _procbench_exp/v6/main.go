package main

import (
	"os"

	"github.com/orch-hook/orch-hook/hooks"
)

// dispatches "hook" before building the cli.App.
func main() {
	if len(os.Args) >= 2 && len(os.Args) <= 3 && os.Args[1] == "hook" {
		ev := ""
		if len(os.Args) == 3 {
			ev = os.Args[2]
		}
		if err := hooks.Run(hooks.EnvFrom(os.Getenv, os.Stderr), os.Stdin, os.Stdout, ev); err != nil {
			printError(os.Stderr, err)
			os.Exit(exitCode(err))
		}
		return
	}
	os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}
