package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
	"github.com/orch-hook/orch-hook/internal/install"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
	"github.com/orch-hook/orch-hook/templates"
)

// check is one line of doctor's report.
type check struct {
	name   string
	ok     bool
	skip   bool // not run; says why
	warn   bool // passes, but the install is weaker than it could be
	detail string
	fix    string
}

// doctorSchema names doctor --json's schema; it changes only when a
// field's meaning does.
const doctorSchema = "orch-hook.doctor/1"

// doctorReport is doctor --json (README, "Seeing the workflow").
type doctorReport struct {
	Schema     string        `json:"schema"`
	Binary     string        `json:"binary"` // the binary doctor runs as, symlinks resolved
	Version    string        `json:"version"`
	Project    string        `json:"project"`
	PluginRoot string        `json:"plugin_root"` // "" when none was found
	OK         bool          `json:"ok"`          // no check failed (warnings pass)
	Checks     []doctorCheck `json:"checks"`
}

type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail or skip
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // with warn and fail
}

func (ch check) status() string {
	switch {
	case !ch.ok:
		return "fail"
	case ch.warn:
		return "warn"
	case ch.skip:
		return "skip"
	}
	return "ok"
}

// checksFailed: doctor's report, on stdout, already says which.
type checksFailed struct{ n int }

func (e *checksFailed) Error() string     { return fmt.Sprintf("doctor: %d check(s) failed", e.n) }
func (e *checksFailed) reportedOnStdout() {}

func doctorCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:         "doctor",
		Usage:        "check the install: binary, hooks (and hooks registered twice), state, Go, and the plugin (claude plugin validate)",
		OnUsageError: usageOnCommand,
		Flags: []cli.Flag{
			projectFlag,
			&cli.StringFlag{Name: "plugin-root", Usage: "the plugin root (default: $CLAUDE_PLUGIN_ROOT, else the directory above the binary's bin/)"},
			jsonFlag(doctorSchema),
		},
		Before: checkProject,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("doctor takes no arguments")
			}
			r := runDoctor(e, c.String("plugin-root"), projectStore(c))
			failed := 0
			for _, ch := range r.Checks {
				if ch.Status == "fail" {
					failed++
				}
			}
			r.OK = failed == 0
			if c.Bool("json") {
				if err := printJSON(e, r); err != nil {
					return err
				}
			} else {
				for _, ch := range r.Checks {
					line := fmt.Sprintf("%-4s %-10s %s", strings.ToUpper(ch.Status), ch.Name, ch.Detail)
					if ch.Fix != "" {
						line += " -- fix: " + ch.Fix
					}
					fmt.Fprintln(e.stdout, line)
				}
			}
			if failed > 0 {
				return &checksFailed{failed}
			}
			return nil
		},
	}
}

func runDoctor(e *env, pluginRoot string, store *state.Store) *doctorReport {
	var checks []check
	exe, err := os.Executable()
	if err == nil {
		if real, rerr := filepath.EvalSymlinks(exe); rerr == nil {
			exe = real
		}
	}
	checks = append(checks, check{name: "binary", ok: err == nil, detail: fmt.Sprintf("orch-hook %s at %s", version, exe), fix: "reinstall orch-hook"})

	if pluginRoot == "" {
		pluginRoot = e.getenv("CLAUDE_PLUGIN_ROOT")
	}
	if pluginRoot == "" {
		// The plugin's dispatcher records where it installed this binary from.
		pluginRoot = bootstrap.PluginRoot(exe)
	}
	if pluginRoot == "" && exe != "" {
		if dir := filepath.Dir(filepath.Dir(exe)); fileExists(filepath.Join(dir, ".claude-plugin", "plugin.json")) {
			pluginRoot = dir
		}
	}
	checks = append(checks, hooksCheck(pluginRoot, exe, store.Root, e.getenv("CLAUDE_PLUGIN_DATA")))
	checks = append(checks, twiceCheck(e.getenv, store.Root))

	checks = append(checks, stateChecks(store)...)

	p := install.CheckProtection(store.Root, e.getenv, nil)
	sandbox := check{name: "sandbox", ok: true, detail: p.Summary()}
	if !p.Protected {
		sandbox.warn = true
		sandbox.detail = "off: " + strings.Join(p.Problems, "; ")
		sandbox.fix = "type /orch-hook:protect in Claude Code (or run `orch-hook init --protect`); README, \"Threat model\""
		if len(p.MissingTools) > 0 {
			sandbox.fix = "install " + strings.Join(p.MissingTools, " and ") + " (Debian/Ubuntu: apt-get install bubblewrap socat), then " + sandbox.fix
		}
	}
	checks = append(checks, sandbox)
	checks = append(checks, statusLineCheck(store.Root, e.getenv))

	if gobin, err := exec.LookPath("go"); err != nil {
		// Not needed: a release ships binaries and the plugin downloads
		// them; Go is only the last resort (README, "How the plugin gets its binary").
		checks = append(checks, check{name: "go", ok: true, skip: true, detail: "Go is not on PATH: not needed with release binaries; a platform without one builds with Go 1.26.8 (go.mod)"})
	} else {
		out, _ := exec.Command(gobin, "version").Output()
		checks = append(checks, check{name: "go", ok: true, detail: strings.TrimSpace(string(out))})
	}

	if pluginRoot != "" {
		claude, err := exec.LookPath("claude")
		if err != nil {
			checks = append(checks, check{name: "plugin", ok: true, skip: true, detail: "claude is not on PATH: `claude plugin validate --strict " + pluginRoot + "` not run"})
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, claude, "plugin", "validate", "--strict", pluginRoot).CombinedOutput()
			detail := "claude plugin validate --strict " + pluginRoot + ": passed"
			if err != nil {
				detail = "claude plugin validate --strict " + pluginRoot + ": " + lastLines(string(out), 3)
			}
			checks = append(checks, check{name: "plugin", ok: err == nil, detail: detail, fix: "see the validator's message; `make generate` re-renders commands, agents, hooks.json and settings.json"})
		}
	}
	r := &doctorReport{Schema: doctorSchema, Binary: exe, Version: version, Project: store.Root, PluginRoot: pluginRoot, Checks: []doctorCheck{}}
	for _, ch := range checks {
		dc := doctorCheck{Name: ch.name, Status: ch.status(), Detail: ch.detail}
		if dc.Status == "fail" || dc.Status == "warn" {
			dc.Fix = ch.fix
		}
		r.Checks = append(r.Checks, dc)
	}
	return r
}

