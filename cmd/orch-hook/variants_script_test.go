package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/internal/status"
)

// A script is a workflow as actions: what the orchestrator, the user and
// the agents do, each with what must hold after it. Variants change a
// base script (variants_base_test.go) with the methods and builders here.

// actionKind says what an action is.
type actionKind int

const (
	kindLaunch actionKind = iota // an Agent call and the agent's run to its end
	kindGroup                    // several Agent calls in one message
	kindPrompt                   // a prompt the user types
	kindWrite                    // the orchestrator's Write of a plan file
	kindEdit                     // the orchestrator's Edit of a plan file
	kindTick                     // a Write ticking a phase of MASTER_PLAN.md, computed from the file
	kindStop                     // the orchestrator's turn ends (Stop)
	kindBash                     // a Bash command of the orchestrator
	kindDisk                     // files changed without any hook (what a shell command does)
)

// action is one step of a script. Only the fields of its kind are used.
type action struct {
	key  string
	kind actionKind

	// kindLaunch.
	agent       string // without the orch-hook: prefix
	prompt      string
	description string
	foreground  bool   // run_in_background: false; else true (Claude Code's default)
	omitMode    bool   // no run_in_background at all (Claude Code then runs it in the background)
	tool        string // the tool's name: "Agent" (default) or "Task" (older Claude Code)
	report      string // the agent's last message
	writes      []fileWrite
	// noSubagentStop: the agent's SubagentStop hook never ran (the
	// notification or PostToolUse must complete it).
	noSubagentStop bool
	// arrival reorders the hooks of the agent's end, as Claude Code may
	// deliver them: arrivalNormal, or one of the others.
	arrival arrival
	// endStatus is a background agent's notification status when it did
	// not complete ("failed", "killed"); its SubagentStop does not run.
	endStatus string
	// launchError: Claude Code failed the Agent call itself
	// (PostToolUseFailure), so the agent never ran.
	launchError string

	// kindGroup: launches in one message, completing in order (indices
	// into members; nil: as listed). For foreground members, stopsFirst
	// sends every SubagentStop before the PostToolUses (agents running
	// side by side), else each PostToolUse follows its SubagentStop.
	members    []*action
	order      []int
	stopsFirst bool

	// kindPrompt.
	text string

	// kindWrite, kindEdit, kindTick: a file in .orchestrator/tasks.
	file       string
	content    string // kindWrite
	old, new   string // kindEdit
	replaceAll bool   // kindEdit
	phase      int    // kindTick

	// kindBash.
	command string

	// kindDisk: project-relative paths.
	files map[string]string

	// want is checked after the action (and the fixes it set off).
	want want
}

// arrival is the order in which the hooks of a launch arrive.
type arrival int

const (
	// arrivalNormal: background: PostToolUse (async_launched), Stop,
	// SubagentStop, notification; foreground: SubagentStop, PostToolUse.
	arrivalNormal arrival = iota
	// arrivalNotificationFirst: a background agent's notification before
	// its SubagentStop.
	arrivalNotificationFirst
	// arrivalPostFirst: a foreground agent's PostToolUse before its
	// SubagentStop.
	arrivalPostFirst
	// arrivalStopBeforeLaunched: a background agent so fast that its
	// SubagentStop comes before the PostToolUse that says it was launched.
	arrivalStopBeforeLaunched
)

// fileWrite is a file an agent writes with its Write tool.
type fileWrite struct {
	path    string // project-relative
	content string
}

// want is what must hold after an action: read in `orch-hook status
// --json`, and in what the orchestrator was told during it.
type want struct {
	state string
	// context: substrings of what the hooks told the orchestrator during
	// the action (additionalContext, and the reasons of refusals).
	context []string
	// failing: the tasks status marks failing, in any phase (nil: not
	// checked; use tasks() for none).
	failing *[]int
	// fixIterations: the counter's value (nil: not checked).
	fixIterations *int
	// plan: what orch-hook read of the plan.
	plan *planWant
	// check is anything else; it returns "" when it holds, else expected
	// vs read.
	check func(r *status.Report) string
}

// tasks is a failing-task expectation: tasks() is none.
func tasks(n ...int) *[]int {
	if n == nil {
		n = []int{}
	}
	return &n
}

func count(n int) *int { return &n }

// planWant is what orch-hook must read of the plan: the tasks of each
// phase, each task's Depends On, Files and requires_ux_dx_review.
type planWant struct {
	phases [][]int
	deps   map[int][]int
	files  map[int][]string
	ux     []int // the tasks flagged requires_ux_dx_review: true
}

