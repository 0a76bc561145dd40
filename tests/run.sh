#!/bin/sh
# run.sh [unit|interop|conformance|man|fuzz|all]: run test suites and print one
# closing line "N passed, N failed".  "all" (make check) runs the unit
# and interop suites on the plain build and again on the ASan+UBSan
# build, lints the man pages, and gives each fuzzer a short run.
cd "$(dirname "$0")/.."
what=${1:-all}
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() {	# count LABEL PASSED FAILED
	echo "== $1: $2 passed, $3 failed"
	passed=$((passed + $2))
	failed=$((failed + $3))
}

run_unit() {	# run_unit BUILDDIR
	p=0
	f=0
	for t in "$1"/tests/test_*; do
		[ -x "$t" ] || continue
		if "$t" >"$tmp/out" 2>&1; then
			n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' \
			    "$tmp/out" | tail -1)
			p=$((p + ${n:-1}))
		else
			cat "$tmp/out"
			n=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' \
			    "$tmp/out" | tail -1)
			f=$((f + ${n:-1}))
			n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' \
			    "$tmp/out" | tail -1)
			p=$((p + ${n:-0}))
			echo "FAILED: $t"
		fi
	done
	count "unit tests ($1)" $p $f
}

run_interop() {	# run_interop BUILDDIR
	VMCPD_BIN=$1/vmcpd VMCPCTL_BIN=$1/vmcpctl sh tests/interop/run.sh \
	    >"$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tmp/out" | tail -1)
	f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tmp/out" | tail -1)
	p=${p:-0}
	f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# the runner failed without counting a test
	fi
	count "interop tests ($1)" "$p" "$f"
}

run_conformance() {	# run_conformance BUILDDIR
	# the fixture alone must pass; through vmcpd, every scenario that
	# passes directly must pass too (compare.mjs prints N passed/failed)
	if [ "$1" = build ]; then
		if sh tests/conformance/direct.sh >"$tmp/out" 2>&1; then
			count "conformance fixture (direct)" 1 0
		else
			cat "$tmp/out"
			count "conformance fixture (direct)" 0 1
		fi
	fi
	# each set at the default era: auto (the fixture speaks both, so
	# each client is met in its own), then across the bridge (the
	# fixture pinned to the other era)
	for run in 2025-11-25: 2026-07-28: 2025-11-25:modern \
	    2026-07-28:legacy; do
		rev=${run%%:*}
		era=${run#*:}
		CONFORMANCE_REQUIREMENTS=$rev CONFORMANCE_BACKEND_ERA=$era \
		    sh tests/conformance/through.sh \
		    "$1/vmcpd" >"$tmp/out" 2>&1
		rc=$?
		cat "$tmp/out"
		p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' \
		    "$tmp/out" | tail -1)
		f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' \
		    "$tmp/out" | tail -1)
		p=${p:-0}
		f=${f:-0}
		if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
		fi
		count "conformance $rev through vmcpd${era:+, fixture $era} ($1)" \
		    "$p" "$f"
	done
}

run_man() {
	if mandoc -T lint -W warning man/vmcpd.8 man/vmcpd.yaml.5 \
	    man/vmcpctl.8; then
		count "man page lint" 3 0
	else
		count "man page lint" 0 1
	fi
}

run_fuzz() {
	if make -s fuzz-smoke FUZZ_TIME=${FUZZ_TIME:-10} >"$tmp/out" 2>&1; then
		count "fuzz smoke" 1 0
	else
		cat "$tmp/out"
		count "fuzz smoke" 0 1
	fi
}

case $what in
unit)
	run_unit build
	;;
interop)
	run_interop build
	;;
conformance)
	run_conformance build
	;;
man)
	run_man
	;;
fuzz)
	run_fuzz
	;;
all)
	run_unit build
	run_man
	run_interop build
	run_conformance build
	if make -s SAN=1 all unit >"$tmp/san" 2>&1; then
		export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
		export UBSAN_OPTIONS=print_stacktrace=1
		run_unit build-san
		run_interop build-san
		run_conformance build-san
		unset ASAN_OPTIONS UBSAN_OPTIONS
	else
		cat "$tmp/san"
		count "sanitizer build" 0 1
	fi
	run_fuzz
	;;
*)
	echo "usage: tests/run.sh [unit|interop|conformance|man|fuzz|all]" >&2
	exit 2
	;;
esac
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
