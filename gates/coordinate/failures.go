package coordinate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
)

// EscalationFile is where the coordinate workflow writes its escalation,
// as the orchestrate workflow does (README, "Failures and retries").
const EscalationFile = ".orchestrator/ESCALATION.md"

// Escalation is an open escalation: one work (an agent the orchestrator
// launches) failed more than the retries allow (Limits.Retries) in a state.
// Nothing is launched until the user resolves it.
type Escalation struct {
	From     gates.State     `json:"from"`
	Agent    string          `json:"agent"`
	Unit     string          `json:"unit,omitempty"`
	Attempts []gates.Attempt `json:"attempts"`
}

func (e *Escalation) what() string { return gates.Attempt{Agent: e.Agent, Unit: e.Unit}.What() }

// skippable are the states a failure there can be skipped from, as a
// known issue: the states after them do not need what they produce
// (README, "Failures and retries").
var skippable = []gates.State{CTest, CDebug, CDocument}

// failed records a failed launch of the orchestrator's (a worker's
// failure is its supervisor's to report) and says what comes next: a
// relaunch, or at the work's third failure in this state, the
// escalation, with ESCALATION.md in o.Files.
func (c *Workflow) failed(l *Launch, class, why string, env *Env, o *gates.Outcome) string {
	// The work is the agent in this state: a prompt names its topic in
	// words of the model's choosing, so topics are not told apart (seed
	// 002's retries are per state).
	a := gates.Attempt{Agent: l.Agent, Class: class, Error: why, Time: env.Now}
	if l.State != c.Current {
		return fmt.Sprintf("[coordinate %s] %s %s after the workflow left %s; nothing changes.", c.Current, a.What(), why, l.State)
	}
	if c.Failures == nil {
		c.Failures = &gates.Failures{}
	}
	n := c.Failures.Record(c.Current, a)
	if !gates.Exhausted(n, c.limits().Retries) {
		return fmt.Sprintf("[coordinate %s] %s %s; %s.", c.Current, a.What(), why, gates.RetryLine(a, n, c.limits().Retries))
	}
	c.Escalation = &Escalation{From: c.Current, Agent: a.Agent, Unit: a.Unit, Attempts: c.Failures.Of(a.Agent, a.Unit)}
	if o.Files == nil {
		o.Files = map[string]string{}
	}
	o.Files[EscalationFile] = c.EscalationMarkdown()
	o.Log(gates.Record{Type: gates.RecTransition, Reason: fmt.Sprintf("%s"+escalatedMark+"%s failed %d times (%s)", c.Current, a.What(), n, class)})
	return fmt.Sprintf("[coordinate %s] -> escalated | %s failed %d times in state %s (last: %s, a %s failure); do not relaunch it: tell the user to see %s and decide with /orch-hook:resolve %s", c.Current, a.What(), n, c.Current, why, class, EscalationFile, c.resolveOptions())
}

// resolveOptions are the /orch-hook:resolve options of the open
// escalation: "retry|skip|abort" or "retry|abort".
func (c *Workflow) resolveOptions() string {
	if c.Escalation != nil && slices.Contains(skippable, c.Escalation.From) {
		return "retry|skip|abort"
	}
	return "retry|abort"
}

// EscalationMarkdown renders ESCALATION.md in seed 002's five parts: what
// failed, what was expected, what was found, what to do next, and the
// commands that show more.
func (c *Workflow) EscalationMarkdown() string {
	e := c.Escalation
	if e == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Escalation Required\n\n")
	fmt.Fprintf(&b, "**Workflow**: coordinate (%s), state %s\n", c.Scope, e.From)
	fmt.Fprintf(&b, "**What failed**: %s, %d times in state %s (the limit is %d retries of one work in one state)\n", e.what(), len(e.Attempts), e.From, c.limits().Retries)
	fmt.Fprintf(&b, "**Expected**: %s\n", c.expected(e.Agent))
	if len(e.Attempts) > 0 {
		last := e.Attempts[len(e.Attempts)-1]
		fmt.Fprintf(&b, "**Found**: %s (%s)\n\n", last.Error, last.Class)
	}
	b.WriteString("### Failure History\n| Attempt | Class | Failure | Time |\n|---------|-------|---------|------|\n")
	for i, a := range e.Attempts {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, a.Class, cell(a.Error), a.Time.UTC().Format("15:04:05"))
	}
	b.WriteString("\nA transient failure is one where the agent did not finish (its Agent call failed); a permanent one, where it finished but verification closed its launch.\n")
	b.WriteString("\n### Options\n")
	for i, o := range c.escalationOptions() {
		fmt.Fprintf(&b, "%d. %s\n", i+1, o)
	}
	b.WriteString("\n### More\n")
	b.WriteString("- `orch-hook status`: where the workflow stands and its failures\n")
	b.WriteString("- `orch-hook log --type agent_complete --type error`: every completion (and failure) and every error, in order\n")
	b.WriteString("- `orch-hook explain`: why the last refused call was refused\n\n")
	b.WriteString("**User decision required to proceed.**\n")
	return b.String()
}

