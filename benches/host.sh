#!/usr/bin/env bash
# Every row of the performance issue's table on this host, each figure
# taken beside its anchor in the same runs, so that a new host (another
# CPU vendor, another VM) is measured the same way as the last one:
#
#   cargo build --release -p ndarc -p ndarc-benches
#   benches/host.sh [DIR] [RUNS]
#
# DIR (default target/bench-data/host; a tmpfs such as /dev/shm keeps the
# disk out of the figures) holds the generated inputs, made once and
# reused: about 6 GB. RUNS (default 4) is the number of alternated runs.
# Needs openssl and sqlite3; sqldiff (Debian: sqlite3-tools) for the
# database rows, which are skipped without it. Takes 10-15 minutes on
# 2 cores.
#
# Prints the machine and the SHA-256 kernel, then for each row the runs
# (label, wall s, user s, system s, peak RSS KiB) and the ratios of the
# best runs to the anchor's; pack-bench and diff-bench print their own tables.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-target/bench-data/host}
runs=${2:-4}
bin=target/release
for b in ndarc pack-bench diff-bench; do
    if [ ! -x "$bin/$b" ]; then
        echo "build first: cargo build --release -p ndarc -p ndarc-benches" >&2
        exit 2
    fi
done
for t in openssl sqlite3; do
    command -v "$t" >/dev/null || { echo "$t is needed" >&2; exit 2; }
done
mkdir -p "$dir"
ndarc=$bin/ndarc
grep -m1 'model name' /proc/cpuinfo || true
echo "cores: $(nproc); $("$ndarc" --version)"

# Alternated runs of LABEL CMD pairs; then the best wall and the least CPU
# (user + system) of each, and their ratios to the first (the anchor); then
# the median walls and their ratios, and the anchor's spread (its slowest
# run over its fastest): a VM shared with noisy neighbours shows it there,
# and its best-run ratios are then less certain than the medians.
compare() {
    local out
    out=$(benches/alternate.sh "$runs" "$@" 2>/dev/null)
    echo "$out" | sort
    echo "$out" | awk '
        {
            cpu = $3 + $4
            if (!($1 in wall) || $2 < wall[$1]) wall[$1] = $2
            if (!($1 in slow) || $2 > slow[$1]) slow[$1] = $2
            if (!($1 in used) || cpu < used[$1]) used[$1] = cpu
            if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
            runs[$1, count[$1]++] = $2
        }
        function median(l,    k, i, j, t, v) {
            k = count[l]
            for (i = 0; i < k; i++) v[i] = runs[l, i]
            for (i = 1; i < k; i++)
                for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return k % 2 ? v[(k - 1) / 2] : (v[k / 2 - 1] + v[k / 2]) / 2
        }
        END {
            a = order[0]
            printf "best wall (CPU): %s %.2f s (%.2f s)", a, wall[a], used[a]
            for (i = 1; i < n; i++) {
                b = order[i]
                printf "; %s %.2f s (%.2f s) = %.2fx (CPU %.2fx)", b, wall[b], used[b],
                    wall[b] / (wall[a] > 0 ? wall[a] : 1), used[b] / (used[a] > 0 ? used[a] : 1)
            }
            printf "\n"
            m = median(a)
            printf "median wall: %s %.2f s", a, m
            for (i = 1; i < n; i++) {
                b = order[i]
                printf "; %s %.2f s = %.2fx", b, median(b), median(b) / (m > 0 ? m : 1)
            }
            printf "; %s spread %.2fx\n", a, slow[a] / (wall[a] > 0 ? wall[a] : 1)
        }'
}

rows=$dir/rows.ndjson
blob=$dir/blob.ndjson
[ -f "$rows" ] || "$ndarc" gen --shape narrow --rows 735000 --part-bytes 1M --seed 7 -o "$rows"
[ -f "$blob" ] || "$ndarc" gen --rows 100 --objects 100 --object-bytes 16M --seed 7 -o "$blob"

echo; echo "== verify, narrow rows ($(stat -L -c %s "$rows") bytes) against one core of openssl"
compare openssl "openssl dgst -sha256 $rows" verify "$ndarc verify -q $rows" verify-j1 "$ndarc verify -q -j1 $rows"
echo; echo "== verify, blob-heavy ($(stat -L -c %s "$blob") bytes) against openssl"
compare openssl "openssl dgst -sha256 $blob" verify "$ndarc verify -q $blob"
echo; echo "== verify - < /dev/zero (peak RSS against the 256 MiB manifest limit)"
/usr/bin/time -f "zero %e s, peak RSS %M KiB" "$ndarc" verify - </dev/zero >/dev/null 2>"$dir/zero.err" || true
tail -n 1 "$dir/zero.err"

echo; echo "== pack and unpack against SQLite's own tools (pack-bench)"
"$bin/pack-bench" --shape narrow --rows 1600000 --runs 2 --dir "$dir"
"$bin/pack-bench" --shape chinook --rows 1250000 --runs 2 --dir "$dir"
"$bin/pack-bench" --shape mixed --mib 256 --runs 2 --dir "$dir"
for db in "$dir"/pack-bench-narrow-1600000.db "$dir"/pack-bench-chinook-1250000.db "$dir"/pack-bench-256.db; do
    echo; echo "== pack to /dev/null against .dump to /dev/null, and unpack: $(basename "$db")"
    archive=${db%.db}.ndjson
    [ -f "$archive" ] || "$ndarc" pack "$db" -o "$archive"
    compare dump "sqlite3 $db .dump > /dev/null" pack "$ndarc pack $db -o - > /dev/null" \
        unpack "$ndarc unpack $archive -o $dir/unpacked.db --force"
    echo "archive: $(stat -L -c %s "$archive") bytes"
done
rm -f "$dir/unpacked.db"

echo; echo "== diff against sqldiff (1.2 M narrow rows)"
"$bin/diff-bench" --rows 1200000 --shape narrow --dir "$dir" --runs "$runs" --sqldiff
echo; echo "== diff -q of the 1 GB pair (6 M narrow rows)"
"$bin/diff-bench" --rows 6000000 --shape narrow --dir "$dir" --runs "$runs"
echo; echo "== diff -q, one side shuffled, against key order (CPU is user + system)"
"$bin/diff-bench" --rows 1200000 --shape narrow --dir "$dir" --runs 1 --shuffle >/dev/null
a=$dir/diff-narrow-1200000-a.ndjson
compare ordered "$ndarc diff -q $a $dir/diff-narrow-1200000-b.ndjson" \
    shuffled "$ndarc diff -q $a $dir/diff-narrow-1200000-b-shuffled.ndjson"
