#!/bin/sh
# expect: archive_left
# args: --runs 4
# Packs as ndarc does, but when pack refuses (run 3) leaves an empty file
# at the archive path while exiting non-zero.
"$NDARC" pack "$1" -o "$2" 2>/dev/null && exit 0
: > "$2"
exit 1
