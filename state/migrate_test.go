package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMigrateV13Phases(t *testing.T) {
	want := []string{"initialize", "research", "plan", "implement", "test", "debug", "document", "complete"}
	for n, name := range want {
		for _, form := range []string{fmt.Sprint(n), fmt.Sprintf("%q", fmt.Sprint(n)), fmt.Sprintf("%q", name)} {
			t.Run(name+"/"+form, func(t *testing.T) {
				in := fmt.Sprintf(`{"version":"1.3","current_phase":%s,"created_at":"2025-01-02T03:04:05Z"}`, form)
				cp, err := MigrateV13([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				if cp.StateMachine.CurrentState != name {
					t.Errorf("current_phase %s -> %q, want %q", form, cp.StateMachine.CurrentState, name)
				}
				if got := cp.Finished(); got != (name == "complete") {
					t.Errorf("Finished() = %v", got)
				}
			})
		}
	}
}

func TestMigrateV13Fixture(t *testing.T) {
	in := tstRead(t, "testdata/v13.json")
	cp, err := MigrateV13(in)
	if err != nil {
		t.Fatal(err)
	}
	sm := cp.StateMachine
	checks := []struct {
		what      string
		got, want any
	}{
		{"schema_version", cp.SchemaVersion, SchemaVersion},
		{"serial", cp.Serial, uint64(0)},
		{"current_state", sm.CurrentState, "implement"},
		{"completed_states", sm.CompletedStates, []string{"initialize", "research", "plan"}},
		{"transition_table", sm.TransitionTable, V13TransitionTable},
		{"command", sm.WorkflowConfig.Command, "coordinate"},
		{"description", sm.WorkflowConfig.Description, "Add rate limiting to the API"},
		{"scope", sm.WorkflowConfig.Scope, "full-implementation"},
		{"topic_path", sm.WorkflowConfig.TopicPath, "specs/042_rate_limiting"},
		{"project_name", cp.Metadata.ProjectName, "api-server"},
		{"checkpoint_id", cp.Metadata.CheckpointID, "coordinate_20250301_101500"},
		{"created_at", cp.Metadata.CreatedAt, time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)},
		{"updated_at", cp.Metadata.UpdatedAt, time.Date(2025, 3, 1, 11, 42, 10, 0, time.UTC)},
		{"phase_data[v1.3]", string(cp.PhaseData["v1.3"]), string(in)},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(cp.Lineage) {
		t.Errorf("lineage %q is not a fresh random id", cp.Lineage)
	}
	if err := cp.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// The table is the migrated checkpoint's own copy.
	cp.StateMachine.TransitionTable["implement"] = "complete"
	if V13TransitionTable["implement"] != "test" {
		t.Fatal("changing a migrated checkpoint's table changed V13TransitionTable")
	}
	// The original survives a save: it is in the encoded checkpoint.
	out, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	back, migrated, err := Decode(out)
	if err != nil || migrated {
		t.Fatalf("re-decode: migrated %v, %v", migrated, err)
	}
	if !tstJSONEqual(t, back.PhaseData["v1.3"], in) {
		t.Errorf("phase_data[v1.3] after a round trip = %s", back.PhaseData["v1.3"])
	}
}

func TestMigrateV13Defaults(t *testing.T) {
	before := time.Now().UTC().Add(-time.Second)
	cp, err := MigrateV13([]byte(`{"current_phase": 1, "completed_phases": [0, 0, "initialize"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cp.StateMachine.CompletedStates; !reflect.DeepEqual(got, []string{"initialize"}) {
		t.Errorf("duplicate completed phases: %v, want [initialize]", got)
	}
	if cp.StateMachine.WorkflowConfig.Command != "coordinate" {
		t.Errorf("command %q, want the default coordinate", cp.StateMachine.WorkflowConfig.Command)
	}
	if cp.Metadata.CreatedAt.Before(before) || !cp.Metadata.UpdatedAt.Equal(cp.Metadata.CreatedAt) {
		t.Errorf("created_at %v updated_at %v: want now", cp.Metadata.CreatedAt, cp.Metadata.UpdatedAt)
	}
	wantID := "coordinate_" + cp.Metadata.CreatedAt.Format("20060102_150405")
	if cp.Metadata.CheckpointID != wantID {
		t.Errorf("checkpoint_id %q, want %q", cp.Metadata.CheckpointID, wantID)
	}
	cp, err = MigrateV13([]byte(`{"current_phase": 2, "command": "orchestrate", "workflow_type": "coordinate"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cp.StateMachine.WorkflowConfig.Command != "orchestrate" {
		t.Errorf("command %q: command wins over workflow_type", cp.StateMachine.WorkflowConfig.Command)
	}
}

func TestMigrateV13Errors(t *testing.T) {
	tests := []struct {
		in, field, msg string
	}{
		{`{"completed_phases":[0]}`, "current_phase", "missing"},
		{`{"current_phase": 8}`, "current_phase", "8 is not a v1.3 phase (0-7)"},
		{`{"current_phase": -1}`, "current_phase", "-1 is not a v1.3 phase"},
		{`{"current_phase": "deploy"}`, "current_phase", `"deploy" is not a v1.3 phase`},
		{`{"current_phase": null}`, "current_phase", "missing"},
		{`{"current_phase": 1, "completed_phases": [0, 12]}`, "completed_phases[1]", "12 is not a v1.3 phase"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := MigrateV13([]byte(tt.in))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v (%T), want a *ValidationError", err, err)
			}
			if ve.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q, want field %q and %q", err, tt.field, tt.msg)
			}
		})
	}
	if _, err := MigrateV13([]byte(`{"current_phase": 1, "completed_phases": 3}`)); err == nil || !strings.Contains(err.Error(), "schema 1.3") {
		t.Errorf("wrong type: %v", err)
	}
}
