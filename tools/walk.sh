#!/bin/sh
# walk.sh [legacy | modern]: the worker/ files one tools/call goes
# through, in order, from the front to the backend and back: gdb, attached
# to the one worker of a vmcpd (era legacy or modern) before a mcp_echo
# backend, logs every worker/ function entered while one call is served
# (after a warm-up call) until the front's completion of the reply, and
# this prints the files in order (a file named once per stay, with the
# function entered) and how many stays returned to a file already left
# (issue 27's measure of a request's way through the worker).  Needs gdb;
# VMCPD_BIN: this binary (default build/vmcpd); KEEP=1 keeps the trace.
set -u
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
cd "$root" || exit 2
era=${1:-legacy}
command -v gdb >/dev/null || { echo "walk: no gdb" >&2; exit 2; }
# a build whose stacks are the source's: no tail calls, no inlining
# (build-walk/; VMCPD_BIN: another binary)
if [ -z "${VMCPD_BIN:-}" ]; then
	make -s BUILD=build-walk OPT='-O1 -g -fno-optimize-sibling-calls -fno-inline' \
	    build-walk/vmcpd >/dev/null || exit 2
fi
vmcpd=${VMCPD_BIN:-$root/build-walk/vmcpd}
make -s -f tests/bench/Makefile >/dev/null || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmcpd-walk.XXXXXX") || exit 2
pids=""
trap 'kill $pids 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
build/bench/mcp_echo -p 0 -n 2 >"$tmp/echo.log" 2>&1 &
pids="$pids $!"
until grep -q '^PORT ' "$tmp/echo.log" 2>/dev/null; do sleep 0.1; done
eport=$(sed -n '1s/^PORT //p' "$tmp/echo.log")
cat >"$tmp/vmcpd.yaml" <<EOC
daemon:
  listen: 127.0.0.1:0
  portFile: $tmp/port
  stateDir: $tmp/state
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
EOC
"$vmcpd" -d -f "$tmp/vmcpd.yaml" >"$tmp/vmcpd.log" 2>&1 &
pids="$pids $!"
i=0
until [ -s "$tmp/port" ]; do
	sleep 0.1
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$tmp/vmcpd.log" >&2; exit 1; }
done
port=$(cat "$tmp/port")
url=http://127.0.0.1:$port/mcp
hdr='-H Content-Type:application/json -H Accept:application/json,text/event-stream'
if [ "$era" = legacy ]; then
	sid=$(curl -s -D - -o /dev/null $hdr --data '{"jsonrpc":"2.0","id":1,
	    "method":"initialize","params":{"protocolVersion":"2025-11-25",
	    "capabilities":{},"clientInfo":{"name":"walk","version":"1"}}}' \
	    "$url" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([^[:space:]]*\).*/\1/p')
	curl -s -o /dev/null $hdr -H "Mcp-Session-Id: $sid" \
	    -H 'MCP-Protocol-Version: 2025-11-25' \
	    --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$url"
	call() {
		curl -s $hdr -H "Mcp-Session-Id: $sid" \
		    -H 'MCP-Protocol-Version: 2025-11-25' --data \
		    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}' \
		    "$url"
	}
else
	call() {
		curl -s $hdr -H 'MCP-Protocol-Version: 2026-07-28' \
		    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' --data \
		    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"walk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}' \
		    "$url"
	}
