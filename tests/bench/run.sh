#!/bin/sh
# run.sh (make bench): throughput and latency of vmcpd against the same
# backend reached directly and through a plain nginx proxy hop, all
# measured in one run so that the ratios mean something on a shared,
# noisy machine (+-20-30 % from run to run).
#
# On 127.0.0.1 it starts two mcp_echo backends (A; B with tool prefix
# "b_"; both speak both revisions), vmcpd in front of A (2 workers,
# era: legacy), a second vmcpd in front of A+B (the aggregated
# tools/list), a third in front of A with era: modern (vmcpd-m: 2026-07-28
# end to end) and nginx (2 workers, keepalive upstream to A), and a
# fourth vmcpd (vmcpd-sse) in front of backend S, an mcp_echo that answers
# as an event stream the way the TypeScript SDK does by default (-s sdk).
# It opens one session per target with curl, then runs wrk with
# call.lua (tools/call echo) at c=1 and c=32 and list.lua (tools/list)
# against every target, and mcall.lua and mlist.lua, the same as MCP
# 2026-07-28 (stateless) clients, against every target (vmcpd-m:
# 2026-07-28 to the backend too; vmcpd: the bridge to 2025-11-25), their
# _meta as the official SDK v2 client sends it (clientInfo included): a
# warm-up, then a
# measured run, the whole set
# BENCH_ROUNDS times, interleaved.  It prints the medians (req/s, p50,
# p99, and the CPU time per request of the target and of the backends,
# read from /proc: unlike req/s it hardly depends on how busy the
# machine is) and the ratios, and writes them to build/bench/results.json.
#
# The vmcpd-sse rows are tools/call through vmcpd to S (be us/r: S's
# CPU); the summary gives their CPU per call over vmcpd's JSON rows
# (issue: within 1.5x).
#
# It fails if any measured run has more than 0.1 % bad answers (non-200,
# a JSON-RPC error, a wrong list, socket errors) or a vmcpd child died.
# Missing targets (issue: vmcpd c=32 req/s >= nginx's; vmcpd's added
# p50 at c=1 <= 1.2 x nginx's) are reported, not failed.
#
# Environment: BENCH_DURATION (s, default 5), BENCH_WARMUP (s, 1),
# BENCH_ROUNDS (3), BENCH_TOOLS (tools per backend besides echo, 20),
# BENCH_TESTS (the wrk scripts to run, default "call mcall list mlist"),
# BENCH_PERF=1 (also perf-profile vmcpd's workers during one more c=32
# tools/call run; flat and inclusive reports in build/bench/perf-vmcpd*.txt),
# KEEP=1 (keep the temporary directory with every log and perf.data),
# VMCPD_BIN (benchmark this vmcpd binary instead of building build/vmcpd).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
cd "$root" || exit 2
bench=$root/tests/bench
out=$root/build/bench
duration=${BENCH_DURATION:-5}
warmup=${BENCH_WARMUP:-1}
rounds=${BENCH_ROUNDS:-3}
ntools=${BENCH_TOOLS:-20}
perf_on=${BENCH_PERF:-0}
tests=${BENCH_TESTS:-call mcall list mlist}
keep=${KEEP:-0}
groups=""

for v in "$duration" "$warmup" "$rounds" "$ntools"; do
	case $v in
	''|*[!0-9]*)
		echo "bench: BENCH_* values are whole numbers" >&2
		exit 2
		;;
	esac
done
[ "$duration" -ge 1 ] && [ "$rounds" -ge 1 ] || {
	echo "bench: BENCH_DURATION and BENCH_ROUNDS must be >= 1" >&2
	exit 2
}

# --- tools ---------------------------------------------------------------
nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
missing=""
command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
[ -x "$nginx" ] || missing="$missing nginx-light"
command -v curl >/dev/null 2>&1 || missing="$missing curl"
command -v setsid >/dev/null 2>&1 || missing="$missing util-linux"
if [ "$perf_on" = 1 ] && ! command -v perf >/dev/null 2>&1; then
	missing="$missing linux-perf"
fi
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "bench: installing$missing"
	$SUDO apt-get update -qq &&
	    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
	    $missing >/dev/null || {
		echo "bench: cannot install$missing" >&2
		exit 2
	}
	nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
fi

echo "bench: building"
if [ -n "${VMCPD_BIN:-}" ]; then
	vmcpd=$(cd "$(dirname "$VMCPD_BIN")" && pwd)/$(basename "$VMCPD_BIN")
