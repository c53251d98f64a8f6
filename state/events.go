package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// Event types. Every state change and every deny is logged; allows are not.
const (
	EventStart        = "start"          // a workflow was created
	EventTransition   = "transition"     // current_state changed
	EventUpdate       = "update"         // the state changed without a transition (a counter, a record)
	EventDeny         = "deny"           // a tool call or stop was refused
	EventAgentLaunch  = "agent_launch"   // a workflow subagent was launched
	EventAgentDone    = "agent_complete" // a workflow subagent finished
	EventUserDecision = "user_decision"  // the user approved, resolved, aborted, ...
	EventError        = "error"          // something went wrong and was let through
	EventMigrate      = "migrate"        // a v1.3 checkpoint was rewritten as v2.0
	EventRepair       = "repair"         // the user repaired the state (the snapshot rebuilt or restored) or the plan (orch-hook repair)
	EventRecover      = "recover"        // the log's tail was repaired after a crash
	EventAccept       = "accept_state"   // the user accepted a state changed outside orch-hook
)

// Event is one line of events.jsonl. The same schema serves every type;
// fields that do not apply are omitted.
//
// Commit rule: a record that carries Checkpoint belongs to a state change
// and is committed only once checkpoint.json has been renamed into place with
// the same serial. Records after the snapshot's serial are therefore the
// leftovers of a writer that died between append and rename; they are cut
// at the next locked write and never shown. Records without Checkpoint
// (denies, errors) are committed when appended and carry the serial of the
// state they were decided against.
type Event struct {
	Time        time.Time `json:"time"`
	Serial      uint64    `json:"serial"`
	Type        string    `json:"type"`
	Session     string    `json:"session,omitempty"`
	HookEvent   string    `json:"hook_event,omitempty"`
	ToolUseID   string    `json:"tool_use_id,omitempty"`
	AgentID     string    `json:"agent_id,omitempty"`
	AgentType   string    `json:"agent_type,omitempty"`
	Task        int       `json:"task,omitempty"`
	Phase       int       `json:"phase,omitempty"`
	Gate        int       `json:"gate,omitempty"`
	StateBefore string    `json:"state_before,omitempty"`
	StateAfter  string    `json:"state_after,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	// A refusal's parts, on a deny record beside Reason, its text (README,
	// "Seeing the workflow"): the rule (what was refused and why), where
	// the workflow stood, the next step the model was told, and the MCP
	// tool a refused write came through. Records written before refusals
	// were values have Reason alone.
	Rule  string `json:"rule,omitempty"`
	Where string `json:"where,omitempty"`
	Next  string `json:"next,omitempty"`
	Via   string `json:"via,omitempty"`
	// Input is what the decision was made on (e.g. a result line, a decision).
	Input json.RawMessage `json:"input,omitempty"`
	// Call and Reads are, on the record that ends a hook call's decision
	// (a state change, or a deny), the call as the gates saw it and what
	// the decision read from the project (contents by their blob id), so
	// that `orch-hook verify` can replay it (README, "Records").
	Call  json.RawMessage `json:"call,omitempty"`
	Reads json.RawMessage `json:"reads,omitempty"`
	// Checkpoint is the complete resulting checkpoint of a state change, so
	// the snapshot can be rebuilt from the log alone (orch-hook repair).
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
	// Prev is the hash of the record before this one ("" for the first):
	// the chain that makes an edited, removed or reordered record show.
	Prev string `json:"prev,omitempty"`
}

// appendEvents chains the records onto prev (the hash of the log's last
// record, whose length is size), writes them in one write and syncs the
// log. It returns the new last hash and length.
func appendEvents(path string, events []Event, prev string, size int64) (string, int64, error) {
	var buf bytes.Buffer
	for i := range events {
		events[i].Prev = prev
		b, err := jsonenc.Marshal(&events[i])
		if err != nil {
			return "", 0, err
		}
		prev = lineHash(b)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow|nonBlock, fileMode)
	if err != nil {
		return "", 0, err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return "", 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", 0, err
	}
	return prev, size + int64(buf.Len()), f.Close()
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// lastLine returns the last line of f[:end] (with its newline if it has
// one) and the offset where it starts, reading backwards in chunks.
func lastLine(f *os.File, end int64) (int64, []byte, error) {
	const chunk = 8192
	var tail []byte
	pos := end
	for pos > 0 {
		n := int64(chunk)
		if pos < n {
			n = pos
		}
		pos -= n
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos); err != nil && err != io.EOF {
			return 0, nil, err
		}
		tail = append(buf, tail...)
		// Search for the newline that ends the previous line, ignoring the
		// one that may end this line.
		search := tail
		if bytes.HasSuffix(search, []byte("\n")) {
			search = search[:len(search)-1]
		}
		if i := bytes.LastIndexByte(search, '\n'); i >= 0 {
			return pos + int64(i) + 1, tail[i+1:], nil
		}
	}
	return 0, tail, nil
}

// LogReport is what reading the log found besides the events.
type LogReport struct {
	// BadLines are line numbers (1-based) that did not parse and were skipped.
	BadLines []int
}

// readEvents reads every committed record. maxSerial drops records past the
// snapshot (uncommitted, see Event); pass ^uint64(0) to keep them.
func readEvents(path string, maxSerial uint64) ([]Event, LogReport, error) {
	var rep LogReport
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rep, nil
	}
	if err != nil {
		return nil, rep, err
	}
	defer f.Close()
	var events []Event
	r := bufio.NewReaderSize(f, 64*1024)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			var ev Event
			if !complete || jsonfast.Unmarshal(line, &ev) != nil {
				if complete {
					rep.BadLines = append(rep.BadLines, n)
				}
			} else if ev.Serial <= maxSerial {
				events = append(events, ev)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return events, rep, err
		}
	}
	return events, rep, nil
}

// Tail returns the last n committed records of the log, oldest first,
// reading backwards from the end: its cost depends on n, not on the size
// of the log.
func (s *Store) Tail(n int) ([]Event, error) { return s.TailOf(n) }

// TailOf is Tail limited to records of the given types (all when none):
// lines of other types are skipped without being decoded.
func (s *Store) TailOf(n int, types ...string) ([]Event, error) {
	max := ^uint64(0)
	if cp, err := ReadCheckpointFile(s.CheckpointPath()); err == nil { // the serial only: no check, no lock
		max = cp.Serial
	}
	f, err := os.OpenFile(s.LogPath(), os.O_RDONLY|noFollow|nonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	err = reverseLines(f, func(line []byte) bool {
		if len(types) > 0 && !hasType(line, types) {
			return true
		}
		var ev Event
		if jsonfast.Unmarshal(line, &ev) == nil && ev.Serial <= max {
			out = append(out, ev)
		}
		return len(out) < n
	})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// reverseLines calls fn on each complete line of f (with its newline), last
// first, reading the file backwards once, until fn returns false. A torn
// last line (no newline) is skipped, however long. line is only valid
// during the call: fn must copy what it keeps (json.Unmarshal does).
//
// It reads in chunks into two buffers it reuses, and finds the lines of
// each chunk forwards (bytes.IndexByte is vectorized; LastIndexByte is
// not), then hands them to fn in reverse: status reads a 100,000-record
// log this way when it looks back for the last transitions.
func reverseLines(f *os.File, fn func(line []byte) bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const chunk = 256 << 10
	pos := fi.Size()
	var buf, spare []byte
	var carry []byte // a prefix of buf: the end of a line whose start is not read yet
	var starts []int
	torn := true // nothing but a torn last line read so far
	for pos > 0 {
		n := min(int64(chunk), pos)
		pos -= n
		need := int(n) + len(carry)
		if cap(spare) < need {
			spare = make([]byte, need, need+chunk/4) // room for the carry of most lines
		}
		next := spare[:need]
		copy(next[n:], carry) // carry is in buf, never in spare
		if _, err := f.ReadAt(next[:n], pos); err != nil && err != io.EOF {
			return err
		}
		buf, spare = next, buf
		if torn {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				carry = nil // all of it belongs to the torn line
				continue
			}
			buf, torn = buf[:i+1], false
		}
		// buf ends with a newline. Unless the file starts here, what
		// precedes its first newline may be the end of a longer line.
		first := 0
		if pos > 0 {
			first = bytes.IndexByte(buf, '\n') + 1
		}
		starts = starts[:0]
		for j := first; j < len(buf); {
			starts = append(starts, j)
			j += bytes.IndexByte(buf[j:], '\n') + 1
		}
		end := len(buf)
		for k := len(starts) - 1; k >= 0; k-- {
			line := buf[starts[k]:end]
			end = starts[k]
			if len(line) > 1 && !fn(line) {
				return nil
			}
		}
		carry = buf[:first]
	}
	return nil
}

// hasType checks a record's "type" without decoding it: the encoder writes
// `{"time":"...","serial":N,"type":"deny"` with no spaces, so the type is
// read at that place; a line of another shape has it searched for in its
// head.
func hasType(line []byte, types []string) bool {
	rest, ok := typeAt(line)
	if !ok {
		head := line
		if len(head) > 160 {
			head = head[:160]
		}
		i := bytes.Index(head, []byte(`"type":"`))
		if i < 0 {
			return false
		}
		rest = head[i+len(`"type":"`):]
	}
	for _, t := range types {
		if len(rest) > len(t) && string(rest[:len(t)]) == t && rest[len(t)] == '"' {
			return true
		}
	}
	return false
}

// typeAt returns what follows `"type":"` in a line that starts as the
// encoder writes a record: `{"time":"<no quote>","serial":<digits>,"type":"`.
// There the first `"type":"` of the line is that one (a time holds no
// quote), so the answer is the one a search would give.
func typeAt(line []byte) ([]byte, bool) {
	const open, serial, typ = `{"time":"`, `","serial":`, `,"type":"`
	if !bytes.HasPrefix(line, []byte(open)) {
		return nil, false
	}
	rest := line[len(open):]
	i := bytes.IndexByte(rest[:min(len(rest), 64)], '"')
	if i < 0 || !bytes.HasPrefix(rest[i:], []byte(serial)) {
		return nil, false
	}
	rest = rest[i+len(serial):]
	d := 0
	for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
		d++
	}
	if d == 0 || !bytes.HasPrefix(rest[d:], []byte(typ)) {
		return nil, false
	}
	return rest[d+len(typ):], true
}
