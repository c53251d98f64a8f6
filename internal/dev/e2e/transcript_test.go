package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orch-hook/orch-hook/internal/dev/mockapi"
)

// writeUsagePlugin writes a throwaway plugin with one agent, worker, and a
// SubagentStop hook that keeps its payload in the project.
func writeUsagePlugin(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name": "e2e-usage", "version": "0.0.1", "description": "orch-hook e2e usage probe"}`,
		"agents/worker.md":           "---\nname: worker\ndescription: Usage probe worker.\ntools: Bash\n---\nYou are the usage probe worker.\n",
		"hooks/hooks.json": `{"hooks": {"SubagentStop": [{"hooks": [
  {"type": "command", "command": "cat > \"$CLAUDE_PROJECT_DIR/subagent-stop.json\""}
]}]}}`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// transcriptRecord is what the test reads of one transcript line.
type transcriptRecord struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	AgentID     string `json:"agentId"`
	RequestID   string `json:"requestId"`
	Message     struct {
		ID    string         `json:"id"`
		Usage *mockapi.Usage `json:"usage"`
	} `json:"message"`
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

func readTranscript(t *testing.T, path string) []transcriptRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []transcriptRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var r transcriptRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d: %v", path, n, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d records, %d bytes", filepath.Base(path), len(out), len(data))
	return out
}

// responseUsage is one API response's usage as a transcript has it.
type responseUsage struct {
	MessageID, RequestID string
	Usage                mockapi.Usage
}

// assistantUsage is the usage of each API response in a transcript, in
// order: the CLI writes one "assistant" record per content block, each
// with the whole response's usage, so records are grouped by message id.
func assistantUsage(t *testing.T, recs []transcriptRecord) []responseUsage {
	t.Helper()
	var out []responseUsage
	seen := map[string]int{}
	for _, r := range recs {
		if r.Type != "assistant" {
			continue
		}
		if r.Message.Usage == nil {
			t.Errorf("assistant record of %s has no usage", r.Message.ID)
			continue
		}
		if i, ok := seen[r.Message.ID]; ok {
			if out[i].Usage != *r.Message.Usage || out[i].RequestID != r.RequestID {
				t.Errorf("records of %s disagree: %+v / %+v (%s)", r.Message.ID, out[i].Usage, *r.Message.Usage, r.RequestID)
			}
			continue
		}
		seen[r.Message.ID] = len(out)
		out = append(out, responseUsage{r.Message.ID, r.RequestID, *r.Message.Usage})
	}
	return out
}

