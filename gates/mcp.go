package gates

import (
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
var mcpVerbRE = LazyRegexp(`(write|edit|create|delete|remove|move|rename|patch|replace|insert|update|append|save|put|upload|mkdir|copy|touch|overwrite|apply|modify|commit|push|exec|run|shell|command)`)

// MCPWriteCalls turns an MCP call into one Write call per path it names.
func MCPWriteCalls(c *Call) []*Call {
	calls := make([]*Call, 0, len(c.MCPPaths))
	for _, p := range c.MCPPaths {
		w := *c
		w.Tool, w.Path, w.Write = "Write", p, &FileWrite{}
		calls = append(calls, &w)
	}
	return calls
}

// ViaMCP names the MCP tool in a refusal of one of the writes it stands
// for (MCPWriteCalls), in what the model is told and in its log record.
func ViaMCP(tool string, o *Outcome) {
	r := o.Refusal
	if r == nil {
		return
	}
	r.Via = tool
	o.Reason = r.Told()
	for i := range o.Records {
		if o.Records[i].Refusal == r {
			o.Records[i].Reason = r.Text()
		}
	}
}
