#!/bin/sh
# demo.sh: run vmcpd in the foreground on its embedded default config:
# 127.0.0.1:4483, state in ./var, and two real MCP servers from the
# project's npm dependencies (server-everything, server-memory) that
# vmcpd runs itself over stdio.
set -e
cd "$(dirname "$0")/.."
mkdir -p var
echo "demo: vmcpd on http://127.0.0.1:4483/mcp; stop with ^C"
exec "${VMCPD_BIN:-build/vmcpd}" -d
