// Package templates holds the plugin's Markdown commands and agents as Go
// templates (embedded), and renders them, with the hook registrations, for
// the two ways orch-hook is installed: as a Claude Code plugin (commands/,
// agents/, hooks/hooks.json and settings.json at the repository root) or
// into a project's own .claude/ by `orch-hook init`.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/jsonenc"
)

//go:embed commands/*.md.tmpl agents/*.md.tmpl partials/*.md.tmpl
var sources embed.FS

// Target is one way of installing orch-hook.
type Target struct {
	Name string
	// AgentPrefix namespaces agent types: "orch-hook:" for the plugin.
	AgentPrefix string
	// CommandPrefix is how commands are typed: "/orch-hook:" or "/orch-hook-".
	CommandPrefix string
	// Version is the plugin's version (plugin target only).
	Version string
	// Binary is how commands reach orch-hook.
	Binary string
	// hookBinary is what the hooks run ("" for init: Binary from PATH).
	hookBinary  string
	commandFile func(name string) string
	agentFile   func(name string) string
	// hooksFile is where the plugin's hook registrations go ("" for init,
	// which merges them into .claude/settings.json).
	hooksFile string
	// settingsFile is the plugin's own settings.json, which sets the
	// subagentStatusLine ("" for init: a project's settings are its
	// users').
	settingsFile string
}

// PluginBinary is where the plugin's hooks run the binary of a version:
// the plugin's data directory, which survives plugin updates (the plugin
// root is replaced), one directory per version. hooks/bootstrap.sh puts it
// there at the first SessionStart of that version (README, "How the plugin
// gets its binary").
func PluginBinary(version string) string {
	return "${CLAUDE_PLUGIN_DATA}/bin/" + version + "/orch-hook"
}

// PluginCommandBinary is how the plugin's commands and the model reach the
// binary: the copy the dispatcher links into the plugin root's bin/.
const PluginCommandBinary = "${CLAUDE_PLUGIN_ROOT}/bin/orch-hook"

// Plugin is the repository root as a Claude Code plugin of a version (the
// one in .claude-plugin/plugin.json).
func Plugin(version string) Target {
	return Target{
		Name:          "plugin",
		Version:       version,
		AgentPrefix:   gates.PluginPrefix,
		CommandPrefix: "/orch-hook:",
		Binary:        PluginCommandBinary,
		hookBinary:    PluginBinary(version),
		commandFile:   func(n string) string { return "commands/" + n + ".md" },
		agentFile:     func(n string) string { return "agents/" + n + ".md" },
		hooksFile:     "hooks/hooks.json",
		settingsFile:  "settings.json",
	}
}

// Init is a project's own .claude/, written by `orch-hook init`: agents
// under their bare names, commands as /orch-hook-<name>, the binary found
// on PATH (so the settings work for everyone who clones the project).
var Init = Target{
	Name:          "init",
	AgentPrefix:   "",
	CommandPrefix: "/orch-hook-",
	Binary:        "orch-hook",
	commandFile:   func(n string) string { return ".claude/commands/orch-hook-" + n + ".md" },
	agentFile:     func(n string) string { return ".claude/agents/" + n + ".md" },
}

// Agent is how the orchestrator names an agent.
func (t Target) Agent(name string) string { return t.AgentPrefix + name }

// Command is how the user types a command.
func (t Target) Command(name string) string { return t.CommandPrefix + name }

// lines are the result lines the gates expect, by the key templates use.
var lines = map[string]string{
	"clear":         orchestrate.LineClear,
	"questions":     orchestrate.LineQuestions,
	"discovery":     orchestrate.LineDiscovery,
	"gate-pass":     orchestrate.LineGatePass,
	"gate-fail":     orchestrate.LineGateFail,
	"ux-pass":       orchestrate.LineUXPass,
	"ux-fail":       orchestrate.LineUXFail,
	"impl-complete": gates.LineImplComplete,
	"impl-blocked":  gates.LineImplBlocked,
	"analysis":      orchestrate.LineAnalysis,
	"extraction":    orchestrate.LineExtraction,
	// The task lists: a quality-gate FAIL names the failing tasks;
	// FAILURE_ANALYSIS names the tasks to fix when the gate named none.
	"failing-tasks": orchestrate.LineFailingTasks,
	"fix-tasks":     orchestrate.LineFixTasks,
	// The coordinate workflow.
	"report-created":      coordinate.LineReportCreated,
	"plan-created":        coordinate.LinePlanCreated,
	"supervisor-complete": coordinate.LineSupervisorComplete,
	"supervisor-failed":   coordinate.LineSupervisorFailed,
	"tests-pass":          coordinate.LineTestsPass,
	"tests-fail":          coordinate.LineTestsFail,
	"tests-created":       coordinate.LineTestsCreated,
	"validation-pass":     coordinate.LineValidationPass,
	"validation-fail":     coordinate.LineValidationFail,
}

