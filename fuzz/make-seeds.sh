#!/usr/bin/env bash
# Regenerates the committed seed corpora in fuzz/seeds/<target>/ from
# testdata/ (and a few hand-made structure-aware inputs). Run from anywhere:
#
#   fuzz/make-seeds.sh
#
# Seeds are named by the SHA-1 of their content (as libFuzzer names corpus
# files), so re-running is idempotent and duplicates collapse.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seeds="$root/fuzz/seeds"
testdata="$root/testdata"

# put TARGET < bytes: one seed file named by content.
put() {
    local dir="$seeds/$1" tmp sum
    mkdir -p "$dir"
    tmp="$(mktemp)"
    cat >"$tmp"
    sum="$(sha1sum "$tmp" | cut -d' ' -f1)"
    mv "$tmp" "$dir/$sum"
    chmod 644 "$dir/$sum"
}

# put_dir TARGET DIR: move every file of DIR in, named by content.
put_dir() {
    local dir="$seeds/$1" sum f
    mkdir -p "$dir"
    find "$2" -type f -exec sha1sum {} + | while read -r sum f; do
        mv "$f" "$dir/$sum"
        chmod 644 "$dir/$sum"
    done
}

export LC_ALL=C
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rm -rf "$seeds"
mkdir -p "$seeds"

# verify_archive: every conformance archive, valid and invalid.
for f in "$testdata"/valid/*.ndjson "$testdata"/invalid/*.ndjson; do
    put verify_archive <"$f"
done

# json_parse: each distinct line of the conformance archives (manifests,
# parts, closings: real records, canonical and not, and every JSON-level
# fault of the corpus), the sidecar notes, and number texts from the
# number vectors (every 4096th line).
mkdir -p "$work/json"
awk -v dir="$work/json" 'length($0) <= 4096 {
        f = sprintf("%s/%s-%d", dir, FILENAME, FNR); gsub("/", "_", f); f = dir "/" substr(f, length(dir) + 2)
        printf "%s", $0 > f; close(f)
    }' "$testdata"/valid/*.ndjson "$testdata"/invalid/*.ndjson
cp "$testdata"/invalid/*.json "$work/json/"
awk -F, -v dir="$work/json" 'NR % 4096 == 1 { f = dir "/n" NR; printf "%s", $2 > f; close(f) }' \
    "$testdata/json/numbers.csv"
put_dir json_parse "$work/json"
for t in '{}' '[]' '""' 'null' ' 1 ' '{"a":1,"a":2}' '"\ud800"' '1e400' '-0' '[1.0,1e21,1e-7]' \
    '{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}'; do
    printf '%s' "$t" | put json_parse
done

# canon_roundtrip: the input drives an Arbitrary value; any bytes do.
# Hand-made starts: scalars, a nested array, an object, and inputs whose
# first byte asks for deep nesting (>= 248: up to 66 levels).
for hex in '00 00' '00 02 02 41' '00 03 04 41 42 43 44' '00 04 03 00 01 02 03' \
    '00 05 03 05 61 62 63 02 00 05 61 00 01' 'f0 04 04 04 04 04 04 04 04 04 04 00' \
    'ff 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 04 01 00' \
    '00 05 04 05 02 e2 82 ac 01 05 01 0d 02 05 02 ef ac b3 03 05 04 f0 9f 98 80 00 ff ff ff ff ff ff ff ff ff ff'; do
    printf "$(printf '%s' "$hex" | sed 's/\([0-9a-f][0-9a-f]\) */\\x\1/g')" | put canon_roundtrip
done

# Structure-aware archive targets: first byte = shape (bit 7: small, else
# tiny) and seed (low bits mod 4); then options and edits.
for b in 00 01 02 03 80 81 82 83; do
    printf "\\x$b" | put verify_mutated
    printf "\\x$b\\x00" | put push_parts
    printf "\\x$b" | put diff
    printf "\\x$b" | put restore
done
# restore: the recipes of verify_mutated without its options byte, each
# re-sealed (the byte after the edits).
printf '\x00\x00\x10\x00\x00\x00\x03\x01' | put restore
printf '\x80\x09\x00\x01\x00\x00\x00\x08\x00\x00\x01' | put restore
# verify_mutated: a bit flip, a dropped line, a swapped pair, a truncation.
printf '\x00\x00\x00\x10\x00\x00\x00\x03' | put verify_mutated
printf '\x00\x00\x07\x00\x02\x00\x00' | put verify_mutated
printf '\x80\x01\x09\x00\x01\x00\x00\x00\x08\x00\x00' | put verify_mutated
printf '\x01\x02\x06\x00\x08\x00\x00' | put verify_mutated
# push_parts: reversed delivery with retries, a corrupted part, gaps.
printf '\x00\x00\x00\x05\x00\x04\x00\x04\x01\x05\x02\x01\x00\x00\x00' | put push_parts
printf '\x81\x10\x00\x00\x00\x01\x00\x02' | put push_parts
printf '\x02\xe0\x00\x00\x06\x01\x07\x02' | put push_parts
# diff: all rows changed, half removed, edits after.
printf '\x00\x05\x10\x08\x08\x01\x00\x00\x01\x00\x00\x00\x05' | put diff
printf '\x81\x09\x02\x02\x02\x00\x01\x07\x00\x10\x00\x00' | put diff

for d in "$seeds"/*/; do
    printf '%s: %s files, %s\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)" "$(du -sh "$d" | cut -f1)"
done