else
	make -s all >/dev/null || {
		echo "bench: the build failed" >&2
		exit 2
	}
	vmcpd=$root/build/vmcpd
fi
make -s -f tests/bench/Makefile >/dev/null || {
	echo "bench: mcp_echo does not build" >&2
	exit 2
}
[ -x "$vmcpd" ] || {
	echo "bench: $vmcpd is not an executable" >&2
	exit 2
}
echo_bin=$out/mcp_echo

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmcpd-bench.XXXXXX") || exit 2
failed=0

# --- processes -----------------------------------------------------------
# stop_group PID: SIGTERM the process group led by PID, SIGKILL after 10 s.
stop_group() {
	kill -TERM "-$1" 2>/dev/null || return 0
	i=0
	while kill -0 "-$1" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			echo "bench: group $1 ignored SIGTERM, killing it" >&2
			kill -KILL "-$1" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	wait "$1" 2>/dev/null
	return 0
}

cleanup() {
	for g in $groups; do
		stop_group "$g"
	done
	groups=""
	if [ "$keep" = 1 ] || [ "$failed" != 0 ]; then
		[ -d "$tmp" ] && echo "bench: logs kept in $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'failed=1; exit 130' INT TERM HUP

die() {
	failed=1
	echo "bench: $*" >&2
	exit 1
}

# spawn LOG CMD...: CMD in a process group of its own, output to LOG;
# sets $spawned.  setsid execs in place, so $! leads the new group.
spawn() {
	log=$1
	shift
	setsid "$@" >"$log" 2>&1 </dev/null &
	spawned=$!
	groups="$groups $spawned"
	i=0
	while [ "$(ps -o pgid= -p "$spawned" 2>/dev/null | tr -d ' ')" != \
	    "$spawned" ]; do
		i=$((i + 1))
		if [ $i -ge 50 ] || ! kill -0 "$spawned" 2>/dev/null; then
			cat "$log" >&2
			return 1
		fi
		sleep 0.1
	done
}

# start_echo NAME ARGS...: an mcp_echo backend; sets $echo_port.
start_echo() {
	name=$1
	shift
	spawn "$tmp/$name.log" "$echo_bin" -p 0 -n "$ntools" "$@" ||
	    die "mcp_echo $name did not start"
	i=0
	echo_port=""
	while [ -z "$echo_port" ]; do
		echo_port=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' \
		    "$tmp/$name.log")
		[ -n "$echo_port" ] && break
		i=$((i + 1))
		if [ $i -ge 50 ] || ! kill -0 "$spawned" 2>/dev/null; then
			cat "$tmp/$name.log" >&2
			die "mcp_echo $name wrote no port"
		fi
		sleep 0.1
	done
}

# start_vmcpd NAME ERA BACKEND...: vmcpd (2 workers) in front of the named
# backends ("name=url"), spoken to in ERA (the era: setting: mcp_echo
# speaks both); sets $vmcpd_port and $vmcpd_pid.
start_vmcpd() {
	name=$1
	era=$2
	shift 2
	d=$tmp/$name
	mkdir -p "$d" || die "mkdir $d"
	{
		echo "name: bench-$name"
		echo "daemon:"
		echo "  listen: 127.0.0.1:0"
		echo "  portFile: $d/port"
		echo "  stateDir: $d/state"
		echo "  workers: 2"
		echo "backends:"
		for b in "$@"; do
			echo "  - name: ${b%%=*}"
			echo "    url: ${b#*=}"
			echo "    transport: streamable-http"
			echo "    era: $era"
		done
		echo "aggregation:"
		echo "  conflictResolution: prefix"
		echo "  conflictResolutionConfig:"
		echo "    prefixMode: onConflict"
	} >"$d/vmcpd.yaml"
	spawn "$d/vmcpd.log" "$vmcpd" -d -f "$d/vmcpd.yaml" ||
	    die "vmcpd $name did not start"
	vmcpd_pid=$spawned
	i=0
	while ! grep -qx '[0-9][0-9]*' "$d/port" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 150 ] || ! kill -0 "$vmcpd_pid" 2>/dev/null; then
			tail -20 "$d/vmcpd.log" >&2
			die "vmcpd $name wrote no port file"
		fi
		sleep 0.1
	done
	vmcpd_port=$(cat "$d/port")
}