// Line returns a result line by key; an unknown key fails the render.
func (t Target) Line(key string) (string, error) {
	if l, ok := lines[key]; ok {
		return l, nil
	}
	return "", fmt.Errorf("unknown result line %q", key)
}

// MaxRounds is the clarification-round limit the texts quote.
func (t Target) MaxRounds() int { return orchestrate.MaxRounds }

// MaxDiscovery is the discovery limit the texts quote.
func (t Target) MaxDiscovery() int { return orchestrate.MaxDiscovery }

// MaxFixIterations is how many 4b failures of a phase escalate.
func (t Target) MaxFixIterations() int { return orchestrate.MaxFixIterations }

// MaxBlocked is how many IMPLEMENTATION STATUS: BLOCKED results make a task
// count as returned (the first, then MaxBlockedRetry relaunches).
func (t Target) MaxBlocked() int { return orchestrate.MaxBlockedRetry + 1 }

// MaxDebugRetries is the coordinate workflow's debug -> test retry limit.
func (t Target) MaxDebugRetries() int { return coordinate.MaxDebugRetries }

// MinWorkers is how many workers must succeed for a supervisor with failed
// workers to report SUPERVISOR_COMPLETE.
func (t Target) MinWorkers() int { return coordinate.MinSuccessfulWorkers }

// MaxSummaryWords bounds a supervisor's summary.
func (t Target) MaxSummaryWords() int { return coordinate.MaxSummaryWords }

// MaxKeyFindings bounds a supervisor's key_findings.
func (t Target) MaxKeyFindings() int { return coordinate.MaxKeyFindings }

// Supervisor parameterizes templates/partials/supervisor.md.tmpl, the one
// text of the three sub-supervisors; an agent template includes it with
// {{template "supervisor" (supervisor . "<kind>")}}. The partial switches on
// Kind for the aggregated fields.
type Supervisor struct {
	Target
	Kind   string // research, implementation or testing
	Self   string // the supervisor agent
	Worker string // the worker agent it launches
	Unit   string // one worker's unit of work: topic, track, test stage
	Units  string // the plural
	// First is a worker prompt's first line, naming its unit.
	First string
}

// supervisors are the three kinds of sub-supervisor.
var supervisors = map[string]Supervisor{
	"research": {
		Kind: "research", Self: coordinate.ResearchSupervisor, Worker: coordinate.ResearchSpecialist,
		Unit: "topic", Units: "topics", First: "Topic: <topic>",
	},
	"implementation": {
		Kind: "implementation", Self: coordinate.ImplSupervisor, Worker: coordinate.ImplementationExec,
		Unit: "track", Units: "tracks", First: "Track N: <phase title>",
	},
	"testing": {
		Kind: "testing", Self: coordinate.TestSupervisor, Worker: coordinate.TestSpecialist,
		Unit: "test stage", Units: "test stages", First: "Stage: <generation|execution|validation>",
	},
}

// funcs are the functions templates may call.
var funcs = template.FuncMap{
	// underscore turns an agent name into an id prefix.
	"underscore": func(s string) string { return strings.ReplaceAll(s, "-", "_") },
	"supervisor": func(t Target, kind string) (Supervisor, error) {
		s, ok := supervisors[kind]
		if !ok {
			return Supervisor{}, fmt.Errorf("unknown supervisor kind %q", kind)
		}
		s.Target = t
		return s, nil
	},
}

// names lists a template directory's templates by name.
func names(dir string) []string {
	entries, _ := fs.ReadDir(sources, dir)
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".md.tmpl"))
	}
	sort.Strings(out)
	return out
}

