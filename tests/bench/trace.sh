#!/bin/sh
# trace.sh (make bench runs it after authz.sh): what tracing costs a
# tools/call (issue 28).  On 127.0.0.1 only: one mcp_echo backend, an
# nginx that stands in for the OpenTelemetry collector (it takes every
# POST /v1/traces with 200 and nothing else: the figure is vmcpd's own
# cost, not a collector's), and three vmcpd (2 workers each) in front of
# the backend: tracing off, tracing on with samplingRate "1.0" (every
# call a SERVER and a CLIENT span, exported), and tracing on at the
# default samplingRate "0.05".  wrk call.lua (2025-11-25) then
# mcall.lua (2026-07-28), c=TR_CONNS (default 32), against each in
# turn, TR_ROUNDS times (default 3) of TR_SECONDS (default 10).  Prints
# each run, the ratios of the medians (targets: rate 1.0 >= 0.90x off,
# the default rate >= 0.97x off) and each vmcpd's CPU per call.  A
# figure is a measurement, not a test: only a broken step fails the
# run (no span exported when every call is sampled is one).  KEEP=1
# keeps the temporary directory.  The scaffolding is ab.sh.
set -u
conns=${TR_CONNS:-32}
rounds=${TR_ROUNDS:-3}
secs=${TR_SECONDS:-10}
ab_name=tracebench
. "$(dirname "$0")/ab.sh"

nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
[ -x "$nginx" ] || die "nginx is missing (make deps)"
# a free port for the sink (nginx cannot report one it picked)
sport=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    die "no free port"
mkdir -p "$tmp/sink"
cat >"$tmp/sink/nginx.conf" <<EOC
worker_processes 1;
daemon off;
pid $tmp/sink/nginx.pid;
error_log $tmp/sink/error.log;
events { worker_connections 1024; }
http {
	access_log $tmp/sink/access.log;
	client_body_temp_path $tmp/sink;
	server {
		listen 127.0.0.1:$sport;
		location = /v1/traces {
			client_max_body_size 64m;
			return 200 "{}";
		}
		location / { return 404; }
	}
}
EOC
"$nginx" -p "$tmp/sink" -c "$tmp/sink/nginx.conf" >"$tmp/sink/out" 2>&1 &
pids="$pids $!"
i=0
until curl -s -o /dev/null -X POST "http://127.0.0.1:$sport/v1/traces"; do
	i=$((i + 1))
	[ $i -le 50 ] || die "the nginx sink does not start ($tmp/sink)"
	sleep 0.1
done

telemetry() {
	echo "telemetry:
  endpoint: 127.0.0.1:$sport
  insecure: true
  tracingEnabled: true
  serviceName: vmcpd-bench${1:+
  samplingRate: \"$1\"}"
}
start off
start on "$(telemetry 1.0)"
start rate "$(telemetry)"

cpu() {
	awk -v hz="$(getconf CLK_TCK)" 'FNR == NR { r += $1; next }
	    { c += $1 } END { printf "%.1f", (r > 0 ? c * 1e6 / hz / r : 0) }' \
	    "$tmp/$1.req" "$tmp/$1.cpu"
}

: >"$tmp/summary"
for ab_script in call mcall; do
	rev=2025-11-25
	[ $ab_script = mcall ] && rev=2026-07-28
	for n in off on rate; do
		: >"$tmp/$n.req"
		: >"$tmp/$n.cpu"
	done
	echo "$rev tools/call, c=$conns:"
	compare off on "tracing off" "sampled 1.0" \
	    "$rev tracing 1.0/off" 0.90 | tee -a "$tmp/summary"
	compare off rate "tracing off" "sampled 0.05" \
	    "$rev tracing 0.05/off" 0.97 | tee -a "$tmp/summary"
	echo "$rev CPU per call: off $(cpu off) us, sampled 1.0" \
	    "$(cpu on) us, sampled 0.05 $(cpu rate) us" | tee -a "$tmp/summary"
done
grep -q 'POST /v1/traces HTTP/1.1" 200' "$tmp/sink/access.log" ||
    die "no span was exported at samplingRate 1.0"
echo "spans exported: $(grep -c 'POST /v1/traces' "$tmp/sink/access.log")" \
    "batches to the sink"
echo "summary (tracing against none, tools/call c=$conns):"
grep -v '^round' "$tmp/summary"