// script is a workflow as actions, and what must hold at its end.
type script struct {
	actions []*action
	// end is what must hold after the last action.
	end want
}

// find returns the action named key, at top level or in a group, and the
// list holding it.
func (s *script) find(key string) (list *[]*action, i int, a *action) {
	var walk func(l *[]*action) bool
	walk = func(l *[]*action) bool {
		for j, x := range *l {
			if x.key == key {
				list, i, a = l, j, x
				return true
			}
			if walk(&x.members) {
				return true
			}
		}
		return false
	}
	if !walk(&s.actions) {
		panic(fmt.Sprintf("script: no action %q", key))
	}
	return list, i, a
}

// at is the action named key (a variant changes it in place).
func (s *script) at(key string) *action {
	_, _, a := s.find(key)
	return a
}

// replace puts acts where the action named key was.
func (s *script) replace(key string, acts ...*action) {
	l, i, _ := s.find(key)
	*l = slices.Concat((*l)[:i:i], acts, (*l)[i+1:])
}

// insertAfter puts acts right after the action named key.
func (s *script) insertAfter(key string, acts ...*action) {
	l, i, _ := s.find(key)
	*l = slices.Concat((*l)[:i+1:i+1], acts, (*l)[i+1:])
}

// insertBefore puts acts right before the action named key.
func (s *script) insertBefore(key string, acts ...*action) {
	l, i, _ := s.find(key)
	*l = slices.Concat((*l)[:i:i], acts, (*l)[i:])
}

// launches lists every launch of the script, groups' members included.
func (s *script) launches() []*action {
	var out []*action
	for _, a := range s.actions {
		switch a.kind {
		case kindLaunch:
			out = append(out, a)
		case kindGroup:
			out = append(out, a.members...)
		}
	}
	return out
}

// Builders, so that scripts read as what happens.

// launch is an Agent call of agent (in the background, Claude Code's
// default) whose run ends with report.
func launch(key, agent, prompt, report string) *action {
	return &action{key: key, kind: kindLaunch, agent: agent, prompt: prompt, report: report, description: describe(prompt)}
}

// describe is the Agent description a model would give: a few words.
func describe(prompt string) string {
	words := strings.Fields(strings.Split(prompt, "\n")[0])
	return strings.Join(words[:min(len(words), 4)], " ")
}

func (a *action) fg() *action                  { a.foreground = true; return a }
func (a *action) expecting(w want) *action     { a.want = w; return a }
func (a *action) describedAs(d string) *action { a.description = d; return a }
func (a *action) writing(path, content string) *action {
	a.writes = append(a.writes, fileWrite{path, content})
	return a
}

// together launches members in one message.
func together(key string, members ...*action) *action {
	return &action{key: key, kind: kindGroup, members: members}
}

func userPrompt(key, text string) *action { return &action{key: key, kind: kindPrompt, text: text} }

func writePlanFile(key, file, content string) *action {
	return &action{key: key, kind: kindWrite, file: file, content: content}
}

func editPlanFile(key, file, old, new string) *action {
	return &action{key: key, kind: kindEdit, file: file, old: old, new: new}
}

func tickPhase(key string, phase int) *action {
	return &action{key: key, kind: kindTick, file: "MASTER_PLAN.md", phase: phase}
}

func stopTurn(key string) *action { return &action{key: key, kind: kindStop} }

// bashCommand is a Bash call of the orchestrator (only its PreToolUse
// is gated; give the command's effect on files with onDisk), for the
// Bash-read category.
func bashCommand(key, command string) *action {
	return &action{key: key, kind: kindBash, command: command}
}

// onDisk changes project files without any hook, as a shell command or
// an editor outside Claude Code does, for the tampered-plan category. A
// file whose content is removed is deleted.
func onDisk(key string, files map[string]string) *action {
	return &action{key: key, kind: kindDisk, files: files}
}

// removed, as a file's content in onDisk, deletes the file.
const removed = "\x00removed"

// copyAction is a deep enough copy of a for a relaunch: a new key (hence
// new tool-use and agent ids), the same want.
func copyAction(a *action, key string) *action {
	c := *a
	c.key = key
	c.writes = slices.Clone(a.writes)
	c.members = nil
	return &c
}

// relaunch is the fix of a refused launch: the same launch, as the
// variant left it, with the prompt (and description) set right.
func relaunch(key, prompt, description string) func(s *script) []*action {
	return func(s *script) []*action {
		a := copyAction(s.at(key), key+"-fix")
		a.prompt, a.description = prompt, description
		return []*action{a}
	}
}

// then is a fix's redo of fixed actions.
func then(acts ...*action) func(*script) []*action {
	return func(*script) []*action { return acts }
}
