#!/bin/sh
# expect: content_mismatch
# args: --runs 1
# A valid archive of the wrong content: every table excluded.
exec "$NDARC" pack "$1" --exclude-table "%" -o "$2"
