#!/bin/sh
# probe.sh KIND [ARGS...]: a statusLine, subagentStatusLine or hook command
# that keeps what the CLI gave it in $OBS_OUT (default /tmp/observe-out):
# KIND-<ns>.json (stdin, byte for byte), .env (sorted environment), .cwd,
# .args. KIND is statusline, subagent-statusline, slow (a statusLine that
# sleeps $SLOW seconds and logs the signals it gets), fail (a statusLine
# that prints six lines and a wide one the first time, then exits 1) or a
# hook event name.
kind=$1
d=${OBS_OUT:-/tmp/observe-out}
mkdir -p "$d"
n=$(date +%s%N)
f="$d/$kind-$n"
cat > "$f.json"
env | sort > "$f.env"
pwd > "$f.cwd"
echo "$0 $*" > "$f.args"
case $kind in
statusline)
	# Colour, an empty line, a second line.
	printf '\033[32mSL-%s\033[0m\n\nSL-SECOND-LINE\n' "$n"
	;;
subagent-statusline)
	# One {"id", "content"} line per task.
	sed -n 's/.*"tasks":\[\(.*\)\]}$/\1/p' "$f.json" | tr '{' '\n' |
		sed -n 's/^"id":"\([^"]*\)".*"tokenCount":\([0-9]*\).*/{"id":"\1","content":"SASL \2 tokens"}/p'
	;;
slow)
	echo "start $(date +%s.%N) pid $$" > "$f.log"
	trap 'echo "TERM $(date +%s.%N)" >> "$f.log"; exit 143' TERM
	trap 'echo "INT $(date +%s.%N)" >> "$f.log"; exit 130' INT
	sleep "${SLOW:-40}" &
	wait $!
	echo "end $(date +%s.%N)" >> "$f.log"
	echo "SLOW-DONE"
	;;
fail)
	if [ -e "$d/fail-first" ]; then echo "FAILOUT"; exit 1; fi
	touch "$d/fail-first"
	printf 'L1-start\nL2\nL3\nL4\nL5\nL6-end\n'
	printf 'W%.0s' $(seq 200); echo "-WIDE-END"
	;;
esac
exit 0
