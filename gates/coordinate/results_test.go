package coordinate

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseReportCreated(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"seed line", "Research complete.\n\nREPORT_CREATED: /home/user/.config/.claude/specs/042_auth/reports/001_authentication_patterns.md\n",
			[]string{"/home/user/.config/.claude/specs/042_auth/reports/001_authentication_patterns.md"}},
		{"none", "I wrote the report.", nil},
		{"empty path", "REPORT_CREATED:\nREPORT_CREATED:   ", nil},
		{"several, in order, without duplicates", "REPORT_CREATED: /a/001_x.md\nREPORT_CREATED: /a/002_y.md\nREPORT_CREATED: /a/001_x.md",
			[]string{"/a/001_x.md", "/a/002_y.md"}},
		{"decoration", "- **REPORT_CREATED:** `/a/001_x.md`\n> REPORT_CREATED: \"/a/002_y.md\"\n## REPORT_CREATED: </a/003_z.md>\n**REPORT_CREATED**: /a/004_w.md",
			[]string{"/a/001_x.md", "/a/002_y.md", "/a/003_z.md", "/a/004_w.md"}},
		{"case and CRLF", "report_created: /a/b c/001_x.md\r\n", []string{"/a/b c/001_x.md"}},
		{"spaces in the path", "REPORT_CREATED: /home/u/My Projects/specs/001_x.md  ", []string{"/home/u/My Projects/specs/001_x.md"}},
		{"not at the line start", "The agent must end with REPORT_CREATED: /x.md", nil},
		{"other markers", "REPORT_CREATEDX: /x.md\nREPORT: /y.md\nREPORT_CREATED /z.md", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseReportCreated(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseReportCreated = %q, want %q", got, tc.want)
			}
		})
	}
}

// seedAggregated is the example the supervisor tests start from: a
// research supervisor's aggregated_metadata for four authentication
// topics, as a supervisor would return it (README, "Supervisors").
const seedAggregated = `{
        "topics_researched": 4,
        "reports_created": [
          "/home/user/.config/.claude/specs/042_auth/reports/001_authentication_patterns.md",
          "/home/user/.config/.claude/specs/042_auth/reports/002_authorization_patterns.md",
          "/home/user/.config/.claude/specs/042_auth/reports/003_session_management.md",
          "/home/user/.config/.claude/specs/042_auth/reports/004_password_security.md"
        ],
        "summary": "Comprehensive auth research covering authentication (session/JWT/OAuth2), authorization (RBAC/ABAC), session management (server-side/client-side), and password security (bcrypt/Argon2). Key recommendations: session-based for web apps, RBAC for simple permissions, server-side sessions for security, Argon2 for password hashing.",
        "key_findings": [
          "Session-based auth suitable for traditional web apps",
          "JWT tokens enable stateless authentication",
          "RBAC simplest for straightforward permission models",
          "ABAC provides fine-grained control at cost of complexity",
          "Server-side sessions most secure",
          "Session rotation prevents fixation attacks",
          "Argon2 recommended for new implementations",
          "Password breach detection critical for security"
        ],
        "total_duration_ms": 43500,
        "context_tokens": 950
      }`

