#!/bin/sh
# ratelimit.sh (make bench runs it after auth.sh): what a shared rate
# limit costs a tools/call (one LMDB write txn per call,
# shared/store_bucket.c).  On 127.0.0.1 only: one mcp_echo backend and
# two vmcpd (2 workers each) in front of it, one without rateLimiting
# and one with a shared bucket too large to refuse anything; wrk
# call.lua (tools/call, c=RL_CONNS, default 32) against each in turn,
# RL_ROUNDS times (default 3) of RL_SECONDS (default 10).  Prints each
# run and the ratio of the medians (target: limited >= 0.85x off).  A
# figure is a measurement, not a test: only a broken step fails the
# run.  KEEP=1 keeps the temporary directory.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
bench=$root/tests/bench
vmcpd=${VMCPD_BIN:-$root/build/vmcpd}
conns=${RL_CONNS:-32}
rounds=${RL_ROUNDS:-3}
secs=${RL_SECONDS:-10}
tmp=$(mktemp -d /tmp/vmcpd-rlbench-XXXXXX) || exit 2
pids=""

cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() {
	echo "bench: $*" >&2
	exit 1
}

# until FILE has a line matching RE (5 s)
await() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 50 ] || die "$1: no '$2'"
		sleep 0.1
	done
}

make -s -f tests/bench/Makefile >/dev/null || die "mcp_echo does not build"
command -v wrk >/dev/null 2>&1 || die "wrk is missing (make deps)"

"$root/build/bench/mcp_echo" -p 0 -n 10 >"$tmp/echo.log" 2>&1 &
pids="$pids $!"
await "$tmp/echo.log" '^PORT '
eport=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' "$tmp/echo.log")

# start NAME [more config]: a vmcpd; its port in $tmp/NAME/port
start() {
	mkdir -p "$tmp/$1"
	printf 'daemon:\n  listen: 127.0.0.1:0\n  portFile: %s\n  stateDir: %s\n  workers: 2\nbackends:\n  - name: a\n    url: http://127.0.0.1:%s/mcp\n    transport: streamable-http\naggregation:\n  conflictResolution: prefix\n  conflictResolutionConfig:\n    prefixMode: onConflict\n%s\n' \
	    "$tmp/$1/port" "$tmp/$1/state" "$eport" "${2:-}" \
	    >"$tmp/$1/vmcpd.yaml"
	"$vmcpd" -d -f "$tmp/$1/vmcpd.yaml" >"$tmp/$1/log" 2>&1 &
	pids="$pids $!"
	await "$tmp/$1/port" '^[0-9]'
}

start off
start on "rateLimiting:
  shared: {maxTokens: 1000000000, refillPeriod: 1s}"

# session PORT: initialize, the Mcp-Session-Id
session() {
	curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":
	    {"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":
	    {"name":"bench","version":"1"}}}' "http://127.0.0.1:$1/mcp" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([^[:space:]]*\).*/\1/p'
}
p0=$(cat "$tmp/off/port")
p1=$(cat "$tmp/on/port")
i=0
until s0=$(session "$p0") && [ -n "$s0" ] &&
    s1=$(session "$p1") && [ -n "$s1" ]; do
	i=$((i + 1))
	[ $i -le 50 ] || die "no session (see $tmp/on/log)"
	sleep 0.1
done

# run NAME PORT SESSION: requests per second
run() {
	MCP_SESSION_ID=$3 wrk -t2 -c"$conns" -d"${secs}s" \
	    -s "$bench/call.lua" "http://127.0.0.1:$2/mcp" \
	    >"$tmp/wrk-$1.txt" 2>&1 || die "wrk $1 failed"
	grep -q 'bad_status=0 bad_body=0' "$tmp/wrk-$1.txt" ||
	    die "wrk $1: bad answers: $(cat "$tmp/wrk-$1.txt")"
	sed -n 's/^BENCH .* rps=\([0-9.]*\) .*/\1/p' "$tmp/wrk-$1.txt"
}
: >"$tmp/off.rps"
: >"$tmp/on.rps"
r=0
while [ $r -lt "$rounds" ]; do
	a=$(run off "$p0" "$s0")
	b=$(run on "$p1" "$s1")
	echo "$a" >>"$tmp/off.rps"
	echo "$b" >>"$tmp/on.rps"
	printf 'round %d: tools/call c=%d no limit %s/s, shared limit %s/s\n' \
	    $((r + 1)) "$conns" "$a" "$b"
	r=$((r + 1))
done
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
m0=$(median "$tmp/off.rps")
m1=$(median "$tmp/on.rps")
awk -v a="$m0" -v o="$m1" 'BEGIN { r = o / a; ok = (r >= 0.85) ? "met" : "missed"
    printf "shared limit/no limit (medians): %.2f (target >= 0.85: %s)\n", r, ok }'
