#!/bin/sh
# deps.sh: install what building and testing vmcpd needs on Debian 12,
# only what is missing, then the npm test tooling from the lock file.
set -e
cd "$(dirname "$0")/.."

PKGS="build-essential pkg-config libevent-dev libjansson-dev liblmdb-dev
lmdb-utils libyaml-dev libssl-dev libcurl4-openssl-dev libcmocka-dev mandoc
clang libclang-rt-14-dev curl ca-certificates procps prometheus
libhiredis-dev redis-server haproxy chromium"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" || missing="$missing $p"
done
# any Node.js >= 18 will do; Debian's if there is none
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	missing="$missing nodejs npm"
fi
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	echo "deps: installing$missing"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
	    --no-install-recommends $missing
fi
node -e 'if (+process.versions.node.split(".")[0] < 18) {
	console.error("deps: Node.js >= 18 is required"); process.exit(1) }'
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
	npm ci --no-audit --no-fund
	touch node_modules
fi
echo "deps: ok"