fi
i=0
until call | grep -q '"text":"hi"'; do	# the view built, the backend known
	sleep 0.2
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "walk: no answer: $(call)" >&2; exit 1; }
done
# the worker: its pid is in /healthz
wpid=$(curl -s "http://127.0.0.1:$port/healthz" |
    sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
[ -n "$wpid" ] || { echo "walk: no worker" >&2; exit 1; }
# every function defined in worker/: FILE:FUNCTION for gdb
nm -l --defined-only "$vmcpd" | awk '$2 ~ /^[tT]$/ && $4 ~ /\/worker\// {
	split($4, a, ":"); f = a[1]; sub(/.*\/worker\//, "worker/", f);
	print f ":" $3 }' | sort -u >"$tmp/funcs"
cat >"$tmp/walk.py" <<EOP
import gdb
log = open("$tmp/trace", "w")
def wfile(f):
	try:
		n = f.find_sal().symtab.filename
	except Exception:
		return '-'
	i = n.find('worker/')
	return n[i:] if i >= 0 else '-'
class B(gdb.Breakpoint):
	def stop(self):
		# the worker/ files of the callers, innermost first
		st = []
		f = gdb.newest_frame().older()
		while f is not None:
			st.append(wfile(f))
			f = f.older()
		log.write(self.location.split(':')[0] + ' ' +
		    self.location.split(':')[1] + ' ' + str(len(st)) + ' ' +
		    ','.join(st) + '\n')
		log.flush()
		return False
for l in open("$tmp/funcs"):
	try:
		B(l.strip(), internal=True)
	except Exception:
		pass
EOP
gdb -q -batch -p "$wpid" -ex "source $tmp/walk.py" -ex continue \
    >"$tmp/gdb.log" 2>&1 &
gpid=$!
pids="$pids $gpid"
sleep 3
until [ -e "$tmp/trace" ]; do sleep 0.2; done
sleep 2
: >"$tmp/trace.before"
cp "$tmp/trace" "$tmp/trace.before"
call >"$tmp/answer.txt"
sleep 1
grep -q '"text":"hi"' "$tmp/answer.txt" ||
    { echo "walk: no answer: $(cat "$tmp/answer.txt")" >&2; exit 1; }
tail -n +$(($(wc -l <"$tmp/trace.before") + 1)) "$tmp/trace" |
    awk 'done { exit } $2 == "front_on_complete" { done = 1 } { print }' \
    >"$tmp/walk"
# every function entered: a file named once per stay
awk '{ if ($1 != last) { n++; if (seen[$1]++) back++; print n ". " $1 " (" $2 ")"; last = $1 } }
	END { printf "%d stays in %d files, %d returns to a file already left\n", n, length(seen), back }' "$tmp/walk"
# the request's way: a function that enters no other file's function (an
# accessor: httpd_req_known(), worker_zalloc(), a counter's add) is left
# out; a file is doubled back to when it is entered again while none of
# its functions is on the stack, on the way out (until the backend's
# request is sent) or on the way back (from the backend's answer), but
# for the same file entered again from the event loop (an answer's head,
# then its body).  The recorders (process/counters.c, auth/audit.c:
# metrics and audit, written at several points as nginx's log phase
# reads them) are counted apart.
python3 - "$tmp/walk" <<'EOW'
import sys
RECORDERS = ('worker/process/counters.c', 'worker/auth/audit.c')
ev = []
for l in open(sys.argv[1]):
	p = l.split()
	ev.append((p[0], p[1], int(p[2]),
	    [x for x in (p[3].split(',') if len(p) > 3 else []) if x != '-']))
while ev and ev[0][1] not in ('httpd_on_accept', 'conn_on_read'):
	ev.pop(0)
# the loop's timers that fire meanwhile are not the request's
ev = [e for e in ev if not (e[1].endswith('_on_tick') and not e[3])]
def accessor(i):
	f, d = ev[i][0], ev[i][2]
	for g, _, e, _ in ev[i + 1:]:
		if e <= d:
			break
		if g != f:
			return False
	return True
way, seen, last, half, loopf = [], {}, None, 'out', None
back = {'out': [0, 0], 'back': [0, 0]}
for i, (f, fn, d, st) in enumerate(ev):
	if fn in ('backend_on_head', 'backend_on_data', 'upstream_on_raw') \
	    and half == 'out':
		half, seen, last = 'back', {}, None
		way.append('--- the backend answers ---')
	fromloop = not st
	cont = fromloop and f == loopf
	if fromloop:
		loopf = f
	if accessor(i) or f == last:
		continue
	again = f in seen and f not in st and not cont
	if again:
		back[half][f in RECORDERS] += 1
	seen[f] = 1
	way.append('%s %s (%s)' % ('<<' if again else '  ', f, fn))
	last = f
print('the way of the request (accessors left out):')
for w in way:
	print('  ' + w)
print('%d stays; doubled back to: out %d (+%d recorders), back %d (+%d '
    'recorders)' % (len([w for w in way if not w.startswith('---')]),
    back['out'][0], back['out'][1], back['back'][0], back['back'][1]))
EOW
