package main

import (
	"os"

	"github.com/orch-hook/orch-hook/hooks"
)

func main() {
	if err := hooks.Run(hooks.EnvFrom(os.Getenv, os.Stderr), os.Stdin, os.Stdout, os.Args[1]); err != nil {
		os.Exit(1)
	}
}
