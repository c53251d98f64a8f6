package gates

import "strings"

// bashFacts is what the rules read of one Bash command (gates/shell.go
// does the reading): the command is scanned once per call, and each fact
// computed at most once, as the scan is the costly part of a Bash decision.
type bashFacts struct {
	scan            *shScan
	named, allowed  bool // names the binary; only as a plain read-only command
	binaryComputed  bool
	changes         bool // may change files
	changesComputed bool
	sweeps          bool // changes files across the whole tree
	sweepsComputed  bool
	mentions        map[string]bool
}

func (c *Call) facts() *bashFacts {
	if c.bash == nil {
		c.bash = &bashFacts{scan: shellScan(c.Command), mentions: map[string]bool{}}
	}
	return c.bash
}

// namesBinary: the command names the orch-hook binary, and whether only as
// a plain read-only invocation (the table in subcommands.go decides which).
func (c *Call) namesBinary() (named, allowed bool) {
	f := c.facts()
	if !f.binaryComputed {
		f.named, f.allowed = f.scan.namesBinary(ReadOnlyArgs)
		f.binaryComputed = true
	}
	return f.named, f.allowed
}

// mentions: the command may denote dir (project-relative) or under it.
func (c *Call) mentions(dir string) bool {
	f := c.facts()
	m, ok := f.mentions[dir]
	if !ok {
		m = f.scan.mentionsPath(c.CwdRel, dir)
		f.mentions[dir] = m
	}
	return m
}

// changesFiles: the command may change files (a heuristic: ChangesFiles).
func (c *Call) changesFiles() bool {
	f := c.facts()
	if !f.changesComputed {
		f.changes, f.changesComputed = f.scan.changesFiles(), true
	}
	return f.changes
}

// TouchesState: the command denotes the state directory at all, or may
// change anything under .orchestrator (the plan). Bash is not parsed for
// writes elsewhere; this guards what the gates stand on, and Claude Code's
// sandbox is what makes it hold (README, "Threat model").
func (c *Call) TouchesState() bool {
	return c.mentions(StateDir) || c.changesUnder(".orchestrator") || c.sweeps() || c.namesSeal()
}

// sealDirs are orch-hook's directories outside the project (under the
// user's config directory): the workflows' keys and markers (README,
// "State"). A command naming them is refused like one naming the state;
// the sandbox's denyRead on the keys is what makes it hold.
var sealDirs = []string{"orch-hook/keys", "orch-hook/active"}

// namesSeal: the command's text names a seal directory, once quotes and
// backslashes are taken out and case folded.
func (c *Call) namesSeal() bool {
	text := strings.ToLower(strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(c.Command))
	for _, d := range sealDirs {
		if strings.Contains(text, d) {
			return true
		}
	}
	return false
}

// sweeps: the command changes files across the whole tree (git clean -x,
// find . -delete, fd -x, rsync --delete ., prettier --write .) and so
// reaches .orchestrator unnamed.
func (c *Call) sweeps() bool {
	f := c.facts()
	if !f.sweepsComputed {
		f.sweeps, f.sweepsComputed = f.scan.sweepsProject(c.CwdRel), true
	}
	return f.sweeps
}

// changesUnder: the command denotes dir (or under it) and may change files.
func (c *Call) changesUnder(dir string) bool {
	return c.mentions(dir) && c.changesFiles()
}

// Reaches: the command may change files in dir, naming it or a directory
// above it (below the root): `cd specs; printf > 001_x/reports/a.md`,
// `cd specs && tar -xf x.tar`, `cp -r x specs`.
func (c *Call) Reaches(dir string) bool {
	return c.changesUnder(dir) || c.changesFiles() && c.facts().scan.changesAbove(c.CwdRel, dir)
}

// StateWhat says why a command touching the state is refused, and what to
// do instead.
func (c *Call) StateWhat() string {
	if c.namesSeal() && !c.mentions(StateDir) {
		return "commands that name orch-hook's keys or markers (~/.config/orch-hook/keys, ~/.config/orch-hook/active) are not allowed: they seal the workflow's state. Use `orch-hook status` to see it."
	}
	if !c.mentions(StateDir) && !c.changesUnder(".orchestrator") {
		return "this command changes files across the whole project (git clean -d or -x, git stash -u or --all, find . -delete or -exec, fd -x, rg --pre, rsync --delete into it, a Markdown or JSON formatter such as prettier --write .), which reaches orch-hook's .orchestrator without naming it: narrow it to the directories you mean (find src ..., prettier --write src, git clean -fd src, git stash without -u)."
	}
	what := "commands that name .orchestrator/state, or change or remove anything under .orchestrator, are not allowed: it is orch-hook's state and plan. Use `orch-hook status` or `orch-hook log` to read the state, and Write/Edit for the plan where the workflow allows it."
	if !c.mentions(StateDir) { // a write near the plan: perhaps meant as a read
		what += " " + readPlanHint
	}
	return what
}

// readPlanHint says how Bash may read the plan: what the Bash rule takes
// as a read (README, "Threat model").
const readPlanHint = "To read the plan from Bash, use a command that only reads (cat, grep, ls, head; git diff, log, show or status with plain options) with output to the terminal, a pipe into a reader, /dev/null or another descriptor (2>/dev/null, 2>&1); not with a redirection to a file, nor git with -c, --config-env, a VAR=value assignment, --output/-o, --ext-diff or --textconv."