# start_nginx UPSTREAM_PORT: nginx with its own prefix under $tmp on a
# free port (nginx cannot report a port 0); sets $nginx_port.
start_nginx() {
	d=$tmp/nginx
	mkdir -p "$d/logs" "$d/temp" || die "mkdir $d"
	try=0
	while [ $try -lt 10 ]; do
		try=$((try + 1))
		nginx_port=$(awk -v s="$$$try" \
		    'BEGIN { srand(s + 0); print 20000 + int(rand() * 30000) }')
		if ss -Htln "sport = :$nginx_port" 2>/dev/null | grep -q .; then
			continue
		fi
		cat >"$d/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
pid $d/nginx.pid;
error_log $d/logs/error.log warn;
events {
	worker_connections 4096;
}
http {
	access_log off;
	client_body_temp_path $d/temp/body;
	proxy_temp_path $d/temp/proxy;
	fastcgi_temp_path $d/temp/fastcgi;
	uwsgi_temp_path $d/temp/uwsgi;
	scgi_temp_path $d/temp/scgi;
	upstream mcp_a {
		server 127.0.0.1:$1;
		keepalive 64;
	}
	server {
		listen 127.0.0.1:$nginx_port;
		location / {
			proxy_pass http://mcp_a;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
		}
	}
}
EOF
		spawn "$d/stderr.log" "$nginx" -p "$d" -c "$d/nginx.conf" \
		    -e "$d/logs/error.log" || continue
		nginx_pid=$spawned
		i=0
		while [ $i -lt 50 ] && kill -0 "$nginx_pid" 2>/dev/null; do
			if curl -s -o /dev/null --max-time 1 \
			    "http://127.0.0.1:$nginx_port/"; then
				return 0
			fi
			i=$((i + 1))
			sleep 0.1
		done
		stop_group "$nginx_pid"
	done
	cat "$d/logs/error.log" "$d/stderr.log" >&2 2>/dev/null
	die "nginx did not start"
}

# wait_http URL: until URL answers over HTTP (15 s at most).
wait_http() {
	i=0
	while ! curl -s -o /dev/null --max-time 1 "$1"; do
		i=$((i + 1))
		[ $i -ge 30 ] && return 1
		sleep 0.5
	done
}

# --- MCP with curl -------------------------------------------------------
# post URL SID BODY: prints the HTTP status, the answer to $tmp/answer,
# headers to $tmp/headers.
post() {
	if [ -n "$2" ]; then
		set -- "$1" "$3" -H "Mcp-Session-Id: $2"
	else
		set -- "$1" "$3"
	fi
	url=$1
	body=$2
	shift 2
	curl -s --max-time 10 -o "$tmp/answer" -D "$tmp/headers" \
	    -w '%{http_code}' -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2025-11-25' "$@" \
	    --data-binary "$body" "$url"
}

