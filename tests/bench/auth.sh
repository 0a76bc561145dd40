#!/bin/sh
# auth.sh (make bench runs it after scale.sh): what a bearer token on
# every request costs.  On 127.0.0.1 only: one mcp_echo backend, a
# static JWKS with one token (authidp.mjs), and two vmcpd (2 workers
# each) in front of the backend, one anonymous and one with
# incomingAuth oidc; wrk call.lua (tools/call, c=AUTH_CONNS, default 32)
# against each in turn, AUTH_ROUNDS times (default 3) of AUTH_SECONDS
# (default 10), the token on every oidc request (BENCH_AUTHORIZATION).
# Prints each run and the ratio of the medians (target: oidc >= 0.9x
# anonymous).  A figure is a measurement, not a test: only a broken step
# fails the run.  KEEP=1 keeps the temporary directory.  The scaffolding
# is ab.sh.
set -u
conns=${AUTH_CONNS:-32}
rounds=${AUTH_ROUNDS:-3}
secs=${AUTH_SECONDS:-10}
ab_name=authbench
. "$(dirname "$0")/ab.sh"

BENCH_IDP_SECONDS=$((rounds * secs * 2 + 60)) node "$bench/authidp.mjs" \
    >"$tmp/idp.log" 2>&1 &
pids="$pids $!"
await "$tmp/idp.log" '^TOKEN '
iss=$(sed -n 's/^ISS //p' "$tmp/idp.log")
token=$(sed -n 's/^TOKEN //p' "$tmp/idp.log")

start anon
start oidc "incomingAuth:
  type: oidc
  oidc:
    issuer: $iss
    jwksUrl: $iss/jwks
    audience: bench
    insecureAllowHttp: true
    jwksAllowPrivateIp: true"
compare anon oidc anonymous bearer bearer/anonymous 0.9 "Bearer $token"
