package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/state"
)

// testBumpCommand makes state-changing calls without a workflow engine: one
// locked read-modify-write per call, each logging one event and printing
// "committed N" once its write returned. It is not part of the released
// command line; tests register it (main_test.go), and benchmarks build it in
// with -tags orchhook_bench.
func testBumpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:   "test-bump",
		Hidden: true,
		Usage:  "test only: create a workflow (--init) or make --count state changes",
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "init"},
			&cli.StringFlag{Name: "desc", Value: "bump-script"},
			&cli.IntFlag{Name: "count", Value: 1},
			// The concurrency tests raise it: they check that every change
			// lands, not the timeout policy, on a machine that may be
			// busy with other tests.
			&cli.DurationFlag{Name: "lock-wait", Value: state.LockWait},
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			state.LockWait = c.Duration("lock-wait")
			store := projectStore(c)
			if c.Bool("init") {
				return store.Create(testCheckpoint(c.String("desc")))
			}
			for i := 0; i < c.Int("count"); i++ {
				cp, err := store.Update(func(cp *state.Checkpoint) ([]state.Event, error) {
					n := 0
					if raw, ok := cp.PhaseData["bump"]; ok {
						json.Unmarshal(raw, &n)
					}
					cp.PhaseData["bump"] = json.RawMessage(strconv.Itoa(n + 1))
					return []state.Event{{Type: state.EventUpdate, Reason: "test-bump"}}, nil
				})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "committed %d\n", cp.Serial)
			}
			return nil
		},
	}
}

// testCheckpoint is a minimal valid checkpoint for tests and benchmarks.
func testCheckpoint(desc string) *state.Checkpoint {
	table := map[string]string{}
	for k, v := range state.V13TransitionTable {
		table[k] = v
	}
	return &state.Checkpoint{
		SchemaVersion: state.SchemaVersion,
		StateMachine: state.StateMachine{
			CurrentState:    "research",
			CompletedStates: []string{"initialize"},
			TransitionTable: table,
			WorkflowConfig:  state.WorkflowConfig{Command: "test", Description: desc},
		},
		PhaseData:       map[string]json.RawMessage{},
		SupervisorState: map[string]json.RawMessage{},
		Metadata:        state.Metadata{CheckpointID: "test_" + desc, ProjectName: "test"},
	}
}
