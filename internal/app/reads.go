package app

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/orch-hook/orch-hook/gates"
	"github.com/orch-hook/orch-hook/gates/coordinate"
	"github.com/orch-hook/orch-hook/gates/orchestrate"
	"github.com/orch-hook/orch-hook/internal/shorten"
	"github.com/orch-hook/orch-hook/state"
)

// reads is what one decision read from the project: with the call, all a
// replay of it needs (the gates are pure functions of the workflow, the
// call and these). Contents are kept by their blob id. It is logged on the
// record that ends the decision (README, "Records").
type reads struct {
	Root    string    `json:"root"`
	Now     time.Time `json:"now"`
	StopCap int       `json:"stop_cap,omitempty"`
	// orchestrate: the plan files (name -> blob id) or the error reading
	// them; the recorded copies asked for (name -> blob id, "" for none).
	PlanRead bool              `json:"plan_read,omitempty"`
	Plan     map[string]string `json:"plan,omitempty"`
	PlanErr  string            `json:"plan_error,omitempty"`
	Recorded map[string]string `json:"recorded,omitempty"`
	// coordinate: what Inspect, Hash, List and Read answered, by argument.
	Inspect map[string]fileCheck `json:"inspect,omitempty"`
	Hash    map[string]hashRead  `json:"hash,omitempty"`
	List    map[string][]string  `json:"list,omitempty"`
	Read    map[string]string    `json:"read,omitempty"` // rel -> blob id ("" unreadable)
	// The configuration file's hash, when a logged decision read it
	// ("" none).
	ConfigRead bool   `json:"config_read,omitempty"`
	Config     string `json:"config,omitempty"`
	// Tokens are a stopping agent's token counts as its transcript gave
	// them (SubagentStop; nil for other calls, and in records written
	// before tokens were read).
	Tokens *gates.Tokens `json:"tokens,omitempty"`

	mu        sync.Mutex
	planFiles orchestrate.PlanFiles
	blobs     map[string][]byte
	// missing is set in a replay when the decision asked for something
	// the record does not hold.
	missing []string
}

