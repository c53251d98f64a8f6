package gates

import (
	"fmt"
	"strings"
)

// MCP tools (mcp__<server>__<tool>) can write files as well as the built-in
// tools, but their inputs have no fixed shape. While a workflow is active,
// the paths an MCP tool's input names (hooks collects the string values of
// path-like keys) are held to the who-may-write rules of Write when the
// tool's name says it changes files (or runs commands). An MCP tool whose
// name says neither is trusted to read (README, "Threat model").

// IsMCP reports whether tool is an MCP tool.
func IsMCP(tool string) bool { return strings.HasPrefix(tool, "mcp__") }

// MCPWrites reports whether an MCP tool's name says it changes files (or
// runs commands, which may).
func MCPWrites(tool string) bool {
	_, name, _ := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
	return mcpVerbRE.MatchString(strings.ToLower(name))
}

// mcpVerbRE: words in an MCP tool's name that mean it changes files.
var mcpVerbRE = lazyRegexp(`(write|edit|create|delete|remove|move|rename|patch|replace|insert|update|append|save|put|upload|mkdir|copy|touch|overwrite|apply|modify|commit|push|exec|run|shell|command)`)

// mcpWriteCalls turns an MCP call into one Write call per path it names.
func mcpWriteCalls(c *Call) []*Call {
	calls := make([]*Call, 0, len(c.MCPPaths))
	for _, p := range c.MCPPaths {
		w := *c
		w.Tool, w.Path, w.Write = "Write", p, &FileWrite{}
		calls = append(calls, &w)
	}
	return calls
}

// mcpReason names the MCP tool in a refusal.
func mcpReason(tool, reason string) string {
	return strings.Replace(reason, "orch-hook: ", "orch-hook: (MCP tool "+tool+") ", 1)
}

// preMCP holds each path a writing MCP tool names to Write's rules.
func (w *Workflow) preMCP(c *Call, env *Env) Outcome {
	if !MCPWrites(c.Tool) {
		return Outcome{}
	}
	for _, wc := range mcpWriteCalls(c) {
		var o Outcome
		if rel, inside := relPath(env.Root, wc.Path); inside && under(rel, TasksDir) {
			// The plan is written with Write/Edit, whose content orch-hook checks.
			o = w.deny(0, fmt.Sprintf("%s is orch-hook's; only Write and Edit (whose content orch-hook checks) change it.", rel))
		} else {
			o = w.preWrite(wc, env)
		}
		if o.Verdict == Deny {
			o.Reason = mcpReason(c.Tool, o.Reason)
			for i := range o.Records {
				o.Records[i].ToolUseID, o.Records[i].AgentID, o.Records[i].Reason = c.ToolUseID, c.AgentID, o.Reason
			}
			return o
		}
	}
	return Outcome{}
}

// preMCP holds each path a writing MCP tool names to Write's rules.
func (c *Coord) preMCP(call *Call, env *CoordEnv) Outcome {
	if !MCPWrites(call.Tool) {
		return Outcome{}
	}
	for _, wc := range mcpWriteCalls(call) {
		if o := c.preWrite(wc, env); o.Verdict == Deny {
			o.Reason = mcpReason(call.Tool, o.Reason)
			return o
		}
	}
	return Outcome{}
}
