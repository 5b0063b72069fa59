#!/bin/sh
# expect: invalid_archive
# args: --runs 1
# Packs, then appends a byte after the closing line (trailing data).
"$NDARC" pack "$1" -o "$2" || exit 1
printf x >> "$2"
