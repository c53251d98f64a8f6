#!/bin/bash
# observe.sh MODE RUNDIR: one observed run of the real claude CLI against
# mockserve.go, from the repository root. MODE is tui (the interactive
# TUI in a pty, driven by tui.py) or print (claude -p). Everything lands
# in RUNDIR: home/ (HOME, transcripts under home/.claude/projects/),
# proj/ (the working directory), out/ (what probe.sh kept), mock/
# (requests), tty.log, debug.txt, events.jsonl.
#
# Knobs (environment):
#   WHERE=user|plugin|both|none  where statusLine and subagentStatusLine
#                           are set: the user's ~/.claude/settings.json
#                           (default), the test plugin's settings.json, or
#                           both (the probes' arguments say which ran)
#   SL=KIND                 probe.sh kind for statusLine (statusline)
#   REFRESH=N               statusLine.refreshInterval
#   SCRIPT=FILE             mock script (worker.txtar)
#   OBS_PROMPT, OBS_WAIT    for tui.py; SLOW for probe.sh slow
set -u
mode=$1
R=$(realpath -m "$2")
T=$(cd "$(dirname "$0")" && pwd)
claude=${ORCH_HOOK_CLAUDE:-$(command -v claude || echo "$PWD/.e2e/node_modules/.bin/claude")}
rm -rf "$R"
mkdir -p "$R/home/.claude" "$R/proj" "$R/out" "$R/tmp" "$R/plugin/.claude-plugin" "$R/plugin/hooks" "$R/plugin/agents"

# The test plugin: one agent, hooks that keep their payloads.
echo '{"name": "obs", "version": "0.0.1", "description": "observation probe"}' > "$R/plugin/.claude-plugin/plugin.json"
printf -- '---\nname: worker\ndescription: Observation worker.\ntools: Bash, Read\n---\nYou are the observation worker.\n' > "$R/plugin/agents/worker.md"
hook() { printf '"%s": [{"hooks": [{"type": "command", "command": "%s/probe.sh %s"}]}]' "$1" "$T" "$1"; }
echo "{\"hooks\": {$(hook SubagentStart), $(hook SubagentStop), $(hook Stop)}}" > "$R/plugin/hooks/hooks.json"

refresh=""
[ -n "${REFRESH:-}" ] && refresh=", \"refreshInterval\": $REFRESH"
settings() {
	echo "{\"statusLine\": {\"type\": \"command\", \"command\": \"$T/probe.sh ${SL:-statusline} $1\"$refresh},
 \"subagentStatusLine\": {\"type\": \"command\", \"command\": \"$T/probe.sh subagent-statusline $1\"}}"
}
case ${WHERE:-user} in user | both) settings user > "$R/home/.claude/settings.json" ;; esac
case ${WHERE:-user} in plugin | both) settings plugin > "$R/plugin/settings.json" ;; esac
# Onboarding, the API key, bypass mode and the project's trust accepted.
cat > "$R/home/.claude.json" <<J
{"hasCompletedOnboarding": true, "bypassPermissionsModeAccepted": true, "theme": "dark",
 "customApiKeyResponses": {"approved": ["test"], "rejected": []},
 "projects": {"$R/proj": {"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}}}
J

go build -o "$R/mockserve" "$T/mockserve.go" || exit 1
"$R/mockserve" -script "${SCRIPT:-$T/worker.txtar}" -t 120s -url "$R/url" -dump "$R/mock" 2> "$R/mock.log" &
mock=$!
for _ in $(seq 50); do [ -s "$R/url" ] && break; sleep 0.1; done
env=(env -i "HOME=$R/home" "PATH=$PATH" "TERM=xterm-256color" "TMPDIR=$R/tmp" "OBS_OUT=$R/out"
	"OBS_PROMPT=${OBS_PROMPT-[[OBS]] go}" "OBS_WAIT=${OBS_WAIT:-25}" "SLOW=${SLOW:-40}"
	"ANTHROPIC_BASE_URL=$(cat "$R/url")" ANTHROPIC_API_KEY=test DISABLE_TELEMETRY=1
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 IS_SANDBOX=1)
cd "$R/proj"
args=(--plugin-dir "$R/plugin" --permission-mode bypassPermissions --debug-file "$R/debug.txt")
case $mode in
tui) "${env[@]}" timeout 120 python3 "$T/tui.py" "$R/tty.log" "$claude" "${args[@]}" ;;
print) "${env[@]}" timeout 60 "$claude" -p "${OBS_PROMPT-[[OBS]] go}" "${args[@]}" \
	--output-format stream-json --verbose --include-hook-events --max-turns 6 > "$R/events.jsonl" ;;
esac
echo "claude: exit $?"
kill $mock
wait $mock 2>/dev/null
ls "$R/out" | sed 's/-[0-9]*\././' | sort | uniq -c
