// Package transcript reads what an agent used from its Claude Code
// transcript, the JSONL file a SubagentStop names as agent_transcript_path:
// the token usage of its API responses (message.usage of its "assistant"
// records). Claude Code writes one assistant record per content block,
// each repeating the whole response's usage, so records are grouped by
// message id and each response counted once. The read is bounded (MaxBytes
// in all, lines longer than MaxLine skipped) and decodes only the lines
// that can hold a usage. The CLI writes the transcript asynchronously: when
// SubagentStop runs, the agent's last response may not be in it yet
// (observed: it lands some 20 ms into the hook), so ReadFinal waits, a
// bounded time, for the response that ends the agent's turn. The format is
// Claude Code 2.1.328's (internal/dev/e2e/testdata/observed/README.md,
// section 3).
package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
	"github.com/orch-hook/orch-hook/internal/shorten"
)

// The read's bounds. A transcript grows by about 5 KB per response plus
// the tools' outputs (76 KB for 11 responses); a record holding a file an
// agent wrote is as long as the file.
const (
	// MaxBytes is how much of a transcript is read; what follows is not
	// counted (Usage.Capped).
	MaxBytes = 128 << 20
	// MaxLine is the longest record decoded; a longer one that may hold a
	// usage is counted in Usage.Unread.
	MaxLine = 8 << 20
)

// Usage is what the transcript's responses used, summed.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64 // cache_read_input_tokens
	CacheWrite int64 // cache_creation_input_tokens
	// Responses is how many API responses were counted (distinct message
	// ids).
	Responses int
	// Unread counts the records that may hold a usage but could not be
	// read: longer than MaxLine, cut short, or malformed.
	Unread int
	// Capped: the transcript is longer than the read's bound; the rest
	// was not read. TimeUp: the read reached its deadline; the rest was
	// not read.
	Capped bool
	TimeUp bool
	// LastStop is the stop_reason of the last response in the transcript
	// ("tool_use": the agent was still working), and LastText its text
	// blocks, joined (at most maxLastText bytes, its end).
	LastStop string
	LastText string
	// Unfinished: ReadFinal's wait ended before the agent's last response
	// was in the transcript; it was not counted.
	Unfinished bool
}

// Lower reports whether part of the agent's usage was not counted: the
// sums are then a lower bound.
func (u Usage) Lower() bool { return u.Unread > 0 || u.Capped || u.TimeUp || u.Unfinished }

// Ends reports whether the transcript's last response ends the agent's
// turn with lastMessage (SubagentStop's last_assistant_message; "" for
// any): it did not stop to call a tool, and its text is that message (or
// ends it, or is ended by it: the CLI may join or trim blocks).
func (u Usage) Ends(lastMessage string) bool {
	if u.LastStop == "" || u.LastStop == "tool_use" {
		return false
	}
	want, got := strings.TrimSpace(lastMessage), strings.TrimSpace(u.LastText)
	return want == "" || got != "" && (strings.HasSuffix(want, got) || strings.HasSuffix(got, want))
}

// maxLastText bounds the last response's text kept to compare.
const maxLastText = 64 << 10

// Error is why a transcript could not be read, in a few words ("transcript
// missing"), with the detail and what to check.
type Error struct {
	Why    string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Why
	}
	return e.Why + ": " + e.Detail
}

// Hint says what to check.
func (e *Error) Hint() string {
	return "Claude Code writes each subagent's transcript under ~/.claude/projects/<project>/<session>/subagents/; tokens are informational, nothing is gated on them"
}

// pollEvery is how often ReadFinal looks at the transcript again.
const pollEvery = 10 * time.Millisecond

// ReadFinal is Read, waiting at most wait for the transcript to hold the
// response that ends the agent's turn with lastMessage (Usage.Ends): the
// CLI writes it while the SubagentStop hook runs, and creates the file at
// its first write (a missing transcript is waited for only where the CLI
// keeps the project's transcripts: the directory above the session's
// exists). It reads the file again only when its size changed. After the
// wait, what is there is counted, marked Unfinished (a transcript still
// missing stays an error).
func ReadFinal(path, agentID, lastMessage string, wait time.Duration) (Usage, error) {
	deadline := time.Now().Add(wait)
	size := int64(-1)
	for {
		// Each read, too, ends by the deadline (and a grace for the last
		// one): a transcript of many small records could take seconds.
		u, err := readUntil(path, agentID, deadline.Add(readGrace))
		var e *Error
		waitable := err == nil || errors.As(err, &e) && e.Why == "transcript missing" && sessionsKept(path)
		if err == nil && u.Ends(lastMessage) || !waitable {
			return u, err
		}
		if time.Now().After(deadline) {
			if err == nil {
				u.Unfinished = true
			}
			return u, err
		}
		// Wait for the file to change (or appear).
		for time.Now().Before(deadline) {
			time.Sleep(pollEvery)
			if fi, err := os.Lstat(path); err == nil && fi.Size() != size {
				size = fi.Size()
				break
			}
		}
	}
}

