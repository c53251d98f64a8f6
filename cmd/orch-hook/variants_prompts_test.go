package main

import (
	"fmt"

	"github.com/orch-hook/orch-hook/internal/status"
)

// Implementer prompts: the ways models name the task a code-implementer is
// for (README, "4a": the first line of the prompt that names a task, else
// the Agent description; both the same one if both name one). Each form
// is tried on a 4a launch (Task 01, in the background, launched in one
// message with Task 02) and, for most, on the F2 fix (Task 02): orch-hook
// must read the task, so the run goes on exactly as the base does. The
// forms that name no task, two tasks or the wrong one are refused, and the
// model relaunches with the prompt set right.

// promptForm writes an implementer prompt (and description) for task n.
type promptForm struct {
	name string
	// prompt and description; the description defaults to a few words
	// of the prompt (describe).
	prompt, description func(n int, title, file string) string
	// inF2 also tries the form on the F2 fix of Task 02.
	inF2 bool
}

func promptf(f string) func(n int, title, file string) string {
	return func(n int, title, file string) string { return fmt.Sprintf(f, n, title) }
}

var acceptedPromptForms = []promptForm{
	{name: "preamble then Task NN", inF2: true, prompt: promptf("You are a careful Go engineer working on a word counter.\n\nTask %02d: %s")},
	{name: "Implement Task NN", inF2: true, prompt: promptf("Implement Task %02d: %s")},
	{name: "You are implementing Task NN", inF2: true, prompt: promptf("You are implementing Task %02d (%s) of the word counter.")},
	{name: "bracketed context first", prompt: promptf("[context: word counter in Go] Task %02d: %s")},
	{name: "task only in the description", inF2: true,
		prompt:      func(n int, title, file string) string { return "Implement the " + title + " exactly as the plan says." },
		description: promptf("Task %02d: %s")},
	{name: "bold task", inF2: true, prompt: promptf("**Task %02d**: %s")},
	{name: "task file name", inF2: true, prompt: func(n int, title, file string) string {
		return "Read .orchestrator/tasks/" + file + " and implement it."
	}},
	{name: "TASK #N", inF2: true, prompt: func(n int, title, file string) string { return fmt.Sprintf("TASK #%d: %s", n, title) }},
	{name: "lower case", prompt: promptf("task %02d: %s")},
	{name: "markdown heading", inF2: true, prompt: promptf("# Task %02d: %s\n\nImplement it as its task file says.")},
	{name: "unpadded number", prompt: func(n int, title, file string) string { return fmt.Sprintf("Task %d: %s", n, title) }},
	{name: "task-NN", prompt: promptf("task-%02d: %s")},
	{name: "other tasks on later lines", prompt: promptf("Task %02d: %s\n\nDo not touch the files of Task 03; Task 04 documents it later.")},
	{name: "starts with Task NN and names another", prompt: promptf("Task %02d: %s (Task 03 builds on it)")},
	{name: "same task in prompt and description", prompt: promptf("Task %02d: %s"), description: promptf("Task %02d: %s")},
	{name: "quoted", prompt: promptf("> Task %02d: %s")},
	{name: "numbered list", prompt: promptf("1. Task %02d: %s")},
	{name: "em dash", prompt: promptf("Task %02d — %s")},
	{name: "blank lines first", prompt: promptf("\n\n   Task %02d: %s")},
	{name: "subtask then task", prompt: promptf("Subtask 1 of Task %02d: %s")},
	{name: "description without a task", prompt: promptf("Task %02d: %s"), description: func(int, string, string) string { return "Implement the feature" }},
}

// onLaunch is the change that gives the launch named key the form's
// prompt and description.
func onLaunch(key string, f promptForm, n int, title, file string) func(s *script) {
	return func(s *script) {
		a := s.at(key)
		a.prompt = f.prompt(n, title, file)
		a.description = describe(a.prompt)
		if f.description != nil {
			a.description = f.description(n, title, file)
		}
	}
}

