package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/orch-hook/orch-hook/hooks"
	"github.com/orch-hook/orch-hook/state"
)

func main() {
	t0 := time.Now()
	data, _ := io.ReadAll(os.Stdin)
	t1 := time.Now()
	in, err := hooks.DecodeBytes(data, "PreToolUse")
	if err != nil {
		panic(err)
	}
	t2 := time.Now()
	env := hooks.EnvFrom(os.Getenv, os.Stderr)
	_, lerr := state.Open(env.ProjectDir).Load()
	t3 := time.Now()
	d := hooks.Handle(env, in)
	t4 := time.Now()
	var buf bytes.Buffer
	hooks.Render(&buf, in.HookEventName, d)
	t5 := time.Now()
	in2, _ := hooks.DecodeBytes(data, "PreToolUse")
	hooks.Handle(env, in2)
	t6 := time.Now()
	var m map[string]any
	gojson.Unmarshal([]byte(`{"a":1}`), &m)
	fmt.Fprintf(os.Stderr, "read %v decode %v load %v(%v) handle %v render %v second-call %v\n", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), lerr != nil, t4.Sub(t3), t5.Sub(t4), t6.Sub(t5))
}