// hooksCheck: the hooks Claude Code runs must reach this binary.
func hooksCheck(pluginRoot, exe, projectRoot, pluginData string) check {
	if pluginRoot != "" {
		path := filepath.Join(pluginRoot, "hooks", "hooks.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return check{name: "hooks", ok: false, detail: path + " is missing", fix: "run `make generate` in the plugin root"}
		}
		var hf templates.HooksFile
		if err := json.Unmarshal(b, &hf); err != nil {
			return check{name: "hooks", ok: false, detail: path + ": " + err.Error(), fix: "run `make generate` in the plugin root"}
		}
		v, err := bootstrap.PluginVersion(pluginRoot)
		if err != nil {
			return check{name: "hooks", ok: false, detail: err.Error(), fix: "reinstall the plugin"}
		}
		want := templates.PluginBinary(v)
		for event, matchers := range hf.Hooks {
			for _, m := range matchers {
				for _, h := range m.Hooks {
					if !strings.Contains(h.Command, want) {
						return check{name: "hooks", ok: false, detail: fmt.Sprintf("%s: the %s hook does not run %s", path, event, want), fix: "run `make generate`"}
					}
				}
			}
		}
		if v != version {
			return check{name: "hooks", ok: false, detail: fmt.Sprintf("%s runs %s (version %s); this binary (%s) is version %s", path, want, v, exe, version), fix: "start a new session (the plugin installs the binary of its version), or run: CLAUDE_PLUGIN_DATA=<the plugin's data directory> sh " + filepath.Join(pluginRoot, "hooks", "bootstrap.sh") + " install " + v}
		}
		// Which file the hooks run: known inside Claude Code (the data
		// directory), or when this binary is the one the dispatcher put there.
		hookBin := ""
		if pluginData != "" {
			hookBin = filepath.Join(pluginData, "bin", v, "orch-hook")
			if !fileExists(hookBin) {
				return check{name: "hooks", ok: false, detail: fmt.Sprintf("%s runs %s, which is not installed", path, hookBin), fix: "start a new session; its message says how the binary is installed"}
			}
		} else if bootstrap.PluginRoot(exe) != "" {
			hookBin = exe
		}
		if hookBin != "" && sameFile(hookBin, exe) {
			return check{name: "hooks", ok: true, detail: fmt.Sprintf("%s runs this binary (%d events)", path, len(hf.Hooks))}
		}
		if hookBin != "" {
			return check{name: "hooks", ok: true, detail: fmt.Sprintf("%s runs %s (%d events), version %s like this binary", path, hookBin, len(hf.Hooks), v)}
		}
		return check{name: "hooks", ok: true, detail: fmt.Sprintf("%s runs %s (%d events), version %s like this binary (which file that is, the plugin's data directory, is known only inside Claude Code)", path, want, len(hf.Hooks), v)}
	}
	settings := filepath.Join(projectRoot, ".claude", "settings.json")
	b, err := os.ReadFile(settings)
	var sf templates.HooksFile
	registered := 0
	if err == nil && json.Unmarshal(b, &sf) == nil {
		for _, matchers := range sf.Hooks {
			for _, m := range matchers {
				for _, h := range m.Hooks {
					if strings.Contains(h.Command, "orch-hook") && strings.Contains(h.Command, " hook ") {
						registered++
					}
				}
			}
		}
	}
	if registered == 0 {
		return check{name: "hooks", ok: false, detail: "no orch-hook hooks found (no plugin root, and none in " + settings + ")", fix: "install the plugin (see README), or run `orch-hook init` in the project"}
	}
	onPath, err := exec.LookPath("orch-hook")
	if err != nil {
		return check{name: "hooks", ok: false, detail: settings + " runs orch-hook from PATH, but it is not on PATH", fix: buildFromClone}
	}
	return check{name: "hooks", ok: true, detail: fmt.Sprintf("%s runs %s from PATH (%d events)", settings, onPath, registered)}
}

