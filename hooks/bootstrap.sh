#!/bin/sh
# orch-hook plugin bootstrap, run by the SessionStart hook only when
# bin/orch-hook is missing (a fresh install or a new plugin version): it
# starts `go build` in the background under a lock directory, so two
# sessions never race, and answers at once. Nothing it reads is executed.
root="${CLAUDE_PLUGIN_ROOT:-$(dirname "$0")/..}"
cd "$root" || exit 0
say() { printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"%s"}}\n' "$1"; }
version=$(sed -n 's/.*"version"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' .claude-plugin/plugin.json | head -n 1)
if ! command -v go >/dev/null 2>&1; then
  say "orch-hook: the orch-hook binary is not built and Go is not installed, so no workflow rule is enforced yet. Install Go 1.26+ and start a new session (the plugin builds itself), or run make build in the plugin directory."
  exit 0
fi
mkdir -p bin
# A lock left by a build that was killed expires after 10 minutes.
find bin -maxdepth 1 -name .build.lock -mmin +10 -exec rmdir {} \; 2>/dev/null
if mkdir bin/.build.lock 2>/dev/null; then
  (
    tmp="bin/orch-hook.tmp.$$"
    if CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -ldflags "-s -w -X main.version=$version" -o "$tmp" ./cmd/orch-hook >bin/build.log 2>&1; then
      mv -f "$tmp" bin/orch-hook
    fi
    rm -f "$tmp"
    rmdir bin/.build.lock
  ) </dev/null >/dev/null 2>&1 &
fi
say "orch-hook: building the orch-hook binary (plugin version $version) in the background; the workflow rules apply as soon as it is built, in a few seconds. orch-hook doctor checks the install."
exit 0
