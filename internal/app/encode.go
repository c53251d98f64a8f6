package app

import (
	"sort"
	"strconv"
	"time"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// The call and reads a logged decision carries are encoded by hand:
// encoding/json builds its codec for a type on first use, in every new
// process, and for gates.Call that took 0.14-0.19 ms of a hook call that
// is 1.3 ms at its floor (measured with a one-shot program, first encode
// vs second). The output is what jsonenc.Marshal writes for the same
// values (TestEncodeMatchesJSON), so a record reads back with
// encoding/json.

// jsonObject appends an object's members, skipping empty ones as
// omitempty does.
type jsonObject struct {
	b     []byte
	first bool
}

func newObject(b []byte) *jsonObject { return &jsonObject{b: append(b, '{'), first: true} }

func (o *jsonObject) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = jsonfast.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObject) str(k, v string) {
	if v != "" {
		o.key(k)
		o.b = jsonfast.AppendString(o.b, v)
	}
}

// strAlways writes a string member even when empty (no omitempty).
func (o *jsonObject) strAlways(k, v string) {
	o.key(k)
	o.b = jsonfast.AppendString(o.b, v)
}

func (o *jsonObject) boolean(k string, v bool) {
	if v {
		o.key(k)
		o.b = append(o.b, "true"...)
	}
}

func (o *jsonObject) integer(k string, v int64) {
	if v != 0 {
		o.key(k)
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

func (o *jsonObject) strings(k string, v []string) {
	if len(v) == 0 {
		return
	}
	o.key(k)
	o.b = appendStrings(o.b, v)
}

func (o *jsonObject) end() []byte { return append(o.b, '}') }

func appendStrings(b []byte, v []string) []byte {
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonfast.AppendString(b, s)
	}
	return append(b, ']')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// encodeCall is jsonenc.Marshal(c), by hand.
func encodeCall(c *gates.Call) []byte {
	o := newObject(make([]byte, 0, 256+len(c.Prompt)+len(c.Text)+len(c.Command)))
	o.str("event", c.Event)
	o.str("session", c.Session)
	o.str("prompt_id", c.PromptID)
	o.str("agent_id", c.AgentID)
	o.str("agent_type", c.AgentType)
	o.str("tool", c.Tool)
	o.str("tool_use_id", c.ToolUseID)
	o.str("subagent_type", c.SubagentType)
	o.str("prompt", c.Prompt)
	o.str("description", c.Description)
	o.boolean("background", c.Background)
	o.str("isolation", c.Isolation)
	o.str("path", c.Path)
	if w := c.Write; w != nil {
		o.key("write")
		wo := newObject(o.b)
		if w.Content != nil {
			wo.strAlways("content", *w.Content)
		}
		wo.str("old_string", w.OldString)
		wo.str("new_string", w.NewString)
		wo.boolean("replace_all", w.ReplaceAll)
		wo.boolean("notebook", w.Notebook)
		o.b = wo.end()
	}
	o.boolean("unresolved", c.Unresolved)
	o.str("command", c.Command)
	o.boolean("unsandboxed", c.Unsandboxed)
	o.str("cwd_rel", c.CwdRel)
	o.str("skill", c.Skill)
	o.str("skill_args", c.SkillArgs)
	o.str("send_to", c.SendTo)
	o.strings("mcp_paths", c.MCPPaths)
	o.str("status", c.Status)
	o.str("link_agent_id", c.LinkAgentID)
	o.integer("duration_ms", c.DurationMs)
	o.str("text", c.Text)
	o.str("failure", c.Failure)
	o.boolean("stop_hook_active", c.StopHookActive)
	o.strings("background_runs", c.BackgroundRuns)
	o.str("source", c.Source)
	o.str("end_reason", c.EndReason)
	return o.end()
}

// encode is jsonenc.Marshal(r), by hand.
func (r *reads) encode() []byte {
	o := newObject(make([]byte, 0, 512))
	o.strAlways("root", r.Root)
	o.key("now")
	o.b = append(o.b, '"')
	o.b = r.Now.AppendFormat(o.b, time.RFC3339Nano)
	o.b = append(o.b, '"')
	o.integer("stop_cap", int64(r.StopCap))
	o.boolean("plan_read", r.PlanRead)
	stringMap := func(k string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		o.key(k)
		mo := newObject(o.b)
		for _, name := range sortedKeys(m) {
			mo.strAlways(name, m[name])
		}
		o.b = mo.end()
	}
	stringMap("plan", r.Plan)
	o.str("plan_error", r.PlanErr)
	stringMap("recorded", r.Recorded)
	if len(r.Inspect) > 0 {
		o.key("inspect")
		mo := newObject(o.b)
		for _, p := range sortedKeys(r.Inspect) {
			fc := r.Inspect[p]
			mo.key(p)
			fo := newObject(mo.b)
			fo.str("rel", fc.Rel)
			fo.boolean("inside", fc.Inside)
			fo.boolean("exists", fc.Exists)
			fo.integer("size", fc.Size)
			mo.b = fo.end()
		}
		o.b = mo.end()
	}
	if len(r.Hash) > 0 {
		o.key("hash")
		mo := newObject(o.b)
		for _, p := range sortedKeys(r.Hash) {
			h := r.Hash[p]
			mo.key(p)
			ho := newObject(mo.b)
			ho.str("rel", h.Rel)
			ho.str("sum", h.Sum)
			ho.str("error", h.Err)
			mo.b = ho.end()
		}
		o.b = mo.end()
	}
	if len(r.List) > 0 {
		o.key("list")
		mo := newObject(o.b)
		for _, rel := range sortedKeys(r.List) {
			mo.key(rel)
			if r.List[rel] == nil {
				mo.b = append(mo.b, "null"...)
			} else {
				mo.b = appendStrings(mo.b, r.List[rel])
			}
		}
		o.b = mo.end()
	}
	stringMap("read", r.Read)
	o.boolean("config_read", r.ConfigRead)
	o.str("config", r.Config)
	if t := r.Tokens; t != nil {
		o.key("tokens")
		to := newObject(o.b)
		to.integer("input", t.Input)
		to.integer("output", t.Output)
		to.integer("cache_read", t.CacheRead)
		to.integer("cache_write", t.CacheWrite)
		to.integer("responses", int64(t.Responses))
		to.str("unread", t.Unread)
		to.str("unknown", t.Unknown)
		o.b = to.end()
	}
	return o.end()
}
