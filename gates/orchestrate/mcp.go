package orchestrate

import (
	"fmt"

	"github.com/orch-hook/orch-hook/gates"
)

// preMCP holds each path a writing MCP tool names to Write's rules.
func (w *Workflow) preMCP(c *gates.Call, env *Env) gates.Outcome {
	if !gates.MCPWrites(c.Tool) {
		return gates.Outcome{}
	}
	for _, wc := range gates.MCPWriteCalls(c) {
		var o gates.Outcome
		if rel, inside := gates.RelPath(env.Root, wc.Path); inside && gates.Under(rel, TasksDir) {
			// The plan is written with Write/Edit, whose content orch-hook checks.
			o = w.deny(0, fmt.Sprintf("%s is orch-hook's; only Write and Edit (whose content orch-hook checks) change it.", rel))
		} else {
			o = w.preWrite(wc, env)
		}
		if o.Verdict == gates.Deny {
			gates.ViaMCP(c.Tool, &o)
			for i := range o.Records {
				o.Records[i].ToolUseID, o.Records[i].AgentID = c.ToolUseID, c.AgentID
			}
			return o
		}
	}
	return gates.Outcome{}
}
