package state

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// TamperError: the state was changed by something other than orch-hook.
// Hooks that gate fail closed on it; status exits 4; repair never calls it
// healthy. Only the user re-seals it (README, "State").
type TamperError struct {
	// What names the change, in one sentence.
	What string
}

func (e *TamperError) Error() string {
	return "the workflow's state was changed outside orch-hook: " + e.What
}

// Hint says both ways out.
func (e *TamperError) Hint() string {
	return "if you made this change, accept it with /orch-hook:resolve accept-state (typed in Claude Code) or `orch-hook repair --accept`; to undo it, run `orch-hook repair`, which restores the last state orch-hook wrote"
}

func tampered(format string, args ...any) error {
	return &TamperError{What: fmt.Sprintf(format, args...)}
}

// audit is what checking the state against its marker found.
type audit struct {
	marker *Marker
	// tail and size are the log's last record hash and length once the
	// recovery below is applied: where the next record chains on.
	tail string
	size int64
	// cutAt >= 0: the log is cut back to this length (a writer died between
	// append and rename); cutWhat says what that removes.
	cutAt   int64
	cutWhat string
	// refresh: the marker is behind the files (a writer died before
	// recording them, or they were touched without change) and is
	// rewritten under the lock.
	refresh bool
	// What the marker must record of the checkpoint: its digest, the
	// record that commits it, its serial, lineage and whether it ended.
	digest, commit, lineage string
	serial                  uint64
	finished                bool
	// base >= 0 replaces the marker's log_base (a new workflow, or a
	// change the user accepted).
	base int64
}

