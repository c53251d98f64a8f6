package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/internal/status"
	"github.com/orch-hook/orch-hook/state"
)

// subagentStatusLineInput is what Claude Code passes a subagentStatusLine
// command (observed: internal/dev/e2e/testdata/observed): the agent
// panel's rows, by the id their hooks carry.
type subagentStatusLineInput struct {
	Cwd   string             `json:"cwd"`
	Tasks []status.PanelTask `json:"tasks"`
}

// maxTasks bounds the rows answered.
const maxTasks = 64

func subagentStatuslineCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "subagent-statusline",
		Usage: "label each running agent in Claude Code's agent panel with its work and step (one JSON line per agent the workflow launched)",
		Description: "Run by Claude Code as the subagentStatusLine command (README, \"Status line\"): reads the\n" +
			"agents on stdin, answers {\"id\",\"content\"} for each one the workflow launched; no lock, no\n" +
			"write, exit 0.",
		OnUsageError: usageOnCommand,
		Flags:        []cli.Flag{projectFlag},
		Action: func(c *cli.Context) error {
			var in subagentStatusLineInput
			if b, err := io.ReadAll(io.LimitReader(e.stdin, 4<<20)); err == nil {
				_ = json.Unmarshal(b, &in)
			}
			root := firstNonEmpty(projectDir(c), e.getenv("CLAUDE_PROJECT_DIR"), in.Cwd)
			if root == "" {
				root, _ = os.Getwd()
			}
			root = state.FindRoot(root)
			tasks := in.Tasks[:min(len(in.Tasks), maxTasks)]
			labels := status.AgentLabel(state.Open(root), tasks)
			for _, t := range tasks {
				if label, ok := labels[t.ID]; ok {
					b, err := jsonenc.Marshal(struct {
						ID      string `json:"id"`
						Content string `json:"content"`
					}{t.ID, shorten.Terminal(label, false)})
					if err == nil {
						fmt.Fprintln(e.stdout, string(b))
					}
				}
			}
			return nil
		},
	}
}
