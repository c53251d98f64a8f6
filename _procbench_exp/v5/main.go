package main

import (
	"io"
	"os"
)

// returns early: everything linked and initialized, nothing run.
func main() {
	io.Copy(io.Discard, os.Stdin)
	if len(os.Args) > 99 {
		os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
}