// verify checks the checkpoint file (raw, read with stamp cpStamp, split
// into body and seal, decoded as cp) and the log against the marker.
// full (under the lock) re-reads the whole chain whenever the log's stamp
// changed; lock-free, only when it changed without growing (a writer may
// be between its append and its marker).
func (s *Store) verify(raw []byte, cpStamp Stamp, body []byte, seal *Seal, cp *Checkpoint, full bool) (*audit, error) {
	m, err := s.readMarker()
	if err != nil {
		return nil, err
	}
	a := &audit{marker: m, cutAt: -1, base: -1}
	if m == nil {
		return s.verifyUnpinned(seal)
	}
	if cp.Lineage != m.Lineage {
		return nil, tampered("checkpoint.json is workflow %s's, but workflow %s was here (the file was replaced)", cp.Lineage, m.Lineage)
	}
	lf, err := os.OpenFile(s.LogPath(), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var logStamp Stamp
	if lf != nil {
		defer lf.Close()
		fi, err := lf.Stat()
		if err != nil {
			return nil, err
		}
		logStamp = stampOf(fi)
	}
	a.tail, a.size = m.LogTail, m.LogSize
	if !cpStamp.Weak && cpStamp == m.CheckpointStamp && logStamp == m.LogStamp {
		return a, nil // exactly what orch-hook last wrote
	}
	a.refresh = true

	// The checkpoint: the one pinned, or (with a valid MAC) the next one
	// of a writer that died before its marker.
	ahead := false
	if fileDigest(raw) != m.Checkpoint {
		if seal == nil {
			return nil, tampered("checkpoint.json (serial %d) has no seal: it was rewritten by something other than orch-hook", cp.Serial)
		}
		key, err := readKey(cp.Lineage)
		if err != nil {
			return nil, err
		}
		switch {
		case !checkMAC(key, body, seal):
			return nil, tampered("checkpoint.json (serial %d) was edited: its seal does not match its content", cp.Serial)
		case cp.Serial < m.Serial:
			return nil, tampered("checkpoint.json was rolled back from serial %d to serial %d", m.Serial, cp.Serial)
		case cp.Serial == m.Serial:
			return nil, tampered("checkpoint.json was replaced by another checkpoint of serial %d", cp.Serial)
		case cp.Serial > m.Serial+1:
			return nil, tampered("checkpoint.json is serial %d, %d writes past the last one orch-hook recorded (%d)", cp.Serial, cp.Serial-m.Serial, m.Serial)
		}
		ahead = true
	}

	// The log: as long as orch-hook left it, ending in the record it
	// recorded, and whatever follows chained onto it.
	if lf == nil {
		if m.LogSize > 0 {
			return nil, tampered("events.jsonl was deleted (it held %d bytes)", m.LogSize)
		}
		if ahead {
			return nil, tampered("checkpoint.json is serial %d, but events.jsonl does not hold the record that commits it", cp.Serial)
		}
		return a, nil
	}
	if logStamp.Size < m.LogSize {
		return nil, tampered("events.jsonl is %d bytes shorter than orch-hook left it: records were removed", m.LogSize-logStamp.Size)
	}
	if m.LogSize > m.LogBase {
		_, last, err := lastLine(lf, m.LogSize)
		if err != nil {
			return nil, err
		}
		if lineHash(last) != m.LogTail {
			return nil, tampered("the last record orch-hook wrote to events.jsonl was changed or moved")
		}
	}
	// The whole chain is read again when the log changed other than by
	// growing (a writer mid-append only grows it), and under the lock
	// whenever it changed at all.
	changed := logStamp.Ino != m.LogStamp.Ino || logStamp.Time != m.LogStamp.Time || logStamp.Weak
	if changed && (full || logStamp.Size == m.LogSize) {
		if line, err := checkChain(lf, m.LogBase, m.LogSize); err != nil {
			return nil, err
		} else if line > 0 {
			return nil, tampered("events.jsonl was changed: the record at line %d does not follow the one before it (a record was edited, removed or moved)", line)
		}
	}
	if err := a.followers(lf, m, cp, seal, ahead, logStamp.Size); err != nil {
		return nil, err
	}
	return a, nil
}

// verifyUnpinned: no marker for this project. A sealed checkpoint lost its
// marker; an unsealed one is from before sealing, and waits for the user.
// (A v1.3 file never gets here: see UnadoptedError.)
func (s *Store) verifyUnpinned(seal *Seal) (*audit, error) {
	if seal != nil {
		return nil, tampered("the marker that pins this workflow outside the project (%s) is missing", s.MarkerPath())
	}
	return nil, tampered("checkpoint.json has no seal: it was written by an orch-hook from before sealing (accept it once after upgrading) or its seal was removed")
}

// followers checks the records after the pinned end of the log: they must
// chain onto it and be what a writer that died leaves behind: denies whose
// marker was not written yet, then at most one batch of the next serial,
// committed (checkpoint.json is that serial, its seal naming the batch's
// last record) or not (cut), and perhaps a torn last line (cut).
func (a *audit) followers(lf *os.File, m *Marker, cp *Checkpoint, seal *Seal, ahead bool, size int64) error {
	r := bufio.NewReaderSize(io.NewSectionReader(lf, m.LogSize, size-m.LogSize), 64<<10)
	prev, off := m.LogTail, m.LogSize
	batchAt, batchTail := int64(-1), ""
	committed := false
	torn := ""
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			torn = "a torn record (" + itoa(int64(len(line))) + " bytes)"
			break
		}
		if len(line) > 0 {
			var p chainProbe
			if jsonfast.Unmarshal(line, &p) != nil || p.Prev != prev {
				return tampered("events.jsonl holds records after the last one orch-hook recorded that do not follow it (added outside orch-hook)")
			}
			switch {
			case committed:
				return tampered("events.jsonl holds records after the one that commits checkpoint.json (added outside orch-hook)")
			case p.Serial == m.Serial && batchAt < 0 && len(p.Checkpoint) == 0:
				// Committed when appended (a deny); its marker was not
				// written yet.
			case p.Serial == m.Serial+1:
				if batchAt < 0 {
					batchAt, batchTail = off, prev
				}
				if ahead && len(p.Checkpoint) > 0 && lineHash(line) == seal.Log {
					committed = true
				}
			default:
				return tampered("events.jsonl holds a record of serial %d after the last one orch-hook recorded (serial %d): added outside orch-hook", p.Serial, m.Serial)
			}
			prev = lineHash(line)
			off += int64(len(line))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	a.tail, a.size = prev, off
	switch {
	case ahead && (!committed || torn != ""):
		return tampered("checkpoint.json is serial %d, but events.jsonl does not end in the record that commits it", cp.Serial)
	case batchAt >= 0 && !ahead:
		// Appended, never committed: the writer died before its rename.
		a.tail, a.size = batchTail, batchAt
		a.cutAt, a.cutWhat = batchAt, describeCut(size-batchAt, true, torn)
	case torn != "":
		a.cutAt, a.cutWhat = off, describeCut(size-off, false, torn)
	}
	return nil
}

// chainProbe decodes what chain checks need from a record.
// prevProbe reads only a record's link to the one before it.
type prevProbe struct {
	Prev string `json:"prev"`
}

type chainProbe struct {
	Serial     uint64          `json:"serial"`
	Prev       string          `json:"prev"`
	Checkpoint json.RawMessage `json:"checkpoint"`
}

// checkChain reads the log from base to end and returns the 1-based line
// number (counted from base) of the first record that does not chain onto
// the one before it, or 0.
func checkChain(f *os.File, base, end int64) (int, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, base, end-base), 64<<10)
	prev := ""
	if base > 0 {
		_, last, err := lastLine(f, base)
		if err != nil {
			return 0, err
		}
		prev = lineHash(last)
	}
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var p prevProbe
			if line[len(line)-1] != '\n' || jsonfast.Unmarshal(line, &p) != nil || p.Prev != prev {
				return n, nil
			}
			prev = lineHash(line)
		}
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// describeCut says what recovery cut from the log: n bytes, the records
// of a batch never committed (batch) and/or a torn last record.
func describeCut(n int64, batch bool, torn string) string {
	what := torn
	if batch {
		what = itoa(n) + " bytes of uncommitted records past the snapshot"
		if torn != "" {
			what += ", ending in " + torn
		}
	}
	return "cut from the end of events.jsonl after an interrupted write: " + what
}