// partials parses templates/partials/: each file {{define}}s the
// templates commands and agents include with {{template}}.
func partials() (*template.Template, error) {
	base := template.New("").Funcs(funcs).Option("missingkey=error")
	for _, name := range names("partials") {
		src, err := sources.ReadFile(path.Join("partials", name+".md.tmpl"))
		if err != nil {
			return nil, err
		}
		if _, err := base.New("partials/" + name).Parse(string(src)); err != nil {
			return nil, fmt.Errorf("partials/%s: %w", name, err)
		}
	}
	return base, nil
}

// Render returns every file of the target, by path relative to its root.
func Render(t Target) (map[string][]byte, error) {
	base, err := partials()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, kind := range []string{"commands", "agents"} {
		for _, name := range names(kind) {
			src, err := sources.ReadFile(path.Join(kind, name+".md.tmpl"))
			if err != nil {
				return nil, err
			}
			set, err := base.Clone()
			if err != nil {
				return nil, err
			}
			tmpl, err := set.New(name).Parse(string(src))
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", kind, name, err)
			}
			var b bytes.Buffer
			if err := tmpl.Execute(&b, t); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", kind, name, err)
			}
			file := t.commandFile(name)
			if kind == "agents" {
				file = t.agentFile(name)
			}
			out[file] = b.Bytes()
		}
	}
	if t.hooksFile != "" {
		b, err := jsonenc.Indent(HooksFile{Description: "orch-hook: enforce the orchestrate and coordinate workflows (see README.md)", Hooks: Hooks(t)})
		if err != nil {
			return nil, err
		}
		out[t.hooksFile] = append(b, '\n')
	}
	if t.settingsFile != "" {
		b, err := jsonenc.Indent(PluginSettings{SubagentStatusLine: &StatusLineCommand{Type: "command", Command: SubagentStatusLineCommand(t)}})
		if err != nil {
			return nil, err
		}
		out[t.settingsFile] = append(b, '\n')
	}
	return out, nil
}

// PluginSettings is the plugin's settings.json. Claude Code takes two keys
// from a plugin's settings, agent and subagentStatusLine (observed:
// internal/dev/e2e/testdata/observed); a statusLine there is dropped.
type PluginSettings struct {
	SubagentStatusLine *StatusLineCommand `json:"subagentStatusLine,omitempty"`
}

// StatusLineCommand is a status line setting: a command run through sh,
// its JSON on stdin.
type StatusLineCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// SubagentStatusLineCommand is the plugin's subagentStatusLine: the agent
// panel's rows labelled by `orch-hook subagent-statusline` (README,
// "Status line"). It runs the binary of this version, as the hooks do
// (the command gets ${CLAUDE_PLUGIN_DATA}, and the plugin's settings.json
// is replaced with the plugin at each update); while that binary is
// missing it exits 0 and prints nothing, so the rows stay Claude Code's
// own. It takes no lock and writes nothing.
func SubagentStatusLineCommand(t Target) string {
	return fmt.Sprintf(`b="%s"; [ -x "$b" ] && exec "$b" subagent-statusline; exit 0`, t.hookBinary)
}

// HooksFile is hooks/hooks.json.
type HooksFile struct {
	Description string                   `json:"description"`
	Hooks       map[string][]HookMatcher `json:"hooks"`
}

// HookMatcher is one entry of an event's list in hooks.json or settings.json.
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookCommand runs orch-hook for one event.
type HookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookEvents: every event the workflow needs, with the narrowest matcher
// it allows (each spawn costs milliseconds on every matching call), and
// whether the event gates (so a missing binary must deny, not pass).
var hookEvents = []struct {
	event, matcher string
	gating         bool
}{
	{gates.PreToolUse, "Agent|Task|Write|Edit|NotebookEdit|Bash|Skill|SendMessage|Workflow|mcp__.*", true},
	{gates.PostToolUse, "Agent|Task|Write|Edit|NotebookEdit", false},
	{gates.PostToolUseFailure, "Agent|Task|Bash", false},
	{gates.SubagentStop, "", false},
	{gates.Stop, "", false},
	{gates.UserPromptSubmit, "", false},
	{gates.UserPromptExpansion, "", false},
	{gates.SessionStart, "", false},
	{gates.SessionEnd, "", false},
}

