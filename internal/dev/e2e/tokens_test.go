package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// tokenCounts is what orch-hook recorded of an agent's tokens, as status
// --json gives it (tokens.agents[].tokens).
type tokenCounts struct {
	Input      int64  `json:"input"`
	Output     int64  `json:"output"`
	CacheRead  int64  `json:"cache_read"`
	CacheWrite int64  `json:"cache_write"`
	Responses  int    `json:"responses"`
	Unread     string `json:"unread"`
	Unknown    string `json:"unknown"`
}

// checkTokens: every agent of the workflow that ended has the tokens its
// own API responses reported, each response once, as orch-hook read them
// from its transcript at its SubagentStop. The responses are the mock's
// requests made by that agent (the client's agent id header), and their
// usage is what the mock served; want pins the sums of the conversations
// whose every turn scripts its usage, so the numbers are asserted as
// written in the scenario, not only as the mock reports them. A turn
// without scripted usage reports the mock's estimate, which the mock does
// not keep: those agents are checked for their count of responses.
func checkTokens(c *checks, run *Run, st map[string]any, want map[string]tokenCounts) {
	raw, _ := json.Marshal(st["tokens"])
	var tok struct {
		Known   int `json:"agents_known"`
		Unknown int `json:"agents_unknown"`
		Agents  []struct {
			Agent   string       `json:"agent"`
			Job     string       `json:"job"`
			AgentID string       `json:"agent_id"`
			Tokens  *tokenCounts `json:"tokens"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || len(tok.Agents) == 0 {
		c.errorf("status --json has no tokens.agents (%v): %s", err, raw)
		return
	}
	if tok.Unknown != 0 || tok.Known != len(tok.Agents) {
		c.errorf("tokens: %d agents known, %d unknown, of %d; want all known: %s", tok.Known, tok.Unknown, len(tok.Agents), raw)
	}
	convOf := run.Mock.AgentIDs()
	seen := map[string]bool{}
	for _, a := range tok.Agents {
		conv := convOf[a.AgentID]
		what := fmt.Sprintf("%s (%s, agent %s, conversation %q)", a.Agent, a.Job, a.AgentID, conv)
		if conv == "" || a.Tokens == nil || a.Tokens.Unknown != "" || a.Tokens.Unread != "" {
			c.errorf("%s: tokens %+v, want them read whole", what, a.Tokens)
			continue
		}
		var served tokenCounts
		scripted := true
		for _, r := range run.Mock.For(conv) {
			if r.AgentID != a.AgentID || r.Served == nil {
				continue
			}
			served.Responses++
			if u := r.Served.Usage; u != nil {
				served.Input += int64(u.InputTokens)
				served.Output += int64(u.OutputTokens)
				served.CacheRead += int64(u.CacheReadInputTokens)
				served.CacheWrite += int64(u.CacheCreationInputTokens)
			} else {
				scripted = false
			}
		}
		got := *a.Tokens
		if w, ok := want[conv]; ok {
			seen[conv] = true
			if !scripted || served != w {
				c.errorf("%s: the mock served %+v (every turn scripted: %v), the scenario scripts %+v", what, served, scripted, w)
			}
			if got != w {
				c.errorf("%s: orch-hook recorded %+v, want the scripted usage summed, each response once: %+v", what, got, w)
			}
			continue
		}
		if got.Responses != served.Responses || got.Input <= 0 || scripted && got != served {
			c.errorf("%s: orch-hook recorded %+v; the mock served %d responses (%+v)", what, got, served.Responses, served)
		}
	}
	var missing []string
	for conv := range want {
		if !seen[conv] {
			missing = append(missing, conv)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		c.errorf("no ended agent of conversations %s in tokens.agents: %s", strings.Join(missing, ", "), raw)
	}
}