// sessionsKept reports whether the directory that holds the project's
// session transcripts exists (path is .../<project>/<session>/subagents/
// agent-<id>.jsonl): the main thread's transcript is written there before
// any agent runs.
func sessionsKept(path string) bool {
	fi, err := os.Stat(filepath.Dir(filepath.Dir(filepath.Dir(path))))
	return err == nil && fi.IsDir()
}

// Read sums the usage in the transcript of agent agentID at path, as the
// SubagentStop payload names it. The path must be Claude Code's for that
// agent (.../subagents/agent-<agentID>.jsonl, absolute), and a regular
// file that is not a symlink; it is opened without blocking (a FIFO in
// its place is refused, not waited on).
func Read(path, agentID string) (Usage, error) { return readUntil(path, agentID, time.Time{}) }

// readGrace is how long the last read may go on past ReadFinal's wait.
const readGrace = 250 * time.Millisecond

// readUntil is Read, ending the read at until (zero: no end): what was not
// read by then makes the count a lower bound (Usage.Capped).
func readUntil(path, agentID string, until time.Time) (Usage, error) {
	if path == "" {
		return Usage{}, &Error{Why: "no transcript path in the SubagentStop payload"}
	}
	if !filepath.IsAbs(path) || agentID == "" || filepath.Base(path) != "agent-"+agentID+".jsonl" || filepath.Base(filepath.Dir(path)) != "subagents" {
		return Usage{}, &Error{Why: "transcript path not Claude Code's", Detail: fmt.Sprintf("%s is not .../subagents/agent-%s.jsonl", shorten.Bytes(shorten.OneLine(path), 200, "..."), shorten.Bytes(agentID, 40, "..."))}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Usage{}, &Error{Why: "transcript missing", Detail: path}
		}
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return Usage{}, &Error{Why: "transcript is a symlink", Detail: path}
		}
		return Usage{}, &Error{Why: "transcript unreadable", Detail: shorten.OneLine(err.Error())}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Usage{}, &Error{Why: "transcript unreadable", Detail: shorten.OneLine(err.Error())}
	}
	if !fi.Mode().IsRegular() {
		return Usage{}, &Error{Why: "transcript is not a regular file", Detail: fmt.Sprintf("%s is a %s", path, kindOf(fi.Mode()))}
	}
	u, err := sumUntil(f, MaxBytes, until)
	if err != nil {
		return u, &Error{Why: "transcript unreadable", Detail: shorten.OneLine(err.Error())}
	}
	return u, nil
}

// kindOf names a file that is not a regular file.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file (" + m.Type().String() + ")"
}

// Sum reads a transcript from r, at most maxBytes of it, and sums its
// responses' usage.
func Sum(r io.Reader, maxBytes int64) (Usage, error) { return sumUntil(r, maxBytes, time.Time{}) }

// errTimeUp ends a read at its deadline.
var errTimeUp = errors.New("read past its deadline")

