// Package mockapi is a scripted mock of the Anthropic Messages API for
// driving the real Claude Code CLI offline in tests.
//
// It listens on 127.0.0.1 only, never opens a connection of its own, and
// stops itself after Options.Timeout or Options.MaxRequests: from then on
// every request gets a non-retryable 400 (the CLI retries 5xx and refused
// connections with backoff for minutes, but gives up on a 400 at once),
// and after Options.Grace the port closes. It serves POST /v1/messages
// (with or without ?beta=true) as the real API's SSE stream (message_start,
// ping, content_block_start / content_block_delta with text_delta or
// input_json_delta / content_block_stop per block, message_delta with
// stop_reason and usage, message_stop), or as one JSON message when the
// request has no "stream": true. POST /v1/messages/count_tokens and HEAD
// requests get plausible answers; anything else gets a 404 and is logged
// and recorded as Unknown.
//
// # Scripts
//
// A Script is a list of conversations. Each request is matched to the
// first conversation whose Match holds (after an agent id already bound to
// a conversation, see below):
//
//   - user_contains: a marker in the first user message (for a subagent,
//     the prompt of the Agent call that launched it);
//   - system_contains: a marker in the system prompt (a subagent's system
//     prompt holds its agent markdown);
//   - agent_id: the x-claude-code-agent-id header;
//   - thread: "main" (no agent id header) or "subagent" (header present).
//
// The first request of a subagent that matches binds its agent id to that
// conversation; its later requests go there even if no marker matches.
// The turn served is Turns[k], where k is the number of assistant messages
// the request already holds, so parallel background agents may finish in
// any order. A request matching nothing (title generation, compaction, ...)
// and a turn past a conversation's end get the script's DefaultText ("OK."
// unless set); Unmatched and Overflows list them.
//
// Scripts are written as txtar files (see ParseTxtar), for example:
//
//	The model runs Bash once, then says done.
//
//	-- default.txt --
//	OK.
//	-- main.conv.json --
//	{
//	  "match": {"user_contains": "[[SMOKE]]", "thread": "main"},
//	  "turns": [
//	    [{"text": "Running it."},
//	     {"tool": "Bash", "input": {"command": "echo hi", "description": "say hi"}}],
//	    [{"text": "done"}]
//	  ]
//	}
//	-- impl.conv.json --
//	{
//	  "match": {"user_contains": "[[IMPL-1]]", "thread": "subagent"},
//	  "turns": [
//	    [{"tool": "Write", "input": {"file_path": "PLAN.md", "content": "@file:plan.md"}}],
//	    {"blocks": [{"text": "report"}], "stop_reason": "end_turn"}
//	  ]
//	}
//	-- plan.md --
//	# Plan
//
// A turn is an array of blocks, or {"blocks": [...], "stop_reason": ...,
// "when": ..., "usage": {...}}; "usage" (input_tokens, output_tokens,
// cache_creation_input_tokens, cache_read_input_tokens) replaces the
// estimated token counts the reply reports.
// A block is {"text": ...} or {"tool": NAME, "input": {...}, "id": ...};
// the stop reason defaults to "tool_use" when the turn calls a tool, else
// "end_turn"; tool_use ids default to generated ids unique per server. A
// string that is exactly "@file:NAME" is replaced by file NAME of the
// archive. Scripts can also be one JSON document (ParseJSON) or built in
// Go (Text, ToolUse, NewTurn).
//
// # Use
//
//	srv, err := mockapi.Start(mockapi.Options{Script: script, Logf: t.Logf,
//		Timeout: time.Minute, MaxRequests: 100})
//	defer srv.Close()
//	// run claude with ANTHROPIC_BASE_URL=srv.URL() ...
//	req, tr, ok := srv.FindToolResult("PreToolUse:Bash hook error: ")
//	req, ok := srv.FindText("Stop hook feedback:")
//
// Every request is recorded (Requests) with its raw body and headers, the
// parsed MessagesRequest, the conversation and turn it was given, and the
// tool_use ids sent back; Request has helpers for the system prompt, user
// texts, tool results and tool names. Summary prints one line a request.
//
// # What Claude Code 2.1.328 sends
//
// Only streaming POST /v1/messages?beta=true, with x-api-key, an
// anthropic-beta list, x-claude-code-session-id on every request and
// x-claude-code-agent-id on a subagent's. The first user message holds a
// <system-reminder> text block, then the prompt. Besides "user" and
// "assistant", messages have role "system": the environment block, and
// hook output (PostToolUse / UserPromptSubmit additional context, "Stop
// hook blocking error from command: ..."); SystemTexts and FindText search
// them. A Stop block also adds the user message "Stop hook feedback:\nR". A
// background agent's result comes back as a user message holding
// "<task-notification>", and counts as a turn of its own.
package mockapi
