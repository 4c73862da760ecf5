#!/usr/bin/env bash
# The interval test of `alpine scan` on a GPU (issue #36): every PVL prefix sum of
# examples/scan/ at every power of two from 2^4 to 2^11, and the seeded bugs of
# tests/scan/ that the interval test rejects, each run with `--gpu`: the kernel
# emitted as CUDA over the interval monoid (pairs of integers), built with nvcc
# and run once, next to the interpreter's run. Prints one line per run and a
# summary; exit 0 when every GPU run agrees with the interpreter (a barrier
# kernel larger than the device's block is reported, not counted as agreement).
#
#   bash benches/gpu/scan.sh [ALPINE]      (default target/release/alpine)
set -uo pipefail
alpine=${1:-target/release/alpine}
out=${OUT:-/tmp}/scan-gpu
mkdir -p "$out"
if ! command -v nvcc >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "scan gpu: no nvcc or no NVIDIA GPU here: nothing run"
    exit 0
fi
echo "scan gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

jobs=()
for n in 16 32 64 128 256 512 1024 2048; do
    for k in kogge_stone sklansky brent_kung; do jobs+=("examples/scan/$k.pvl --n $n"); done
    for k in blelloch kogge_stone_exclusive; do jobs+=("examples/scan/$k.pvl --n $n --exclusive"); done
    jobs+=("examples/scan/kogge_stone_max.pvl --n $n --op op")
done
for f in tests/scan/*.pvl; do
    grep -q '^//:: expect wrong' "$f" && jobs+=("$f $(sed -n 's/^\/\/:: scan //p' "$f")")
done

# One job: alpine's exit code, its GPU line (or the GPU diagnostic), its time.
run_one() {
    local alpine=$1 out=$2 i=$3
    shift 3
    local start=$EPOCHREALTIME
    # shellcheck disable=SC2086
    "$alpine" scan $* --gpu >"$out/$i.out" 2>"$out/$i.err"
    local rc=$?
    local secs=$(awk "BEGIN { print $EPOCHREALTIME - $start }")
    local line=$(grep -h -m1 -E 'GPU run|alpine::scan::gpu|--gpu:' "$out/$i.out" "$out/$i.err" | sed 's/^ *//')
    grep -q 'alpine::scan::gpu' "$out/$i.err" && line="DISAGREES: $line"
    printf '%s\trc=%s\t%.1fs\t%s\n' "$*" "$rc" "$secs" "$line"
}
export -f run_one
printf '%s\n' "${jobs[@]}" | nl -w1 -s' ' | xargs -P "$(nproc)" -L1 bash -c 'i=$1; shift; run_one "'"$alpine"'" "'"$out"'" "$i" "$@"' _ | sort >"$out/summary.tsv"
cat "$out/summary.tsv"
agree=$(grep -c 'gives the expected interval' "$out/summary.tsv")
wrong_seen=$(grep -c 'GPU run: the kernel emitted as CUDA ends with' "$out/summary.tsv")
differs=$(grep -c 'DISAGREES' "$out/summary.tsv")
echo "scan gpu: ${#jobs[@]} runs; $agree certified and agreed on the GPU; $wrong_seen seeded bugs also wrong on the GPU; $differs disagreements"
[ "$differs" -eq 0 ]