type fileCheck struct {
	Rel    string `json:"rel,omitempty"`
	Inside bool   `json:"inside,omitempty"`
	Exists bool   `json:"exists,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

type hashRead struct {
	Rel string `json:"rel,omitempty"`
	Sum string `json:"sum,omitempty"`
	Err string `json:"error,omitempty"`
}

func newReads(root string, now time.Time, stopCap int) *reads {
	return &reads{Root: root, Now: now, StopCap: stopCap}
}

// blob keeps a content and returns its id ("" for nil: nothing read).
func (r *reads) blob(b []byte) string {
	if b == nil {
		return ""
	}
	id := state.BlobID(b)
	if r.blobs == nil {
		r.blobs = map[string][]byte{}
	}
	r.blobs[id] = b
	return id
}

// orchestrate wraps an orchestrate environment's reads.
func (r *reads) orchestrate(load func() (orchestrate.PlanFiles, error), recorded func(string) ([]byte, bool)) (func() (orchestrate.PlanFiles, error), func(string) ([]byte, bool)) {
	wrapLoad := func() (orchestrate.PlanFiles, error) {
		files, err := load()
		r.mu.Lock()
		defer r.mu.Unlock()
		// Hashed only if the decision is logged (finish): most are not.
		r.PlanRead, r.planFiles, r.PlanErr = true, files, ""
		if err != nil {
			r.PlanErr = err.Error()
		}
		return files, err
	}
	wrapRecorded := func(name string) ([]byte, bool) {
		b, ok := recorded(name)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.Recorded == nil {
			r.Recorded = map[string]string{}
		}
		r.Recorded[name] = ""
		if ok {
			r.Recorded[name] = r.blob(b)
		}
		return b, ok
	}
	return wrapLoad, wrapRecorded
}

// config wraps the read of the configuration file's hash.
func (r *reads) config(read func() string) gates.ConfigEnv {
	return func() string {
		h := read()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ConfigRead, r.Config = true, h
		return h
	}
}

// replayConfig answers the configuration's hash as recorded.
func (r *reads) replayConfig() string {
	if !r.ConfigRead {
		r.miss("the configuration file's hash")
	}
	return r.Config
}

// coordinate wraps a coordinate environment's reads.
func (r *reads) coordinate(e *coordinate.Env) *coordinate.Env {
	inspect, hash, list, read := e.Inspect, e.Hash, e.List, e.Read
	e.Inspect = func(p string) coordinate.FileCheck {
		fc := inspect(p)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.Inspect == nil {
			r.Inspect = map[string]fileCheck{}
		}
		r.Inspect[p] = fileCheck(fc)
		return fc
	}
	e.Hash = func(p string) (string, string, error) {
		rel, sum, err := hash(p)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.Hash == nil {
			r.Hash = map[string]hashRead{}
		}
		h := hashRead{Rel: rel, Sum: sum}
		if err != nil {
			h.Err = err.Error()
		}
		r.Hash[p] = h
		return rel, sum, err
	}
	e.List = func(rel string) []string {
		names := list(rel)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.List == nil {
			r.List = map[string][]string{}
		}
		r.List[rel] = append([]string{}, names...)
		return names
	}
	e.Read = func(rel string) []byte {
		b := read(rel)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.Read == nil {
			r.Read = map[string]string{}
		}
		r.Read[rel] = r.blob(b)
		return b
	}
	return e
}

// attach puts the call and what the decision read on the record that ends
// it (the last of events), and keeps the contents read. It runs under the
// lock.
//
// The decision is made whatever happens to its contents: a content that
// cannot be kept (the blobs directory blocked, a full disk) is logged as
// an error before the record, whose replay then says what it lacks; the
// gate's decision, a completion above all, is never lost to it.
func attach(store *state.Store, events []state.Event, call *gates.Call, r *reads) []state.Event {
	if len(events) == 0 || call == nil || r == nil {
		return events
	}
	if r.PlanRead {
		r.Plan = make(map[string]string, len(r.planFiles))
		for name, b := range r.planFiles {
			r.Plan[name] = r.blob(b)
		}
	}
	last := &events[len(events)-1]
	last.Call, last.Reads = encodeCall(call), r.encode()
	if err := store.SaveBlobs(r.blobs); err != nil {
		ev := state.Event{Type: state.EventError, Reason: "the contents this decision read could not be kept, so its record cannot replay it: " + shorten.OneLine(err.Error())}
		fillEvent(&ev, call)
		events = append([]state.Event{ev}, events...)
	}
	return events
}

// ---- replay ----

// replayOrchestrate is the environment a recorded orchestrate decision
// was made in. blob finds a content by its id.
func (r *reads) replayOrchestrate(blob func(string) ([]byte, error)) *orchestrate.Env {
	return &orchestrate.Env{
		Root: r.Root, Now: r.Now, StopCap: r.StopCap, ConfigHash: r.replayConfig, Tokens: r.Tokens,
		LoadFiles: func() (orchestrate.PlanFiles, error) {
			if !r.PlanRead {
				r.miss("the plan files")
				return orchestrate.PlanFiles{}, nil
			}
			files := orchestrate.PlanFiles{}
			for name, id := range r.Plan {
				b, err := blob(id)
				if err != nil {
					r.miss("plan file " + name + ": " + err.Error())
					continue
				}
				files[name] = b
			}
			if r.PlanErr != "" {
				return files, errors.New(r.PlanErr)
			}
			return files, nil
		},
		Recorded: func(name string) ([]byte, bool) {
			id, ok := r.Recorded[name]
			if !ok {
				r.miss("the recorded copy of " + name)
				return nil, false
			}
			if id == "" {
				return nil, false
			}
			b, err := blob(id)
			if err != nil {
				r.miss("the recorded copy of " + name + ": " + err.Error())
				return nil, false
			}
			return b, true
		},
	}
}

// replayCoordinate is the environment a recorded coordinate decision was
// made in.
func (r *reads) replayCoordinate(blob func(string) ([]byte, error)) *coordinate.Env {
	return &coordinate.Env{
		Root: r.Root, Now: r.Now, StopCap: r.StopCap, ConfigHash: r.replayConfig, Tokens: r.Tokens,
		Inspect: func(p string) coordinate.FileCheck {
			fc, ok := r.Inspect[p]
			if !ok {
				r.miss("Inspect " + p)
			}
			return coordinate.FileCheck(fc)
		},
		Hash: func(p string) (string, string, error) {
			h, ok := r.Hash[p]
			if !ok {
				r.miss("Hash " + p)
				return "", "", errors.New("not recorded")
			}
			if h.Err != "" {
				return h.Rel, h.Sum, errors.New(h.Err)
			}
			return h.Rel, h.Sum, nil
		},
		List: func(rel string) []string {
			names, ok := r.List[rel]
			if !ok {
				r.miss("List " + rel)
			}
			return names
		},
		Read: func(rel string) []byte {
			id, ok := r.Read[rel]
			if !ok {
				r.miss("Read " + rel)
				return nil
			}
			if id == "" {
				return nil
			}
			b, err := blob(id)
			if err != nil {
				r.miss("Read " + rel + ": " + err.Error())
				return nil
			}
			return b
		},
	}
}

func (r *reads) miss(what string) {
	if len(r.missing) < 8 {
		r.missing = append(r.missing, what)
	}
}

// blobText is how a record keeps a content: as text when it is UTF-8,
// else base64 behind a "base64:" prefix (so is text that starts with the
// prefix itself: it would read back otherwise).
func blobText(b []byte) string {
	if utf8.Valid(b) && !bytes.HasPrefix(b, []byte("base64:")) {
		return string(b)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(b)
}

// textBlob reads what blobText wrote.
func textBlob(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "base64:"); ok {
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, fmt.Errorf("bad base64 content: %w", err)
		}
		return b, nil
	}
	return []byte(s), nil
}
