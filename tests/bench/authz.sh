#!/bin/sh
# authz.sh (make bench runs it after ratelimit.sh): what every access
# control together costs a tools/call: a bearer token (incomingAuth
# oidc), Cedar policies that read no argument (so the call keeps the hot
# paths, deciding off the params' text), shared and per-user rate
# limits too large to refuse anything, and the audit log (lib.sh's
# access_config).  On 127.0.0.1 only, no network: one mcp_echo backend,
# a static JWKS with one token (authidp.mjs, an RSA key made at start,
# the token good for an hour), and two vmcpd (2 workers each) in front
# of the backend, one anonymous and policy-free, one with all of it;
# wrk call.lua (2025-11-25) then mcall.lua (2026-07-28), c=AZ_CONNS
# (default 32), against each in turn, AZ_ROUNDS times (default 3) of
# AZ_SECONDS (default 10).  Prints each run, the ratio of the medians
# (target: >= 0.85x anonymous) and each vmcpd's CPU per call, steadier
# than the rates on a shared machine; at the end a summary line per
# revision: the rate ratio against its target, and the CPU ratio
# (anonymous / all-on CPU per call: the rate ratio a run bound by
# vmcpd's CPU alone would show).  A figure is a measurement, not a
# test: only a broken step fails the run.  KEEP=1 keeps the temporary
# directory.  The scaffolding is ab.sh.
set -u
conns=${AZ_CONNS:-32}
rounds=${AZ_ROUNDS:-3}
secs=${AZ_SECONDS:-10}
ab_name=authzbench
. "$(dirname "$0")/ab.sh"

BENCH_IDP_SECONDS=$((rounds * secs * 4 + 120)) node "$bench/authidp.mjs" \
    >"$tmp/idp.log" 2>&1 &
pids="$pids $!"
await "$tmp/idp.log" '^TOKEN '
iss=$(sed -n 's/^ISS //p' "$tmp/idp.log")
token=$(sed -n 's/^TOKEN //p' "$tmp/idp.log")

start anon
mkdir -p "$tmp/authz"
start authz "$(access_config "$iss" "$tmp/authz/audit.jsonl")"

# cpu NAME: the vmcpd's CPU microseconds per call over the last compare
cpu() {
	awk -v hz="$(getconf CLK_TCK)" 'FNR == NR { r += $1; next }
	    { c += $1 } END { printf "%.1f", (r > 0 ? c * 1e6 / hz / r : 0) }' \
	    "$tmp/$1.req" "$tmp/$1.cpu"
}

: >"$tmp/summary"
for ab_script in call mcall; do
	: >"$tmp/anon.req"
	: >"$tmp/anon.cpu"
	: >"$tmp/authz.req"
	: >"$tmp/authz.cpu"
	rev=2025-11-25
	[ $ab_script = mcall ] && rev=2026-07-28
	echo "$rev tools/call, c=$conns:"
	compare anon authz anonymous "oidc+cedar+limits+audit" \
	    "$rev authz/anonymous" 0.85 "Bearer $token" >"$tmp/compare.txt"
	cat "$tmp/compare.txt"
	ca=$(cpu anon)
	cz=$(cpu authz)
	echo "$rev CPU per call: anonymous $ca us, oidc+cedar+limits+audit" \
	    "$cz us"
	# the rate ratio a run bound by vmcpd's CPU alone would show
	awk -v rev="$rev" -v a="$ca" -v z="$cz" -v r="$(sed -n \
	    's/.*(medians): \([0-9.]*\).*/\1/p' "$tmp/compare.txt")" 'BEGIN {
		ok = (r >= 0.85) ? "met" : "missed"
		c = (z > 0) ? a / z : 0
		printf "%s: rate ratio %s (target >= 0.85: %s); CPU per " \
		    "call %.1f -> %.1f us, CPU ratio anonymous/all-on %.2f\n",
		    rev, r, ok, a, z, c }' >>"$tmp/summary"
done
[ -s "$tmp/authz/audit.jsonl" ] || die "no audit line written"
echo "summary (all access control on vs anonymous, tools/call c=$conns):"
cat "$tmp/summary"
