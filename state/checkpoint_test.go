package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeFixtures(t *testing.T) {
	tests := []struct {
		file     string
		migrated bool
		// field is the ValidationError.Field expected; "" means accepted.
		field string
		// msg must appear in the error message (besides the field).
		msg string
	}{
		{file: "v20-valid.json"},
		{file: "v20-version-key.json"},
		{file: "v20-extra-fields.json"},
		{file: "v13.json", migrated: true},
		{file: "v13-bad-phase.json", field: "current_phase", msg: "9 is not a v1.3 phase"},
		{file: "v13-bad-completed.json", field: "completed_phases[2]", msg: "9 is not a v1.3 phase"},
		{file: "v20-unknown-version.json", field: "schema_version", msg: `unsupported version "3.0"`},
		{file: "v20-missing-version.json", field: "schema_version", msg: "missing"},
		{file: "v20-missing-lineage.json", field: "lineage", msg: "missing"},
		{file: "v20-missing-current-state.json", field: "state_machine.current_state", msg: "missing"},
		{file: "v20-missing-transition-table.json", field: "state_machine.transition_table", msg: "missing"},
		{file: "v20-missing-command.json", field: "state_machine.workflow_config.command", msg: "missing"},
		{file: "v20-missing-checkpoint-id.json", field: "metadata.checkpoint_id", msg: "missing"},
		{file: "v20-missing-created-at.json", field: "metadata.created_at", msg: "missing"},
		{file: "v20-state-not-in-table.json", field: "state_machine.current_state", msg: `"deploy" is not a state`},
		{file: "v20-bad-successor.json", field: "state_machine.transition_table.test", msg: `successor "deploy"`},
		{file: "v20-completed-twice.json", field: "state_machine.completed_states[2]", msg: `"research" is listed twice`},
		{file: "v20-completed-unknown.json", field: "state_machine.completed_states[1]", msg: `"deploy" is not a state`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := tstRead(t, filepath.Join("testdata", tt.file))
			cp, migrated, err := Decode(b)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if migrated != tt.migrated {
					t.Errorf("migrated = %v, want %v", migrated, tt.migrated)
				}
				if cp.SchemaVersion != SchemaVersion {
					t.Errorf("SchemaVersion = %q, want %q", cp.SchemaVersion, SchemaVersion)
				}
				if err := cp.Validate(); err != nil {
					t.Errorf("accepted checkpoint does not validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode accepted %s", tt.file)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %q (%T) is not a *ValidationError", err, err)
			}
			if ve.Field != tt.field {
				t.Errorf("Field = %q, want %q (error %q)", ve.Field, tt.field, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.field+": ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q does not start with %q and contain %q", msg, tt.field+": ", tt.msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{"empty", ``, []string{"not a JSON object"}},
		{"array", `[1,2]`, []string{"not a JSON object"}},
		{"truncated", `{"schema_version":"2.0","lineage":"ab`, []string{"not a JSON object"}},
		{"null", `null`, []string{"schema_version", "missing"}},
		{"empty object", `{}`, []string{"schema_version", "missing"}},
		{"wrong type serial", string(tstRead(t, "testdata/v20-wrong-type.json")), []string{"schema 2.0", "serial"}},
		{"wrong type current_state", `{"schema_version":"2.0","state_machine":{"current_state":5}}`, []string{"state_machine.current_state"}},
		{"version as a number", `{"version":3.1}`, []string{"schema_version", `"3.1"`}},
		{"v1.3 without current_phase", `{"version":"1.3"}`, []string{"current_phase", "missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode([]byte(tt.in))
			if err == nil {
				t.Fatal("Decode accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDecodeVersionForms(t *testing.T) {
	valid := tstRead(t, "testdata/v20-valid.json")
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(valid, &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(map[string]json.RawMessage)
		wantErr bool
	}{
		{"schema_version 2.0", func(m map[string]json.RawMessage) {}, false},
		{"schema_version 2", func(m map[string]json.RawMessage) { m["schema_version"] = json.RawMessage(`"2"`) }, false},
		{"version string", func(m map[string]json.RawMessage) {
			delete(m, "schema_version")
			m["version"] = json.RawMessage(`"2.0"`)
		}, false},
		{"version number", func(m map[string]json.RawMessage) {
			delete(m, "schema_version")
			m["version"] = json.RawMessage(`2.0`)
		}, false},
		{"schema_version wins over version", func(m map[string]json.RawMessage) { m["version"] = json.RawMessage(`"3.0"`) }, false},
		{"schema_version 2.1", func(m map[string]json.RawMessage) { m["schema_version"] = json.RawMessage(`"2.1"`) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]json.RawMessage{}
			for k, v := range doc {
				m[k] = v
			}
			tt.mutate(m)
			b, _ := json.Marshal(m)
			cp, migrated, err := Decode(b)
			if tt.wantErr {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if migrated || cp.SchemaVersion != SchemaVersion {
				t.Errorf("migrated %v, SchemaVersion %q", migrated, cp.SchemaVersion)
			}
			out, _ := json.Marshal(cp)
			var back map[string]json.RawMessage
			json.Unmarshal(out, &back)
			if string(back["schema_version"]) != `"2.0"` {
				t.Errorf("re-encoded schema_version = %s", back["schema_version"])
			}
			if _, ok := back["version"]; ok {
				t.Errorf("re-encoded checkpoint still has a \"version\" key: %s", back["version"])
			}
		})
	}
}

func TestDecodeValidFields(t *testing.T) {
	cp, _, err := Decode(tstRead(t, "testdata/v20-valid.json"))
	if err != nil {
		t.Fatal(err)
	}
	sm := cp.StateMachine
	if cp.Lineage != "0f1e2d3c4b5a69788796a5b4c3d2e1f0" || cp.Serial != 7 {
		t.Errorf("lineage %q serial %d", cp.Lineage, cp.Serial)
	}
	if sm.CurrentState != "implement" || !reflect.DeepEqual(sm.CompletedStates, []string{"initialize", "research", "plan"}) {
		t.Errorf("state %q completed %v", sm.CurrentState, sm.CompletedStates)
	}
	if !reflect.DeepEqual(sm.TransitionTable, V13TransitionTable) {
		t.Errorf("table %v", sm.TransitionTable)
	}
	wc := sm.WorkflowConfig
	if wc.Command != "coordinate" || wc.Scope != "full-implementation" || wc.TopicPath != "specs/042_rate_limiting" {
		t.Errorf("workflow_config %+v", wc)
	}
	if !cp.Metadata.CreatedAt.Equal(time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)) {
		t.Errorf("created_at %v", cp.Metadata.CreatedAt)
	}
	if got := string(cp.SupervisorState["implement"]); !strings.Contains(got, `"tasks_done": 2`) {
		t.Errorf("supervisor_state.implement = %s", got)
	}
	if cp.ErrorState.LastError != nil || cp.ErrorState.FailedState != nil {
		t.Errorf("error_state %+v", cp.ErrorState)
	}
	if cp.Finished() {
		t.Error("Finished() on an implementing workflow")
	}
	if got := cp.Successors("test"); !reflect.DeepEqual(got, []string{"debug", "document"}) {
		t.Errorf("Successors(test) = %v", got)
	}
	if got := cp.Successors("complete"); got != nil {
		t.Errorf("Successors(complete) = %v", got)
	}
}

func TestFinished(t *testing.T) {
	for state, want := range map[string]bool{
		"complete": true, "aborted": true, "implement": false, "initialize": false, "": false,
	} {
		cp := &Checkpoint{StateMachine: StateMachine{CurrentState: state}}
		if got := cp.Finished(); got != want {
			t.Errorf("Finished() in %q = %v, want %v", state, got, want)
		}
	}
}

// The top-level fields a newer version (or a person) added are kept by a
// decode/encode round trip with their values, and "version" is not copied
// beside "schema_version".
func TestExtraFieldsRoundTrip(t *testing.T) {
	in := tstRead(t, "testdata/v20-extra-fields.json")
	var want map[string]json.RawMessage
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	cp, _, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Checkpoint{"decoded": cp, "clone": cp.Clone()} {
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: re-encoded checkpoint is not JSON: %v\n%s", name, err, out)
		}
		for _, k := range []string{"x_dashboard", "retention_days", "owner"} {
			if !tstJSONEqual(t, got[k], want[k]) {
				t.Errorf("%s: %s = %s, want %s", name, k, got[k], want[k])
			}
		}
	}
}

// tstJSONEqual compares two JSON values by meaning.
func tstJSONEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// A key that differs from a known field only by case is matched to that
// field by the JSON decoder; keeping it as an extra field as well would
// write it back after the known field, so that the next load would read the
// stale value instead (a checkpoint whose current_state changes by itself
// on a save).
func TestCaseVariantKeyRoundTrip(t *testing.T) {
	valid := string(tstRead(t, "testdata/v20-valid.json"))
	tests := []struct {
		name string
		in   string
	}{
		{"State_Machine before state_machine", strings.Replace(valid, `"state_machine": {`,
			`"State_Machine": {"current_state": "test"}, "state_machine": {`, 1)},
		{"SERIAL before serial", strings.Replace(valid, `"serial": 7,`, `"SERIAL": 3, "serial": 7,`, 1)},
		{"Lineage before lineage", strings.Replace(valid, `"lineage": "0f1e`, `"Lineage": "other", "lineage": "0f1e`, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp, _, err := Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(cp)
			if err != nil {
				t.Fatal(err)
			}
			cp2, _, err := Decode(out)
			if err != nil {
				t.Fatalf("re-decode: %v\n%s", err, out)
			}
			if cp2.StateMachine.CurrentState != cp.StateMachine.CurrentState || cp2.Serial != cp.Serial || cp2.Lineage != cp.Lineage {
				t.Errorf("round trip changed the checkpoint: state %q->%q serial %d->%d lineage %q->%q\n%s",
					cp.StateMachine.CurrentState, cp2.StateMachine.CurrentState, cp.Serial, cp2.Serial, cp.Lineage, cp2.Lineage, out)
			}
		})
	}
}

func TestClone(t *testing.T) {
	cp, _, err := Decode(tstRead(t, "testdata/v20-extra-fields.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := cp.Clone()
	c.StateMachine.CompletedStates[0] = "changed"
	c.StateMachine.TransitionTable["implement"] = "changed"
	c.PhaseData["plan"] = json.RawMessage(`1`)
	if cp.StateMachine.CompletedStates[0] != "initialize" || cp.StateMachine.TransitionTable["implement"] != "test" ||
		bytes.Equal(cp.PhaseData["plan"], []byte(`1`)) {
		t.Error("mutating the clone changed the original")
	}
}

func TestValidationErrorFormat(t *testing.T) {
	err := (&ValidationError{Field: "state_machine.current_state", Problem: "missing"}).Error()
	if err != "state_machine.current_state: missing" {
		t.Errorf("Error() = %q", err)
	}
}

func TestValidateWorkflowJSON(t *testing.T) {
	cp := tstCheckpoint("plan")
	cp.Lineage = "l"
	cp.Metadata.CreatedAt = tstEpoch
	cp.Workflow = json.RawMessage(`{"tasks": [`)
	var ve *ValidationError
	if err := cp.Validate(); !errors.As(err, &ve) || ve.Field != "workflow" {
		t.Errorf("Validate with a broken workflow section = %v", err)
	}
	cp.Workflow = json.RawMessage(`{"tasks": []}`)
	if err := cp.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// Every file in testdata that is a checkpoint fixture is covered by
// TestDecodeFixtures, so that a new fixture is not forgotten.
func TestEveryFixtureIsTested(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	src := string(tstRead(t, "checkpoint_test.go"))
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if !strings.Contains(src, `"`+e.Name()+`"`) && !strings.Contains(src, `"testdata/`+e.Name()+`"`) {
			t.Errorf("testdata/%s is not used by checkpoint_test.go", e.Name())
		}
	}
}
