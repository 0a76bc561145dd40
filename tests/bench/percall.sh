#!/bin/sh
# percall.sh [legacy | modern] [authz]: what one Legacy tools/call (with
# "modern": one 2026-07-28 stateless tools/call, as mcall.lua) costs a
# vmcpd worker and an nginx worker proxying to the same backend (with
# "authz": vmcpd with every access control on, lib.sh's access_config:
# a bearer token of authidp.mjs on every call, Cedar policies that read
# no argument, rate limits, audit), in measures that do not
# depend on how busy the machine is: the worker's instructions per call
# (valgrind --tool=callgrind, vmcpd only) and system calls per call
# (strace -c, both).  On 127.0.0.1: one mcp_echo backend, vmcpd with one
# worker (era: legacy) and nginx with one worker; each is driven by
# percall.mjs with PERCALL_CALLS calls (3000) over 32 connections after
# a warm-up.  With "modern" vmcpd speaks to the backend in 2026-07-28
# (era: modern), as run.sh's vmcpd-m.  Needs valgrind and strace (make
# deps does not install them).  KEEP=1 keeps the temporary directory with
# the callgrind file (callgrind_annotate it for the profile).
# PERCALL_STRACE=0 skips the system calls (strace) part.  VMCPD_BIN:
# this binary.  PERCALL_CONFIG: config text added to vmcpd's (trace.sh's
# tracing on, for instance).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
n=${PERCALL_CALLS:-3000}
case ${1:-legacy} in
legacy)	era=legacy ;;
modern)	era=modern ;;
*)	echo "usage: percall.sh [legacy | modern] [authz]" >&2; exit 2 ;;
esac
case ${2:-} in
'')	access=0 ;;
authz)	access=1 ;;
*)	echo "usage: percall.sh [legacy | modern] [authz]" >&2; exit 2 ;;
esac
vmcpd=${VMCPD_BIN:-$root/build/vmcpd}
nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
for t in valgrind callgrind_control strace node curl; do
	command -v $t >/dev/null 2>&1 || { echo "percall: no $t" >&2; exit 2; }
done
[ -x "$nginx" ] || { echo "percall: no nginx" >&2; exit 2; }
make -s -f tests/bench/Makefile >/dev/null || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmcpd-percall.XXXXXX") || exit 2
bench_name=percall
. tests/bench/lib.sh
auth=""		# the bearer token's header, with authz
drive() {	# drive URL SESSION N
	PERCALL_AUTHORIZATION=$auth node tests/bench/percall.mjs "$1" "$2" \
	    "$3" 32 >"$tmp/drive.txt" || die "$(cat "$tmp/drive.txt")"
}
session() {	# session URL: initialize and initialized, the session id
	[ $era = modern ] && { echo -; return 0; }	# stateless
	s=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${auth:+-H "Authorization: $auth"} --data \
	    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{
	    "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{
	    "name":"percall","version":"1"}}}' "$1" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([^[:space:]]*\).*/\1/p')
	[ -n "$s" ] || die "no session at $1"
	curl -s -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${auth:+-H "Authorization: $auth"} \
	    -H "Mcp-Session-Id: $s" -H 'MCP-Protocol-Version: 2025-11-25' \
	    --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$1"
	echo "$s"
}
# syscalls N PID URL SESSION: strace -c over N calls, per call
syscalls() {
	strace -c -f -p "$2" -o "$tmp/strace-$2.txt" 2>/dev/null &
	sp=$!
	sleep 1
	drive "$3" "$4" "$1"
	sleep 0.3
	kill -INT $sp
	wait $sp
	awk -v n="$1" '$NF != "total" && $4 ~ /^[0-9]+$/ && NF >= 5 {
		printf "  %-14s %6.3f\n", $NF, $4 / n; t += $4 }
	    END { printf "  %-14s %6.3f\n", "all", t / n }' "$tmp/strace-$2.txt"
}

build/bench/mcp_echo -p 0 -n 20 >"$tmp/echo.log" 2>&1 &
pids="$pids $!"
await "$tmp/echo.log" '^PORT '
eport=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' "$tmp/echo.log")

