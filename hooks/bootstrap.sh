#!/bin/sh
# orch-hook's dispatcher (README, "How the plugin gets its binary"). The
# hooks run ${CLAUDE_PLUGIN_DATA}/bin/<version>/orch-hook; SessionStart runs
# this script only while that binary is missing. It installs one, in this
# order: the binary for this platform shipped in the plugin (an archive
# install); a download of the release binary; `go build` of the plugin's
# source; else it says loudly that no rule is enforced. A binary is only
# ever installed after its SHA-256 matched hooks/release.sha256. The
# download and the build run in the background, bounded in time, and a
# failure is kept (bin/<version>/failed) and shown at every later session
# until `bootstrap.sh install` (the command the message gives) succeeds.
# Nothing this script reads is executed, except the verified binary.
#
#   sh bootstrap.sh session-start VERSION   (the SessionStart hook)
#   sh bootstrap.sh install VERSION         (a terminal: the same, in the foreground)
#
# Environment: CLAUDE_PLUGIN_ROOT, CLAUDE_PLUGIN_DATA (set by Claude Code for
# hooks), ORCH_HOOK_DOWNLOAD_BASE (default the GitHub release assets),
# ORCH_HOOK_DOWNLOAD_TIMEOUT (seconds, default 120).

mode=${1:-session-start}
version=$2
root=${CLAUDE_PLUGIN_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
data=$CLAUDE_PLUGIN_DATA
base=${ORCH_HOOK_DOWNLOAD_BASE:-https://github.com/orch-hook/orch-hook/releases/download}
limit=${ORCH_HOOK_DOWNLOAD_TIMEOUT:-120}

# json STRING: STRING as a JSON string literal.
json() {
  printf '%s' "$1" | LC_ALL=C awk 'BEGIN { printf "\"" }
    { if (NR > 1) printf "\\n"
      s = $0; out = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c == "\\") out = out "\\\\"
        else if (c == "\"") out = out "\\\""
        else if (c == "\t") out = out "\\t"
        else if (c < " ") out = out " "
        else out = out c
      }
      printf "%s", out }
    END { printf "\"" }'
}

# quote WORD: WORD single-quoted for sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# tell USER_MESSAGE MODEL_CONTEXT: the SessionStart answer (a terminal gets
# the user's message as text).
tell() {
  if [ "$mode" = install ]; then
    printf '%s\n' "$1"
    return
  fi
  printf '{"systemMessage":%s,"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":%s}}\n' "$(json "$1")" "$(json "$2")"
}

unenforced="orch-hook's binary is not installed, so NO orch-hook workflow rule is enforced in this session: do not rely on its gates. While a workflow is active, orch-hook denies subagent launches and plan edits until the user installs the binary."

case $version in
  '' | *[!0-9A-Za-z.+-]*)
    tell "orch-hook: the plugin's hooks name no valid version ('$version'); reinstall the plugin." "$unenforced"
    exit 0 ;;
