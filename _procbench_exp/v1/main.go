package main

import (
	"io"
	"os"

	_ "github.com/goccy/go-json"
)

func main() { io.Copy(io.Discard, os.Stdin); os.Stdout.WriteString("{}\n") }