# open_session URL: initialize + notifications/initialized, check one
# tools/call; sets $sid.
open_session() {
	st=$(post "$1" "" '{"jsonrpc":"2.0","id":1,"method":"initialize",
	    "params":{"protocolVersion":"2025-11-25","capabilities":{},
	    "clientInfo":{"name":"vmcpd-bench","version":"1"}}}')
	sid=$(tr -d '\r' <"$tmp/headers" |
	    sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: *//p')
	if [ "$st" != 200 ] || [ -z "$sid" ]; then
		cat "$tmp/headers" "$tmp/answer" >&2
		die "initialize at $1 failed ($st)"
	fi
	st=$(post "$1" "$sid" \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}')
	[ "$st" = 202 ] || die "notifications/initialized at $1: $st"
	st=$(post "$1" "$sid" '{"jsonrpc":"2.0","id":2,"method":"tools/call",
	    "params":{"name":"echo","arguments":{"message":"check-1"}}}')
	if [ "$st" != 200 ] || ! grep -q 'check-1' "$tmp/answer"; then
		cat "$tmp/answer" >&2
		die "tools/call at $1 failed ($st)"
	fi
}

# --- start everything ----------------------------------------------------
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start_echo a
port_a=$echo_port
pid_a=$spawned
start_echo b -x b_
port_b=$echo_port
pid_b=$spawned
start_echo s -s sdk
port_s=$echo_port
pid_s=$spawned
url_direct=http://127.0.0.1:$port_a/mcp
start_vmcpd vmcpd legacy "a=$url_direct"
port_v=$vmcpd_port
pid_v=$vmcpd_pid
start_vmcpd vmcpd-ab legacy "a=$url_direct" "b=http://127.0.0.1:$port_b/mcp"
port_vab=$vmcpd_port
pid_vab=$vmcpd_pid
# the same backend spoken to in 2026-07-28 (as vmcpd's probe would pick)
start_vmcpd vmcpd-m modern "a=$url_direct"
port_vm=$vmcpd_port
pid_vm=$vmcpd_pid
# A's twin that answers as an event stream: the same tools
start_vmcpd vmcpd-sse legacy "a=http://127.0.0.1:$port_s/mcp"
port_vs=$vmcpd_port
pid_vs=$vmcpd_pid
start_nginx "$port_a"
url_nginx=http://127.0.0.1:$nginx_port/mcp
url_v=http://127.0.0.1:$port_v/mcp
url_vab=http://127.0.0.1:$port_vab/mcp
url_vm=http://127.0.0.1:$port_vm/mcp
url_vs=http://127.0.0.1:$port_vs/mcp
wait_http "http://127.0.0.1:$port_v/healthz" || die "vmcpd: no /healthz"
wait_http "http://127.0.0.1:$port_vm/healthz" || die "vmcpd-m: no /healthz"
wait_http "http://127.0.0.1:$port_vab/healthz" ||
    die "vmcpd-ab: no /healthz"
wait_http "http://127.0.0.1:$port_vs/healthz" ||
    die "vmcpd-sse: no /healthz"

open_session "$url_direct"
sid_direct=$sid
open_session "$url_nginx"
sid_nginx=$sid
open_session "$url_v"
sid_v=$sid
open_session "$url_vab"
sid_vab=$sid
open_session "$url_vs"
sid_vs=$sid
echo "bench: A $url_direct, B port $port_b, nginx $url_nginx," \
    "vmcpd $url_v, vmcpd A+B $url_vab"
echo "bench: ${rounds} rounds of ${warmup} s warm-up + ${duration} s per" \
    "run; load average $load_before"

# --- wrk -----------------------------------------------------------------
results=$tmp/results.tsv
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
: >"$results"

# group_ticks PGID...: CPU ticks (user + system) used so far by the live
# processes of these process groups.
group_ticks() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v g=" $* " '{
		sub(/^.*\) /, "")	# after "(comm) ": state ppid pgrp ...
		if (index(g, " " $3 " "))
			t += $12 + $13
	} END { print t + 0 }'
}

# bench TEST CONC TARGET URL SID EXPECT ROUND: one warm-up and one
# measured wrk run; appends a row to $results.  CPU per request is
# measured on the gateway's processes and on the backends', which does
# not depend on how busy the machine is the way req/s does.
bench() {
	case " $tests " in
	*" $1 "*) ;;
	*) return ;;
	esac
	t=1
	[ "$2" -gt 1 ] && t=2
	case $3 in
	direct)		gw=""; be=$pid_a ;;
	nginx)		gw=$nginx_pid; be=$pid_a ;;
	vmcpd)		gw=$pid_v; be=$pid_a ;;
	vmcpd-ab)	gw=$pid_vab; be="$pid_a $pid_b" ;;
	vmcpd-m)	gw=$pid_vm; be=$pid_a ;;
	vmcpd-sse)	gw=$pid_vs; be=$pid_s ;;
	esac
	f=$tmp/wrk-$1-c$2-$3-r$7.txt
	export MCP_SESSION_ID=$5 BENCH_EXPECT_TOOLS=$6
	if [ "$warmup" -gt 0 ]; then
		timeout $((warmup + 30)) wrk -t$t -c"$2" -d"${warmup}s" \
		    --timeout 5s -s "$bench/$1.lua" "$4" >/dev/null 2>&1
	fi
	gw0=$(group_ticks $gw)
	be0=$(group_ticks $be)
	timeout $((duration + 30)) wrk -t$t -c"$2" -d"${duration}s" \
	    --timeout 5s -s "$bench/$1.lua" "$4" >"$f" 2>&1
	gw1=$(group_ticks $gw)
	be1=$(group_ticks $be)
	line=$(sed -n 's/^BENCH requests=/requests=/p' "$f")
	if [ -z "$line" ]; then
		cat "$f" >&2
		echo "bench: wrk $1 c=$2 $3: no result" >&2
		failed=1
		return
	fi
	# requests duration_us rps p50 p90 p99 mean bad_status bad_body sock
	set -- "$1" "$2" "$3" "$7" $(echo "$line" |
	    sed 's/[a-z0-9_]*=//g')
	# CPU microseconds per request; the direct target is the backend
	[ -z "$gw" ] && gw1=$be1 && gw0=$be0
	gwus=$(awk -v d=$((gw1 - gw0)) -v n="$5" -v hz="$hz" \
	    'BEGIN { printf "%.1f", (n > 0 ? d * 1e6 / hz / n : 0) }')
	beus=$(awk -v d=$((be1 - be0)) -v n="$5" -v hz="$hz" \
	    'BEGIN { printf "%.1f", (n > 0 ? d * 1e6 / hz / n : 0) }')
	echo "$1 $2 $3 $4 $7 $8 ${10} $5 ${12} ${13} ${14} $gwus $beus" \
	    >>"$results"
	bad=$((${12} + ${13} + ${14}))
	printf '  %-5s c=%-3s %-9s round %s: %9.0f req/s  p50 %7.0f us' \
	    "$1" "$2" "$3" "$4" "$7" "$8"
	printf '  p99 %7.0f us  cpu %6.1f us/req  bad %s\n' "${10}" \
	    "$gwus" "$bad"
	if [ "$5" -eq 0 ] || [ $((bad * 1000)) -gt "$5" ]; then
		failed=1
		echo "bench: $1 c=$2 $3: $bad bad answers of $5 (> 0.1 %)" >&2
		sed -n 's/^BENCH first bad answer: /  first: /p' "$f" >&2
	fi
}

