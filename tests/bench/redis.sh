#!/bin/sh
# redis.sh (make bench runs it after ratelimit.sh): what sessionStorage
# provider redis costs a Legacy tools/call against lmdb.  First the
# Legacy session alone (one EVALSHA per call checking the host's copy
# against Redis, and the touch's write once a second), then with a
# shared rate-limit bucket too large to refuse anything (one more EVAL
# per call against one LMDB write txn per leased batch).  On 127.0.0.1 only: a
# redis-server of its own (no persistence), one mcp_echo backend and two
# vmcpd (2 workers each); wrk call.lua (tools/call, c=RL_CONNS, default
# 32) against each in turn, RL_ROUNDS times (default 3) of RL_SECONDS
# (default 10).  Prints each run and the ratio of the medians (target:
# redis >= 0.8x lmdb).  A figure is a measurement, not a test.
set -u
conns=${RL_CONNS:-32}
rounds=${RL_ROUNDS:-3}
secs=${RL_SECONDS:-10}
ab_name=redisbench
. "$(dirname "$0")/ab.sh"

command -v redis-server >/dev/null 2>&1 || die "redis-server is missing (make deps)"
# a free port: bound, read and closed by redis-server's own refusal
rport=""
for p in $(shuf -i 20000-60000 -n 20); do
	redis-server --bind 127.0.0.1 --port "$p" --save '' --appendonly no \
	    --dir "$tmp" --daemonize no >"$tmp/redis.log" 2>&1 &
	rpid=$!
	sleep 0.3
	if kill -0 "$rpid" 2>/dev/null; then
		pids="$pids $rpid"
		rport=$p
		break
	fi
done
[ -n "$rport" ] || die "redis-server did not start: $(cat "$tmp/redis.log")"

# scripts (EVALSHA) Redis ran per tools/call of vmcpd NAME since the
# last reset: what a call costs Redis, whatever the machine's noise
per_call() {
	calls=$(redis-cli -p "$rport" info commandstats |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
	awk -v c="${calls:-0}" -v l="$2" '{ n += $1 } END {
	    printf "%s: %.3f EVALSHA per tools/call (%d over %d)\n", l,
	    (n > 0 ? c / n : 0), c, n }' "$tmp/$1.req"
	redis-cli -p "$rport" config resetstat >/dev/null
}

start lmdbs ""
start rediss "sessionStorage: {provider: redis, address: 127.0.0.1:$rport}"
redis-cli -p "$rport" config resetstat >/dev/null
compare lmdbs rediss "lmdb sessions" "redis sessions" "sessions redis/lmdb" 0.8
per_call rediss "redis sessions"

limit="rateLimiting:
  shared: {maxTokens: 1000000000, refillPeriod: 1s}"
start lmdb "$limit"
start redis "$limit
sessionStorage: {provider: redis, address: 127.0.0.1:$rport}"
compare lmdb redis "lmdb buckets" "redis sessions+buckets" \
    "sessions+buckets redis/lmdb" 0.8
per_call redis "redis sessions+buckets"