// stateChecks: the state directory must be writable and the state loadable.
func stateChecks(store *state.Store) []check {
	var out []check
	dir := store.Dir
	probeDir := dir
	if !fileExists(dir) {
		probeDir = store.Root
	}
	f, err := os.CreateTemp(probeDir, ".orch-hook-doctor-")
	if err != nil {
		out = append(out, check{name: "state dir", ok: false, detail: probeDir + " is not writable: " + err.Error(), fix: "fix the directory's permissions"})
	} else {
		f.Close()
		os.Remove(f.Name())
		out = append(out, check{name: "state dir", ok: true, detail: probeDir + " is writable"})
	}
	cp, err := store.Load()
	switch {
	case errors.Is(err, state.ErrNoState):
		out = append(out, check{name: "state", ok: true, detail: "no workflow active in " + store.Root})
	case err != nil:
		fix := "see `orch-hook status`"
		var h interface{ Hint() string }
		if errors.As(err, &h) {
			fix = h.Hint()
		}
		out = append(out, check{name: "state", ok: false, detail: err.Error(), fix: fix})
	default:
		out = append(out, check{name: "state", ok: true, detail: fmt.Sprintf("%s workflow at %s (serial %d)", cp.StateMachine.WorkflowConfig.Command, cp.StateMachine.CurrentState, cp.Serial)})
	}
	return out
}

// buildFromClone is how to put the binary on PATH: the module is not
// published anywhere `go install ...@latest` could fetch it from.
const buildFromClone = "in a clone of orch-hook, run `make build` and put bin/orch-hook on your PATH (or run `go install ./cmd/orch-hook` there)"

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// twiceCheck: the plugin and an init install both registering orch-hook's
// hooks for the project make every hook run twice.
func twiceCheck(getenv func(string) string, root string) check {
	plugin := install.PluginLoaded(getenv, root)
	settings := install.HookSettings(root)
	key := plugin.Key
	if key == "" {
		key = install.PluginName + "@<marketplace>"
	}
	switch {
	case plugin.Loaded && len(settings) > 0:
		return check{name: "twice", ok: true, warn: true,
			detail: fmt.Sprintf("every orch-hook hook runs twice here: the plugin is on (%s) and %s registers orch-hook's hooks too (orch-hook init)", plugin.Where, strings.Join(settings, " and ")),
			fix:    fmt.Sprintf("keep one: remove the orch-hook entries from the hooks of %s, or turn the plugin off in this project (claude plugin disable %s --scope local)", strings.Join(settings, " and "), key)}
	case plugin.Loaded:
		return check{name: "twice", ok: true, detail: "orch-hook's hooks are registered once, by the plugin (" + plugin.Where + ")"}
	case len(settings) > 0:
		return check{name: "twice", ok: true, detail: "orch-hook's hooks are registered once, by " + strings.Join(settings, " and ") + " (the plugin is not on here)"}
	}
	return check{name: "twice", ok: true, skip: true, detail: "neither the plugin (by Claude Code's records) nor the project's settings register orch-hook's hooks: nothing runs twice"}
}

// sameFile reports whether a and b are the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// statusLineCheck says whether Claude Code's status line shows the
// workflow (README, "Status line"): a status line is optional, so this
// check never fails; it says how to have one, and warns when the binary
// the one orch-hook wrote runs is gone.
func statusLineCheck(root string, getenv func(string) string) check {
	cmd, file := install.StatusLine(root, getenv)
	c := check{name: "statusline", ok: true}
	const how = "type /orch-hook:statusline in Claude Code (or run `orch-hook init`)"
	switch bin := install.StatusLineBinaryOf(cmd, getenv("HOME")); {
	case bin != "":
		c.detail = file + " runs orch-hook statusline"
		if theirs := install.StatusLineChained(cmd); theirs != "" {
			c.detail += " after your own status line (" + shorten.Runes(shorten.OneLine(theirs), 60) + ")"
		}
		if _, err := exec.LookPath(bin); err != nil {
			c.warn = true
			c.detail += ", but " + bin + " is not there to run"
			c.fix = how + " to write it again with the binary of this install"
		}
	case strings.Contains(cmd, "orch-hook") && strings.Contains(cmd, "statusline"):
		c.detail = fmt.Sprintf("%s runs orch-hook statusline", file)
	case cmd != "":
		c.skip = true
		c.detail = fmt.Sprintf("your status line (%s) does not show the workflow: %s to run orch-hook's line after yours (README, \"Status line\")", file, how)
	default:
		c.skip = true
		c.detail = "no status line shows the workflow: " + how + "; it writes .claude/settings.local.json (a plugin cannot set a status line; README, \"Status line\")"
	}
	return c
}