tools_a=$((ntools + 1))
r=1
while [ $r -le "$rounds" ]; do
	for c in 1 32; do
		bench call "$c" direct "$url_direct" "$sid_direct" "" $r
		bench call "$c" nginx "$url_nginx" "$sid_nginx" "" $r
		bench call "$c" vmcpd "$url_v" "$sid_v" "" $r
		bench call "$c" vmcpd-sse "$url_vs" "$sid_vs" "" $r
	done
	# MCP 2026-07-28 clients: stateless, so wrk drives them directly;
	# vmcpd-m speaks 2026-07-28 to the backend, vmcpd 2025-11-25
	for c in 1 32; do
		bench mcall "$c" direct "$url_direct" - "" $r
		bench mcall "$c" nginx "$url_nginx" - "" $r
		bench mcall "$c" vmcpd-m "$url_vm" - "" $r
		bench mcall "$c" vmcpd "$url_v" - "" $r
	done
	for c in 1 32; do
		bench list "$c" direct "$url_direct" "$sid_direct" \
		    "$tools_a" $r
		bench list "$c" nginx "$url_nginx" "$sid_nginx" "$tools_a" $r
		bench list "$c" vmcpd "$url_v" "$sid_v" "$tools_a" $r
		bench list "$c" vmcpd-ab "$url_vab" "$sid_vab" \
		    $((2 * tools_a)) $r
		bench mlist "$c" direct "$url_direct" - "$tools_a" $r
		bench mlist "$c" nginx "$url_nginx" - "$tools_a" $r
		bench mlist "$c" vmcpd-m "$url_vm" - "$tools_a" $r
		bench mlist "$c" vmcpd "$url_v" - "$tools_a" $r
		bench mlist "$c" vmcpd-ab "$url_vab" - $((2 * tools_a)) $r
	done
	r=$((r + 1))
done

# --- optional profile ----------------------------------------------------
if [ "$perf_on" = 1 ]; then
	pids=$(ps -o pid= --ppid "$pid_v" -o comm= |
	    awk '$2 ~ /worker/ { printf "%s%s", s, $1; s = "," }')
	if [ -z "$pids" ]; then
		echo "bench: no vmcpd worker to profile" >&2
	else
		echo "bench: perf on vmcpd workers $pids"
		export MCP_SESSION_ID=$sid_v
		timeout $((duration + 40)) wrk -t2 -c32 \
		    -d"$((duration + 2))s" --timeout 5s \
		    -s "$bench/call.lua" "$url_v" >"$tmp/wrk-perf.txt" 2>&1 &
		wrk_pid=$!
		sleep 1
		perf record -q -F 499 --call-graph dwarf,16384 \
		    -p "$pids" -o "$tmp/perf.data" \
		    -- sleep "$duration" >"$tmp/perf.log" 2>&1
		wait "$wrk_pid"
		perf report -i "$tmp/perf.data" --stdio --no-children \
		    --sort dso,symbol -g none --percent-limit 0.5 \
		    >"$out/perf-vmcpd.txt" 2>/dev/null
		perf report -i "$tmp/perf.data" --stdio --children \
		    --sort symbol -g none --percent-limit 1 \
		    >"$out/perf-vmcpd-inclusive.txt" 2>/dev/null
		echo "bench: profile in $out/perf-vmcpd.txt and" \
		    "$out/perf-vmcpd-inclusive.txt"
	fi
