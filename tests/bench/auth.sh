#!/bin/sh
# auth.sh (make bench runs it after scale.sh): what a bearer token on
# every request costs.  On 127.0.0.1 only: one mcp_echo backend, a
# static JWKS with one token (authidp.mjs), and two vmcpd (2 workers
# each) in front of the backend, one anonymous and one with
# incomingAuth oidc; wrk call.lua (tools/call, c=AUTH_CONNS, default 32)
# against each in turn, AUTH_ROUNDS times (default 3) of AUTH_SECONDS
# (default 10), the token on every oidc request (BENCH_AUTHORIZATION).
# Prints each run and the ratio of the medians (target: oidc >= 0.9x
# anonymous).  A figure is a measurement, not a test: only a broken step
# fails the run.  KEEP=1 keeps the temporary directory.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
bench=$root/tests/bench
vmcpd=${VMCPD_BIN:-$root/build/vmcpd}
conns=${AUTH_CONNS:-32}
rounds=${AUTH_ROUNDS:-3}
secs=${AUTH_SECONDS:-10}
tmp=$(mktemp -d /tmp/vmcpd-authbench-XXXXXX) || exit 2
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
BENCH_IDP_SECONDS=$((rounds * secs * 2 + 60)) node "$bench/authidp.mjs" \
    >"$tmp/idp.log" 2>&1 &
pids="$pids $!"
await "$tmp/echo.log" '^PORT '
await "$tmp/idp.log" '^TOKEN '
eport=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' "$tmp/echo.log")
iss=$(sed -n 's/^ISS //p' "$tmp/idp.log")
token=$(sed -n 's/^TOKEN //p' "$tmp/idp.log")

# start NAME [incomingAuth lines]: a vmcpd; its port in $tmp/NAME/port
start() {
	mkdir -p "$tmp/$1"
	cat >"$tmp/$1/vmcpd.yaml" <<EOC
daemon:
  listen: 127.0.0.1:0
  portFile: $tmp/$1/port
  stateDir: $tmp/$1/state
  workers: 2
backends:
  - name: a
    url: http://127.0.0.1:$eport/mcp
    transport: streamable-http
aggregation:
  conflictResolution: prefix
  conflictResolutionConfig:
    prefixMode: onConflict
${2:-}
EOC
	"$vmcpd" -d -f "$tmp/$1/vmcpd.yaml" >"$tmp/$1/log" 2>&1 &
	pids="$pids $!"
	await "$tmp/$1/port" '^[0-9]'
}

start anon
start oidc "incomingAuth:
  type: oidc
  oidc:
    issuer: $iss
    jwksUrl: $iss/jwks
    audience: bench
    insecureAllowHttp: true
    jwksAllowPrivateIp: true"

# session PORT [AUTHORIZATION]: initialize, the Mcp-Session-Id
session() {
	curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${2:+-H "Authorization: $2"} --data '{"jsonrpc":"2.0","id":1,
	    "method":"initialize","params":{"protocolVersion":"2025-11-25",
	    "capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
	    "http://127.0.0.1:$1/mcp" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([^[:space:]]*\).*/\1/p'
}
pa=$(cat "$tmp/anon/port")
po=$(cat "$tmp/oidc/port")
i=0
until sa=$(session "$pa") && [ -n "$sa" ] &&
    so=$(session "$po" "Bearer $token") && [ -n "$so" ]; do
	i=$((i + 1))
	[ $i -le 50 ] || die "no session (see $tmp/oidc/log)"
	sleep 0.1
done

# run NAME PORT SESSION [AUTHORIZATION]: requests per second
run() {
	MCP_SESSION_ID=$3 BENCH_AUTHORIZATION=${4:-} wrk -t2 -c"$conns" \
	    -d"${secs}s" -s "$bench/call.lua" "http://127.0.0.1:$2/mcp" \
	    >"$tmp/wrk-$1.txt" 2>&1 || die "wrk $1 failed"
	grep -q 'bad_status=0 bad_body=0' "$tmp/wrk-$1.txt" ||
	    die "wrk $1: bad answers: $(cat "$tmp/wrk-$1.txt")"
	sed -n 's/^BENCH .* rps=\([0-9.]*\) .*/\1/p' "$tmp/wrk-$1.txt"
}
: >"$tmp/anon.rps"
: >"$tmp/oidc.rps"
r=0
while [ $r -lt "$rounds" ]; do
	a=$(run anon "$pa" "$sa")
	o=$(run oidc "$po" "$so" "Bearer $token")
	echo "$a" >>"$tmp/anon.rps"
	echo "$o" >>"$tmp/oidc.rps"
	printf 'round %d: tools/call c=%d anonymous %s/s, bearer %s/s\n' \
	    $((r + 1)) "$conns" "$a" "$o"
	r=$((r + 1))
done
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
ma=$(median "$tmp/anon.rps")
mo=$(median "$tmp/oidc.rps")
awk -v a="$ma" -v o="$mo" 'BEGIN { r = o / a; ok = (r >= 0.9) ? "met" : "missed"
    printf "bearer/anonymous (medians): %.2f (target >= 0.9: %s)\n", r, ok }'
