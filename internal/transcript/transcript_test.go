package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// captured is a subagent's transcript written by the real CLI (2.1.328)
// against the mock API (internal/dev/e2e TestSubagentTranscriptUsage): two
// responses, whose usage the mock scripted, each written as one assistant
// record per content block (the first response has two).
const captured = "testdata/subagent-transcript.jsonl"

// capturedUsage is the scripted usage of the two responses, summed:
// 2201+2202 input, 51+52 output, 7701+7702 cache read, 6601+6602 cache
// write (testdata/usage.txtar of the e2e suite).
var capturedUsage = Usage{Input: 4403, Output: 103, CacheRead: 15403, CacheWrite: 13203, Responses: 2}

// agentDir makes a transcript where Claude Code puts it, for agent id.
func agentDir(t *testing.T, id string, content []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-p", "session", "subagents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "agent-"+id+".jsonl")
	if content != nil {
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func readCaptured(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(captured)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCaptured: the real CLI's transcript sums to the mock's numbers, each
// response once although its usage is on each of its records.
func TestCaptured(t *testing.T) {
	data := readCaptured(t)
	if n := bytes.Count(data, []byte(`"msg_mock0002"`)); n != 2 {
		t.Fatalf("the captured transcript has %d records of msg_mock0002, want 2 (one per content block)", n)
	}
	p := agentDir(t, "ad8b75d13bc2de652", data)
	got, err := Read(p, "ad8b75d13bc2de652")
	if err != nil || counted(got) != capturedUsage {
		t.Errorf("Read = %+v, %v; want %+v", got, err, capturedUsage)
	}
	// Its last response ends the agent's turn with its report.
	if got.LastStop != "end_turn" || got.LastText != "WORKER REPORT: echo ran." || !got.Ends("WORKER REPORT: echo ran.\n") || got.Ends("another report") {
		t.Errorf("last response: %q %q", got.LastStop, got.LastText)
	}
	// Cut before it, the transcript does not.
	cut := data[:bytes.LastIndex(bytes.TrimRight(data, "\n"), []byte("\n"))+1]
	if u, _ := Sum(bytes.NewReader(cut), MaxBytes); u.Ends("WORKER REPORT: echo ran.") || u.Ends("") || u.LastStop != "tool_use" {
		t.Errorf("cut before the last response: %+v", u)
	}
}

// counted is what a test compares of a Usage: the counts.
func counted(u Usage) Usage {
	u.LastStop, u.LastText = "", ""
	return u
}

func assistant(id, req string, in, out, cr, cw int64, content string) string {
	rec := map[string]any{
		"parentUuid": "x", "isSidechain": true, "agentId": "a1",
		"message":   map[string]any{"content": []any{map[string]any{"type": "text", "text": content}}, "id": id, "role": "assistant", "type": "message", "usage": map[string]any{"input_tokens": in, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr, "output_tokens": out, "service_tier": "standard"}},
		"requestId": req, "type": "assistant", "uuid": "u",
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

func TestSum(t *testing.T) {
	user := `{"type":"user","message":{"role":"user","content":"the \"usage\":{\"input_tokens\":999} of \"assistant\""}}`
	tool := `{"type":"user","toolUseResult":{"agentId":"x","usage":{"input_tokens":5,"output_tokens":5},"totalTokens":10},"message":{"role":"user"}}`
	big := strings.Repeat("x", 300<<10) // longer than the read buffer, shorter than MaxLine
	tests := []struct {
		name string
		in   string
		want Usage
	}{
		{"empty", "", Usage{}},
		{"one response, two blocks, counted once",
			assistant("m1", "r1", 10, 2, 30, 40, "a") + "\n" + assistant("m1", "r1", 10, 2, 30, 40, "b") + "\n",
			Usage{Input: 10, Output: 2, CacheRead: 30, CacheWrite: 40, Responses: 1}},
		{"two responses",
			assistant("m1", "r1", 10, 2, 30, 40, "a") + "\n" + assistant("m2", "r2", 1, 1, 1, 1, "b") + "\n",
			Usage{Input: 11, Output: 3, CacheRead: 31, CacheWrite: 41, Responses: 2}},
		{"a later block's larger count wins",
			assistant("m1", "r1", 10, 1, 30, 40, "a") + "\n" + assistant("m1", "r1", 10, 9, 30, 40, "b") + "\n",
			Usage{Input: 10, Output: 9, CacheRead: 30, CacheWrite: 40, Responses: 1}},
		{"grouped by requestId without a message id",
			assistant("", "r1", 10, 2, 0, 0, "a") + "\n" + assistant("", "r1", 10, 2, 0, 0, "b") + "\n",
			Usage{Input: 10, Output: 2, Responses: 1}},
		{"no id at all: each record alone",
			assistant("", "", 10, 2, 0, 0, "a") + "\n" + assistant("", "", 10, 2, 0, 0, "b") + "\n",
			Usage{Input: 20, Output: 4, Responses: 2}},
		{"user records and tool results do not count", user + "\n" + tool + "\n" + assistant("m1", "", 1, 2, 3, 4, "a") + "\n",
			Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1}},
		{"no final newline", assistant("m1", "", 1, 2, 3, 4, "a"),
			Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1}},
		{"CRLF and blank lines", "\r\n" + assistant("m1", "", 1, 2, 3, 4, "a") + "\r\n\r\n",
			Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1}},
		{"truncated last line: unread, the rest counted",
			assistant("m1", "", 1, 2, 3, 4, "a") + "\n" + assistant("m2", "", 5, 5, 5, 5, "b")[:150],
			Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1, Unread: 1}},
		{"truncated last line before its usage: nothing to count",
			assistant("m1", "", 1, 2, 3, 4, "a") + "\n" + `{"parentUuid":"x","message":{"content":[{"type":"te`,
			Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1}},
		{"a malformed record that may hold a usage",
			`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":"many"}}}` + "\n" + assistant("m1", "", 1, 0, 0, 0, "a") + "\n",
			Usage{Input: 1, Responses: 1, Unread: 1}},
		{"negative counts read as 0",
			assistant("m1", "", -5, 2, 0, 0, "a") + "\n",
			Usage{Output: 2, Responses: 1}},
		{"a long record (300 KB of text) is read",
			assistant("m1", "", 7, 8, 9, 10, big) + "\n" + assistant("m2", "", 1, 1, 1, 1, "x") + "\n",
			Usage{Input: 8, Output: 9, CacheRead: 10, CacheWrite: 11, Responses: 2}},
		{"usage null or not an assistant's",
			`{"type":"assistant","message":{"id":"m","usage":null}}` + "\n" + `{"type":"api-request","usage":{"input_tokens":4}}` + "\n",
			Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sum(strings.NewReader(tt.in), MaxBytes)
			if err != nil || counted(got) != tt.want {
				t.Errorf("Sum = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestHugeLine: a record longer than MaxLine is skipped, not decoded, and
// counted unread when it may hold a usage; the lines around it count.
func TestHugeLine(t *testing.T) {
	huge := assistant("m-huge", "", 100, 100, 100, 100, strings.Repeat("y", MaxLine))
	plain := `{"type":"user","message":{"content":"` + strings.Repeat("z", MaxLine) + `"}}`
	in := assistant("m1", "", 1, 2, 3, 4, "a") + "\n" + huge + "\n" + plain + "\n" + assistant("m2", "", 1, 1, 1, 1, "b") + "\n"
	got, err := Sum(strings.NewReader(in), MaxBytes)
	want := Usage{Input: 2, Output: 3, CacheRead: 4, CacheWrite: 5, Responses: 2, Unread: 1}
	if err != nil || counted(got) != want {
		t.Errorf("Sum = %+v, %v; want %+v", got, err, want)
	}
	// The key straddling two of the reader's pieces is still seen.
	for _, at := range []int{64<<10 - 3, 64<<10 - 1, 64 << 10, 128<<10 - 4} {
		line := `{"a":"` + strings.Repeat("q", at-6) + `","usage":{"input_tokens":1},"x":"` + strings.Repeat("r", MaxLine) + `"}`
		got, _ := Sum(strings.NewReader(line+"\n"), MaxBytes)
		if got.Unread != 1 {
			t.Errorf("key at %d: Unread = %d, want 1", at, got.Unread)
		}
	}
}

// TestReadFinal: the CLI writes the agent's last response while its
// SubagentStop hook runs; ReadFinal waits for it (or for the file to
// appear), a bounded time, and marks what it counted without it.
func TestReadFinal(t *testing.T) {
	data := readCaptured(t)
	report := "WORKER REPORT: echo ran."
	lastLine := bytes.LastIndex(bytes.TrimRight(data, "\n"), []byte("\n")) + 1
	later := func(path string, content []byte, after time.Duration) {
		go func() {
			time.Sleep(after)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				f.Write(content)
				f.Close()
			}
		}()
	}
	t.Run("the last response lands during the wait", func(t *testing.T) {
		p := agentDir(t, "a1", data[:lastLine])
		later(p, data[lastLine:], 60*time.Millisecond)
		start := time.Now()
		u, err := ReadFinal(p, "a1", report, 5*time.Second)
		if err != nil || counted(u) != capturedUsage || time.Since(start) > 4*time.Second {
			t.Errorf("ReadFinal = %+v, %v after %v; want %+v", u, err, time.Since(start), capturedUsage)
		}
	})
	t.Run("the file appears during the wait", func(t *testing.T) {
		p := agentDir(t, "a2", nil)
		later(p, data, 60*time.Millisecond)
		if u, err := ReadFinal(p, "a2", report, 5*time.Second); err != nil || counted(u) != capturedUsage {
			t.Errorf("ReadFinal = %+v, %v", u, err)
		}
	})
	t.Run("complete already: no wait", func(t *testing.T) {
		p := agentDir(t, "a3", data)
		start := time.Now()
		if u, err := ReadFinal(p, "a3", report, 5*time.Second); err != nil || counted(u) != capturedUsage || time.Since(start) > time.Second {
			t.Errorf("ReadFinal = %+v, %v after %v", u, err, time.Since(start))
		}
	})
	t.Run("never written: counted without it, marked", func(t *testing.T) {
		p := agentDir(t, "a4", data[:lastLine])
		u, err := ReadFinal(p, "a4", report, 80*time.Millisecond)
		want := Usage{Input: 2201, Output: 51, CacheRead: 7701, CacheWrite: 6601, Responses: 1, Unfinished: true}
		if err != nil || counted(u) != want || !u.Lower() {
			t.Errorf("ReadFinal = %+v, %v; want %+v", u, err, want)
		}
	})
	t.Run("a nudged agent's second answer", func(t *testing.T) {
		// The first stop's answer is there; the second stop waits for the
		// answer it names.
		answer := assistant("m-again", "r-again", 5, 6, 7, 8, "FAILING TASKS: 01")
		answer = strings.Replace(answer, `"type":"message"`, `"stop_reason":"end_turn","type":"message"`, 1)
		p := agentDir(t, "a5", data)
		later(p, []byte(answer+"\n"), 60*time.Millisecond)
		u, err := ReadFinal(p, "a5", "FAILING TASKS: 01", 5*time.Second)
		want := capturedUsage
		want.Input, want.Output, want.CacheRead, want.CacheWrite, want.Responses = want.Input+5, want.Output+6, want.CacheRead+7, want.CacheWrite+8, 3
		if err != nil || counted(u) != want {
			t.Errorf("ReadFinal = %+v, %v; want %+v", u, err, want)
		}
	})
	t.Run("missing for good", func(t *testing.T) {
		_, err := ReadFinal(agentDir(t, "a6", nil), "a6", report, 50*time.Millisecond)
		var e *Error
		if !errors.As(err, &e) || e.Why != "transcript missing" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("missing where no transcript is kept: no wait", func(t *testing.T) {
		start := time.Now()
		p := filepath.Join(t.TempDir(), "nowhere", "-p", "session", "subagents", "agent-a8.jsonl")
		_, err := ReadFinal(p, "a8", report, 5*time.Second)
		var e *Error
		if !errors.As(err, &e) || e.Why != "transcript missing" || time.Since(start) > time.Second {
			t.Errorf("err = %v after %v", err, time.Since(start))
		}
	})
	t.Run("refused at once", func(t *testing.T) {
		start := time.Now()
		if _, err := ReadFinal("relative.jsonl", "a7", report, 5*time.Second); err == nil || time.Since(start) > time.Second {
			t.Errorf("err = %v after %v", err, time.Since(start))
		}
	})
}

// TestCap: past maxBytes nothing is read; a line the cap cuts is unread.
func TestCap(t *testing.T) {
	a, b := assistant("m1", "", 1, 2, 3, 4, "a")+"\n", assistant("m2", "", 5, 5, 5, 5, "b")+"\n"
	got, err := Sum(strings.NewReader(a+b), int64(len(a)+10))
	want := Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Responses: 1, Capped: true}
	if err != nil || counted(got) != want {
		t.Errorf("Sum = %+v, %v; want %+v", got, err, want)
	}
	// Cut after its usage key: that record is counted unread too.
	got, err = Sum(strings.NewReader(a+b), int64(len(a)+strings.Index(b, `"usage"`)+10))
	want.Unread = 1
	if err != nil || counted(got) != want {
		t.Errorf("Sum = %+v, %v; want %+v", got, err, want)
	}
	if got, _ := Sum(strings.NewReader(a+b), int64(len(a+b))); got.Capped || got.Responses != 2 {
		t.Errorf("exactly maxBytes: %+v, want both responses and not capped", got)
	}
	if !want.Lower() || (Usage{Responses: 1}).Lower() {
		t.Error("Lower")
	}
}

func TestReadRefuses(t *testing.T) {
	data := readCaptured(t)
	p := agentDir(t, "a1", data)
	cases := []struct {
		name, path, agent, why string
	}{
		{"no path", "", "a1", "no transcript path in the SubagentStop payload"},
		{"relative", "subagents/agent-a1.jsonl", "a1", "transcript path not Claude Code's"},
		{"another agent's", p, "a2", "transcript path not Claude Code's"},
		{"not under subagents", filepath.Join(filepath.Dir(filepath.Dir(p)), "agent-a1.jsonl"), "a1", "transcript path not Claude Code's"},
		{"missing", agentDir(t, "a3", nil), "a3", "transcript missing"},
	}
	dir := agentDir(t, "a4", nil)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct{ name, path, agent, why string }{"a directory", dir, "a4", "transcript is not a regular file"})
	if runtime.GOOS != "windows" {
		link := agentDir(t, "a5", nil)
		if err := os.Symlink(p, link); err != nil {
			t.Fatal(err)
		}
		fifo := agentDir(t, "a6", nil)
		if err := mkfifo(fifo); err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			struct{ name, path, agent, why string }{"a symlink", link, "a5", "transcript is a symlink"},
			struct{ name, path, agent, why string }{"a FIFO (no writer: must not block)", fifo, "a6", "transcript is not a regular file"})
		if os.Geteuid() != 0 {
			unreadable := agentDir(t, "a7", data)
			if err := os.Chmod(unreadable, 0); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, struct{ name, path, agent, why string }{"no permission", unreadable, "a7", "transcript unreadable"})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := Read(c.path, c.agent)
			var e *Error
			if !errors.As(err, &e) || e.Why != c.why || u != (Usage{}) {
				t.Fatalf("Read(%q, %q) = %+v, %v; want the error %q", c.path, c.agent, u, err, c.why)
			}
			if strings.Contains(err.Error(), "\n") || e.Hint() == "" {
				t.Errorf("error %q: one line with a hint", err)
			}
		})
	}
}

