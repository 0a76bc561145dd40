#!/bin/sh
# through.sh VMCPD_BIN [OUTDIR]: the gateway conformance test.  Starts the
# conformance fixture and vmcpd in front of it (one streamable-http
# backend, names not prefixed, everything on 127.0.0.1), runs the
# conformance suite against the fixture directly and through vmcpd, and
# compares the two with compare.mjs and
# tests/conformance/expected-failures-<revision>.txt.
#
# $CONFORMANCE_REQUIREMENTS picks the requirements set (default
# 2025-11-25).  $CONFORMANCE_BACKEND_ERA (auto, legacy or modern; default
# auto, so that vmcpd's probe finds the fixture speaks both revisions
# and meets the suite's client in its own) is the era: setting vmcpd
# gets for the fixture.  Pinned to the other era, the expected failures
# are those of expected-failures-<revision>-via-<era>.txt: scenarios
# that cannot cross that cell of the era bridge, each with why.  At the
# default era the checks are compared too: every check SUCCESS directly
# must be SUCCESS through vmcpd, but those that
# expected-check-losses-<revision>.txt lists ("scenario check-id  # why").
# Results go to
# OUTDIR/{direct,through}-<revision>, with
# vmcpd.yaml, vmcpd.log and fixture.log beside them (default OUTDIR: a
# temporary directory, removed afterwards unless KEEP=1 or something
# failed).  Exits 0 only if every difference between the two runs is an
# expected failure, no expected failure is stale, and vmcpd survived.
set -u
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: tests/conformance/through.sh VMCPD_BIN [OUTDIR]" >&2
	exit 2
fi
vmcpd=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if [ ! -x "$vmcpd" ]; then
	echo "through.sh: $1 is not an executable (run make)" >&2
	exit 2
fi
rev=${CONFORMANCE_REQUIREMENTS:-2025-11-25}
case $rev in
2025-11-25)	own=legacy ;;
*)		own=modern ;;
esac
era=${CONFORMANCE_BACKEND_ERA:-auto}
checks=
case $era in
auto|$own)	expected=$conf/expected-failures-$rev.txt
		checks=$conf/expected-check-losses-$rev.txt ;;
legacy|modern)	expected=$conf/expected-failures-$rev-via-$era.txt ;;
*)	echo "through.sh: CONFORMANCE_BACKEND_ERA is auto, legacy or" \
	    "modern" >&2
	exit 2 ;;
esac
for f in "$expected" $checks; do
	if [ ! -f "$f" ]; then
		echo "through.sh: $f is missing" >&2
		exit 2
	fi
done
if [ $# -eq 2 ]; then
	out=$2
	keep=1
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/conformance-through.XXXXXX") || exit 2
	keep=${KEEP:-0}
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
fail() {
	echo "through.sh: $*; logs kept in $out" >&2
	exit 1
}

start_fixture "$out" || fail "the fixture did not start"
direct_url=http://127.0.0.1:$fixture_port/mcp
echo "fixture pid $fixture_pid at $direct_url"

# One backend under the name the scenarios expect: priority resolution
# leaves the names alone (the default, prefix, would rename every tool).
rm -rf "$out/state" "$out/port"
cat >"$out/vmcpd.yaml" <<EOF
name: vmcpd-conformance
daemon:
  listen: 127.0.0.1:0
  portFile: $out/port
  stateDir: $out/state
  workers: 2
backends:
  - name: fixture
    url: $direct_url
    transport: streamable-http
    era: $era
aggregation:
  conflictResolution: priority
  conflictResolutionConfig:
    priorityOrder: [fixture]
EOF
spawn "$out/vmcpd.log" "$vmcpd" -d -f "$out/vmcpd.yaml" ||
    fail "vmcpd did not start"
vmcpd_pid=$spawned
i=0
while ! grep -qx '[0-9][0-9]*' "$out/port" 2>/dev/null; do
	i=$((i + 1))
	if [ $i -ge 150 ] || ! kill -0 "$vmcpd_pid" 2>/dev/null; then
		tail -20 "$out/vmcpd.log" >&2
		fail "vmcpd wrote no port file"
	fi
	sleep 0.1
done
vmcpd_port=$(cat "$out/port")
wait_http "http://127.0.0.1:$vmcpd_port/healthz" ||
    fail "vmcpd does not answer /healthz"
through_url=http://127.0.0.1:$vmcpd_port/mcp
echo "vmcpd pid $vmcpd_pid at $through_url (fixture era: $era)"

rc=0
run_suite "$direct_url" "$rev" "$out/direct-$rev"
run_suite "$through_url" "$rev" "$out/through-$rev"
if [ "$(cat "$out/direct-$rev/status")" != 0 ]; then
	echo "through.sh: the direct run failed scored scenarios; the" \
	    "fixture or the suite is broken, not the gateway" >&2
	rc=1
fi
for p in $fixture_pid $vmcpd_pid; do
	if ! kill -0 "$p" 2>/dev/null; then
		echo "through.sh: process $p died during the run" >&2
		rc=1
	fi
done
# Stop both first: a sanitizer build reports leaks when it exits.
cleanup
if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
    "$out/vmcpd.log"; then
	echo "through.sh: sanitizer report in $out/vmcpd.log" >&2
	rc=1
fi
echo "direct $(cat "$out/direct-$rev/elapsed") s," \
    "through vmcpd $(cat "$out/through-$rev/elapsed") s"
node "$conf/compare.mjs" "$out/direct-$rev" "$out/through-$rev" \
    --expected-failures "$expected" \
    ${checks:+--expected-check-losses "$checks"} || rc=1

if [ $rc -eq 0 ] && [ "$keep" = 0 ]; then
	rm -rf "$out"
else
	echo "results kept in $out"
fi
exit $rc
