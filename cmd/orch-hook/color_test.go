package main

import (
	"bytes"
	"os"
	"testing"
)

// TestUseColor: colour only on a terminal, never with NO_COLOR or
// TERM=dumb, never into a pipe or a buffer.
func TestUseColor(t *testing.T) {
	env := func(vars map[string]string, out any) *env {
		e := &env{getenv: func(k string) string { return vars[k] }}
		switch o := out.(type) {
		case *os.File:
			e.stdout = o
		case *bytes.Buffer:
			e.stdout = o
		}
		return e
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if useColor(env(nil, w)) {
		t.Error("colour into a pipe")
	}
	if useColor(env(nil, &bytes.Buffer{})) {
		t.Error("colour into a buffer")
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if !useColor(env(map[string]string{"TERM": "xterm"}, tty)) {
			t.Error("no colour on a terminal")
		}
		if useColor(env(map[string]string{"NO_COLOR": "1"}, tty)) {
			t.Error("colour with NO_COLOR")
		}
		if useColor(env(map[string]string{"TERM": "dumb"}, tty)) {
			t.Error("colour with TERM=dumb")
		}
	}
}
