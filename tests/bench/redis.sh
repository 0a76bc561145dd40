#!/bin/sh
# redis.sh (make bench runs it after ratelimit.sh): what sessionStorage
# provider redis costs a Legacy tools/call against lmdb.  First the
# Legacy session alone (the touch's write once a second and the check
# of the host's copy against Redis after it: the checks between are
# skipped while Redis's client-side caching says nothing changed), then
# with a shared rate-limit bucket too large to refuse anything (leased
# in both: a 64th of the bucket per worker, one script in Redis or one
# LMDB write txn per lease).  On 127.0.0.1 only: a
# redis-server of its own (no persistence), one mcp_echo backend and two
# vmcpd (2 workers each); wrk call.lua (tools/call, c=RL_CONNS, default
# 32) against each in turn, RL_ROUNDS times (default 3) of RL_SECONDS
# (default 10).  Prints each run and the ratio of the medians (target:
# redis >= 0.8x lmdb), then what a call cost: the scripts Redis ran per
# call (commandstats) and the CPU of redis-server and of each vmcpd per
# 1000 calls, steadier than the rates on a shared machine.  A figure is
# a measurement, not a test.
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

# Redis's CPU seconds so far (user and system)
redis_cpu() {
	redis-cli -p "$rport" info cpu | tr -d '\r' | awk -F: '
	    /^used_cpu_(user|sys):/ { s += $2 } END { printf "%.3f\n", s }'
}

# the reset of the figures per_call prints
reset_stats() {
	redis-cli -p "$rport" config resetstat >/dev/null
	rcpu0=$(redis_cpu)
}

# per_call A B LABEL: the scripts (EVALSHA) Redis ran per tools/call of
# vmcpd B since reset_stats, the microseconds it spent in them and its
# CPU, and the CPU of vmcpd A and B per 1000 calls: what a call costs,
# less noisy than the rates on a loaded machine
per_call() {
	st=$(redis-cli -p "$rport" info commandstats |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2/p')
	rcpu=$(redis_cpu)
	cat "$tmp/$1.req" "$tmp/$1.cpu" "$tmp/$2.req" "$tmp/$2.cpu" >/dev/null ||
	    return
	awk -v c="${st% *}" -v u="${st#* }" -v l="$3" -v a="$1" -v b="$2" -v d="$tmp" \
	    -v r="$(awk -v x="$rcpu" -v y="$rcpu0" 'BEGIN { print x - y }')" '
	    FILENAME ~ /\.req$/ { n[FILENAME] += $1 }
	    FILENAME ~ /\.cpu$/ { t[FILENAME] += $1 }
	    END {
		na = n[d "/" a ".req"]; nb = n[d "/" b ".req"]
		ta = t[d "/" a ".cpu"]; tb = t[d "/" b ".cpu"]
		if (na == 0 || nb == 0)
			exit
		printf "%s: %.3f EVALSHA per tools/call (%d over %d), " \
		    "%.2f us in them; CPU per 1000 calls: redis-server %.1f ms, " \
		    "vmcpd %s %.1f ms, vmcpd %s %.1f ms\n", l, c / nb, c, nb,
		    u / nb, r * 1e6 / nb, a, ta * 10000 / na, b, tb * 10000 / nb
	    }' "$tmp/$1.req" "$tmp/$1.cpu" "$tmp/$2.req" "$tmp/$2.cpu"
}

start lmdbs ""
start rediss "sessionStorage: {provider: redis, address: 127.0.0.1:$rport}"
reset_stats
compare lmdbs rediss "lmdb sessions" "redis sessions" "sessions redis/lmdb" 0.8
per_call lmdbs rediss "redis sessions"

limit="rateLimiting:
  shared: {maxTokens: 1000000000, refillPeriod: 1s}"
start lmdb "$limit"
start redis "$limit
sessionStorage: {provider: redis, address: 127.0.0.1:$rport}"
reset_stats
compare lmdb redis "lmdb buckets" "redis sessions+buckets" \
    "sessions+buckets redis/lmdb" 0.8
per_call lmdb redis "redis sessions+buckets"