// HookTimeout is the seconds Claude Code gives each hook: far above the 5 s
// lock wait of a gate, so a gate is never killed mid-decision (which would
// let the call through). The binary is told one second less (--budget): a
// completion waits that long for the state lock rather than be dropped.
const HookTimeout = 15

// Hooks returns the hook registrations of the target.
func Hooks(t Target) map[string][]HookMatcher {
	out := map[string][]HookMatcher{}
	for _, h := range hookEvents {
		out[h.event] = []HookMatcher{{Matcher: h.matcher, Hooks: []HookCommand{{Type: "command", Command: hookCommandLine(t, h.event, h.gating), Timeout: HookTimeout}}}}
	}
	return out
}

// hookCommandLine is the shell line Claude Code runs. When the binary is
// there it is exec'ed (no extra process). When it is missing, a gating
// event is denied while a workflow is active, saying how to install it;
// everything else passes. The plugin's SessionStart runs the dispatcher,
// which installs it.
func hookCommandLine(t Target, event string, gating bool) string {
	var b strings.Builder
	if t.Name == "plugin" {
		fmt.Fprintf(&b, `b="%s"; [ -x "$b" ] && exec "$b" hook --budget %ds %s; `, t.hookBinary, HookTimeout-1, event)
	} else {
		fmt.Fprintf(&b, `b=orch-hook; command -v "$b" >/dev/null 2>&1 && exec "$b" hook --budget %ds %s; `, HookTimeout-1, event)
	}
	// The printf format is single-quoted; the paths go in as arguments,
	// without backslashes, quotes and control characters (JSON would need
	// them escaped, a raw one makes the answer invalid, which lets the
	// call through, and the command quotes them for sh).
	// (The paths are cleaned into variables first: claude plugin validate
	// --strict reads "$(printf %s "$CLAUDE_PLUGIN_DATA" ...)" as unquoted.)
	install, pre, args, post := `put orch-hook on PATH (in a clone of orch-hook: make build, then copy bin/orch-hook to a directory on PATH)`, "", "", ""
	if t.Name == "plugin" {
		install = `CLAUDE_PLUGIN_DATA='\''%s'\'' sh '\''%s/hooks/bootstrap.sh'\'' install ` + t.Version + ` (the session start message says what failed)`
		pre = `{ d=$(printf %s "$CLAUDE_PLUGIN_DATA" | tr -d '\000-\037\134\042\047'); r=$(printf %s "$CLAUDE_PLUGIN_ROOT" | tr -d '\000-\037\134\042\047'); `
		args, post = ` "$d" "$r"`, `; }`
	}
	switch {
	case gating:
		fmt.Fprintf(&b, `f="${CLAUDE_PROJECT_DIR:-.}/.orchestrator/state/checkpoint.json"; [ -f "$f" ] && ! grep -Eq '"current_state": ?"(complete|aborted)"' "$f" && %sprintf '{"hookSpecificOutput":{"hookEventName":"%s","permissionDecision":"deny","permissionDecisionReason":"orch-hook: its binary is not installed, so this call cannot be checked against the active workflow. Ask the user to install it: %s."}}\n'%s%s; exit 0`, pre, event, install, args, post)
	case event == gates.SessionStart && t.Name == "plugin":
		fmt.Fprintf(&b, `exec sh "${CLAUDE_PLUGIN_ROOT}/hooks/bootstrap.sh" session-start %s`, t.Version)
	default:
		b.WriteString("exit 0")
	}
	return b.String()
}

// optionalLines are result lines the gates read when present but never
// require (the failing tasks a quality gate names, the tasks a
// FAILURE_ANALYSIS fixes).
var optionalLines = map[string]bool{"failing-tasks": true, "fix-tasks": true}

// PromisedLines are the result lines a role's own agent definition tells
// it to end with (one of them, by its job), sorted: what a team's agent
// mapped to the role must promise too (README, "Team configuration").
// ok is false for a name that is no role.
func PromisedLines(role string) (promised []string, ok bool, err error) {
	files, err := Render(Plugin("0"))
	if err != nil {
		return nil, false, err
	}
	def, ok := files[Plugin("0").agentFile(role)]
	if !ok {
		return nil, false, nil
	}
	for key, line := range lines {
		if !optionalLines[key] && bytes.Contains(def, []byte(line)) {
			promised = append(promised, line)
		}
	}
	sort.Strings(promised)
	return promised, true, nil
}
