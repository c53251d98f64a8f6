package gates

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Settings are the rules a team may configure (README, "Team
// configuration"): a workflow takes them from the configuration file when
// it starts and keeps them, so an edit made while it runs changes nothing
// until the next one.
type Settings struct {
	Limits Limits `json:"limits"`
	Steps  Steps  `json:"steps"`
	// Agents maps a workflow role to the team's own agent that plays it
	// ("code-implementer" -> "backend-dev").
	Agents map[string]string `json:"agents,omitempty"`
	// RedactRequest keeps only the request's hash in the workflow's record.
	RedactRequest bool `json:"redact_request,omitempty"`
}

// Limits are the counts the workflows stop at.
type Limits struct {
	ClarificationRounds     int `json:"clarification_rounds"`
	DiscoveryLoops          int `json:"discovery_loops"`
	FixIterations           int `json:"fix_iterations"`
	FinalValidationFailures int `json:"final_validation_failures"`
	Retries                 int `json:"retries"`
	StopCap                 int `json:"stop_cap"`
}

// Steps are the optional steps, on or off.
type Steps struct {
	UXDXReview bool `json:"ux_dx_review"` // orchestrate's step 5b
}

// DefaultStopCap is how many consecutive Stop blocks a workflow allows
// before it lets the session stop (README, "The rules in detail").
const DefaultStopCap = 3

// DefaultSettings are the rules without a configuration file.
func DefaultSettings() Settings {
	return Settings{
		Limits: Limits{ClarificationRounds: 3, DiscoveryLoops: 2, FixIterations: 3, FinalValidationFailures: 3, Retries: MaxRetries, StopCap: DefaultStopCap},
		Steps:  Steps{UXDXReview: true},
	}
}

// LimitRange is a limit's allowed values.
type LimitRange struct {
	Name     string
	Min, Max int
	What     string
	get      func(*Limits) *int
}

// LimitRanges lists the limits in the order the file and status show them.
var LimitRanges = []LimitRange{
	{"clarification_rounds", 1, 10, "clarification rounds (steps 0a and 0b together)", func(l *Limits) *int { return &l.ClarificationRounds }},
	{"discovery_loops", 1, 10, "entries into discovery (step 1)", func(l *Limits) *int { return &l.DiscoveryLoops }},
	{"fix_iterations", 1, 10, "failed quality gates (4b) of one phase before escalating", func(l *Limits) *int { return &l.FixIterations }},
	{"final_validation_failures", 1, 10, "failed final validations (5a/5b) before escalating", func(l *Limits) *int { return &l.FinalValidationFailures }},
	{"retries", 0, 10, "relaunches of one failed work in one state before escalating", func(l *Limits) *int { return &l.Retries }},
	{"stop_cap", 1, 20, "consecutive Stop blocks before the session may stop", func(l *Limits) *int { return &l.StopCap }},
}

// Of is the limit's value in l.
func (r LimitRange) Of(l *Limits) *int { return r.get(l) }

// Differences lists, one per line, what s sets otherwise than the
// defaults: "fix_iterations 2 (default 3)".
func (s Settings) Differences() []string {
	d := DefaultSettings()
	var out []string
	for _, r := range LimitRanges {
		if v, def := *r.get(&s.Limits), *r.get(&d.Limits); v != def {
			out = append(out, fmt.Sprintf("limits.%s %d (default %d)", r.Name, v, def))
		}
	}
	if s.Steps.UXDXReview != d.Steps.UXDXReview {
		out = append(out, fmt.Sprintf("steps.ux_dx_review %t (default %t)", s.Steps.UXDXReview, d.Steps.UXDXReview))
	}
	for _, role := range sortedKeys(s.Agents) {
		out = append(out, fmt.Sprintf("agents.%s %s (default %s)", role, s.Agents[role], role))
	}
	if s.RedactRequest {
		out = append(out, "record.redact_request true (default false)")
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ConfigSnapshot is the configuration a workflow started with, kept in its
// state.
type ConfigSnapshot struct {
	Settings Settings `json:"settings"`
	// File is the configuration file read ("" when there was none: the
	// defaults), Hash its SHA-256, Git whether git has it as it was read
	// (GitCommitted, GitModified, GitUntracked, GitNone).
	File string `json:"file,omitempty"`
	Hash string `json:"sha256,omitempty"`
	Git  string `json:"git,omitempty"`
	// Seen is the file's hash when a change to it was last reported
	// ("none": its removal); the change is reported once, and applies to
	// the next workflow.
	Seen string `json:"change_seen,omitempty"`
}

// What git says of the configuration file.
const (
	GitCommitted = "committed"   // tracked, with this content
	GitModified  = "modified"    // tracked, but this content is not git's
	GitUntracked = "not in git"  // in a repository, not tracked
	GitNone      = "no git repo" // no repository
)

// Effective is the settings a workflow runs by: its snapshot's, or the
// defaults for one started without a snapshot (an older orch-hook).
func (c *ConfigSnapshot) Effective() Settings {
	if c == nil {
		return DefaultSettings()
	}
	return c.Settings
}

// ConfigEnv is what a decision reads of the configuration file now: its
// hash ("" when there is none), read only when a decision is logged.
type ConfigEnv func() string

// NoteChange reports, once per change, that the configuration file differs
// from the one the workflow started with: the workflow keeps its values.
// It returns whether the snapshot changed (to be saved).
func (c *ConfigSnapshot) NoteChange(now string, o *Outcome) bool {
	seen := now
	if seen == "" {
		seen = "none" // removed: "" is the zero value, never seen
	}
	if c == nil || now == c.Hash || seen == c.Seen {
		return false
	}
	c.Seen = seen
	file := c.File
	if file == "" {
		file = ConfigFile
	}
	what := "changed"
	switch {
	case now == "":
		what = "was removed"
	case c.Hash == "":
		what = "was created"
	}
	msg := fmt.Sprintf("orch-hook: %s %s after this workflow started; the workflow keeps the values it started with (`orch-hook status` shows them). The change applies to the next workflow.", file, what)
	o.Message = joinText(o.Message, msg)
	o.Changed = true
	o.Log(Record{Type: RecUpdate, Reason: "configuration " + file + " " + what + " outside orch-hook (sha256 " + short(now) + "); this workflow keeps its snapshot"})
	return true
}

// ConfigFile is the team's configuration, relative to the project root.
const ConfigFile = ".orchestrator/config.json"

func short(h string) string {
	if h == "" {
		return "none"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// ---- the team's agents ----

// TeamAgents maps roles to the team's agents, for one workflow's roles.
type TeamAgents map[string]string

// In reads a call in roles: a mapped agent's name becomes its role's
// (SubagentType, AgentType). A launch of a role's own agent that the team
// mapped to another is refused: the reason says which to launch. c is
// not changed; the copy is returned.
func (t TeamAgents) In(c *Call) (*Call, string) {
	if len(t) == 0 {
		return c, ""
	}
	cc := *c
	if role, mapped := t.roleOf(c.SubagentType); mapped {
		cc.SubagentType = PluginPrefix + role
	} else if agent, ok := t[strings.TrimPrefix(c.SubagentType, PluginPrefix)]; ok && c.SubagentType != "" {
		return c, fmt.Sprintf("this project's %s maps the role %s to the agent %s: launch %s (subagent_type %q) instead.", ConfigFile, strings.TrimPrefix(c.SubagentType, PluginPrefix), agent, agent, agent)
	}
	if role, mapped := t.roleOf(c.AgentType); mapped {
		cc.AgentType = PluginPrefix + role
	} else if agent, ok := t[strings.TrimPrefix(c.AgentType, PluginPrefix)]; ok && c.AgentType != "" {
		// The role's own agent, which the team replaced: it plays no role
		// (its launch is refused; one that ran anyway gets nothing).
		cc.AgentType = c.AgentType + " (not the role: the team maps it to " + agent + ")"
	}
	return &cc, ""
}

// roleOf finds the role an agent name plays ("" and false when none).
func (t TeamAgents) roleOf(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for role, agent := range t {
		if agent == name {
			return role, true
		}
	}
	return "", false
}

// Out writes the roles in an outcome's texts as the team's agents: what
// the model and the user read, the refusal's parts and their renderings
// (the reason, the deny record) alike.
func (t TeamAgents) Out(o *Outcome) {
	if len(t) == 0 {
		return
	}
	o.Context, o.Message = t.Text(o.Context), t.Text(o.Message)
	for name, content := range o.Files {
		o.Files[name] = t.Text(content)
	}
	r := o.Refusal
	if r == nil {
		o.Reason = t.Text(o.Reason)
		return
	}
	r.Rule, r.Where, r.Next, r.Detail = t.Text(r.Rule), t.Text(r.Where), t.Text(r.Next), t.Text(r.Detail)
	Rerender(o)
}

// DecideAsTeam is a workflow's decision in the team's terms, the same for
// every workflow: the call is read in roles (In), a launch of a role's own
// agent the team replaced is refused (refuse builds the workflow's
// refusal, whose rule names the role as the configuration does), and the
// outcome's texts name the team's agents (Out). config (nil: none) is the
// workflow's snapshot, told of the file's hash now (hash, read only for a
// decision that is logged) while the workflow still runs after the
// decision (active, asked then).
func (t TeamAgents) DecideAsTeam(c *Call, refuse func(reason string, c *Call) Outcome, decide func(*Call) Outcome, config *ConfigSnapshot, hash ConfigEnv, active func() bool) Outcome {
	rc, refused := t.In(c)
	if refused != "" && c.Event == PreToolUse {
		o := refuse(refused, c)
		t.Out(&o)
		o.Refusal.Rule = refused
		Rerender(&o)
		return o
	}
	o := decide(rc)
	if (o.Changed || len(o.Records) > 0) && hash != nil && config != nil && active() {
		config.NoteChange(hash(), &o)
	}
	t.Out(&o)
	return o
}

// Rerender renders an outcome's refusal again after its parts changed:
// the reason told and the deny record's text.
func Rerender(o *Outcome) {
	r := o.Refusal
	if r == nil {
		return
	}
	o.Reason = r.Told()
	for i := range o.Records {
		if o.Records[i].Refusal == r {
			o.Records[i].Reason = r.Text()
		}
	}
}

// Text writes each role named in s (bare, or as orch-hook:<role>) as the
// team's agent, in one pass (a replacement is never read again), where the
// name stands alone: not part of a longer name, and not of a path
// (src/researcher.go, .claude/agents/code-implementer.md).
func (t TeamAgents) Text(s string) string {
	if len(t) == 0 || s == "" {
		return s
	}
	roles := sortedKeys(t)
	sort.SliceStable(roles, func(i, j int) bool { return len(roles[i]) > len(roles[j]) })
	var b strings.Builder
	i := 0
	for i < len(s) {
		end := -1
		role := ""
		if standsAlone(s, i, true) {
			for _, r := range roles {
				for _, name := range []string{PluginPrefix + r, r} {
					if strings.HasPrefix(s[i:], name) && standsAlone(s, i+len(name), false) {
						end, role = i+len(name), r
						break
					}
				}
				if end >= 0 {
					break
				}
			}
		}
		if end < 0 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(t[role])
		i = end
	}
	return b.String()
}

// standsAlone reports whether a name may begin (before) or end at s[i]:
// the byte next to it is no name's, and no path's ('/', or a '.' followed
// by more of a file name).
func standsAlone(s string, i int, before bool) bool {
	if before {
		i--
		if i < 0 {
			return true
		}
		return !nameChar(s, i) && s[i] != '/' && s[i] != '.'
	}
	if i >= len(s) {
		return true
	}
	if s[i] == '.' {
		return !nameChar(s, i+1)
	}
	return !nameChar(s, i) && s[i] != '/'
}

// nameChar reports whether s[i] may be part of an agent's name.
func nameChar(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '-' || c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// RedactedRequest is what a workflow keeps of a request when the team's
// configuration redacts it (record.redact_request): its SHA-256. A request
// already redacted is returned as it is, so a replay of a logged, redacted
// call keeps the same text.
func RedactedRequest(request string) string {
	if isRedacted(request) {
		return request
	}
	sum := sha256.Sum256([]byte(request))
	return redactedPrefix + hex.EncodeToString(sum[:]) + "]"
}

const redactedPrefix = "[redacted sha256:"

func isRedacted(s string) bool {
	_, ok := RedactedHash(s)
	return ok
}

// RedactedHash is the SHA-256 (hex) a redacted request keeps (false: s is
// not one).
func RedactedHash(s string) (string, bool) {
	h, ok := strings.CutPrefix(s, redactedPrefix)
	if !ok || len(h) != 65 || h[64] != ']' {
		return "", false
	}
	if _, err := hex.DecodeString(h[:64]); err != nil {
		return "", false
	}
	return h[:64], true
}

// KeptRequest is the request as a workflow with these settings keeps it.
func (s Settings) KeptRequest(request string) string {
	if s.RedactRequest {
		return RedactedRequest(request)
	}
	return request
}