// TestSubagentTranscriptUsage: the token usage the API reports for each
// response reaches the transcripts unchanged. The subagent's own
// responses are in the file SubagentStop names as agent_transcript_path
// (and only there); the main thread's are in transcript_path; the Agent
// tool_result's toolUseResult carries the subagent's last response's
// usage and totalTokens, the sum of its four counts. See
// testdata/observed/README.md.
func TestSubagentTranscriptUsage(t *testing.T) {
	script := loadScript(t, "testdata/usage.txtar")
	run := runClaude(t, Config{
		PluginDir: writeUsagePlugin(t),
		Script:    script,
		Messages:  []string{"[[E2E-USAGE]] go"},
		MaxTurns:  6,
		Timeout:   45 * time.Second,
	})

	var stop struct {
		SessionID           string `json:"session_id"`
		TranscriptPath      string `json:"transcript_path"`
		AgentID             string `json:"agent_id"`
		AgentTranscriptPath string `json:"agent_transcript_path"`
	}
	data, err := os.ReadFile(filepath.Join(run.ProjectDir, "subagent-stop.json"))
	if err != nil {
		t.Fatalf("no SubagentStop payload: %v\nevents:\n%s", err, run.Dump())
	}
	if err := json.Unmarshal(data, &stop); err != nil {
		t.Fatalf("SubagentStop payload: %v\n%s", err, data)
	}
	projects := filepath.Join(run.Home, ".claude", "projects") + string(filepath.Separator)
	wantAgent := filepath.Join(strings.TrimSuffix(stop.TranscriptPath, ".jsonl"), "subagents", "agent-"+stop.AgentID+".jsonl")
	if !strings.HasPrefix(stop.TranscriptPath, projects) || filepath.Base(stop.TranscriptPath) != stop.SessionID+".jsonl" ||
		stop.AgentID == "" || stop.AgentTranscriptPath != wantAgent {
		t.Errorf("SubagentStop paths: %s\nwant transcript_path %s<project>/<session>.jsonl and agent_transcript_path %s", data, projects, wantAgent)
	}
	if dir := os.Getenv(envDump); dir != "" {
		dir = filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_"))
		for name, src := range map[string]string{
			"agent-transcript.jsonl":     stop.AgentTranscriptPath,
			"agent-transcript.meta.json": strings.TrimSuffix(stop.AgentTranscriptPath, ".jsonl") + ".meta.json",
			"main-transcript.jsonl":      stop.TranscriptPath,
			"subagent-stop.json":         filepath.Join(run.ProjectDir, "subagent-stop.json"),
		} {
			if b, err := os.ReadFile(src); err == nil {
				_ = os.MkdirAll(dir, 0o755)
				_ = os.WriteFile(filepath.Join(dir, name), b, 0o644)
			}
		}
	}

	// Each scripted turn's usage, with the request that served it.
	want := func(conv string) []responseUsage {
		var out []responseUsage
		for _, req := range run.Mock.For(conv) {
			if req.Served == nil || req.Served.Usage == nil {
				t.Fatalf("request #%d of %s served no scripted usage", req.Seq, conv)
			}
			out = append(out, responseUsage{fmt.Sprintf("msg_mock%04d", req.Seq), fmt.Sprintf("req_mock%04d", req.Seq), *req.Served.Usage})
		}
		if len(out) != len(script.Conversation(conv).Turns) {
			t.Fatalf("%s: %d requests, want one per scripted turn (%d):\n%s", conv, len(out), len(script.Conversation(conv).Turns), run.Mock.Summary())
		}
		return out
	}
	sub := readTranscript(t, stop.AgentTranscriptPath)
	for _, r := range sub {
		if r.Type == "assistant" && (r.AgentID != stop.AgentID || !r.IsSidechain) {
			t.Errorf("subagent transcript: assistant record with agentId %q isSidechain %v, want %q true", r.AgentID, r.IsSidechain, stop.AgentID)
		}
	}
	if got, want := assistantUsage(t, sub), want("worker"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subagent transcript usage\n got %+v\nwant %+v", got, want)
	}

	mainRecs := readTranscript(t, stop.TranscriptPath)
	if got, want := assistantUsage(t, mainRecs), want("main"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("main transcript usage (the subagent's must not be there)\n got %+v\nwant %+v", got, want)
	}
	var agentResult struct {
		AgentID     string        `json:"agentId"`
		TotalTokens int           `json:"totalTokens"`
		Usage       mockapi.Usage `json:"usage"`
	}
	for _, r := range mainRecs {
		if len(r.ToolUseResult) > 0 && bytes.Contains(r.ToolUseResult, []byte(`"agentId"`)) {
			if err := json.Unmarshal(r.ToolUseResult, &agentResult); err != nil {
				t.Fatal(err)
			}
		}
	}
	last := script.Conversation("worker").Turns[1].Usage
	sum := last.InputTokens + last.OutputTokens + last.CacheCreationInputTokens + last.CacheReadInputTokens
	if agentResult.AgentID != stop.AgentID || agentResult.Usage != *last || agentResult.TotalTokens != sum {
		t.Errorf("Agent toolUseResult: %+v, want agent %s, usage %+v, totalTokens %d", agentResult, stop.AgentID, *last, sum)
	}
}
