package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/app"
)

// maxRecordBytes bounds a record verify reads.
const maxRecordBytes = 256 << 20

// errVerifyFailed: at least one record failed (each said why).
var errVerifyFailed = errors.New("verify: a record failed")

func verifyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check workflow records (.orchestrator/records/<lineage>.json): the log's hash chain, every decision replayed through this binary's gates, the outcome and summary",
		ArgsUsage: "RECORD...",
		Description: "Exits 0 when every record verifies, 1 when one does not (naming its first record that fails).\n" +
			"A state change no gate made (an adoption, an accepted state) is listed; --strict fails the record.\n" +
			"It proves that a record is internally consistent and that every step obeyed the rules; not\n" +
			"who wrote it (README, \"Records\").",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "strict", Usage: "also fail a record holding a state change no gate made (an adoption, an accepted state): the user's, or a forger's"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("verify takes one or more RECORD files")
			}
			failed := false
			for _, path := range c.Args().Slice() {
				sum, err := verifyFile(path)
				if err != nil {
					failed = true
					fmt.Fprintf(e.stdout, "%s: FAIL: %s\n", path, strings.ReplaceAll(err.Error(), "\n", " "))
					continue
				}
				if jumps := stateJumps(sum.Accepted); c.Bool("strict") && len(jumps) > 0 {
					failed = true
					fmt.Fprintf(e.stdout, "%s: FAIL: state changes no gate made (--strict): %s\n", path, strings.Join(jumps, ", "))
					continue
				}
				accepted := ""
				if len(sum.Accepted) > 0 {
					accepted = "; taken as the user made them: " + strings.Join(sum.Accepted, ", ")
				}
				fmt.Fprintf(e.stdout, "%s: ok: %d transitions, %d decisions replayed through the gates, %d refusals%s; chain tail %s\n", path, len(sum.Transitions), sum.Replayed, sum.Refused, accepted, sum.ChainTail)
			}
			if failed {
				return errVerifyFailed
			}
			return nil
		},
	}
}

func verifyFile(path string) (*app.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("over %d MiB: not a record", maxRecordBytes>>20)
	}
	var rec app.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("not a record: %v", err)
	}
	return app.Verify(&rec)
}

// stateJumps are the accepted changes that may put the workflow anywhere:
// an adoption or an accepted state (a repair puts back the state before
// it, which verify checks).
func stateJumps(accepted []string) []string {
	var out []string
	for _, a := range accepted {
		if !strings.HasPrefix(a, "repair ") {
			out = append(out, a)
		}
	}
	return out
}
