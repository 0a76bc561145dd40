#!/bin/sh
# embed.sh NAME FILE: print a C file defining NAME[] and NAME_len with
# FILE's bytes, NUL-terminated (no xxd needed).
set -e
name=$1
file=$2
echo '#include <stddef.h>'
echo "const char ${name}[] = {"
od -An -v -tx1 "$file" | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
echo '0x00 };'
echo "const size_t ${name}_len = sizeof(${name}) - 1;"