func TestParseSupervisor(t *testing.T) {
	t.Run("completion signal, multi-line", func(t *testing.T) {
		text := "All four workers returned.\n\nSUPERVISOR_COMPLETE: {\n  \"supervisor_id\": \"research_sub_supervisor_20251107_143030\",\n  \"topics_researched\": 4,\n  \"reports_created\": [\"path1.md\", \"path2.md\", \"path3.md\", \"path4.md\"],\n  \"summary\": \"Combined 50-word summary\",\n  \"key_findings\": [\"finding1\", \"finding2\", \"finding3\", \"finding4\"]\n}\n"
		res, failed, err := ParseSupervisor(text)
		if err != nil || failed {
			t.Fatalf("err %v failed %v", err, failed)
		}
		if res.SupervisorID != "research_sub_supervisor_20251107_143030" || res.TopicsResearched != 4 || len(res.ReportsCreated) != 4 ||
			res.Summary != "Combined 50-word summary" || len(res.KeyFindings) != 4 || !strings.HasPrefix(res.Raw, "{") || !strings.HasSuffix(res.Raw, "}") {
			t.Errorf("parsed %+v", res)
		}
	})
	t.Run("every field of the schema", func(t *testing.T) {
		res, _, err := ParseSupervisor("SUPERVISOR_COMPLETE: " + seedAggregated)
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalDurationMs != 43500 || res.ContextTokens != 950 || len(res.KeyFindings) != 8 || res.TopicsResearched != 4 {
			t.Errorf("parsed %+v", res)
		}
		impl := `SUPERVISOR_COMPLETE: {"supervisor_id":"impl_sub_supervisor_1","supervisor_name":"implementation-sub-supervisor","worker_count":3,"tracks_completed":3,"files_modified":5,"total_lines":1450,"parallel_duration_ms":30000,"sequential_duration_ms":70000,"time_savings_percent":57,"summary":"Parallel implementation.","context_tokens":60}`
		res, _, err = ParseSupervisor(impl)
		if err != nil {
			t.Fatal(err)
		}
		if res.SupervisorName != "implementation-sub-supervisor" || res.WorkerCount != 3 || res.TracksCompleted != 3 || res.FilesModified != 5 || res.TotalLines != 1450 ||
			res.ParallelDurationMs != 30000 || res.SequentialDurationMs != 70000 || res.TimeSavingsPercent != 57 {
			t.Errorf("implementation %+v", res)
		}
		tst := `SUPERVISOR_COMPLETE: {"total_tests":23,"tests_passed":23,"tests_failed":0,"coverage_percent":85.5,"total_duration_ms":17000,"summary":"All passing."}`
		res, _, err = ParseSupervisor(tst)
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalTests != 23 || res.TestsPassed != 23 || res.CoveragePercent != 85.5 || res.TotalDurationMs != 17000 {
			t.Errorf("testing %+v", res)
		}
	})
	t.Run("partial_failures as one string or as a list", func(t *testing.T) {
		res, _, err := ParseSupervisor(`SUPERVISOR_COMPLETE: {"summary":"s","partial_failures":"Failed: session management (timeout); Failed: password security (no report)"}`)
		if err != nil {
			t.Fatal(err)
		}
		if want := (FailureList{"Failed: session management (timeout)", "Failed: password security (no report)"}); !reflect.DeepEqual(res.PartialFailures, want) {
			t.Errorf("partial_failures %q", res.PartialFailures)
		}
		res, _, err = ParseSupervisor(`SUPERVISOR_COMPLETE: {"summary":"s","partial_failures":["Failed: a (x)"]}`)
		if err != nil || !reflect.DeepEqual(res.PartialFailures, FailureList{"Failed: a (x)"}) {
			t.Errorf("list: %v %q", err, res.PartialFailures)
		}
		_, _, err = ParseSupervisor(`SUPERVISOR_COMPLETE: {"partial_failures": 3}`)
		if err == nil || !strings.Contains(err.Error(), "partial_failures") {
			t.Errorf("number: %v", err)
		}
	})
	t.Run("failed", func(t *testing.T) {
		res, failed, err := ParseSupervisor("ERROR: All workers failed\nSUPERVISOR_FAILED: {\"errors\": [\"timeout\", \"permission denied\"]}")
		if err != nil || !failed || !reflect.DeepEqual(res.Errors, []string{"timeout", "permission denied"}) {
			t.Errorf("res %+v failed %v err %v", res, failed, err)
		}
	})
	t.Run("the last marker wins", func(t *testing.T) {
		text := "Return format:\nSUPERVISOR_COMPLETE: <aggregated_metadata_json>\n\nFirst try:\nSUPERVISOR_FAILED: {\"errors\":[\"x\"]}\nRetried.\nSUPERVISOR_COMPLETE: {\"summary\": \"final\"}\nDone."
		res, failed, err := ParseSupervisor(text)
		if err != nil || failed || res.Summary != "final" {
			t.Errorf("res %+v failed %v err %v", res, failed, err)
		}
		res, failed, err = ParseSupervisor("SUPERVISOR_COMPLETE: {\"summary\": \"early\"}\nthen\nSUPERVISOR_FAILED: {\"errors\": [\"late\"]}")
		if err != nil || !failed || res.Errors[0] != "late" {
			t.Errorf("res %+v failed %v err %v", res, failed, err)
		}
	})
	t.Run("decoration, fences and trailing text", func(t *testing.T) {
		for _, text := range []string{
			"**SUPERVISOR_COMPLETE:**\n```json\n{\"summary\": \"fenced\"}\n```\n",
			"- `SUPERVISOR_COMPLETE`: {\"summary\": \"fenced\"} and some words after",
			"supervisor_complete:\n\n   {\"summary\":\n   \"fenced\"}\nWARNING: nothing",
			"SUPERVISOR_COMPLETE: ```{\"summary\": \"fenced\"}```",
		} {
			res, failed, err := ParseSupervisor(text)
			if err != nil || failed || res.Summary != "fenced" {
				t.Errorf("%q: res %+v failed %v err %v", text, res, failed, err)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			text, want string
			failed     bool
		}{
			{"nothing here", "no SUPERVISOR_COMPLETE", false},
			{"", "no SUPERVISOR_COMPLETE", false},
			{"The supervisor should say SUPERVISOR_COMPLETE: {}", "no SUPERVISOR_COMPLETE", false},
			{"SUPERVISOR_COMPLETE: <aggregated_metadata_json>", "is not followed by a JSON object (found \"<aggregated_metadata_json>\")", false},
			{"SUPERVISOR_COMPLETE:", "is not followed by a JSON object", false},
			{"SUPERVISOR_FAILED: [\"x\"]", "SUPERVISOR_FAILED: is not followed by a JSON object", true},
			{"SUPERVISOR_COMPLETE: {\"summary\": \"unterminated\"", "does not parse", false},
			{"SUPERVISOR_COMPLETE: {\"key_findings\": \"one string\"}", "does not fit the supervisor schema", false},
			{"SUPERVISOR_COMPLETE: {\"total_duration_ms\": \"long\"}", "does not fit the supervisor schema", false},
		}
		for _, tc := range cases {
			res, failed, err := ParseSupervisor(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) || res != nil || failed != tc.failed {
				t.Errorf("%q: res %+v failed %v err %v; want %q", tc.text, res, failed, err, tc.want)
			}
		}
		if _, _, err := ParseSupervisor("no marker"); !errors.Is(err, ErrNoSupervisorLine) {
			t.Errorf("want ErrNoSupervisorLine, got %v", err)
		}
	})
	t.Run("round trip keeps the field names", func(t *testing.T) {
		res, _, err := ParseSupervisor("SUPERVISOR_COMPLETE: " + seedAggregated)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var again, orig map[string]any
		_ = json.Unmarshal(b, &again)
		_ = json.Unmarshal([]byte(seedAggregated), &orig)
		if !reflect.DeepEqual(again, orig) {
			t.Errorf("round trip:\n%s\nvs\n%s", b, seedAggregated)
		}
	})
}

func TestSupervisorStateSchema(t *testing.T) {
	// A research_supervisor entry of supervisor_state decodes and
	// re-encodes with the same field names.
	entry := `{
      "supervisor_id": "research_sub_supervisor_20251107_143030",
      "supervisor_name": "research-sub-supervisor",
      "worker_count": 1,
      "workers": [
        {
          "worker_id": "research_specialist_1",
          "topic": "authentication patterns",
          "status": "completed",
          "output_path": "/p/specs/042_auth/reports/001_authentication_patterns.md",
          "duration_ms": 12000,
          "metadata": {"title": "Authentication Patterns Research", "summary": "Analysis", "key_findings": ["a", "b"]}
        }
      ],
      "aggregated_metadata": {"topics_researched": 1, "reports_created": ["/p/specs/042_auth/reports/001_authentication_patterns.md"], "summary": "s", "key_findings": ["a"], "total_duration_ms": 12000, "context_tokens": 40}
    }`
	var st SupervisorState
	if err := json.Unmarshal([]byte(entry), &st); err != nil {
		t.Fatal(err)
	}
	if st.Workers[0].Topic != "authentication patterns" || st.Workers[0].DurationMs != 12000 || st.AggregatedMetadata.TotalDurationMs != 12000 {
		t.Errorf("decoded %+v", st)
	}
	b, _ := json.Marshal(st)
	var a, o map[string]any
	_ = json.Unmarshal(b, &a)
	_ = json.Unmarshal([]byte(entry), &o)
	if !reflect.DeepEqual(a, o) {
		t.Errorf("round trip:\n%s", b)
	}
	// Implementation tracks and testing stages.
	impl := `{"supervisor_id":"i","supervisor_name":"implementation-sub-supervisor","worker_count":1,"tracks":[{"track_id":"backend_track","track_name":"Backend Implementation","worker_id":"implementation_executor_2","status":"completed","files_modified":["src/auth/auth.service.ts"],"duration_ms":30000,"metadata":{"endpoints_created":4}}],"stages":[{"stage_id":"generation","stage_name":"Test Generation","workers":[{"worker_id":"unit_test_generator","status":"completed","duration_ms":8000}],"status":"completed","duration_ms":12000}]}`
	var is SupervisorState
	if err := json.Unmarshal([]byte(impl), &is); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(is)
	a, o = nil, nil
	_ = json.Unmarshal(b, &a)
	_ = json.Unmarshal([]byte(impl), &o)
	if !reflect.DeepEqual(a, o) {
		t.Errorf("round trip:\n%s", b)
	}
}

func TestParseTests(t *testing.T) {
	cases := []struct {
		text     string
		pass, ok bool
	}{
		{"ran 42 tests\nTESTS: PASS", true, true},
		{"TESTS: FAIL\n", false, true},
		{"**TESTS:** `PASS`", true, true},
		{"## tests: fail (3 failing)", false, true},
		{"TESTS: PASS (42/42)", true, true},
		{"TESTS: PASSED", true, true},
		{"TESTS: FAIL\nfixed it\nTESTS: PASS", true, true},
		{"TESTS: PASS\nre-ran\nTESTS: FAIL", false, true},
		// The last TESTS line decides, and "maybe" is no verdict (issue 13:
		// an earlier line no longer stands in for the agent's last word).
		{"TESTS: PASS\nTESTS: maybe", false, false},
		{"TESTS: PASS - all good", true, true}, // a dash note, read as a parenthetical is
		{"TESTS: PASS - mostly", false, false},
		{"- TESTS = PASSED ✅", true, true},
		{"All tests pass.", false, false},
		{"TESTS: PASSING", false, false},
		{"Report TESTS: PASS", false, false},
		{"", false, false},
	}
	for _, tc := range cases {
		pass, ok := ParseTests(tc.text)
		if pass != tc.pass || ok != tc.ok {
			t.Errorf("ParseTests(%q) = %v, %v; want %v, %v", tc.text, pass, ok, tc.pass, tc.ok)
		}
	}
}

// FuzzCoordResults: the result-line parsers never panic, and a parsed
// supervisor result keeps its raw JSON.
func FuzzCoordResults(f *testing.F) {
	for _, s := range []string{
		"SUPERVISOR_COMPLETE: " + seedAggregated, "SUPERVISOR_FAILED: {\"errors\": []}", "SUPERVISOR_COMPLETE: ```", "SUPERVISOR_COMPLETE:",
		"REPORT_CREATED: /x\nTESTS: PASS", "**TESTS:**", "- `REPORT_CREATED`:", "SUPERVISOR_COMPLETE: {\"summary\": 1}",
	} {
		f.Add(s)
	}
	for _, s := range []string{"TESTS_CREATED: 3 in a.go, b/c.go (2 files)", "TESTS: FAIL (38/40 passed, coverage 80%)", "VALIDATION: PASS (coverage 85%)", "Stage 2: execution"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ParseReportCreated(s)
		_, _ = ParseTests(s)
		// The stages' readers: a line read one way gives sane values.
		if n, files, problem := ParseTestsCreated(s); problem == "" && (n < 0 || n > 0 && len(files) == 0 || len(files) > MaxTestFiles) {
			t.Fatalf("ParseTestsCreated(%q) = %d, %q", s, n, files)
		}
		if pass, c, _, problem := ParseExecution(s); problem == "" && (c.Passed < 0 || c.Failed < 0 || pass && c.Failed > 0 || !pass && c.Failed == 0 && c.Passed > 0) {
			t.Fatalf("ParseExecution(%q) = %v, %+v", s, pass, c)
		}
		_, _, _, _ = ParseValidation(s)
		if stage, problem := ReadStage(s); (stage == "") == (problem == "") {
			t.Fatalf("ReadStage(%q) = %q, %q", s, stage, problem)
		}
		res, _, err := ParseSupervisor(s)
		if err == nil {
			if res == nil || !strings.HasPrefix(res.Raw, "{") {
				t.Fatalf("res %+v", res)
			}
			_ = CheckAggregation(res, nil, map[string]int{})
		} else if res != nil {
			t.Fatalf("error %v with a result", err)
		}
	})
}
