package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// V13Phases maps v1.3 phase numbers to v2.0 state names: the coordinate
// workflow's states, in order (README, "State").
var V13Phases = []string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"}

// V13TransitionTable is the default table a migrated checkpoint gets: the
// coordinate workflow's (README, "Scopes").
var V13TransitionTable = map[string]string{
	"initialize": "research",
	"research":   "plan,complete",
	"plan":       "implement,complete",
	"implement":  "test",
	"test":       "debug,document",
	"debug":      "test,complete",
	"document":   "complete",
	"complete":   "",
}

// v13Checkpoint is what a v1.3 checkpoint may hold. Only current_phase is
// required; the rest is read when present.
type v13Checkpoint struct {
	CurrentPhase        *json.RawMessage  `json:"current_phase"`
	CompletedPhases     []json.RawMessage `json:"completed_phases"`
	WorkflowDescription string            `json:"workflow_description"`
	WorkflowType        string            `json:"workflow_type"`
	Command             string            `json:"command"`
	Scope               string            `json:"workflow_scope"`
	TopicPath           string            `json:"topic_path"`
	ProjectName         string            `json:"project_name"`
	CheckpointID        string            `json:"checkpoint_id"`
	CreatedAt           string            `json:"created_at"`
	UpdatedAt           string            `json:"updated_at"`
}

// MigrateV13 converts a v1.3 checkpoint (phase numbers) to v2.0 (state
// names). The original document is kept whole under phase_data["v1.3"], so
// nothing it held is lost.
func MigrateV13(b []byte) (*Checkpoint, error) {
	var old v13Checkpoint
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, fmt.Errorf("schema 1.3: %w", trimJSONError(err))
	}
	if old.CurrentPhase == nil {
		return nil, &ValidationError{Field: "current_phase", Problem: "missing in a v1.3 checkpoint"}
	}
	current, err := v13PhaseName("current_phase", *old.CurrentPhase)
	if err != nil {
		return nil, err
	}
	completed := make([]string, 0, len(old.CompletedPhases))
	seen := map[string]bool{}
	for i, raw := range old.CompletedPhases {
		name, err := v13PhaseName(fmt.Sprintf("completed_phases[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		if !seen[name] {
			completed = append(completed, name)
			seen[name] = true
		}
	}
	command := firstNonEmpty(old.Command, old.WorkflowType, "coordinate")
	created := parseTimeOr(old.CreatedAt, time.Time{})
	if created.IsZero() {
		created = time.Now().UTC().Truncate(time.Second)
	}
	table := make(map[string]string, len(V13TransitionTable))
	for k, v := range V13TransitionTable {
		table[k] = v
	}
	cp := &Checkpoint{
		SchemaVersion: SchemaVersion,
		Lineage:       NewLineage(),
		StateMachine: StateMachine{
			CurrentState:    current,
			CompletedStates: completed,
			TransitionTable: table,
			WorkflowConfig: WorkflowConfig{
				Command:     command,
				Description: old.WorkflowDescription,
				Scope:       old.Scope,
				TopicPath:   old.TopicPath,
			},
		},
		PhaseData:       map[string]json.RawMessage{"v1.3": json.RawMessage(append([]byte(nil), b...))},
		SupervisorState: map[string]json.RawMessage{},
		Metadata: Metadata{
			CheckpointID: firstNonEmpty(old.CheckpointID, command+"_"+created.Format("20060102_150405")),
			ProjectName:  old.ProjectName,
			CreatedAt:    created,
			UpdatedAt:    parseTimeOr(old.UpdatedAt, created),
		},
	}
	return cp, cp.Validate()
}

func v13PhaseName(field string, raw json.RawMessage) (string, error) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	for i, name := range V13Phases {
		if s == fmt.Sprint(i) || s == name {
			return name, nil
		}
	}
	return "", &ValidationError{Field: field, Problem: fmt.Sprintf("%s is not a v1.3 phase (0-7)", raw)}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func parseTimeOr(s string, def time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	return def
}

// UnadoptedError: the project's checkpoint is a v1.3 file. It carries no
// seal, so nothing says orch-hook or the user put it there: a hook never
// continues it; the user adopts it (Adopt). Pinned: it replaced the
// checkpoint of a workflow orch-hook was running.
type UnadoptedError struct {
	Path   string
	Pinned bool
}

func (e *UnadoptedError) Error() string {
	if e.Pinned {
		return "checkpoint.json was replaced by a v1.3 checkpoint (not written by orch-hook); it is not continued until you adopt it"
	}
	return "checkpoint.json is a v1.3 checkpoint; it is not continued until you adopt it"
}

// Hint says how to adopt it (or, when it replaced a workflow, undo that).
func (e *UnadoptedError) Hint() string {
	if e.Pinned {
		// /orch-hook:resume moves a running workflow to a session: typed
		// for that, it must not adopt what replaced the workflow.
		return "to undo the replacement, run `orch-hook repair`, which restores the last state orch-hook wrote; to adopt the v1.3 checkpoint instead, run `orch-hook migrate --write` in a terminal (README, \"Continuing a v1.3 checkpoint\")"
	}
	return "to continue it, run `orch-hook migrate --write` or type /orch-hook:resume in Claude Code (README, \"Continuing a v1.3 checkpoint\")"
}

