package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/jsonenc"
	"github.com/orch-hook/orch-hook/internal/jsonfast"
)

// SchemaVersion is the checkpoint schema this package writes.
const SchemaVersion = "2.0"

// Checkpoint is the persisted workflow state: Checkpoint Schema v2.0
// (README, "State"), plus Serial and Lineage. Sections whose shape belongs to a workflow
// (phase_data, supervisor_state, workflow) are kept as raw JSON so that this
// package never loses what it does not understand.
type Checkpoint struct {
	SchemaVersion string `json:"schema_version"`
	// Lineage is fixed when the workflow is created; Serial counts its changes.
	Lineage         string                     `json:"lineage"`
	Serial          uint64                     `json:"serial"`
	StateMachine    StateMachine               `json:"state_machine"`
	PhaseData       map[string]json.RawMessage `json:"phase_data"`
	SupervisorState map[string]json.RawMessage `json:"supervisor_state"`
	ErrorState      ErrorState                 `json:"error_state"`
	Metadata        Metadata                   `json:"metadata"`
	// Workflow holds the runtime data of the workflow engine (package gates).
	Workflow json.RawMessage `json:"workflow,omitempty"`

	// extra keeps top-level fields this version does not know, so a rewrite
	// does not drop them.
	extra map[string]json.RawMessage
	// src is the checkpoint file this was read from, byte for byte (set by
	// the Store's reads, never by a copy): the identity Store.UpdateFrom
	// compares what the lock reads with.
	src []byte
}

// StateMachine is the v2.0 state_machine section.
type StateMachine struct {
	CurrentState    string   `json:"current_state"`
	CompletedStates []string `json:"completed_states"`
	// TransitionTable maps each state to its successors, comma-separated;
	// "" marks a state without successors.
	TransitionTable map[string]string `json:"transition_table"`
	// TableVersion stamps the compiled table so a newer binary can tell an
	// old table from a tampered one.
	TableVersion   int            `json:"transition_table_version,omitempty"`
	WorkflowConfig WorkflowConfig `json:"workflow_config"`
}

// WorkflowConfig is the v2.0 workflow_config section.
type WorkflowConfig struct {
	Command       string `json:"command"`
	Description   string `json:"description"`
	Scope         string `json:"scope,omitempty"`
	TopicPath     string `json:"topic_path,omitempty"`
	TerminalState string `json:"terminal_state,omitempty"`
}

// ErrorState is the v2.0 error_state section.
type ErrorState struct {
	LastError   *string `json:"last_error"`
	RetryCount  int     `json:"retry_count"`
	FailedState *string `json:"failed_state"`
	// Classification is seed 002's class of an agent failure: transient
	// or permanent (README, "Failures and retries").
	Classification string `json:"classification,omitempty"`
}

