package coordinate

import "github.com/orch-hook/orch-hook/gates"

// preMCP holds each path a writing MCP tool names to Write's rules.
func (c *Workflow) preMCP(call *gates.Call, env *Env) gates.Outcome {
	if !gates.MCPWrites(call.Tool) {
		return gates.Outcome{}
	}
	for _, wc := range gates.MCPWriteCalls(call) {
		if o := c.preWrite(wc, env); o.Verdict == gates.Deny {
			gates.ViaMCP(call.Tool, &o)
			return o
		}
	}
	return gates.Outcome{}
}