esac
case $data in
  /* | [A-Za-z]:*) ;;
  *)
    tell "orch-hook: Claude Code did not set CLAUDE_PLUGIN_DATA (got '$data'), where orch-hook keeps its binary; this Claude Code is too old for the plugin (tested with 2.1.328)." "$unenforced"
    exit 0 ;;
esac

case $(uname -s 2>/dev/null) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT) os=windows ;;
  *) os=$(uname -s 2>/dev/null | tr 'A-Z' 'a-z') ;;
esac
case $(uname -m 2>/dev/null) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) arch=$(uname -m 2>/dev/null) ;;
esac
ext=
[ "$os" = windows ] && ext=.exe
name="orch-hook-$os-$arch$ext"
dir="$data/bin/$version"
bin="$dir/orch-hook$ext"
log="$dir/bootstrap.log"
fix="CLAUDE_PLUGIN_DATA=$(quote "$data") sh $(quote "$root/hooks/bootstrap.sh") install $version"

run_binary() {
  [ "$mode" = install ] && return 0
  exec "$bin" hook --budget 14s SessionStart
}

if [ -x "$bin" ]; then
  [ "$mode" = install ] && { printf 'orch-hook %s is installed: %s\n' "$version" "$bin"; exit 0; }
  run_binary
fi
mkdir -p "$dir" || { tell "orch-hook: cannot create $dir, where its binary goes." "$unenforced"; exit 0; }

# failed_message: the loud answer after a failed install.
failed_message() {
  reason=$(head -n 1 "$dir/failed" 2>/dev/null)
  tail=$(tail -n 8 "$log" 2>/dev/null | cut -c 1-240)
  tell "orch-hook: installing its binary (version $version, $os/$arch) failed: $reason
Last lines of $log:
$tail
No workflow rule is enforced until it is installed. Fix the cause above, then run in a terminal:
  $fix" "$unenforced"
}

if [ "$mode" = session-start ] && [ -f "$dir/failed" ]; then
  failed_message
  exit 0
fi
rm -f "$dir/failed"

# The lock is a directory: mkdir is atomic. One left by a killed install
# expires after 10 minutes.
lock="$dir/.lock"
find "$dir" -maxdepth 1 -name .lock -mmin +10 -exec rmdir {} \; 2>/dev/null
if ! mkdir "$lock" 2>/dev/null; then
  tell "orch-hook: its binary (version $version) is being installed by another session; the workflow rules apply as soon as it is in place. If it never arrives, run in a terminal:
  $fix" "$unenforced"
  [ "$mode" = install ] && exit 1
  exit 0
fi

note() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" >>"$log"; [ "$mode" = install ] && printf '%s\n' "$1"; return 0; }

# sha256 FILE: its SHA-256 in hex. Read from stdin: given a name holding
# a backslash or a newline, both tools escape it and prefix the sum with \.
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum <"$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then shasum -a 256 <"$1" | cut -d' ' -f1
  fi
}
have_sha=
{ command -v sha256sum || command -v shasum; } >/dev/null 2>&1 && have_sha=1
fetcher=
if command -v curl >/dev/null 2>&1; then fetcher=curl
elif command -v wget >/dev/null 2>&1; then fetcher=wget
fi
# The pinned sum: the first line naming exactly v<version>/<name> (not a
# pattern: a version's dots are dots), with a carriage return (a Windows
# checkout) dropped.
want=$(awk -v p="v$version/$name" '{ sub(/\r$/, "") }
  $2 == p && NF == 2 && length($1) == 64 && $1 !~ /[^0-9a-f]/ { print $1; exit }' "$root/hooks/release.sha256" 2>/dev/null)

# install_verified FILE WHAT [quiet]: install FILE as the binary when its
# SHA-256 is the committed one; else keep it out and say so (quiet: only in
# the log).
# The copy is what is hashed and installed: FILE may change after it was
# read (a clone's bin/ can be writable to the model).
install_verified() {
  tmp="$dir/.orch-hook.tmp.$$"
  rm -f "$tmp"
  if ! cp "$1" "$tmp" 2>>"$log" || [ -L "$tmp" ] || [ ! -f "$tmp" ]; then
    rm -f "$tmp"
    note "could not copy $1"
    return 1
  fi
  got=$(sha256 "$tmp")
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    rm -f "$tmp"
    note "REFUSED $2, not installed: SHA-256 ${got:-unknown}, but hooks/release.sha256 pins ${want:-nothing for v$version/$name}"
    [ -n "$3" ] && return 1
    printf 'orch-hook refused %s: its SHA-256 (%s) is not the one hooks/release.sha256 pins for v%s/%s (%s). It was not used.\n' "$2" "${got:-unknown}" "$version" "$name" "${want:-none}" >>"$dir/notice"
    return 1
  fi
  put "$tmp" "$2 (SHA-256 $got)"
}

# put FILE WHAT: FILE becomes the binary; the plugin root is recorded
# beside it (orch-hook doctor reads it) and older versions are pruned.
put() {
  chmod 755 "$1" && mv -f "$1" "$bin" || { rm -f "$1"; note "could not install $bin"; return 1; }
  printf '%s\n' "$root" >"$dir/plugin-root"
  # The plugin's commands run ${CLAUDE_PLUGIN_ROOT}/bin/orch-hook: a link
  # here, unless a binary of the user's own (make build) is there.
  link="$root/bin/orch-hook$ext"
  if [ ! -e "$link" ] || [ -L "$link" ]; then
    mkdir -p "$root/bin" && ln -sf "$bin" "$link" 2>/dev/null
  fi
  # The status line the user's settings name runs $data/bin/orch-hook (no
  # plugin variable is set for it, and the plugin root and the version
  # directories change with each update): a link to the newest binary.
  ln -sf "$bin" "$data/bin/orch-hook$ext" 2>/dev/null
  note "installed $2 as $bin"
  prune
  return 0
}

# prune: drop other versions' binaries, keeping the most recent one (a
# session started before an update may still run it).
# The most recent is the newest other version's directory (not a stray
# file, not a symlink; rm -rf removes a symlink, not what it points to).
prune() {
  previous=
  for old in "$data/bin"/*; do
    [ -d "$old" ] && [ ! -L "$old" ] && [ "${old##*/}" != "$version" ] || continue
    if [ -z "$previous" ] || [ "$old" -nt "$previous" ]; then previous=$old; fi
  done
  for old in "$data/bin"/*; do
    [ -d "$old" ] && [ "${old##*/}" != "$version" ] && [ "$old" != "$previous" ] && rm -rf "$old"
  done
  return 0
}

