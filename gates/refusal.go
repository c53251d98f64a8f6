package gates

import (
	"fmt"
	"strconv"
	"strings"
)

// Refusal is a rule's refusal of a call, as a value: the decision builds
// it, Text renders it for the model (the only place a refusal's text is
// made), the log record keeps its parts, and `orch-hook explain` and
// `orch-hook status` read them back. A refusal inside a workflow says
// where the workflow stands and the next step; one of the rules that hold
// whatever the state (StaticRules) says only the rule.
type Refusal struct {
	Gate int // the gate that refuses (0: none)
	Task int // the task the refused call was for (0: none)
	// Via is the MCP tool a refused write came through ("": the call's
	// own tool).
	Via string
	// Rule is what was refused and why (one or more sentences, ending in
	// their punctuation).
	Rule string
	// Where is where the workflow stands, as the user reads it ("": not
	// said).
	Where string
	// Next is the next step ("": not said). Inside a subagent the
	// orchestrator's next step is no advice, and is left out.
	Next string
	// Detail follows the refusal for the model only, after a blank line
	// (the diffs of a changed plan); the log keeps the refusal without
	// it.
	Detail string
}

// Text is the refusal as the log keeps it:
//
//	orch-hook: [(MCP tool T) ][[Gate N] ]RULE[ Now: WHERE.][ Next: NEXT.]
//
// and, with a Where but no Next, "orch-hook: RULE (WHERE.)".
func (r *Refusal) Text() string {
	var b strings.Builder
	b.WriteString("orch-hook: ")
	if r.Via != "" {
		b.WriteString("(MCP tool " + r.Via + ") ")
	}
	if r.Gate > 0 {
		b.WriteString("[Gate " + strconv.Itoa(r.Gate) + "] ")
	}
	b.WriteString(r.Rule)
	switch {
	case r.Next != "":
		if r.Where != "" {
			b.WriteString(" Now: " + r.Where + ".")
		}
		b.WriteString(" Next: " + r.Next + ".")
	case r.Where != "":
		b.WriteString(" (" + r.Where + ".)")
	}
	return b.String()
}

// Told is what the model is told: Text, then Detail.
func (r *Refusal) Told() string {
	if r.Detail == "" {
		return r.Text()
	}
	return r.Text() + "\n\n" + r.Detail
}

// Refuse answers the call with v (Deny or Block) for r and logs the
// refusal: rec is the deny record's context (who, which call), to which
// Refuse adds the type, the gate, the task and the refusal. Records the
// outcome already holds stay before it.
func (o *Outcome) Refuse(v Verdict, r *Refusal, rec Record) {
	o.Verdict, o.Gate, o.Refusal, o.Reason = v, r.Gate, r, r.Told()
	rec.Type, rec.Gate, rec.Refusal, rec.Reason = RecDeny, r.Gate, r, r.Text()
	if r.Task > 0 {
		rec.Task = r.Task
	}
	o.Log(rec)
}

// Refuse is an outcome that refuses the call with v for r, logged.
func Refuse(v Verdict, r *Refusal, rec Record) Outcome {
	var o Outcome
	o.Refuse(v, r, rec)
	return o
}

// RefusalProblem checks the invariant of a refusal as a value: a Deny or
// Block carries its Refusal, whose rendering is the reason the model is
// told; its deny record keeps the same parts and the rendering without the
// detail; an Allow carries none. "" when it holds. The workflows' tests and
// fuzz targets check it on every outcome.
func RefusalProblem(o Outcome) string {
	if o.Verdict == Allow {
		if o.Refusal != nil {
			return fmt.Sprintf("an allow carries a refusal %+v", o.Refusal)
		}
		return ""
	}
	r := o.Refusal
	switch {
	case r == nil:
		return fmt.Sprintf("refused without a Refusal: %q", o.Reason)
	case o.Reason != r.Told():
		return fmt.Sprintf("reason %q is not the refusal's rendering %q", o.Reason, r.Told())
	case o.Gate != r.Gate:
		return fmt.Sprintf("outcome gate %d, refusal gate %d", o.Gate, r.Gate)
	}
	logged := false
	for _, rec := range o.Records {
		if rec.Refusal != r {
			continue
		}
		logged = true
		if rec.Type != RecDeny || rec.Reason != r.Text() || rec.Gate != r.Gate || r.Task > 0 && rec.Task != r.Task {
			return fmt.Sprintf("record %+v does not keep the refusal %+v", rec, r)
		}
	}
	if !logged && len(o.Records) > 0 {
		return fmt.Sprintf("the refusal %+v is not among the records %+v", r, o.Records)
	}
	return ""
}
