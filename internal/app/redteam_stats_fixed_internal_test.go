package app

import (
	"fmt"
	"testing"

	"github.com/orch-hook/orch-hook/state"
)

// TestRedTeamFixedStatsTokensOverflow: plausible bounds one line's tokens
// by 1e15 so that "a sum of 9,000 such lines fits an int64", but nothing
// bounds the number of lines: 9,300 lines of 1e15 tokens (the model can
// append them to .orchestrator/records/metrics.jsonl without the sandbox)
// wrap the pattern's sum around, and stats averages a negative count.
func TestRedTeamFixedStatsTokensOverflow(t *testing.T) {
	log := &state.MetricsLog{}
	for i := 0; i < 9300; i++ {
		log.Lines = append(log.Lines, []byte(fmt.Sprintf(`{"schema":"orch-hook.metrics/1","lineage":"l%d","kind":"orchestrate","pattern":"flat","tokens":1000000000000000,"outcome":"completed"}`, i)))
		log.Numbers = append(log.Numbers, i+1)
	}
	st := SummarizeMetrics(log)
	if len(st.Patterns) != 1 || st.Patterns[0].Tokens == nil {
		t.Fatalf("patterns: %+v", st.Patterns)
	}
	if avg := st.Patterns[0].Tokens.Avg; avg < 0 || avg > maxTokens {
		t.Errorf("average tokens %d over %d runs of 1e15 each: the sum wrapped around", avg, st.Patterns[0].Tokens.Runs)
	}
}
