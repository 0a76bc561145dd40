#!/bin/sh
# composite.sh (make bench runs it after ratelimit.sh): what a composite
# tool's step costs (worker/composite/composite_run.c).  On 127.0.0.1 only: one
# mcp_echo backend and one vmcpd (2 workers) in front of it with
# chain10, a composite of 10 echo steps: 5 in parallel, then 5 in a
# chain after them.  wrk call.lua runs tools/call echo (direct) and
# tools/call chain10 in turn, CB_ROUNDS times (default 3) of CB_SECONDS
# (default 10) at c=CB_CONNS (default 16).  Prints each run, then from
# the medians the throughput and latency of each, and the daemon's time
# per step (1 / (10 x composite calls/s)) against its time per direct
# call: the overhead per step (negative: a step costs less than a
# client's call, which has the client's HTTP and session on top).  A figure is a measurement, not a test: only a broken
# step fails the run.  KEEP=1 keeps the temporary directory.
set -u
conns=${CB_CONNS:-16}
rounds=${CB_ROUNDS:-3}
secs=${CB_SECONDS:-10}
ab_name=compbench
. "$(dirname "$0")/ab.sh"

steps="      - {id: p1, tool: a.echo, arguments: {message: \"{{.params.message}}\"}}"
for i in 2 3 4 5; do
	steps="$steps
      - {id: p$i, tool: a.echo, arguments: {message: \"{{.params.message}}\"}}"
done
prev="[p1, p2, p3, p4, p5]"
for i in 1 2 3 4 5; do
	steps="$steps
      - {id: c$i, tool: a.echo, dependsOn: $prev, arguments: {message: \"{{.params.message}}\"}}"
	prev="[c$i]"
done
start comp "compositeTools:
  - name: chain10
    description: 10 echo steps, 5 in parallel then 5 in a chain
    parameters:
      type: object
      properties:
        message: {type: string}
      required: [message]
    steps:
$steps
    output:
      properties:
        last: {type: string, value: \"{{.steps.c5.output.text}}\"}"

port=$(cat "$tmp/comp/port")
sid=$(session comp "$port") || exit 1
# the composite is advertised once the view is built
i=0
until curl -s -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' \
    --data '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    "http://127.0.0.1:$port/mcp" | grep -q '"chain10"'; do
	i=$((i + 1))
	[ $i -le 50 ] || die "chain10 is not advertised (see $tmp/comp/log)"
	sleep 0.1
done
: >"$tmp/direct.rps"
: >"$tmp/chain.rps"
r=0
while [ $r -lt "$rounds" ]; do
	export BENCH_TOOL=echo
	a=$(run direct "$port" "$sid") || exit 1
	export BENCH_TOOL=chain10
	b=$(run chain "$port" "$sid") || exit 1
	echo "$a" >>"$tmp/direct.rps"
	echo "$b" >>"$tmp/chain.rps"
	printf 'round %d: c=%d tools/call echo %s/s, chain10 %s/s\n' \
	    $((r + 1)) "$conns" "$a" "$b"
	r=$((r + 1))
done
awk -v d="$(median "$tmp/direct.rps")" -v c="$(median "$tmp/chain.rps")" \
    -v n="$conns" 'BEGIN {
	printf "medians at c=%d: %.0f direct calls/s, %.0f composite calls/s (%.0f steps/s)\n", n, d, c, 10 * c
	printf "latency: a direct call %.2f ms, a composite call %.2f ms (6 calls deep)\n", n / d * 1e3, n / c * 1e3
	td = 1e6 / d; ts = 1e6 / (10 * c)
	printf "per step: %.1f us of the daemon against %.1f us per direct call: overhead per step %+.1f us (%.2fx)\n", ts, td, ts - td, ts / td
}'
