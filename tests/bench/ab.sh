# ab.sh: the A/B scaffolding auth.sh, ratelimit.sh and authz.sh source.
# On 127.0.0.1 only: one mcp_echo backend, two vmcpd (2 workers each) in
# front of it that differ in one config block, and wrk call.lua
# (tools/call; with ab_script=mcall, mcall.lua: the same as a 2026-07-28
# client, no session) against each in turn.  The caller sets conns,
# rounds, secs and ab_name (the temporary directory's name) before
# sourcing it.
# A figure is a measurement, not a test: only a broken step fails the
# run.  KEEP=1 keeps the temporary directory.
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
bench=$root/tests/bench
vmcpd=${VMCPD_BIN:-$root/build/vmcpd}
tmp=$(mktemp -d "/tmp/vmcpd-$ab_name-XXXXXX") || exit 2
. "$bench/lib.sh"

make -s -f tests/bench/Makefile >/dev/null || die "mcp_echo does not build"
command -v wrk >/dev/null 2>&1 || die "wrk is missing (make deps)"

"$root/build/bench/mcp_echo" -p 0 -n 10 >"$tmp/echo.log" 2>&1 &
pids="$pids $!"
await "$tmp/echo.log" '^PORT '
eport=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' "$tmp/echo.log")

# start NAME [more config]: a vmcpd; its port in $tmp/NAME/port
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

# session NAME PORT [AUTHORIZATION]: initialize, the Mcp-Session-Id
# ("-" for mcall.lua: stateless)
session() {
	[ "${ab_script:-call}" = mcall ] && { echo -; return 0; }
	i=0
	until s=$(curl -s -D - -o /dev/null \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${3:+-H "Authorization: $3"} --data '{"jsonrpc":"2.0","id":1,
	    "method":"initialize","params":{"protocolVersion":"2025-11-25",
	    "capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
	    "http://127.0.0.1:$2/mcp" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([^[:space:]]*\).*/\1/p') &&
	    [ -n "$s" ]; do
		i=$((i + 1))
		[ $i -le 50 ] || die "no session (see $tmp/$1/log)"
		sleep 0.1
	done
	echo "$s"
}

# cpu_ticks PATTERN: the CPU time (clock ticks, user and system) of
# the processes whose command line holds PATTERN (a vmcpd's master and
# workers, forked without exec, share it)
cpu_ticks() {
	t=0
	for d in /proc/[0-9]*; do
		# (a process may end meanwhile)
		{ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null |
		    grep -qF -- "$1" || continue
		# the fields after the command's parenthesised name
		set -- "$1" $(sed 's/^.*) //' "$d/stat" 2>/dev/null)
		[ $# -ge 14 ] && t=$((t + ${13} + ${14}))
		set -- "$1"
	done
	echo "$t"
}

# run NAME PORT SESSION [AUTHORIZATION]: requests per second
run() {
	c0=$(cpu_ticks "$tmp/$1/vmcpd.yaml")
	MCP_SESSION_ID=$3 BENCH_AUTHORIZATION=${4:-} wrk -t2 -c"$conns" \
	    -d"${secs}s" -s "$bench/${ab_script:-call}.lua" \
	    "http://127.0.0.1:$2/mcp" \
	    >"$tmp/wrk-$1.txt" 2>&1 || die "wrk $1 failed"
	grep -q 'bad_status=0 bad_body=0' "$tmp/wrk-$1.txt" ||
	    die "wrk $1: bad answers: $(cat "$tmp/wrk-$1.txt")"
	# the requests answered and the vmcpd's CPU ticks, for figures per
	# request (redis.sh)
	sed -n 's/^BENCH requests=\([0-9]*\) .*/\1/p' "$tmp/wrk-$1.txt" \
	    >>"$tmp/$1.req"
	echo $(($(cpu_ticks "$tmp/$1/vmcpd.yaml") - c0)) >>"$tmp/$1.cpu"
	sed -n 's/^BENCH .* rps=\([0-9.]*\) .*/\1/p' "$tmp/wrk-$1.txt"
}

median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# compare A B LABEL_A LABEL_B RATIO TARGET [AUTHORIZATION for B]: the
# rounds against the vmcpd started as A and B, each printed, then the
# ratio of B's median to A's against TARGET
compare() {
	pa=$(cat "$tmp/$1/port")
	pb=$(cat "$tmp/$2/port")
	sa=$(session "$1" "$pa") || exit 1
	sb=$(session "$2" "$pb" "${7:-}") || exit 1
	: >"$tmp/$1.rps"
	: >"$tmp/$2.rps"
	r=0
	while [ $r -lt "$rounds" ]; do
		a=$(run "$1" "$pa" "$sa") || exit 1
		b=$(run "$2" "$pb" "$sb" "${7:-}") || exit 1
		echo "$a" >>"$tmp/$1.rps"
		echo "$b" >>"$tmp/$2.rps"
		printf 'round %d: tools/call c=%d %s %s/s, %s %s/s\n' \
		    $((r + 1)) "$conns" "$3" "$a" "$4" "$b"
		r=$((r + 1))
	done
	awk -v a="$(median "$tmp/$1.rps")" -v o="$(median "$tmp/$2.rps")" \
	    -v l="$5" -v t="$6" 'BEGIN { r = o / a; ok = (r >= t) ? "met" : "missed"
	    printf "%s (medians): %.2f (target >= %s: %s)\n", l, r, t, ok }'
}
