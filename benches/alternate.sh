#!/usr/bin/env bash
# Alternates whole commands run by run, so that each figure is taken in the
# same run as its anchor (openssl, sqlite3, sqldiff, an older build), and
# prints one line per run: label, wall s, user s, system s, peak RSS KiB.
#
#   benches/alternate.sh RUNS LABEL 'COMMAND' [LABEL 'COMMAND' ...] | sort
#
# Example (verify against one core of openssl, an old build against a new):
#   benches/alternate.sh 5 openssl 'openssl dgst -sha256 a.ndjson' \
#       old 'old/ndarc verify -q a.ndjson' new 'target/release/ndarc verify -q a.ndjson'
#
# Commands run under bash -c with their output discarded; a command's exit
# status is not checked (diff exits 1 when the archives differ).
set -u
if [ $# -lt 3 ] || [ $(( ($# - 1) % 2 )) -ne 0 ]; then
    echo "usage: $0 RUNS LABEL 'COMMAND' [LABEL 'COMMAND' ...]" >&2
    exit 2
fi
runs=$1
shift
args=("$@")
times=$(mktemp)
trap 'rm -f "$times"' EXIT
grep -m1 'model name' /proc/cpuinfo >&2 || true
for _ in $(seq "$runs"); do
    for ((i = 0; i < ${#args[@]}; i += 2)); do
        /usr/bin/time -o "$times" -f "${args[i]} %e %U %S %M" bash -c "${args[i + 1]}" >/dev/null 2>&1
        tail -n 1 "$times"
    done
done
