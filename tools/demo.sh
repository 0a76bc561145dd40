#!/bin/sh
# demo.sh: run vmcpd in the foreground on its embedded default config
# (127.0.0.1:4483, state in ./var) in front of server-everything, which
# this script starts on 127.0.0.1:3001 and stops again on exit.
set -e
cd "$(dirname "$0")/.."
BIN=${VMCPD_BIN:-build/vmcpd}

PORT=3001 node --require ./tests/lib/loopback.cjs \
    node_modules/@modelcontextprotocol/server-everything/dist/index.js \
    streamableHttp >var-demo-backend.log 2>&1 &
backend=$!
trap 'kill $backend 2>/dev/null; rm -f var-demo-backend.log' EXIT INT TERM
i=0
until curl -s -o /dev/null http://127.0.0.1:3001/mcp; do
	i=$((i + 1))
	if [ $i -gt 100 ]; then
		echo "demo: the demo backend did not start:" >&2
		cat var-demo-backend.log >&2
		exit 1
	fi
	sleep 0.1
done
echo "demo: server-everything on 127.0.0.1:3001; vmcpd on 127.0.0.1:4483/mcp"
echo "demo: stop with ^C"
"$BIN" -d