func init() {
	var vs []variant
	for _, f := range acceptedPromptForms {
		vs = append(vs, variant{name: "4a " + f.name, change: onLaunch("i1", f, 1, "Parser", "task-01-parser.md")})
		if f.inF2 {
			vs = append(vs, variant{name: "F2 " + f.name, change: onLaunch("fx", f, 2, "Formatter", "task-02-formatter.md")})
		}
	}
	task01 := relaunch("i1", "Task 01: Parser", "Implement the parser")
	vs = append(vs,
		variant{name: "refused: two tasks on one line",
			change: func(s *script) { s.at("i1").prompt = "Implement Task 01 and Task 02 (they share a file)" },
			fixes:  []fix{{match: "names more than one task; one code-implementer implements one task", redo: task01}}},
		variant{name: "refused: a range of tasks",
			change: func(s *script) { s.at("i1").prompt = "Implement Tasks 01-02: parser and formatter" },
			fixes:  []fix{{match: "names more than one task", redo: task01}}},
		variant{name: "refused: description names another task",
			change: func(s *script) { s.at("i1").description = "Task 02: Formatter" },
			fixes:  []fix{{match: "the prompt names Task 01 (\"Task 01: Parser\") but the Agent description names Task 02", redo: task01}}},
		variant{name: "refused: description names two tasks",
			change: func(s *script) { s.at("i1").prompt, s.at("i1").description = "Implement the parser", "Tasks 01 and 02" },
			fixes:  []fix{{match: "the Agent description \"Tasks 01 and 02\" names more than one task", redo: task01}}},
		variant{name: "refused: no task at all",
			change: func(s *script) {
				s.at("i1").prompt, s.at("i1").description = "Implement the parser", "Implement the parser"
			},
			fixes: []fix{{match: "the prompt names no task; start it with \"Task NN\"", redo: task01}}},
		variant{name: "refused: a task of a later phase",
			change: func(s *script) { s.at("i1").prompt = "Task 04: Document it" },
			fixes:  []fix{{match: "Task 04 is not in the current phase 1", redo: task01}}},
		// Context naming another task before the task's header: the header
		// decides (the first line naming a task took the launch for the
		// task in the context, silently when that task could run).
		variant{name: "context naming a returned task before the header",
			change: func(s *script) {
				s.at("i3").prompt = "Context: Task 01's parser is done; reuse its tokenizer.\nTask 03: CLI flag"
			}},
		variant{name: "context naming a runnable task before the header",
			change: func(s *script) {
				i1, i2 := s.at("i1"), s.at("i2")
				i1.prompt = "Context: Task 02 formats what this parses.\nTask 01: Parser"
				i1.want.check = taskStatus(1, "complete")
				s.replace("p1", i1, i2)
			}},
		variant{name: "refused: headers for two tasks",
			change: func(s *script) {
				s.at("i1").prompt = "Task 01: Parser\n\nTask 02: Formatter"
			},
			fixes: []fix{{match: "the prompt has a header for Task 01 (\"Task 01: Parser\") and one for Task 02 (\"Task 02: Formatter\")", redo: task01}}},
		// Not a form orch-hook reads: "Task ID: 01" names no task.
		variant{name: "refused: Task ID: NN",
			change: func(s *script) {
				s.at("i1").prompt, s.at("i1").description = "Task ID: 01 (Parser)", "Implement the parser"
			},
			fixes: []fix{{match: "the prompt names no task", redo: task01}}},
		variant{name: "refused: F2 fix of a task that does not fail",
			change: func(s *script) { s.at("fx").prompt = "Task 01: Parser, make it faster" },
			fixes:  []fix{{match: "fixing Task 01 is not allowed: only the failing tasks (Task 02) are fixed", redo: relaunch("fx", "Task 02: Fix the padding", "Fix the padding")}}},
		variant{name: "refused: F2 fix naming no task",
			change: func(s *script) { s.at("fx").prompt, s.at("fx").description = "Fix the padding", "Fix the padding" },
			fixes:  []fix{{match: "The failing tasks to fix: Task 02", redo: relaunch("fx", "Task 02: Fix the padding", "Fix the padding")}}},
	)
	registerVariants("implementer prompts", vs...)
}

// taskStatus checks the run status of a task of the current phase.
func taskStatus(n int, want string) func(r *status.Report) string {
	return func(r *status.Report) string {
		for _, ph := range r.Plan.Phases {
			for _, t := range ph.Tasks {
				if t.Number == n && t.Status != want {
					return fmt.Sprintf("Task %02d %s; read %q", n, want, t.Status)
				}
			}
		}
		return ""
	}
}