// replacesRunning reports whether the v1.3 file in checkpoint.json took
// the place of a workflow orch-hook was running: its marker says so (or
// is not one orch-hook wrote), or, with no marker, the log's last
// checkpoint is of a workflow that had not finished.
func (s *Store) replacesRunning() bool {
	m, err := s.readMarker()
	switch {
	case err != nil:
		return true
	case m != nil:
		return !m.Finished
	}
	last, _ := s.lastLoggedCheckpoint()
	return last != nil && !last.Finished()
}

// lastLoggedCheckpoint is the checkpoint of the log's last record that
// carries one (nil when there is none, or it does not read).
func (s *Store) lastLoggedCheckpoint() (*Checkpoint, error) {
	f, err := os.OpenFile(s.LogPath(), os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var found *Checkpoint
	err = reverseLines(f, func(line []byte) bool {
		var p chainProbe
		if jsonfast.Unmarshal(line, &p) != nil || len(p.Checkpoint) == 0 {
			return true
		}
		if cp, migrated, err := Decode(p.Checkpoint); err == nil && !migrated {
			found = cp
		}
		return false
	})
	return found, err
}

// ErrNotV13 is Adopt's answer when the checkpoint is not a v1.3 file.
var ErrNotV13 = errors.New("checkpoint.json is not a v1.3 checkpoint: there is nothing to adopt")

// Adopt makes a v1.3 checkpoint the workflow's state, at the user's word
// (who). With imported nil it is the project's own checkpoint.json;
// otherwise imported is the v1.3 document, which takes the place of a
// finished workflow (archived, as Create does) and never of an active one.
// The checkpoint is migrated, install puts the workflow it continues into
// it (returning a line saying where it resumes), and it is sealed at
// serial 1 in a new log. The v1.3 document is kept beside it as
// checkpoint.json.v1.3.
func (s *Store) Adopt(imported []byte, install func(cp *Checkpoint) (string, error), who string) (*Checkpoint, string, error) {
	if imported == nil {
		if _, err := os.Stat(s.CheckpointPath()); errors.Is(err, fs.ErrNotExist) {
			return nil, "", ErrNoState
		}
	} else if err := s.ensureDirs(); err != nil {
		return nil, "", err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	removeStaleTemps(s.Dir)
	raw := imported
	if raw == nil {
		if raw, _, err = s.readCheckpoint(); err != nil {
			return nil, "", &CorruptError{Path: s.CheckpointPath(), Err: err}
		}
	}
	cp, migrated, err := Decode(raw)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("cannot adopt it: %w", err)
	case !migrated:
		return nil, "", ErrNotV13
	}
	if imported != nil {
		old, _, err := s.readAudited(true, nil)
		switch {
		case err == nil && !old.Finished():
			return nil, "", &ActiveError{Command: old.StateMachine.WorkflowConfig.Command, State: old.StateMachine.CurrentState, Since: old.Metadata.CreatedAt}
		case err == nil:
			if err := s.archiveLocked(old); err != nil {
				return nil, "", err
			}
		case errors.Is(err, ErrNoState):
		default:
			return nil, "", err
		}
	}
	where, err := install(cp)
	if err != nil {
		return nil, "", err
	}
	if s.Check != nil {
		if err := s.Check(cp); err != nil {
			return nil, "", err
		}
	}
	if err := writeFileAtomic(s.CheckpointPath()+".v1.3", raw); err != nil {
		return nil, "", err
	}
	if imported == nil {
		// The log is the replaced workflow's: it goes to the archive, as
		// a finished workflow's does, so nothing it holds is lost (and the
		// adopted workflow's log begins with its adoption). Its lineage is
		// the marker's, else its own last checkpoint's.
		lineage := ""
		if m, _ := s.readMarker(); m != nil {
			lineage = m.Lineage
		} else if last, _ := s.lastLoggedCheckpoint(); last != nil {
			lineage = last.Lineage
		}
		if fi, err := os.Lstat(s.LogPath()); err == nil && (lineage != "" || fi.Size() > 0) {
			if lineage == "" || !plainName(lineage) {
				lineage = "replaced-" + s.Now().Format("20060102T150405.000000000Z")
			}
			if err := s.archiveFilesLocked(lineage, "events.jsonl", recordedName); err != nil {
				return nil, "", err
			}
		}
	}
	if err := s.startSegmentLocked(); err != nil {
		return nil, "", err
	}
	if _, err := newKey(cp.Lineage); err != nil {
		return nil, "", err
	}
	ev := []Event{{Type: EventMigrate, Reason: fmt.Sprintf("%s adopted a v1.3 checkpoint (%s): it %s; the original is kept as checkpoint.json.v1.3", who, cp.StateMachine.WorkflowConfig.Command, where), StateAfter: cp.StateMachine.CurrentState}}
	if err := s.commitLocked(&Checkpoint{}, cp, ev); err != nil {
		return nil, "", err
	}
	return cp, where, nil
}