// Metadata is the v2.0 metadata section.
type Metadata struct {
	CheckpointID string    `json:"checkpoint_id"`
	ProjectName  string    `json:"project_name"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// FinishedStates are the states in which a workflow no longer runs: a new
// workflow may start and archives it.
var FinishedStates = []string{"complete", "aborted"}

// Finished reports whether the workflow has ended (complete or aborted).
func (c *Checkpoint) Finished() bool {
	for _, s := range FinishedStates {
		if c.StateMachine.CurrentState == s {
			return true
		}
	}
	return false
}

// Successors returns the states the table allows after state.
func (c *Checkpoint) Successors(state string) []string {
	v := c.StateMachine.TransitionTable[state]
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// Clone returns a deep copy, so a closure can mutate freely. It copies
// field by field (no encode and decode): the copy encodes to the same
// bytes as the original.
func (c *Checkpoint) Clone() *Checkpoint {
	out := *c
	out.src = nil
	sm := &out.StateMachine
	sm.CompletedStates = slices.Clone(c.StateMachine.CompletedStates)
	sm.TransitionTable = maps.Clone(c.StateMachine.TransitionTable)
	out.PhaseData = cloneRaw(c.PhaseData)
	out.SupervisorState = cloneRaw(c.SupervisorState)
	out.ErrorState.LastError = clonePtr(c.ErrorState.LastError)
	out.ErrorState.FailedState = clonePtr(c.ErrorState.FailedState)
	out.Workflow = bytes.Clone(c.Workflow)
	out.extra = cloneRaw(c.extra)
	return &out
}

func cloneRaw(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

type checkpointAlias Checkpoint

// knownFields are the top-level keys Checkpoint maps; anything else is extra.
var knownFields = map[string]bool{
	"schema_version": true, "lineage": true, "serial": true, "state_machine": true,
	"phase_data": true, "supervisor_state": true, "error_state": true,
	"metadata": true, "workflow": true,
}

// MarshalJSON writes the known fields and then any preserved extra fields.
func (c *Checkpoint) MarshalJSON() ([]byte, error) {
	b, err := jsonenc.Marshal((*checkpointAlias)(c))
	if err != nil || len(c.extra) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(c.extra))
	for k := range c.extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range keys {
		kb, _ := jsonenc.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(c.extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// isKnownField reports whether the decoder maps key to a known field. It
// matches keys case-insensitively (as encoding/json does), so a key such as
// "Serial" is a known field, not an extra one: kept as extra, it would be
// written back after the field and win over it at the next load.
func isKnownField(key string) bool {
	if knownFields[key] {
		return true
	}
	for f := range knownFields {
		if strings.EqualFold(key, f) {
			return true
		}
	}
	return false
}

// UnmarshalJSON reads the known fields and keeps unknown ones.
func (c *Checkpoint) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*checkpointAlias)(c)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	c.extra = nil
	for k, v := range all {
		if !isKnownField(k) && k != "version" && k != "seal" {
			if c.extra == nil {
				c.extra = map[string]json.RawMessage{}
			}
			c.extra[k] = v
		}
	}
	return nil
}

// ValidationError names the field of a checkpoint that is wrong.
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string {
	return e.Field + ": " + e.Problem
}

// Validate checks the fields every workflow needs.
func (c *Checkpoint) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if c.SchemaVersion != SchemaVersion {
		return bad("schema_version", "unsupported version %q (this orch-hook reads %q and migrates \"1.3\")", c.SchemaVersion, SchemaVersion)
	}
	if c.Lineage == "" {
		return bad("lineage", "missing")
	}
	sm := &c.StateMachine
	if len(sm.TransitionTable) == 0 {
		return bad("state_machine.transition_table", "missing or empty")
	}
	if sm.CurrentState == "" {
		return bad("state_machine.current_state", "missing")
	}
	if _, ok := sm.TransitionTable[sm.CurrentState]; !ok {
		return bad("state_machine.current_state", "%q is not a state in state_machine.transition_table", sm.CurrentState)
	}
	for from := range sm.TransitionTable {
		for _, to := range c.Successors(from) {
			if _, ok := sm.TransitionTable[to]; !ok {
				return bad("state_machine.transition_table."+from, "successor %q is not a state of the table", to)
			}
		}
	}
	seen := map[string]bool{}
	for i, s := range sm.CompletedStates {
		if _, ok := sm.TransitionTable[s]; !ok {
			return bad(fmt.Sprintf("state_machine.completed_states[%d]", i), "%q is not a state in state_machine.transition_table", s)
		}
		if seen[s] {
			return bad(fmt.Sprintf("state_machine.completed_states[%d]", i), "%q is listed twice", s)
		}
		seen[s] = true
	}
	if sm.WorkflowConfig.Command == "" {
		return bad("state_machine.workflow_config.command", "missing")
	}
	if c.Metadata.CheckpointID == "" {
		return bad("metadata.checkpoint_id", "missing")
	}
	if c.Metadata.CreatedAt.IsZero() {
		return bad("metadata.created_at", "missing")
	}
	if len(c.Workflow) > 0 && !json.Valid(c.Workflow) {
		return bad("workflow", "not valid JSON")
	}
	return nil
}

// versionProbe is read before anything else, so that the decoder for the
// right schema version is chosen (terraform's statefile does the same).
type versionProbe struct {
	SchemaVersion *string         `json:"schema_version"`
	Version       json.RawMessage `json:"version"`
	CurrentPhase  json.RawMessage `json:"current_phase"`
}

// Decode parses and validates a checkpoint of any supported version: v2.0 as
// is, v1.3 migrated. migrated reports that the input was v1.3.
func Decode(b []byte) (cp *Checkpoint, migrated bool, err error) {
	if cp, ok := decodeCurrent(b); ok {
		return cp, false, cp.Validate()
	}
	return decodeAny(b)
}

// decodeAny is Decode the long way: the version first, then the decoder
// for it, keeping the fields this version does not know.
func decodeAny(b []byte) (cp *Checkpoint, migrated bool, err error) {
	var probe versionProbe
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, false, fmt.Errorf("not a JSON object: %w", trimJSONError(err))
	}
	version := ""
	if probe.SchemaVersion != nil {
		version = *probe.SchemaVersion
	} else if len(probe.Version) > 0 {
		var s string
		if err := json.Unmarshal(probe.Version, &s); err != nil {
			// A number such as 1.3 is accepted as well as "1.3".
			s = strings.TrimSpace(string(probe.Version))
		}
		version = s
	}
	switch {
	case version == SchemaVersion || version == "2":
		cp = &Checkpoint{}
		if err := cp.UnmarshalJSON(b); err != nil {
			return nil, false, fmt.Errorf("schema 2.0: %w", trimJSONError(err))
		}
		cp.SchemaVersion = SchemaVersion
		return cp, false, cp.Validate()
	case version == "1.3" || (version == "" && len(probe.CurrentPhase) > 0):
		cp, err := MigrateV13(b)
		return cp, true, err
	case version == "":
		return nil, false, &ValidationError{Field: "schema_version", Problem: "missing (neither \"schema_version\" nor \"version\" is set)"}
	default:
		return nil, false, &ValidationError{Field: "schema_version", Problem: fmt.Sprintf("unsupported version %q (this orch-hook reads %q and migrates \"1.3\")", version, SchemaVersion)}
	}
}

// decodeCurrent is Decode in one pass for what it nearly always reads: a
// v2.0 checkpoint holding only the fields this version knows. It gives
// false for anything else (another version, a field it does not know, at
// any depth, or a value it cannot read), which Decode then reads the long
// way, with its errors; what it gives is what the long way gives.
func decodeCurrent(b []byte) (*Checkpoint, bool) {
	// The generated decoder, strict as below, reads what orch-hook writes;
	// anything it cannot read exactly as encoding/json would falls through.
	var fast checkpointAlias
	if fd, ok := any(&fast).(jsonfast.FastDecoder); ok && jsonfast.Decode(b, fd, true) {
		if fast.SchemaVersion != SchemaVersion && fast.SchemaVersion != "2" {
			return nil, false
		}
		cp := (*Checkpoint)(&fast)
		cp.SchemaVersion = SchemaVersion
		return cp, true
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	// The version is read as the long way's probe reads it, a *string: a
	// later "schema_version": null (any case) unsets it there, where a
	// string would keep the earlier value. It shadows the checkpoint's own
	// field (a shallower field wins).
	var doc struct {
		checkpointAlias
		SchemaVersion *string `json:"schema_version"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, false
	}
	// As json.Unmarshal: nothing but JSON's white space may follow.
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, false
	}
	if doc.SchemaVersion == nil || *doc.SchemaVersion != SchemaVersion && *doc.SchemaVersion != "2" {
		return nil, false
	}
	cp := (*Checkpoint)(&doc.checkpointAlias)
	cp.SchemaVersion = SchemaVersion
	return cp, true
}

// trimJSONError keeps JSON decoder errors on one line.
func trimJSONError(err error) error {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	return fmt.Errorf("%s", msg)
}

// ReadCheckpointFile decodes a checkpoint file as it is, sealed or not,
// without checking it against its marker: for a workflow that is not live
// (an archive, a test fixture). A live workflow is read with Store.Load.
func ReadCheckpointFile(path string) (*Checkpoint, error) {
	b, err := readSmall(path, maxCheckpoint)
	if err != nil {
		return nil, err
	}
	body, _, err := splitSeal(b)
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	cp, _, err := Decode(body)
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	return cp, nil
}
