package main

import (
	"io"
	"os"

	_ "github.com/urfave/cli/v2"
)

func main() { io.Copy(io.Discard, os.Stdin); os.Stdout.WriteString("{}\n") }
