# lib.sh: shell helpers the bench scripts source (ab.sh, percall.sh).
# $bench_name prefixes messages ("bench" unless set); the processes in
# $pids are killed and $tmp removed on exit (kept with KEEP=1).

pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then
		echo "${bench_name:-bench}: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE

die() {
	echo "${bench_name:-bench}: $*" >&2
	exit 1
}

# await FILE RE [TENTHS]: until FILE has a line matching RE (TENTHS of a
# second at most, 50 unless given)
await() {
	i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le "${3:-50}" ] || die "$1: no '$2'"
		sleep 0.1
	done
}

# access_config ISS AUDIT: the config blocks of a deployment with every
# access control on (auth.sh's token from authidp.mjs at ISS): oidc,
# Cedar policies that read no argument (so tools/call keeps the hot
# paths), shared and per-user rate limits too large to refuse anything,
# and the audit log written to AUDIT
access_config() {
	cat <<EOC
incomingAuth:
  type: oidc
  oidc:
    issuer: $1
    jwksUrl: $1/jwks
    audience: bench
    insecureAllowHttp: true
    jwksAllowPrivateIp: true
  authz:
    type: cedar
    policies:
      - |
        permit(principal, action == Action::"call_tool", resource)
        when { principal.claim_sub == "bench" };
      - |
        forbid(principal, action == Action::"call_tool", resource)
        when { resource has destructiveHint && resource.destructiveHint };
rateLimiting:
  shared: {maxTokens: 1000000000, refillPeriod: 1s}
  perUser: {maxTokens: 1000000000, refillPeriod: 1s}
audit:
  enabled: true
  logFile: $2
EOC
}