// reference sums a transcript the plain way: split into lines, decode each
// that names a usage and an assistant, group by message id (else request
// id). Sum must agree with it on any input whose lines fit MaxLine.
func reference(data []byte) Usage {
	s := summer{seen: map[string]int{}}
	for _, l := range bytes.Split(data, []byte("\n")) {
		s.line(l)
	}
	return s.usage()
}

// FuzzSum: any input reads without a panic or an error to counts that are
// not negative, as the plain line-by-line reading does; seeded from the
// captured transcript.
func FuzzSum(f *testing.F) {
	data := readCaptured(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")))
	f.Add([]byte(assistant("m", "r", 1, 2, 3, 4, "x") + "\n" + assistant("m", "r", 1, 2, 3, 4, "y")))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":9223372036854775807}}}` + "\n" + `{"type":"assistant","message":{"id":"n","usage":{"input_tokens":9223372036854775807}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Sum(bytes.NewReader(in), MaxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if got.Input < 0 || got.Output < 0 || got.CacheRead < 0 || got.CacheWrite < 0 || got.Responses < 0 || got.Capped {
			t.Fatalf("Sum = %+v", got)
		}
		if want := reference(in); got != want {
			t.Fatalf("Sum = %+v, the plain reading %+v", got, want)
		}
		small, err := Sum(bytes.NewReader(in), int64(len(in)/2))
		if err != nil || small.Responses > got.Responses || len(in) > 0 && !small.Capped {
			t.Fatalf("half the bytes: %+v, %v (all: %+v)", small, err, got)
		}
	})
}

func ExampleSum() {
	data, _ := os.ReadFile(captured)
	u, _ := Sum(bytes.NewReader(data), MaxBytes)
	fmt.Printf("%d responses: input %d, output %d, cache read %d, cache write %d\n", u.Responses, u.Input, u.Output, u.CacheRead, u.CacheWrite)
	// Output: 2 responses: input 4403, output 103, cache read 15403, cache write 13203
}

// BenchmarkSumCaptured: the captured transcript (30 KB, 17 records), read
// as a SubagentStop reads it.
func BenchmarkSumCaptured(b *testing.B) {
	data := readCaptured(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Sum(bytes.NewReader(data), MaxBytes); err != nil {
			b.Fatal(err)
		}
	}
}
