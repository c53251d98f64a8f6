// Package render turns orch-hook's data into text: the workflow definition
// as a Mermaid or Graphviz graph, and a workflow's report as Markdown or a
// self-contained HTML page. Every function here is pure: data in, text out,
// no I/O, no clock.
package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
)

// GraphOptions say what to mark on the workflow definition.
type GraphOptions struct {
	// Current is the state to highlight ("" for none: no active workflow).
	Current string
	// Visited are states already passed (drawn lighter); used only with
	// Current.
	Visited []string
	// AllRows draws every row of the table. By default the abort rows,
	// one from every unfinished state to aborted, are folded into one note.
	AllRows bool
}

// stateTitles name the steps of the orchestrate workflow for the graph's
// boxes. A state missing here is drawn with its bare id.
var stateTitles = map[string]string{
	orchestrate.S0a:       "clarification",
	orchestrate.S1:        "discovery",
	orchestrate.S0b:       "post-discovery clarification",
	orchestrate.S2:        "planning",
	orchestrate.S3:        "user approval",
	orchestrate.S4a:       "implementation",
	orchestrate.S4b:       "quality gate",
	orchestrate.SF1:       "failure analysis",
	orchestrate.SF2:       "fixes",
	orchestrate.S4c:       "plan update",
	orchestrate.S5a:       "final validation",
	orchestrate.S5b:       "UX/DX review",
	orchestrate.S6:        "completion",
	orchestrate.S7:        "follow-up triage",
	orchestrate.Escalated: "",
	orchestrate.Complete:  "",
	orchestrate.Aborted:   "",
}

// StateTitle is the step's name with what it does, e.g. "4b quality gate".
func StateTitle(s string) string {
	if t := stateTitles[s]; t != "" {
		return s + " " + t
	}
	return s
}

// graph is the table prepared for drawing: states sorted in workflow order
// (stateOrder) and edges sorted by (from, to) in that order, then by
// trigger, guard and gate, so the output does not depend on the order of the
// table's rows.
type graph struct {
	states []string
	edges  []gates.Transition
	// folded are the abort rows drawn as one note: to, trigger, and the
	// states it is reachable from.
	folded     []gates.Transition
	notFolded  []string // unfinished states without an abort row
	start      string   // the state the start row enters
	startLabel string
}

// isAbortRow reports whether t is one of the abort rows folded by default.
func isAbortRow(t gates.Transition) bool {
	return t.To == orchestrate.Aborted && t.On == orchestrate.OnAbort && t.Guard == "" && t.Gate == 0
}

// stateOrder is the workflow order of the known states; other states follow
// in name order.
var stateOrder = []string{
	orchestrate.S0a, orchestrate.S1, orchestrate.S0b, orchestrate.S2, orchestrate.S3,
	orchestrate.S4a, orchestrate.S4b, orchestrate.SF1, orchestrate.SF2, orchestrate.S4c,
	orchestrate.S5a, orchestrate.S5b, orchestrate.S6, orchestrate.Complete, orchestrate.S7,
	orchestrate.Escalated, orchestrate.Aborted,
}

func buildGraph(ts []gates.Transition, all bool) *graph {
	g := &graph{}
	present := map[string]bool{}
	for _, t := range ts {
		for _, s := range []string{string(t.From), string(t.To)} {
			if s != "" {
				present[s] = true
			}
		}
	}
	order := map[string]int{}
	for _, s := range stateOrder {
		if present[s] {
			order[s] = len(order)
			g.states = append(g.states, s)
		}
	}
	var others []string
	for s := range present {
		if _, ok := order[s]; !ok {
			others = append(others, s)
		}
	}
	sort.Strings(others)
	for _, s := range others {
		order[s] = len(order)
		g.states = append(g.states, s)
	}
	for _, t := range ts {
		switch {
		case t.From == "":
			g.start, g.startLabel = string(t.To), string(t.On)
		case !all && isAbortRow(t):
			g.folded = append(g.folded, t)
		default:
			g.edges = append(g.edges, t)
		}
	}
	less := func(list []gates.Transition) func(i, j int) bool {
		return func(i, j int) bool {
			a, b := list[i], list[j]
			if order[string(a.From)] != order[string(b.From)] {
				return order[string(a.From)] < order[string(b.From)]
			}
			if order[string(a.To)] != order[string(b.To)] {
				return order[string(a.To)] < order[string(b.To)]
			}
			if a.On != b.On {
				return a.On < b.On
			}
			if a.Guard != b.Guard {
				return a.Guard < b.Guard
			}
			return a.Gate < b.Gate
		}
	}
	sort.SliceStable(g.edges, less(g.edges))
	sort.SliceStable(g.folded, less(g.folded))
	if len(g.folded) > 0 {
		from := map[string]bool{}
		for _, t := range g.folded {
			from[string(t.From)] = true
		}
		for _, s := range g.states {
			if !from[s] && s != orchestrate.Aborted {
				g.notFolded = append(g.notFolded, s)
			}
		}
	}
	return g
}

// EdgeLabel is a transition's label: its trigger, its guard in brackets
// and its gate, e.g. "FAIL [fix iterations < 3] (Gate 3)".
func EdgeLabel(t gates.Transition) string {
	s := string(t.On)
	if t.Guard != "" {
		s += " [" + t.Guard + "]"
	}
	if t.Gate != 0 {
		s += fmt.Sprintf(" (Gate %d)", t.Gate)
	}
	return s
}

