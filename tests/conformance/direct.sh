#!/bin/sh
# direct.sh [OUTDIR]: start the conformance fixture on a free loopback
# port, run the conformance suite against it directly for both
# requirements sets (2025-11-25, then 2026-07-28), stop it, and print each
# run's per-scenario table.  Results go to OUTDIR/direct-<revision>
# (default: a temporary directory, removed afterwards unless KEEP=1 or a
# run failed).  Exits 0 only if every scored scenario of both sets passed.
set -u
. "$(dirname "$0")/lib.sh"

if [ $# -gt 1 ]; then
	echo "usage: tests/conformance/direct.sh [OUTDIR]" >&2
	exit 2
fi
if [ $# -eq 1 ]; then
	out=$1
	keep=1
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/conformance-direct.XXXXXX") || exit 2
	keep=${KEEP:-0}
fi
mkdir -p "$out" || exit 2
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

if ! start_fixture "$out"; then
	echo "direct.sh: logs kept in $out" >&2
	exit 1
fi
url=http://127.0.0.1:$fixture_port/mcp
echo "fixture pid $fixture_pid at $url"

rc=0
for rev in 2025-11-25 2026-07-28; do
	dir=$out/direct-$rev
	run_suite "$url" "$rev" "$dir" || rc=1
	node "$conf/compare.mjs" --show "$dir" || rc=1
	echo "direct $rev: $(cat "$dir/elapsed") s"
done
if ! kill -0 "$fixture_pid" 2>/dev/null; then
	echo "direct.sh: the fixture died during the run:" >&2
	tail -20 "$out/fixture.log" >&2
	rc=1
fi
cleanup

if [ $rc -eq 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$out"
else
	echo "results kept in $out"
fi
exit $rc