# nginx: one worker, the keep-alive upstream of run.sh
mkdir -p "$tmp/n/logs" "$tmp/n/temp"
nport=$((20000 + $$ % 30000))
cat >"$tmp/n/nginx.conf" <<EOC
daemon off;
master_process on;
worker_processes 1;
pid $tmp/n/nginx.pid;
error_log $tmp/n/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $tmp/n/temp/body;
	proxy_temp_path $tmp/n/temp/proxy;
	fastcgi_temp_path $tmp/n/temp/fastcgi;
	uwsgi_temp_path $tmp/n/temp/uwsgi;
	scgi_temp_path $tmp/n/temp/scgi;
	upstream mcp_a { server 127.0.0.1:$eport; keepalive 64; }
	server {
		listen 127.0.0.1:$nport;
		location / {
			proxy_pass http://mcp_a;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
		}
	}
}
EOC
"$nginx" -p "$tmp/n" -c "$tmp/n/nginx.conf" -e "$tmp/n/logs/error.log" \
    >"$tmp/n/stderr" 2>&1 &
npid=$!
pids="$pids $npid"

# with authz: the issuer's keys and token, the config blocks
more=""
if [ $access = 1 ]; then
	BENCH_IDP_SECONDS=3600 node tests/bench/authidp.mjs >"$tmp/idp.log" \
	    2>&1 &
	pids="$pids $!"
	await "$tmp/idp.log" '^TOKEN '
	auth="Bearer $(sed -n 's/^TOKEN //p' "$tmp/idp.log")"
	more=$(access_config "$(sed -n 's/^ISS //p' "$tmp/idp.log")" \
	    "$tmp/audit.jsonl")
fi

# vmcpd under callgrind (it follows the fork into the worker)
mkdir -p "$tmp/v"
cat >"$tmp/v/vmcpd.yaml" <<EOC
daemon:
  listen: 127.0.0.1:0
  portFile: $tmp/v/port
  stateDir: $tmp/v/state
  workers: 1
backends:
  - name: a
    url: http://127.0.0.1:$eport/mcp
    transport: streamable-http
    era: $era
aggregation:
  conflictResolution: prefix
  conflictResolutionConfig:
    prefixMode: onConflict
$more
${PERCALL_CONFIG:-}
EOC
valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$tmp/callgrind.%p" "$vmcpd" -d \
    -f "$tmp/v/vmcpd.yaml" >"$tmp/v/log" 2>&1 &
vpid=$!
pids="$pids $vpid"
await "$tmp/v/port" '^[0-9]' 300	# valgrind is slow
vurl=http://127.0.0.1:$(cat "$tmp/v/port")/mcp
nurl=http://127.0.0.1:$nport/mcp
vsid=$(session "$vurl") || exit 1
i=0
until nsid=$(session "$nurl" 2>/dev/null); do
	i=$((i + 1))
	[ $i -le 50 ] || die "nginx does not answer (see $tmp/n)"
	sleep 0.1
done
# the worker names itself vmcpd-worker; else the last child forked
vw=$(ps -o pid= --ppid "$vpid" | tail -1 | tr -d ' ')
for p in $(ps -o pid= --ppid "$vpid"); do
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = vmcpd-worker ] && vw=$p
done
nw=$(ps -o pid= --ppid "$npid" | head -1 | tr -d ' ')
[ -n "$vw" ] && [ -n "$nw" ] || die "no worker found"

drive "$vurl" "$vsid" 500
callgrind_control -z "$vw" >/dev/null 2>&1
drive "$vurl" "$vsid" "$n"
callgrind_control -d "$vw" >/dev/null 2>&1
f=$(ls -t "$tmp"/callgrind."$vw"* | head -1)
ir=$(callgrind_annotate "$f" 2>/dev/null |
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
echo "vmcpd worker: $((ir / n)) instructions per $era call${2:+ with $2}" \
    "($n calls, callgrind)"
[ "${KEEP:-0}" = 1 ] && echo "percall: the profile: callgrind_annotate $f"
[ "${PERCALL_STRACE:-1}" = 0 ] && exit 0

# syscalls: vmcpd again without valgrind
kill "$vpid"
wait "$vpid" 2>/dev/null
rm -f "$tmp/v/port"
"$vmcpd" -d -f "$tmp/v/vmcpd.yaml" >"$tmp/v/log2" 2>&1 &
vpid=$!
pids="$pids $vpid"
await "$tmp/v/port" '^[0-9]'
vurl=http://127.0.0.1:$(cat "$tmp/v/port")/mcp
vsid=$(session "$vurl") || exit 1
vw=$(ps -o pid= --ppid "$vpid" | tail -1 | tr -d ' ')
for p in $(ps -o pid= --ppid "$vpid"); do
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = vmcpd-worker ] && vw=$p
done
drive "$vurl" "$vsid" 500
drive "$nurl" "$nsid" 500
echo "vmcpd worker: system calls per call (strace -c, $n calls)"
syscalls "$n" "$vw" "$vurl" "$vsid"
echo "nginx worker: system calls per call (strace -c, $n calls)"
syscalls "$n" "$nw" "$nurl" "$nsid"
