#!/usr/bin/env bash
# Runs the seed producer's diffArchives (diff.mjs) on two archives, beside
# the shims of format.mjs and hash.mjs in this directory (the seed does not
# include them; see their headers), for the issue's Node comparison:
#
#   benches/node/run.sh SEED.txt A.ndjson B.ndjson
#
# SEED.txt is the producer's seed (../shared/seeds/002_*.txt); diff.mjs is
# taken from it at run time, not copied into the repository. Prints the
# diff's counts as JSON. Time it with /usr/bin/time -v or
# benches/alternate.sh against `ndarc diff -q A B`.
set -euo pipefail
if [ $# -ne 3 ]; then
    echo "usage: $0 SEED.txt A.ndjson B.ndjson" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/format.mjs" "$here/hash.mjs" "$work/"
# The file's lines follow its name, each prefixed by '+', after its hunk header.
awk '
    $0 == "package/modules/portability/diff.mjs" { on = 1; next }
    on && /^package\// { exit }
    on && /^\+/ { print substr($0, 2) }
' "$1" > "$work/diff.mjs"
grep -q "export async function diffArchives" "$work/diff.mjs" || {
    echo "$0: no diff.mjs with diffArchives in $1" >&2
    exit 2
}
cat > "$work/main.mjs" <<'JS'
import { diffArchives } from './diff.mjs';
const [a, b] = process.argv.slice(2);
const d = await diffArchives(a, b);
const n = (k) => d.tables.reduce((s, t) => s + t[k].length, 0);
console.log(JSON.stringify({ equal: d.equal, added: n('added'), removed: n('removed'), changed: n('changed'),
  objects: d.objects.changed.length, payloads: d.payloads.changed.length }));
JS
node --max-old-space-size=16384 "$work/main.mjs" "$2" "$3"