// expected says what an agent owes.
func (c *Workflow) expected(agent string) string {
	switch agent {
	case ResearchSpecialist, ResearchSupervisor:
		return "a report under " + c.Paths.ReportsDir + " it wrote itself, named on a `" + LineReportCreated + " <path>` line"
	case PlanArchitect:
		return "the plan " + c.Paths.PlanPath + ", written by plan-architect and named on a `" + LinePlanCreated + " <path>` line"
	case ImplementationExec, ImplSupervisor:
		return "`" + gates.LineImplComplete + "` (or `" + gates.LineImplBlocked + "`)"
	case TestSpecialist, TestSupervisor:
		return "`" + LineTestsPass + "` or `" + LineTestsFail + "`"
	case DebugAnalyst:
		return "a debug report under " + c.Paths.DebugDir + ", named on a `" + LineReportCreated + " <path>` line"
	case DocWriter:
		return "a summary under " + c.Paths.SummariesDir + ", named on a `" + LineReportCreated + " <path>` line"
	}
	return agent + " returns its report"
}

// escalationOptions prices each way out.
func (c *Workflow) escalationOptions() []string {
	e := c.Escalation
	retry := fmt.Sprintf("`/orch-hook:resolve retry`: stay in %s with %s's failure count reset (up to %d more tries). Costs %s again", e.From, e.what(), c.limits().Retries+1, e.Agent)
	permanent := true
	for _, a := range e.Attempts {
		permanent = permanent && a.Class == gates.Permanent
	}
	if permanent {
		retry += "; every failure was permanent (it finished, but without what it owes): unless its prompt changes, it is likely to fail the same way."
	} else {
		retry += "; a transient failure (the agent did not finish) may pass on a retry."
	}
	abort := fmt.Sprintf("`/orch-hook:resolve abort`: end the workflow at %s. Nothing is reverted: what was written stays, and nothing is gated afterwards.", e.From)
	if !slices.Contains(skippable, e.From) {
		return []string{retry, abort}
	}
	skip := map[gates.State]string{
		CTest:     "`/orch-hook:resolve skip`: go on without a test result, recorded as a known issue (\"tests not run\"); ",
		CDebug:    "`/orch-hook:resolve skip`: end without a debug report, the failing tests recorded as a known issue; ",
		CDocument: "`/orch-hook:resolve skip`: complete without a summary, recorded as a known issue; ",
	}[e.From]
	if t, err := coordinate.Fire(&Workflow{Scope: c.Scope, Retries: c.Retries}, e.From, OnSkip); err == nil {
		skip += "the workflow goes to " + string(t.To) + "."
	}
	return []string{retry, skip, abort}
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// resolve applies /orch-hook:resolve retry|skip|abort to the open
// escalation.
func (c *Workflow) resolve(option string, env *Env) gates.Outcome {
	if c.Escalation == nil {
		return gates.Refuse(gates.Block, c.refusal(fmt.Sprintf("there is no escalation to resolve (/orch-hook:resolve %s).", gates.OrText(option, "?"))), gates.Record{})
	}
	e := c.Escalation
	o := gates.Outcome{Changed: true}
	switch option {
	case "retry":
		c.Escalation, c.Failures = nil, nil
		o.Context = fmt.Sprintf("orch-hook: [RESOLVE] retry | %s's failure count in %s is reset (0/%d): relaunch it. Next: %s", e.what(), e.From, c.limits().Retries, c.Next())
	case "skip":
		if !slices.Contains(skippable, e.From) {
			return gates.Refuse(gates.Block, c.refusal(fmt.Sprintf("skip is not possible for a failure in %s: the states after it need what it produces. Use /orch-hook:resolve retry or abort.", e.From)), gates.Record{})
		}
		t, err := c.fire(OnSkip)
		if err != nil {
			return gates.Refuse(gates.Block, c.refusal("skip is refused by the workflow's table: "+err.Error()), gates.Record{})
		}
		issue := fmt.Sprintf("%s skipped after %s failed %d times", e.From, e.what(), len(e.Attempts))
		c.KnownIssues = append(c.KnownIssues, issue)
		c.Escalation = nil
		if t.To == CComplete {
			c.Outcome = "completed with a known issue: " + issue
		}
		o.Context = fmt.Sprintf("orch-hook: [RESOLVE] skip -> %s | %s (a known issue). Next: %s", t.To, issue, c.Next())
	case "abort":
		c.Escalation = nil
		c.abort()
		o.Context = "orch-hook: [RESOLVE] abort -> complete | the user aborted the coordinate workflow; nothing is gated any more."
	default:
		return gates.Refuse(gates.Block, c.refusal(fmt.Sprintf("unknown option %q: use /orch-hook:resolve retry, skip or abort.", option)), gates.Record{})
	}
	o.Log(gates.Record{Type: gates.RecDecision, Reason: fmt.Sprintf("resolve %s (%s failed %d times in %s)", option, e.what(), len(e.Attempts), e.From)})
	return o
}

// ErrorState is the checkpoint's error_state: the open escalation, else
// the last agent failure of this state, else the last test failure;
// ok false when there is none.
func (c *Workflow) ErrorState() (lastError string, failed gates.State, retries int, class string, ok bool) {
	if e := c.Escalation; e != nil && len(e.Attempts) > 0 {
		a := e.Attempts[len(e.Attempts)-1]
		return a.What() + ": " + a.Error, e.From, len(e.Attempts), a.Class, true
	}
	if a, ok := c.Failures.Last(c.Current); ok {
		return a.What() + ": " + a.Error, c.Current, c.Failures.Count(a.Agent, a.Unit), a.Class, true
	}
	if c.LastError != "" {
		return c.LastError, c.FailedState, c.Retries, "", true
	}
	return "", "", 0, "", false
}
