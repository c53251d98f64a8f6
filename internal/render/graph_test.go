package render

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
)

var visited4b = []string{"0a", "2", "3", "4a"}

func TestGraphGolden(t *testing.T) {
	golden(t, "graph.mmd", Mermaid(orchestrate.Transitions, GraphOptions{}))
	golden(t, "graph_4b.mmd", Mermaid(orchestrate.Transitions, GraphOptions{Current: "4b", Visited: visited4b}))
	golden(t, "graph_all.mmd", Mermaid(orchestrate.Transitions, GraphOptions{AllRows: true}))
	golden(t, "graph.dot", DOT(orchestrate.Transitions, GraphOptions{}))
	golden(t, "graph_4b.dot", DOT(orchestrate.Transitions, GraphOptions{Current: "4b", Visited: visited4b}))
}

// The output depends on the table's rows, not on their order.
func TestGraphDeterministic(t *testing.T) {
	rows := append([]gates.Transition(nil), orchestrate.Transitions...)
	want := Mermaid(rows, GraphOptions{Current: "F1"})
	wantDot := DOT(rows, GraphOptions{Current: "F1"})
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		if got := Mermaid(rows, GraphOptions{Current: "F1"}); got != want {
			t.Fatalf("shuffled rows give another Mermaid graph:\n%s", firstDiff(want, got))
		}
		if got := DOT(rows, GraphOptions{Current: "F1"}); got != wantDot {
			t.Fatalf("shuffled rows give another dot graph:\n%s", firstDiff(wantDot, got))
		}
	}
}

// Every row of the table is drawn once, with its trigger, guard and gate.
func TestGraphEveryRow(t *testing.T) {
	all := Mermaid(orchestrate.Transitions, GraphOptions{AllRows: true})
	folded := Mermaid(orchestrate.Transitions, GraphOptions{})
	aborts := 0
	for _, tr := range orchestrate.Transitions {
		if tr.From == "" {
			line := "[*] --> " + MermaidID(string(tr.To)) + " : " + mermaidText(string(tr.On)) + "\n"
			if !strings.Contains(all, line) {
				t.Errorf("start row missing: %q", line)
			}
			continue
		}
		line := "    " + MermaidID(string(tr.From)) + " --> " + MermaidID(string(tr.To)) + " : " + mermaidText(EdgeLabel(tr)) + "\n"
		if strings.Count(all, line) != 1 {
			t.Errorf("--all: row %+v drawn %d times, want once: %q", tr, strings.Count(all, line), line)
		}
		if isAbortRow(tr) {
			aborts++
			if strings.Contains(folded, line) {
				t.Errorf("abort row %+v not folded", tr)
			}
		} else if strings.Count(folded, line) != 1 {
			t.Errorf("row %+v missing from the folded graph", tr)
		}
	}
	if aborts == 0 {
		t.Fatal("no abort rows in the table")
	}
	if !strings.Contains(folded, "    note left of saborted : abort reaches aborted from every state but complete\n") {
		t.Errorf("folded abort note missing or wrong:\n%s", folded)
	}
	if want := "    s4b --> sF1 : FAIL [fix iterations < limits.fix_iterations] (Gate 3)\n"; !strings.Contains(folded, want) {
		t.Errorf("missing %q", want)
	}
}

// The Mermaid text keeps to what stateDiagram-v2's grammar accepts: ids are
// word characters, labels hold no ':' ';' '#' or newline, and every state
// used by an edge is declared.
func TestMermaidSyntax(t *testing.T) {
	for _, opt := range []GraphOptions{{}, {AllRows: true}, {Current: "4b", Visited: visited4b}, {Current: "escalated"}} {
		out := Mermaid(orchestrate.Transitions, opt)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != "stateDiagram-v2" {
			t.Fatalf("first line %q", lines[0])
		}
		declared := map[string]bool{}
		stateRe := regexp.MustCompile(`^    state "([^"]+)" as (s\w+)$`)
		edgeRe := regexp.MustCompile(`^    (\[\*\]|s\w+) --> (s\w+) : ([^:;#\n]+)$`)
		noteRe := regexp.MustCompile(`^    note left of (s\w+) : ([^:;#\n]+)$`)
		classDefRe := regexp.MustCompile(`^    classDef (current|visited) [a-z-]+:[^;]+$`)
		classRe := regexp.MustCompile(`^    class (s\w+(,s\w+)*) (current|visited)$`)
		for _, l := range lines[1:] {
			switch {
			case stateRe.MatchString(l):
				declared[stateRe.FindStringSubmatch(l)[2]] = true
			case edgeRe.MatchString(l):
				m := edgeRe.FindStringSubmatch(l)
				for _, id := range []string{m[1], m[2]} {
					if id != "[*]" && !declared[id] {
						t.Errorf("edge uses undeclared state %s: %q", id, l)
					}
				}
				if strings.Contains(m[3], "-->") {
					t.Errorf("label holds an arrow: %q", l)
				}
			case noteRe.MatchString(l), classDefRe.MatchString(l):
			case classRe.MatchString(l):
				for _, id := range strings.Split(classRe.FindStringSubmatch(l)[1], ",") {
					if !declared[id] {
						t.Errorf("class names undeclared state %s", id)
					}
				}
			default:
				t.Errorf("line does not match the grammar kept to: %q", l)
			}
		}
	}
}

func TestMermaidID(t *testing.T) {
	for in, want := range map[string]string{"0a": "s0a", "F1": "sF1", "4b": "s4b", "escalated": "sescalated", "a-b c": "sa_b_c"} {
		if got := MermaidID(in); got != want {
			t.Errorf("MermaidID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGraphHighlight(t *testing.T) {
	m := Mermaid(orchestrate.Transitions, GraphOptions{Current: "4b", Visited: []string{"0a", "4b", "2", "0a"}})
	if !strings.HasSuffix(m, "    class s0a,s2 visited\n    class s4b current\n") {
		t.Errorf("highlight lines wrong:\n%s", m)
	}
	if strings.Contains(Mermaid(orchestrate.Transitions, GraphOptions{}), "classDef") {
		t.Error("no workflow: no highlight expected")
	}
	d := DOT(orchestrate.Transitions, GraphOptions{Current: "F1"})
	if !strings.Contains(d, `    "F1" [label="F1\nfailure analysis", style="rounded,filled,bold", fillcolor="#ffd966", color="#b45f06", penwidth=3];`) {
		t.Errorf("dot: current state not filled:\n%s", d)
	}
	if strings.Contains(DOT(orchestrate.Transitions, GraphOptions{}), "fillcolor") {
		t.Error("dot without a workflow has a fill")
	}
}
