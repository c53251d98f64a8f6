package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
	"github.com/orch-hook/orch-hook/templates"
)

// The team's configuration file, .orchestrator/config.json (README, "Team
// configuration"): committed with the project, read when a workflow
// starts, kept in its state for the whole workflow.

// maxConfigBytes bounds the configuration file.
const maxConfigBytes = 64 << 10

// ConfigVersion is the configuration format this binary reads.
const ConfigVersion = 1

// ConfigError is a configuration file orch-hook refuses, with the line.
type ConfigError struct {
	File    string
	Line    int    // 0: the file as a whole
	Text    string // the line, as written
	Problem string
}

func (e *ConfigError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Problem
	}
	return fmt.Sprintf("%s:%d: %s: `%s`", e.File, e.Line, e.Problem, e.Text)
}

// Hint says how to recover.
func (e *ConfigError) Hint() string {
	return "fix the file (`orch-hook config --check` checks it; README, \"Team configuration\"), or remove it to run with the defaults"
}

// Roles are the workflow roles a team may map to its own agents.
func Roles() []string {
	roles := append(slices.Clone(orchestrate.WorkflowAgents), coordinate.Agents...)
	sort.Strings(roles)
	return slices.Compact(roles)
}

// reAgentName is an agent's name, optionally behind its plugin's (at most
// maxAgentName bytes). Compiled on first use: hooks start on every call.
var reAgentName = gates.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)?$`)

const maxAgentName = 128

// builtinAgents are Claude Code's own agents (lower case): a role is never
// one of them.
var builtinAgents = map[string]bool{"general-purpose": true, "explore": true, "plan": true, "statusline-setup": true}

// ParseConfig reads a configuration file's content: unknown keys, keys
// given twice and bad values are refused with their line.
func ParseConfig(file string, data []byte) (gates.Settings, error) {
	p := &configParser{file: file, data: data}
	s := gates.DefaultSettings()
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	p.data = data
	p.dec = json.NewDecoder(bytes.NewReader(data))
	p.dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		return s, &ConfigError{File: file, Problem: "the file is empty; write {} for the defaults, or remove it"}
	}
	err := p.object("the configuration", map[string]func(off int64) error{
		"$schema": func(off int64) error { _, err := p.str("$schema"); return err },
		"version": func(off int64) error {
			n, off, err := p.integer("version")
			if err == nil && n != ConfigVersion {
				err = p.fail(off, fmt.Sprintf("version %d is not one this orch-hook reads (it reads %d): update orch-hook", n, ConfigVersion))
			}
			return err
		},
		"limits": func(int64) error { return p.limits(&s.Limits) },
		"steps": func(int64) error {
			return p.object("steps", map[string]func(int64) error{
				"ux_dx_review": func(int64) error {
					var err error
					s.Steps.UXDXReview, err = p.boolean("steps.ux_dx_review")
					return err
				},
			})
		},
		"agents": func(int64) error { return p.agents(&s) },
		"record": func(int64) error {
			return p.object("record", map[string]func(int64) error{
				"redact_request": func(int64) error {
					var err error
					s.RedactRequest, err = p.boolean("record.redact_request")
					return err
				},
			})
		},
	})
	if err != nil {
		return s, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		at := p.dec.InputOffset()
		for at < int64(len(p.data)) && strings.ContainsRune(" \t\r\n", rune(p.data[at])) {
			at++
		}
		return s, p.failAt(at, "text after the configuration's closing brace")
	}
	return s, nil
}

type configParser struct {
	file string
	data []byte
	dec  *json.Decoder
}

// fail refuses the line of the token that ends at offset end.
func (p *configParser) fail(end int64, problem string) error {
	return p.failAt(end-1, problem)
}

// failAt refuses the line holding the byte at index i.
func (p *configParser) failAt(i int64, problem string) error {
	i = min(max(i, 0), int64(len(p.data)))
	start := bytes.LastIndexByte(p.data[:i], '\n') + 1
	end := bytes.IndexByte(p.data[start:], '\n')
	if end < 0 {
		end = len(p.data) - start
	}
	text := strings.TrimSpace(string(p.data[start : start+end]))
	return &ConfigError{File: p.file, Line: bytes.Count(p.data[:start], []byte("\n")) + 1, Text: shorten.Terminal(shorten.Runes(text, 120), false), Problem: shorten.Terminal(problem, false)}
}

// token reads the next token, turning a syntax error into a refusal of
// its line.
func (p *configParser) token() (json.Token, int64, error) {
	tok, err := p.dec.Token()
	off := p.dec.InputOffset()
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// The decoder's offset may stop before the blanks that precede
		// the offending character: its line is the character's.
		at := syn.Offset
		for at < int64(len(p.data)) && strings.ContainsRune(" \t\r\n", rune(p.data[at])) {
			at++
		}
		return nil, off, p.failAt(at, "not valid JSON ("+syn.Error()+")")
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, off, p.failAt(int64(len(bytes.TrimRight(p.data, " \t\r\n")))-1, "the file ends too early (a brace or bracket is not closed)")
	case err != nil:
		return nil, off, p.fail(off, "not valid JSON ("+err.Error()+")")
	}
	return tok, off, nil
}

// object reads an object whose keys are fields; any other key is refused.
func (p *configParser) object(what string, fields map[string]func(off int64) error) error {
	tok, off, err := p.token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.fail(off, what+" must be an object ({...})")
	}
	seen := map[string]bool{}
	for p.dec.More() {
		tok, off, err := p.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if seen[key] {
			return p.fail(off, fmt.Sprintf("%q is given twice (which one is meant?)", key))
		}
		seen[key] = true
		field, ok := fields[key]
		if !ok {
			return p.fail(off, unknownKey(what, key, fields))
		}
		if err := field(off); err != nil {
			return err
		}
	}
	_, _, err = p.token()
	return err
}

func unknownKey(what, key string, fields map[string]func(int64) error) string {
	known := make([]string, 0, len(fields))
	for k := range fields {
		known = append(known, k)
	}
	sort.Strings(known)
	msg := fmt.Sprintf("unknown key %q in %s", key, what)
	if near := nearest(key, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return msg + "; known: " + strings.Join(known, ", ")
}

// nearest is the known key closest to key, when it is close.
func nearest(key string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func (p *configParser) integer(what string) (int, int64, error) {
	tok, off, err := p.token()
	if err != nil {
		return 0, off, err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return 0, off, p.fail(off, what+" must be a whole number")
	}
	n, err := strconv.Atoi(num.String())
	if err != nil {
		return 0, off, p.fail(off, fmt.Sprintf("%s must be a whole number, not %s", what, num))
	}
	return n, off, nil
}

func (p *configParser) boolean(what string) (bool, error) {
	tok, off, err := p.token()
	if err != nil {
		return false, err
	}
	b, ok := tok.(bool)
	if !ok {
		return false, p.fail(off, what+" must be true or false")
	}
	return b, nil
}

func (p *configParser) str(what string) (string, error) {
	tok, off, err := p.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", p.fail(off, what+" must be a string")
	}
	return s, nil
}

func (p *configParser) limits(l *gates.Limits) error {
	fields := map[string]func(int64) error{}
	for _, r := range gates.LimitRanges {
		fields[r.Name] = func(int64) error {
			n, off, err := p.integer("limits." + r.Name)
			if err != nil {
				return err
			}
			if n < r.Min || n > r.Max {
				return p.fail(off, fmt.Sprintf("limits.%s must be from %d to %d (%s), not %d", r.Name, r.Min, r.Max, r.What, n))
			}
			*r.Of(l) = n
			return nil
		}
	}
	return p.object("limits", fields)
}

// agents reads the role -> agent mapping: every role once, every agent
// for one role, no agent that is a role's or Claude Code's own.
func (p *configParser) agents(s *gates.Settings) error {
	roles := Roles()
	fields := map[string]func(int64) error{}
	byAgent := map[string]string{}
	for _, role := range roles {
		fields[role] = func(int64) error {
			agent, err := p.str("agents." + role)
			if err != nil {
				return err
			}
			off := p.dec.InputOffset()
			if problem := agentProblem(role, agent, roles, byAgent); problem != "" {
				return p.fail(off, problem)
			}
			byAgent[strings.ToLower(agent)] = role
			if s.Agents == nil {
				s.Agents = map[string]string{}
			}
			s.Agents[role] = agent
			return nil
		}
	}
	return p.object("agents", fields)
}

// ValidateSettings checks settings as ParseConfig checks a file: what a
// record's snapshot holds is the record's word (verify).
func ValidateSettings(s gates.Settings) error {
	for _, r := range gates.LimitRanges {
		if v := *r.Of(&s.Limits); v < r.Min || v > r.Max {
			return fmt.Errorf("limits.%s is %d, outside %d to %d", r.Name, v, r.Min, r.Max)
		}
	}
	roles := Roles()
	byAgent := map[string]string{}
	for _, role := range sortedKeys(s.Agents) {
		agent := s.Agents[role]
		if !slices.Contains(roles, role) {
			return fmt.Errorf("agents: %q is no role", role)
		}
		if problem := agentProblem(role, agent, roles, byAgent); problem != "" {
			return errors.New(problem)
		}
		byAgent[strings.ToLower(agent)] = role
	}
	return nil
}

// agentProblem says why agent may not play role ("" when it may), the
// one rule the parser and ValidateSettings share; byAgent holds the
// agents already mapped, by their lower-case name. Names are compared
// without case: two that differ only by it could be read as one.
func agentProblem(role, agent string, roles []string, byAgent map[string]string) string {
	fold := strings.ToLower(agent)
	switch {
	case len(agent) > maxAgentName || !reAgentName.MatchString(agent):
		return fmt.Sprintf("agents.%s: %q is not an agent name (letters, digits, '-', '_', '.'; a plugin's agent as plugin:name)", role, agent)
	case fold == role:
		return fmt.Sprintf("agents.%s maps the role to itself: remove the line", role)
	case slices.Contains(roles, strings.TrimPrefix(fold, gates.PluginPrefix)):
		return fmt.Sprintf("agents.%s: %q is another role of the workflows, so a launch of it could be read two ways", role, agent)
	case strings.HasPrefix(fold, gates.PluginPrefix):
		return fmt.Sprintf("agents.%s: %q is in orch-hook's own namespace; name the team's agent", role, agent)
	case builtinAgents[fold]:
		return fmt.Sprintf("agents.%s: %q is Claude Code's own agent, which does not end with the role's result lines", role, agent)
	case byAgent[fold] != "":
		return fmt.Sprintf("agents.%s: %q already plays %s; one agent plays one role, so its launches read one way", role, agent, byAgent[fold])
	}
	return ""
}

// ReadConfig reads the project's configuration file into the snapshot a
// workflow starts with: the defaults when there is none.
func ReadConfig(root string) (*gates.ConfigSnapshot, error) {
	if isLink(root) {
		return nil, &ConfigError{File: gates.ConfigFile, Problem: "is a symbolic link; the team's configuration is a regular file committed with the project (git would keep the link, not what it points to)"}
	}
	b, err := state.ReadProjectFile(root, gates.ConfigFile, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &gates.ConfigSnapshot{Settings: gates.DefaultSettings()}, nil
	}
	if err != nil {
		return nil, &ConfigError{File: gates.ConfigFile, Problem: "cannot be read: " + shorten.OneLine(err.Error())}
	}
	s, err := ParseConfig(gates.ConfigFile, b)
	if err != nil {
		return nil, err
	}
	return &gates.ConfigSnapshot{Settings: s, File: gates.ConfigFile, Hash: sha256Hex(b), Git: gitFileState(root, gates.ConfigFile, b)}, nil
}

// isLink reports whether the configuration file is a symbolic link.
func isLink(root string) bool {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(gates.ConfigFile)))
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// ConfigHash is the configuration file's hash now: "" when there is none,
// "unreadable" when it cannot be read, "a symbolic link" for one (each a
// change all the same).
func ConfigHash(root string) string {
	// One lstat answers the common cases (no file, a link) without
	// resolving the path: this runs for every logged decision.
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(gates.ConfigFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	b, err := state.ReadProjectFile(root, gates.ConfigFile, maxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return "unreadable"
	}
	return sha256Hex(b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ConfigNotice is what the user is shown when a workflow starts with a
// configuration file: every value that differs from the defaults, and
// whether git has the file as it was read. "" when there is no file.
func ConfigNotice(c *gates.ConfigSnapshot) string {
	if c == nil || c.File == "" {
		return ""
	}
	diffs := c.Settings.Differences()
	var b strings.Builder
	fmt.Fprintf(&b, "orch-hook: this workflow runs by %s (%s)", c.File, c.Git)
	if len(diffs) == 0 {
		b.WriteString(": every value is the default.")
	} else {
		b.WriteString(", which differs from the defaults in: " + strings.Join(diffs, "; ") + ".")
	}
	if c.Git != gates.GitCommitted {
		b.WriteString(" It is not the team's committed configuration: check that you meant it.")
	}
	return b.String()
}

// StartNotice is ConfigNotice, then what the mapped agents' definitions
// lack (CheckAgents; home is the user's home directory): the workflow
// starts all the same, since a definition may be added before the first
// launch, but you are told at once instead of at the first refused report.
func StartNotice(root, home string, c *gates.ConfigSnapshot) string {
	notice := ConfigNotice(c)
	if c == nil || len(c.Settings.Agents) == 0 {
		return notice
	}
	for _, a := range CheckAgents(root, home, c.Settings, func(role string) ([]string, error) {
		lines, _, err := templates.PromisedLines(role)
		return lines, err
	}) {
		if a.Problem != "" {
			notice += "\norch-hook: agents." + a.Role + ": " + a.Problem + " (`orch-hook config --check` checks it)."
		}
	}
	return notice
}

// teamContext tells the orchestrator, at the start, what the team's
// configuration changes in the workflow it was given (its commands are
// the plugin's, and cannot be regenerated for a team).
func teamContext(s gates.Settings) string {
	var parts []string
	for _, role := range sortedKeys(s.Agents) {
		agent := s.Agents[role]
		parts = append(parts, fmt.Sprintf("wherever the workflow says %s (or orch-hook:%s), launch the agent %s (subagent_type %q) instead", role, role, agent, agent))
	}
	d := gates.DefaultSettings()
	for _, r := range gates.LimitRanges {
		if v, def := *r.Of(&s.Limits), *r.Of(&d.Limits); v != def {
			parts = append(parts, fmt.Sprintf("the limit of %s is %d (not %d)", r.What, v, def))
		}
	}
	if !s.Steps.UXDXReview {
		parts = append(parts, "step 5b (UX/DX review) is off: after 5a passes, go to step 6")
	}
	if len(parts) == 0 {
		return ""
	}
	return " This project's " + gates.ConfigFile + ": " + strings.Join(parts, "; ") + "."
}

// AgentCheck is what `orch-hook config --check` found of a mapped agent's
// definition.
type AgentCheck struct {
	Role  string `json:"role"`
	Agent string `json:"agent"`
	// File is the definition found ("" none); Missing the role's result
	// lines it does not name.
	File     string   `json:"file,omitempty"`
	Promised []string `json:"promised"`
	Missing  []string `json:"missing,omitempty"`
	// Problem says what is wrong ("" nothing); Unchecked, what could not
	// be checked (a plugin's agent).
	Problem   string `json:"problem,omitempty"`
	Unchecked string `json:"unchecked,omitempty"`
}

// maxAgentFiles bounds the entries (files and directories) walked to find
// an agent's definition by name.
const maxAgentFiles = 4096

// CheckAgents reads each mapped agent's definition (the project's
// .claude/agents, then the user's ~/.claude/agents) and says whether it
// names every result line its role's own definition names. promised
// gives a role's lines (templates.PromisedLines).
func CheckAgents(root, home string, s gates.Settings, promised func(role string) ([]string, error)) []AgentCheck {
	var out []AgentCheck
	for _, role := range sortedKeys(s.Agents) {
		c := AgentCheck{Role: role, Agent: s.Agents[role]}
		lines, err := promised(role)
		if err != nil {
			c.Problem = "the role's result lines are unknown: " + err.Error()
			out = append(out, c)
			continue
		}
		c.Promised = lines
		if strings.Contains(c.Agent, ":") {
			c.Unchecked = "a plugin's agent: orch-hook does not read other plugins' definitions; make sure it ends with " + orList(lines)
			out = append(out, c)
			continue
		}
		file, def := findAgent(root, home, c.Agent)
		if file == "" {
			c.Problem = fmt.Sprintf("no definition of %s in .claude/agents/ or ~/.claude/agents/ (an agent file whose name: is %s)", c.Agent, c.Agent)
			out = append(out, c)
			continue
		}
		c.File = file
		for _, l := range lines {
			if !bytes.Contains(def, []byte(l)) {
				c.Missing = append(c.Missing, l)
			}
		}
		if len(c.Missing) > 0 {
			c.Problem = fmt.Sprintf("%s does not name %s; as %s it must end its final message with one of %s (orch-hook refuses its report otherwise)", file, strings.Join(quoteAll(c.Missing), ", "), role, orList(lines))
		}
		out = append(out, c)
	}
	return out
}

func orList(lines []string) string {
	if len(lines) == 0 {
		return "any text"
	}
	return strings.Join(quoteAll(lines), " or ")
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = "`" + s + "`"
	}
	return out
}

// findAgent finds the definition Claude Code would load for name: a
// Markdown file under the project's, then the user's, agents directory
// whose front matter's name: is name (or, without one, whose file name
// is). It returns the path shown to the user and the content.
func findAgent(root, home, name string) (string, []byte) {
	dirs := []struct{ abs, shown string }{{filepath.Join(root, ".claude", "agents"), ".claude/agents"}}
	if home != "" {
		dirs = append(dirs, struct{ abs, shown string }{filepath.Join(home, ".claude", "agents"), "~/.claude/agents"})
	}
	for _, d := range dirs {
		seen := 0
		var file string
		var content []byte
		_ = filepath.WalkDir(d.abs, func(p string, e fs.DirEntry, err error) error {
			if err != nil || file != "" {
				return filepath.SkipDir
			}
			// Every entry counts, directories and other files too: the
			// walk is bounded whatever the tree holds.
			if seen++; seen > maxAgentFiles {
				return filepath.SkipAll
			}
			if e.IsDir() || !strings.HasSuffix(p, ".md") || !e.Type().IsRegular() {
				return nil
			}
			b, err := readAgentFile(p)
			if err != nil {
				return nil
			}
			if agentNameOf(b, strings.TrimSuffix(e.Name(), ".md")) == name {
				rel, _ := filepath.Rel(d.abs, p)
				file, content = d.shown+"/"+filepath.ToSlash(rel), b
				return filepath.SkipAll
			}
			return nil
		})
		if file != "" {
			return file, content
		}
	}
	return "", nil
}

// agentNameOf reads an agent definition's front matter name ("name:
// x"), or fallback when it has none.
func agentNameOf(def []byte, fallback string) string {
	text := strings.ReplaceAll(string(def), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return fallback
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return fallback
	}
	for _, line := range strings.Split(front, "\n") {
		if v, ok := strings.CutPrefix(line, "name:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return fallback
}

// readAgentFile reads an agent definition, bounded (a FIFO is refused,
// not waited on).
func readAgentFile(p string) ([]byte, error) { return state.ReadRegular(p, 256<<10) }

// ConfigValue is one setting as it applies, and where it comes from.
type ConfigValue struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // "default", the file, or "$ORCH_HOOK_STOP_CAP"
}

// EffectiveValues lists every setting of a snapshot with its source;
// stopCapEnv is $ORCH_HOOK_STOP_CAP (0 unset), which overrides the file.
func EffectiveValues(c *gates.ConfigSnapshot, stopCapEnv int) []ConfigValue {
	s, d := c.Effective(), gates.DefaultSettings()
	source := func(same bool) string {
		if same || c == nil || c.File == "" {
			return "default"
		}
		return c.File
	}
	var out []ConfigValue
	for _, r := range gates.LimitRanges {
		v, def := *r.Of(&s.Limits), *r.Of(&d.Limits)
		cv := ConfigValue{Key: "limits." + r.Name, Value: strconv.Itoa(v), Source: source(v == def)}
		if r.Name == "stop_cap" && stopCapEnv > 0 {
			cv.Value, cv.Source = strconv.Itoa(stopCapEnv), "$ORCH_HOOK_STOP_CAP"
		}
		out = append(out, cv)
	}
	onOff := map[bool]string{true: "on", false: "off"}
	out = append(out, ConfigValue{Key: "steps.ux_dx_review", Value: onOff[s.Steps.UXDXReview], Source: source(s.Steps.UXDXReview == d.Steps.UXDXReview)})
	for _, role := range Roles() {
		if agent, ok := s.Agents[role]; ok {
			out = append(out, ConfigValue{Key: "agents." + role, Value: agent, Source: source(false)})
		}
	}
	out = append(out, ConfigValue{Key: "record.redact_request", Value: onOff[s.RedactRequest], Source: source(!s.RedactRequest)})
	return out
}

// ConfigOf is the configuration a checkpoint's workflow runs by: its
// snapshot, or the defaults (nil) for one that has none.
func ConfigOf(cp *state.Checkpoint) *gates.ConfigSnapshot {
	switch cp.StateMachine.WorkflowConfig.Command {
	case "orchestrate":
		if w, err := LoadWorkflow(cp); err == nil {
			return w.Config
		}
	case "coordinate":
		if c, err := LoadCoord(cp); err == nil {
			return c.Config
		}
	}
	return nil
}

// ConfigSchemaID is the configuration's JSON Schema's $id.
const ConfigSchemaID = "https://github.com/orch-hook/orch-hook/raw/main/internal/app/config-v1.schema.json"

// ConfigSchema is the configuration file's JSON Schema (draft 2020-12), built
// from the same tables ParseConfig reads by; internal/app/config-v1.schema.json
// is it, written by `go test ./internal/app -update` and compared by the
// tests.
func ConfigSchema() ([]byte, error) {
	type obj = map[string]any
	limits := obj{}
	d := gates.DefaultSettings()
	for _, r := range gates.LimitRanges {
		limits[r.Name] = obj{"type": "integer", "minimum": r.Min, "maximum": r.Max, "default": *r.Of(&d.Limits), "description": r.What}
	}
	agents := obj{}
	for _, role := range Roles() {
		agents[role] = obj{"type": "string", "pattern": reAgentName.Regexp().String(), "maxLength": maxAgentName, "description": "the team's agent that plays " + role + " (it must end with " + role + "'s result lines)"}
	}
	schema := obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  ConfigSchemaID,
		"title":                "orch-hook team configuration (" + gates.ConfigFile + ")",
		"description":          "README, \"Team configuration\". orch-hook also refuses a key given twice, an agent mapped to a role's or Claude Code's own name, and one agent for two roles.",
		"type":                 "object",
		"additionalProperties": false,
		"properties": obj{
			"$schema": obj{"type": "string"},
			"version": obj{"const": ConfigVersion},
			"limits":  obj{"type": "object", "additionalProperties": false, "properties": limits},
			"steps": obj{"type": "object", "additionalProperties": false, "properties": obj{
				"ux_dx_review": obj{"type": "boolean", "default": true, "description": "orchestrate's step 5b (the UX/DX review) runs when a task asks for it"},
			}},
			"agents": obj{"type": "object", "additionalProperties": false, "properties": agents},
			"record": obj{"type": "object", "additionalProperties": false, "properties": obj{
				"redact_request": obj{"type": "boolean", "default": false, "description": "keep only the request's SHA-256 in the workflow's state, log and record"},
			}},
		},
	}
	b, err := json.MarshalIndent(schema, "", "  ")
	return append(b, '\n'), err
}

// logged is the call as the log keeps it: with redact, the requests it
// carries (a typed start or follow-up, the follow-up skill's arguments,
// the user's own prompts) are hashed, as the workflow keeps them (gates.RedactedRequest, which a
// replay leaves as they are).
func logged(call *gates.Call, redact bool) *gates.Call {
	if !redact || call == nil {
		return call
	}
	c := *call
	if c.Event == gates.UserPromptSubmit && !gates.IsNotification(c.Prompt) {
		name, args, ok := gates.UserCommand(c.Prompt)
		switch {
		case ok && args != "" && (name == "orchestrate" || name == "coordinate" || name == "follow-up" || name == "request-changes"):
			c.Prompt = "/orch-hook:" + name + " " + redactArgs(name, args)
		case ok && name == "abort" && strings.TrimSpace(args) != "":
			c.Prompt = "/orch-hook:abort " + gates.RedactedRequest(strings.TrimSpace(args))
		case ok && name == "resolve":
			// The decision is the first word; what follows is the user's.
			if word, rest, more := strings.Cut(args, " "); more && strings.TrimSpace(rest) != "" {
				c.Prompt = "/orch-hook:" + name + " " + word + " " + gates.RedactedRequest(strings.TrimSpace(rest))
			}
		case !ok && !strings.HasPrefix(strings.TrimSpace(c.Prompt), "/"):
			// The user's own words, where requests are typed: the gates
			// read of them only that they are not a command.
			c.Prompt = gates.RedactedRequest(c.Prompt)
		}
	}
	if c.Skill != "" && c.SkillArgs != "" {
		if name, ok := gates.CommandName(strings.ToLower(c.Skill)); ok && name == "follow-up" {
			c.SkillArgs = redactArgs(name, c.SkillArgs)
		}
	}
	return &c
}

// redactArgs hashes a command's request, keeping the words that are not
// it: a follow-up's kind, coordinate's --scope option.
func redactArgs(name, args string) string {
	keep := ""
	switch name {
	case "follow-up":
		if kind, rest, ok := strings.Cut(strings.TrimSpace(args), " "); ok {
			keep, args = kind+" ", rest
		}
	case "coordinate":
		if scope, rest, err := scopeOption(args, ""); err == nil && scope != "" {
			keep, args = "--scope "+scope+" ", rest
		}
	}
	return keep + gates.RedactedRequest(strings.TrimSpace(args))
}