fi

# --- health --------------------------------------------------------------
for p in $groups; do
	kill -0 "$p" 2>/dev/null || {
		failed=1
		echo "bench: process $p died during the run" >&2
	}
done
for n in vmcpd vmcpd-ab vmcpd-sse; do
	if grep -q 'killed by signal\|exited with status' \
	    "$tmp/$n/vmcpd.log"; then
		failed=1
		echo "bench: a child of $n died:" >&2
		grep 'killed by signal\|exited with status' \
		    "$tmp/$n/vmcpd.log" >&2
	fi
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- summary -------------------------------------------------------------
# Medians over the rounds of each (test, connections, target); the ratios
# are taken between medians of this one run.
mkdir -p "$out"
awk -v json="$out/results.json" -v dur="$duration" -v warm="$warmup" \
    -v rounds="$rounds" -v ntools="$ntools" -v ncpu="$(nproc)" \
    -v lb="$load_before" -v la="$load_after" -v failed="$failed" \
    -v rev="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    -v when="$(date -u +%Y-%m-%dT%H:%M:%SZ)" '
function median(k, f,	n, i, j, v, a) {
	n = cnt[k]
	for (i = 1; i <= n; i++)
		a[i] = val[k, i, f]
	for (i = 2; i <= n; i++) {	# insertion sort: n is small
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--)
			a[j + 1] = a[j]
		a[j + 1] = v
	}
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
function m(test, c, target, f,	k) {
	k = test SUBSEP c SUBSEP target
	return (k in cnt) ? median(k, f) : -1
}
function ratio(a, b) {
	return (a < 0 || b <= 0) ? -1 : a / b
}
function jnum(x) {
	return x < 0 ? "null" : sprintf("%.4g", x)
}
function jratio(name, x, last) {
	printf "    \"%s\": %s%s\n", name, jnum(x), last ? "" : "," >json
}
{
	# test conc target round rps p50 p99 requests bad_status bad_body
	# sock cpu_us becpu_us
	k = $1 SUBSEP $2 SUBSEP $3
	if (!(k in cnt)) {
		order[++nk] = k
		cnt[k] = 0
	}
	n = ++cnt[k]
	val[k, n, "rps"] = $5
	val[k, n, "p50"] = $6
	val[k, n, "p99"] = $7
	val[k, n, "cpu"] = $12
	val[k, n, "becpu"] = $13
	req[k] += $8
	bad[k] += $9 + $10 + $11
	row[++nrow] = sprintf("{\"test\":\"%s\",\"connections\":%d," \
	    "\"target\":\"%s\",\"round\":%d,\"rps\":%.1f,\"p50_us\":%.1f," \
	    "\"p99_us\":%.1f,\"requests\":%d,\"bad_status\":%d," \
	    "\"bad_body\":%d,\"socket_errors\":%d,\"cpu_us_per_req\":%.1f," \
	    "\"backend_cpu_us_per_req\":%.1f}",
	    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
}
END {
	printf "\n%-5s %4s  %-9s %9s %9s %9s %9s %9s %6s\n", "test", "conn",
	    "target", "req/s", "p50 us", "p99 us", "cpu us/r", "be us/r",
	    "bad"
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, p, SUBSEP)
		printf "%-5s %4s  %-9s %9.0f %9.0f %9.0f %9.1f %9.1f %6d\n",
		    p[1], p[2], p[3], median(k, "rps"), median(k, "p50"),
		    median(k, "p99"), median(k, "cpu"), median(k, "becpu"),
		    bad[k]
	}
	printf "(cpu us/r: CPU time of the target per request, the" \
	    " backend itself for direct; be us/r: of the backends)\n"

	t_v = m("call", 32, "vmcpd", "rps")
	t_n = m("call", 32, "nginx", "rps")
	t_d = m("call", 32, "direct", "rps")
	l_d = m("call", 1, "direct", "p50")
	add_v = m("call", 1, "vmcpd", "p50") - l_d
	add_n = m("call", 1, "nginx", "p50") - l_d
	r_tv_n = ratio(t_v, t_n)
	r_tv_d = ratio(t_v, t_d)
	r_tn_d = ratio(t_n, t_d)
	r_lv_n = ratio(add_v, add_n)
	r_p50_vd = ratio(m("call", 1, "vmcpd", "p50"), l_d)
	r_p50_nd = ratio(m("call", 1, "nginx", "p50"), l_d)
	r_cpu_vn = ratio(m("call", 32, "vmcpd", "cpu"),
	    m("call", 32, "nginx", "cpu"))
	r_cpu1_vn = ratio(m("call", 1, "vmcpd", "cpu"),
	    m("call", 1, "nginx", "cpu"))
	r_list_vab_d = ratio(m("list", 32, "vmcpd-ab", "rps"),
	    m("list", 32, "direct", "rps"))
	r_list_v_d = ratio(m("list", 32, "vmcpd", "rps"),
	    m("list", 32, "direct", "rps"))
	r_list_n_d = ratio(m("list", 32, "nginx", "rps"),
	    m("list", 32, "direct", "rps"))
	ok_t = r_tv_n >= 1.0
	ok_l = r_lv_n >= 0 && r_lv_n <= 1.2

	printf "\ntools/call c=32 req/s: vmcpd/nginx %.2f, vmcpd/direct" \
	    " %.2f, nginx/direct %.2f (target vmcpd/nginx >= 1.0: %s)\n",
	    r_tv_n, r_tv_d, r_tn_d, ok_t ? "met" : "MISSED"
	printf "tools/call c=1 added p50: vmcpd +%.0f us, nginx +%.0f us," \
	    " vmcpd/nginx %.2f (target <= 1.2: %s)\n", add_v, add_n,
	    r_lv_n, ok_l ? "met" : "MISSED"
	printf "tools/call c=1 p50 over direct: vmcpd %.2fx, nginx %.2fx\n",
	    r_p50_vd, r_p50_nd
	printf "tools/call CPU per request, vmcpd/nginx: %.2f at c=32," \
	    " %.2f at c=1\n", r_cpu_vn, r_cpu1_vn
	r_sse32 = ratio(m("call", 32, "vmcpd-sse", "cpu"),
	    m("call", 32, "vmcpd", "cpu"))
	r_sse1 = ratio(m("call", 1, "vmcpd-sse", "cpu"),
	    m("call", 1, "vmcpd", "cpu"))
	printf "tools/call CPU per request, event-stream backend over JSON" \
	    " (vmcpd-sse/vmcpd): %.2f at c=32, %.2f at c=1 (target <= 1.5:" \
	    " %s)\n", r_sse32, r_sse1,
	    (r_sse32 >= 0 && r_sse32 <= 1.5 && r_sse1 >= 0 &&
	    r_sse1 <= 1.5) ? "met" : "MISSED"
	printf "tools/list c=32 req/s over direct A: vmcpd(A+B) %.2f," \
	    " vmcpd(A) %.2f, nginx %.2f\n", r_list_vab_d, r_list_v_d,
	    r_list_n_d
	mt_vn = ratio(m("mcall", 32, "vmcpd-m", "rps"),
	    m("mcall", 32, "nginx", "rps"))
	mt_vd = ratio(m("mcall", 32, "vmcpd-m", "rps"),
	    m("mcall", 32, "direct", "rps"))
	madd_v = m("mcall", 1, "vmcpd-m", "p50") - m("mcall", 1, "direct", "p50")
	madd_n = m("mcall", 1, "nginx", "p50") - m("mcall", 1, "direct", "p50")
	ml_vn = ratio(m("mlist", 32, "vmcpd-m", "rps"),
	    m("mlist", 32, "nginx", "rps"))
	ml_vd = ratio(m("mlist", 32, "vmcpd-m", "rps"),
	    m("mlist", 32, "direct", "rps"))
	printf "2026-07-28 tools/call c=32 req/s: vmcpd/nginx %.2f," \
	    " vmcpd/direct %.2f; c=1 added p50: vmcpd +%.0f us, nginx" \
	    " +%.0f us, ratio %.2f\n", mt_vn, mt_vd, madd_v, madd_n,
	    ratio(madd_v, madd_n)
	printf "2026-07-28 tools/list c=32 req/s: vmcpd/nginx %.2f," \
	    " vmcpd/direct %.2f\n", ml_vn, ml_vd
	printf "2026-07-28 client to a 2025-11-25 backend, c=32 req/s:" \
	    " tools/call %.0f, tools/list A+B %.0f\n",
	    m("mcall", 32, "vmcpd", "rps"), m("mlist", 32, "vmcpd-ab", "rps")
	printf "load average before %s, after %s (%d CPUs)\n", lb, la, ncpu

	printf "{\n  \"when\": \"%s\",\n  \"revision\": \"%s\",\n", when,
	    rev >json
	printf "  \"duration_s\": %d,\n  \"warmup_s\": %d,\n" \
	    "  \"rounds\": %d,\n  \"tools_per_backend\": %d,\n", dur, warm,
	    rounds, ntools + 1 >json
	printf "  \"cpus\": %d,\n  \"loadavg_before\": \"%s\",\n" \
	    "  \"loadavg_after\": \"%s\",\n  \"failed\": %s,\n", ncpu, lb,
	    la, failed ? "true" : "false" >json
	printf "  \"medians\": [\n" >json
	for (i = 1; i <= nk; i++) {
		k = order[i]
		split(k, p, SUBSEP)
		printf "    {\"test\":\"%s\",\"connections\":%d," \
		    "\"target\":\"%s\",\"rps\":%.1f,\"p50_us\":%.1f," \
		    "\"p99_us\":%.1f,\"cpu_us_per_req\":%.1f," \
		    "\"backend_cpu_us_per_req\":%.1f,\"requests\":%d," \
		    "\"bad\":%d}%s\n", p[1], p[2], p[3], median(k, "rps"),
		    median(k, "p50"), median(k, "p99"), median(k, "cpu"),
		    median(k, "becpu"), req[k], bad[k],
		    i < nk ? "," : "" >json
	}
	printf "  ],\n  \"ratios\": {\n" >json
	jratio("call_c32_rps_vmcpd_over_nginx", r_tv_n)
	jratio("call_c32_rps_vmcpd_over_direct", r_tv_d)
	jratio("call_c32_rps_nginx_over_direct", r_tn_d)
	printf "    \"call_c1_added_p50_us_vmcpd\": %.1f,\n", add_v >json
	printf "    \"call_c1_added_p50_us_nginx\": %.1f,\n", add_n >json
	jratio("call_c1_added_p50_vmcpd_over_nginx", r_lv_n)
	jratio("call_c1_p50_vmcpd_over_direct", r_p50_vd)
	jratio("call_c1_p50_nginx_over_direct", r_p50_nd)
	jratio("call_c32_cpu_per_req_vmcpd_over_nginx", r_cpu_vn)
	jratio("call_c1_cpu_per_req_vmcpd_over_nginx", r_cpu1_vn)
	jratio("call_c32_cpu_per_req_sse_over_json", r_sse32)
	jratio("call_c1_cpu_per_req_sse_over_json", r_sse1)
	jratio("list_c32_rps_vmcpd_ab_over_direct", r_list_vab_d)
	jratio("list_c32_rps_vmcpd_over_direct", r_list_v_d)
	jratio("list_c32_rps_nginx_over_direct", r_list_n_d)
	jratio("mcall_c32_rps_vmcpd_over_nginx", mt_vn)
	jratio("mcall_c32_rps_vmcpd_over_direct", mt_vd)
	jratio("mcall_c1_added_p50_vmcpd_over_nginx", ratio(madd_v, madd_n))
	jratio("mlist_c32_rps_vmcpd_over_nginx", ml_vn)
	jratio("mlist_c32_rps_vmcpd_over_direct", ml_vd, 1)
	printf "  },\n  \"targets\": {\n" >json
	printf "    \"call_c32_rps_vmcpd_ge_nginx\": %s,\n",
	    ok_t ? "true" : "false" >json
	printf "    \"call_c1_added_p50_vmcpd_le_1_2x_nginx\": %s\n",
	    ok_l ? "true" : "false" >json
	printf "  },\n  \"runs\": [\n" >json
	for (i = 1; i <= nrow; i++)
		printf "    %s%s\n", row[i], i < nrow ? "," : "" >json
	printf "  ]\n}\n" >json
}' "$results" || failed=1
echo "bench: results in $out/results.json"

if [ "$failed" != 0 ]; then
	echo "bench: FAILED (see above)" >&2
	exit 1
fi
exit 0
