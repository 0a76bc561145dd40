#!/bin/sh
# Run the interop suite (node --test) against build/vmcpd, or $VMCPD_BIN.
# Usage: tests/interop/run.sh [test files...]   (default: every *.test.mjs)
# Exits with node's status.  TEST_TIMEOUT: ms per file (default 120000);
# TEST_CONCURRENCY: files run at once (default 2: each file starts its own
# daemons on ports of its own, and most of a file's time is waiting).
set -u
cd "$(dirname "$0")/../.." || exit 2
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=0}"
export ASAN_OPTIONS
if [ ! -x "${VMCPD_BIN:-build/vmcpd}" ]; then
	echo "run.sh: ${VMCPD_BIN:-build/vmcpd} is not built (run make)" >&2
	exit 2
fi
if [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
	echo "run.sh: node_modules missing (run npm ci)" >&2
	exit 2
fi
if [ $# -eq 0 ]; then
	set -- tests/interop/*.test.mjs
fi
exec node --test --test-concurrency="${TEST_CONCURRENCY:-2}" \
    --test-timeout="${TEST_TIMEOUT:-120000}" "$@"
