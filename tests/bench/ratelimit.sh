#!/bin/sh
# ratelimit.sh (make bench runs it after auth.sh): what a shared rate
# limit costs a tools/call (one LMDB write txn per call,
# shared/store_bucket.c).  On 127.0.0.1 only: one mcp_echo backend and
# two vmcpd (2 workers each) in front of it, one without rateLimiting
# and one with a shared bucket too large to refuse anything; wrk
# call.lua (tools/call, c=RL_CONNS, default 32) against each in turn,
# RL_ROUNDS times (default 3) of RL_SECONDS (default 10).  Prints each
# run and the ratio of the medians (target: limited >= 0.85x off).  A
# figure is a measurement, not a test: only a broken step fails the
# run.  KEEP=1 keeps the temporary directory.  The scaffolding is ab.sh.
set -u
conns=${RL_CONNS:-32}
rounds=${RL_ROUNDS:-3}
secs=${RL_SECONDS:-10}
ab_name=rlbench
. "$(dirname "$0")/ab.sh"

start off
start on "rateLimiting:
  shared: {maxTokens: 1000000000, refillPeriod: 1s}"
compare off on "no limit" "shared limit" "shared limit/no limit" 0.85
