package state

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
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

// MigrateFile reads the checkpoint at path and returns it as v2.0 JSON.
// With write, a v1.3 file is replaced atomically and its original kept as
// path+".v1.3". migrated reports whether the file was v1.3.
func MigrateFile(path string, write bool) (out []byte, migrated bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	cp, migrated, err := Decode(b)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	out, err = json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return nil, false, err
	}
	out = append(out, '\n')
	if write && migrated {
		if err := writeFileAtomic(path+".v1.3", b); err != nil {
			return nil, false, err
		}
		if err := writeFileAtomic(path, out); err != nil {
			return nil, false, err
		}
	}
	return out, migrated, nil
}