// MermaidID turns a state into a Mermaid identifier: "s" and the state with
// anything but letters and digits replaced ("0a" -> "s0a", "F1" -> "sF1").
func MermaidID(state string) string {
	var b strings.Builder
	b.WriteString("s")
	for _, r := range state {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// mermaidText makes s safe as a stateDiagram-v2 label: a label ends at a
// colon, a semicolon or a newline, and '#' and quotes can start comments or
// end strings, so those are replaced by look-alikes.
func mermaidText(s string) string {
	return strings.NewReplacer(
		":", "∶", // U+2236 RATIO
		";", ",",
		"\n", " ",
		"\r", " ",
		"#", "№",
		`"`, "'",
		"{", "(",
		"}", ")",
	).Replace(s)
}

// Mermaid draws the workflow definition as a Mermaid stateDiagram-v2.
func Mermaid(ts []gates.Transition, opt GraphOptions) string {
	g := buildGraph(ts, opt.AllRows)
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, s := range g.states {
		fmt.Fprintf(&b, "    state \"%s\" as %s\n", mermaidText(StateTitle(s)), MermaidID(s))
	}
	if g.start != "" {
		fmt.Fprintf(&b, "    [*] --> %s : %s\n", MermaidID(g.start), mermaidText(g.startLabel))
	}
	for _, t := range g.edges {
		fmt.Fprintf(&b, "    %s --> %s : %s\n", MermaidID(string(t.From)), MermaidID(string(t.To)), mermaidText(EdgeLabel(t)))
	}
	if len(g.folded) > 0 {
		fmt.Fprintf(&b, "    note left of %s : %s\n", MermaidID(string(g.folded[0].To)), mermaidText(foldedNote(g)))
	}
	if opt.Current != "" {
		b.WriteString("    classDef current fill:#ffd966,stroke:#b45f06,stroke-width:3px,color:#000,font-weight:bold\n")
		if v := visitedIDs(opt, MermaidID); len(v) > 0 {
			b.WriteString("    classDef visited fill:#d9ead3,stroke:#6aa84f,color:#000\n")
			fmt.Fprintf(&b, "    class %s visited\n", strings.Join(v, ","))
		}
		fmt.Fprintf(&b, "    class %s current\n", MermaidID(opt.Current))
	}
	return b.String()
}

// foldedNote describes the folded abort rows.
func foldedNote(g *graph) string {
	t := g.folded[0]
	s := string(t.On) + " reaches " + string(t.To) + " from every state"
	if len(g.notFolded) > 0 {
		s += " but " + joinAnd(g.notFolded)
	}
	return s
}

func joinAnd(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}

// visitedIDs are the visited states (other than the current one) that are
// in the graph, as ids, sorted and unique.
func visitedIDs(opt GraphOptions, id func(string) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range opt.Visited {
		if s == opt.Current || s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, id(s))
	}
	sort.Strings(out)
	return out
}

// dotQuote quotes s as a Graphviz string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// DOT draws the workflow definition as a Graphviz digraph.
func DOT(ts []gates.Transition, opt GraphOptions) string {
	g := buildGraph(ts, opt.AllRows)
	visited := map[string]bool{}
	if opt.Current != "" {
		for _, s := range opt.Visited {
			visited[s] = true
		}
	}
	var b strings.Builder
	b.WriteString("digraph orchestrate {\n")
	b.WriteString("    rankdir=TB;\n")
	b.WriteString("    node [shape=box, style=\"rounded\", fontname=\"Helvetica\"];\n")
	b.WriteString("    edge [fontname=\"Helvetica\", fontsize=10];\n")
	if g.start != "" {
		b.WriteString("    __start [shape=point, width=0.2, label=\"\"];\n")
	}
	for _, s := range g.states {
		attrs := "label=" + dotQuote(strings.Replace(StateTitle(s), " ", "\n", 1))
		switch {
		case opt.Current != "" && s == opt.Current:
			attrs += `, style="rounded,filled,bold", fillcolor="#ffd966", color="#b45f06", penwidth=3`
		case visited[s]:
			attrs += `, style="rounded,filled", fillcolor="#d9ead3", color="#6aa84f"`
		}
		fmt.Fprintf(&b, "    %s [%s];\n", dotQuote(s), attrs)
	}
	if g.start != "" {
		fmt.Fprintf(&b, "    __start -> %s [label=%s];\n", dotQuote(g.start), dotQuote(g.startLabel))
	}
	for _, t := range g.edges {
		fmt.Fprintf(&b, "    %s -> %s [label=%s];\n", dotQuote(string(t.From)), dotQuote(string(t.To)), dotQuote(EdgeLabel(t)))
	}
	if len(g.folded) > 0 {
		fmt.Fprintf(&b, "    abort_note [shape=note, label=%s];\n", dotQuote(foldedNote(g)))
		fmt.Fprintf(&b, "    abort_note -> %s [style=dashed, arrowhead=none];\n", dotQuote(string(g.folded[0].To)))
	}
	b.WriteString("}\n")
	return b.String()
}