func sumUntil(r io.Reader, maxBytes int64, until time.Time) (Usage, error) {
	s := summer{seen: map[string]int{}}
	cr := &countingReader{r: io.LimitReader(r, maxBytes+1), until: until}
	br := bufio.NewReaderSize(cr, 64<<10)
	var long []byte // a line longer than the buffer, gathered
	skipping := false
	mayHold := false // the skipped line holds `"usage"`
	var tail []byte  // a skipped piece's last bytes, for a key across pieces
	for {
		piece, err := br.ReadSlice('\n')
		if errors.Is(err, errTimeUp) {
			s.timeUp = true // what was not read by then: a lower bound
			return s.usage(), nil
		}
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return s.usage(), err
		}
		if cr.n > maxBytes && err == io.EOF {
			// The limit cut the last line: not read.
			s.capped = true
			if len(long) > 0 || skipping || len(piece) > 0 {
				s.unreadIfMay(append(long, piece...), mayHold)
			}
			return s.usage(), nil
		}
		switch {
		case skipping:
			mayHold = mayHold || holdsAcross(tail, piece)
			tail = lastBytes(tail, piece)
		case len(long)+len(piece) > MaxLine:
			skipping = true
			mayHold = bytes.Contains(long, usageKey) || holdsAcross(lastBytes(nil, long), piece)
			tail = lastBytes(tail, piece)
			long = long[:0]
		case err == bufio.ErrBufferFull || len(long) > 0:
			long = append(long, piece...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		// The line ends here (a newline, or the end of the file).
		switch {
		case skipping:
			if mayHold {
				s.unread++
			}
			skipping, mayHold = false, false
		case len(long) > 0:
			s.line(long)
			long = long[:0]
		default:
			s.line(piece)
		}
		if err == io.EOF {
			return s.usage(), nil
		}
	}
}

// holdsAcross reports whether usageKey is in piece, or across tail (the
// previous piece's last bytes) and piece.
func holdsAcross(tail, piece []byte) bool {
	if bytes.Contains(piece, usageKey) {
		return true
	}
	joined := append(tail[:len(tail):len(tail)], piece[:min(len(piece), len(usageKey)-1)]...)
	return bytes.Contains(joined, usageKey)
}

// lastBytes keeps b's last len(usageKey)-1 bytes in buf.
func lastBytes(buf, b []byte) []byte {
	return append(buf[:0], b[max(0, len(b)-(len(usageKey)-1)):]...)
}

// usageKey is what a line holding a usage has: a key can only appear
// unescaped (in a JSON string, its quotes would be \").
var (
	usageKey     = []byte(`"usage"`)
	assistantKey = []byte(`"assistant"`)
)

// record is what is decoded of a transcript line.
type record struct {
	Type      string        `json:"type"`
	RequestID string        `json:"requestId"`
	Message   recordMessage `json:"message"`
}

// recordMessage is a record's message.
type recordMessage struct {
	ID         string         `json:"id"`
	StopReason string         `json:"stop_reason"`
	Content    []contentBlock `json:"content"`
	Usage      *recordUsage   `json:"usage"`
}

// contentBlock is one block of a message's content.
type contentBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// recordUsage is a message's token usage.
type recordUsage struct {
	Input      int64 `json:"input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

type response struct{ input, output, cacheRead, cacheWrite int64 }

type summer struct {
	seen      map[string]int // message id -> index in responses
	responses []response
	unread    int
	capped    bool
	timeUp    bool
	// The last response: its key, stop reason and text.
	lastKey, lastStop string
	// lastText is kept up to twice maxLastText and cut to its end only
	// then (and in usage): cut at each block, a response of many small
	// blocks copied 64 KiB per block (the red team's quadratic read).
	lastText []byte
}

// line reads one line. The file's last line may lack its newline; cut
// short by a writer, it does not decode and counts as unread.
func (s *summer) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !bytes.Contains(b, usageKey) || !bytes.Contains(b, assistantKey) {
		return
	}
	rec := &record{}
	if err := jsonfast.Unmarshal(b, rec); err != nil {
		s.unread++
		return
	}
	if rec.Type != "assistant" || rec.Message.Usage == nil {
		return
	}
	s.last(rec)
	u := rec.Message.Usage
	r := response{input: max(u.Input, 0), output: max(u.Output, 0), cacheRead: max(u.CacheRead, 0), cacheWrite: max(u.CacheWrite, 0)}
	key := rec.Message.ID
	if key == "" {
		key = rec.RequestID
	}
	if key == "" {
		s.responses = append(s.responses, r) // no id to group by: counted alone
		return
	}
	if i, ok := s.seen[key]; ok {
		// Another content block of a response already counted: the same
		// usage (the larger count, should the writer have updated it).
		p := &s.responses[i]
		p.input, p.output, p.cacheRead, p.cacheWrite = max(p.input, r.input), max(p.output, r.output), max(p.cacheRead, r.cacheRead), max(p.cacheWrite, r.cacheWrite)
		return
	}
	s.seen[key] = len(s.responses)
	s.responses = append(s.responses, r)
}

// last keeps what the last response says: a record of another response
// starts it anew, one of the same adds its text.
func (s *summer) last(rec *record) {
	key := rec.Message.ID + "\x00" + rec.RequestID
	if key != s.lastKey || key == "\x00" {
		s.lastKey, s.lastText = key, s.lastText[:0]
	}
	s.lastStop = rec.Message.StopReason
	for _, c := range rec.Message.Content {
		if c.Type != "text" {
			continue
		}
		if len(s.lastText) > 0 {
			s.lastText = append(s.lastText, '\n')
		}
		s.lastText = append(s.lastText, c.Text...)
		if len(s.lastText) > 2*maxLastText {
			s.lastText = s.lastText[:copy(s.lastText, s.lastText[len(s.lastText)-maxLastText:])]
		}
	}
}

// unreadIfMay counts a line the read could not finish when it may hold a
// usage.
func (s *summer) unreadIfMay(b []byte, may bool) {
	if may || bytes.Contains(b, usageKey) {
		s.unread++
	}
}

func (s *summer) usage() Usage {
	u := Usage{Responses: len(s.responses), Unread: s.unread, Capped: s.capped, TimeUp: s.timeUp, LastStop: s.lastStop, LastText: string(s.lastText[max(0, len(s.lastText)-maxLastText):])}
	for _, r := range s.responses {
		u.Input = add(u.Input, r.input)
		u.Output = add(u.Output, r.output)
		u.CacheRead = add(u.CacheRead, r.cacheRead)
		u.CacheWrite = add(u.CacheWrite, r.cacheWrite)
	}
	return u
}

// add sums two non-negative counts, saturating.
func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

type countingReader struct {
	r     io.Reader
	n     int64
	until time.Time // zero: no deadline
}

func (c *countingReader) Read(p []byte) (int, error) {
	if !c.until.IsZero() && time.Now().After(c.until) {
		return 0, errTimeUp
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
