# lib.sh: shared by direct.sh and through.sh (sourced, not run).
# Starts the fixture and vmcpd on 127.0.0.1, each in its own process
# group, and stops every group it started on exit.  Every wait is bounded.

root=$(cd "$(dirname "$0")/../.." && pwd) || exit 2
conf=$root/tests/conformance
groups=""		# process groups to kill on exit

# stop_group PID: SIGTERM the group led by PID, SIGKILL it after 10 s.
stop_group() {
	kill -TERM "-$1" 2>/dev/null || return 0
	i=0
	while kill -0 "-$1" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 100 ]; then
			echo "conformance: group $1 ignored SIGTERM," \
			    "killing it" >&2
			kill -KILL "-$1" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	# Reap it if it is our child (never blocks on a group already gone).
	wait "$1" 2>/dev/null
	return 0
}

cleanup() {
	for g in $groups; do
		stop_group "$g"
	done
	groups=""
}

# spawn LOG CMD...: run CMD in a new session (its own process group) with
# stdout and stderr to LOG; sets $spawned to its pid.
spawn() {
	log=$1
	shift
	setsid "$@" >"$log" 2>&1 </dev/null &
	spawned=$!
	groups="$groups $spawned"
	# setsid execs in place (the background child is no group leader), so
	# $! leads the new group; check rather than assume.
	i=0
	while [ "$(ps -o pgid= -p "$spawned" 2>/dev/null | tr -d ' ')" != \
	    "$spawned" ]; do
		i=$((i + 1))
		if [ $i -ge 50 ] || ! kill -0 "$spawned" 2>/dev/null; then
			echo "conformance: could not start $1" >&2
			return 1
		fi
		sleep 0.1
	done
}

# start_fixture DIR: start tests/conformance/fixture.mjs on a free port;
# sets $fixture_pid and $fixture_port.  Its output goes to DIR/fixture.log.
start_fixture() {
	spawn "$1/fixture.log" "${FIXTURE_NODE:-node}" "$conf/fixture.mjs" 0 ||
	    return 1
	fixture_pid=$spawned
	i=0
	fixture_port=""
	while [ -z "$fixture_port" ]; do
		fixture_port=$(sed -n '1s/^PORT \([0-9][0-9]*\)$/\1/p' \
		    "$1/fixture.log" 2>/dev/null)
		[ -n "$fixture_port" ] && break
		i=$((i + 1))
		if [ $i -ge 150 ] || ! kill -0 "$fixture_pid" 2>/dev/null; then
			echo "conformance: the fixture did not start:" >&2
			cat "$1/fixture.log" >&2
			return 1
		fi
		sleep 0.1
	done
}

# wait_http URL: until URL answers anything over HTTP (15 s at most).
wait_http() {
	i=0
	while ! curl -s -o /dev/null --max-time 2 "$1"; do
		i=$((i + 1))
		[ $i -ge 30 ] && return 1
		sleep 0.5
	done
}

# run_suite URL REVISION DIR: run.sh in a process group of its own, waited
# for in the background so that a signal to the caller runs its trap (and
# cleanup stops the suite) at once.  Returns run.sh's status.
run_suite() {
	setsid sh "$conf/run.sh" "$@" </dev/null &
	suite=$!
	groups="$groups $suite"
	wait "$suite"
}