download() {
  [ -n "$fetcher" ] && [ -n "$have_sha" ] && [ -n "$want" ] || return 1
  url="$base/v$version/$name"
  dl="$dir/.download.$$"
  note "downloading $url (at most $limit s)"
  if [ "$fetcher" = curl ]; then
    curl -fsSL --max-time "$limit" -o "$dl" "$url" >>"$log" 2>&1
  else
    wget -q -T "$limit" -t 1 -O "$dl" "$url" >>"$log" 2>&1
  fi
  rc=$?
  if [ $rc -ne 0 ]; then
    note "the download of $url failed ($fetcher exit $rc)"
    rm -f "$dl"
    return 1
  fi
  install_verified "$dl" "the download $url"
  rc=$?
  rm -f "$dl"
  return $rc
}

gobuild() {
  command -v go >/dev/null 2>&1 && [ -f "$root/go.mod" ] || return 1
  tmp="$dir/.build.$$$ext"
  note "building with $(go version 2>&1) in $root"
  # Bounded where timeout(1) exists (GNU, busybox), below the lock's 10
  # minutes, so a hung build never lets a second one start beside it.
  bound=
  command -v timeout >/dev/null 2>&1 && bound="timeout 540"
  if (cd "$root" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false $bound go build -trimpath -tags urfave_cli_no_docs \
      -ldflags "-s -w -X main.version=$version" -o "$tmp" ./cmd/orch-hook) >>"$log" 2>&1; then
    put "$tmp" "the build" && return 0
  fi
  rm -f "$tmp"
  note "go build failed${bound:+ (or ran out of its 540 s)}"
  return 1
}

# obtain: download, else build; a failure is kept for the next sessions.
obtain() {
  if download || gobuild; then
    return 0
  fi
  what="the download failed and Go could not build it"
  [ -z "$fetcher" ] && what="no curl or wget to download it, and Go could not build it"
  [ -z "$have_sha" ] && what="no sha256sum or shasum to verify a download, and Go could not build it"
  [ -z "$want" ] && what="hooks/release.sha256 pins no release binary of v$version for $os/$arch, and Go could not build it"
  command -v go >/dev/null 2>&1 || what="$what (Go is not installed)"
  printf '%s\n' "$what" >"$dir/failed"
  note "FAILED: $what"
  return 1
}

# 1. The binary shipped in the plugin (an archive install); or, in a
# clone, the one `make build` made, which is the release binary byte for
# byte when built with go.mod's Go (another Go's is left to go build).
if [ -f "$root/bin/$name" ]; then
  if install_verified "$root/bin/$name" "the shipped $root/bin/$name"; then
    rmdir "$lock"
    run_binary
    exit 0
  fi
elif [ -f "$root/bin/orch-hook$ext" ] && [ ! -L "$root/bin/orch-hook$ext" ] && [ -n "$have_sha" ]; then
  if install_verified "$root/bin/orch-hook$ext" "$root/bin/orch-hook$ext (make build)" quiet; then
    rmdir "$lock"
    run_binary
    exit 0
  fi
fi

# 2-4. Nothing to download with and no Go: say so at once.
if { [ -z "$fetcher" ] || [ -z "$have_sha" ] || [ -z "$want" ]; } && ! command -v go >/dev/null 2>&1; then
  rmdir "$lock"
  needs="downloading it needs curl or wget, and sha256sum or shasum"
  [ -z "$want" ] && needs="hooks/release.sha256 pins no release binary of v$version for $os/$arch"
  [ -f "$root/bin/$name" ] && [ -z "$have_sha" ] && needs="the binary shipped in the plugin is only used once verified, which needs sha256sum or shasum"
  tell "orch-hook: no binary for this platform ($os/$arch) could be obtained: $needs, and building it needs Go (1.26.8, go.mod). No workflow rule is enforced. Install one of them, then start a new session or run in a terminal:
  $fix" "$unenforced"
  exit 0
fi

if [ "$mode" = install ]; then
  obtain
  rc=$?
  rmdir "$lock"
  if [ $rc -eq 0 ]; then
    printf 'orch-hook %s is installed: %s. The rules apply from the next tool call.\n' "$version" "$bin"
    exit 0
  fi
  printf 'orch-hook: installing failed: %s (log: %s)\n' "$(cat "$dir/failed")" "$log"
  exit 1
fi

( obtain; rmdir "$lock" ) </dev/null >/dev/null 2>&1 &

how="downloading it (verified against hooks/release.sha256)"
{ [ -z "$fetcher" ] || [ -z "$have_sha" ] || [ -z "$want" ]; } && how="building it with Go (a cold build takes about half a minute)"
tell "orch-hook: installing its binary (version $version, $os/$arch) in the background: $how. The workflow rules apply as soon as it is in place; until then none is enforced. Progress: $log" "$unenforced"
exit 0
