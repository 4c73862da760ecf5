#!/usr/bin/env bash
# Builds and runs the GPU benchmark's harnesses (written by `cargo bench --bench gpu`
# into DIR, default target/gpu-bench) on an NVIDIA GPU, and prints the table:
#
#   case | variant | median and minimum device time | useful bandwidth | % of the
#   device's copy bandwidth measured in this run | speed-up over the case's first
#   variant | read-only-path loads in the SASS | whether the arrays end equal
#
# "Useful" bandwidth counts the fewest bytes the call must move (each array it
# reads once, each it writes once), so a variant that moves more than that shows
# as slower rather than as busier. Exit 0 when every variant built, ran and ended
# with its case's first variant's arrays; 1 otherwise; 0 with a notice where there
# is no nvcc or no GPU.
set -uo pipefail
dir=${1:-target/gpu-bench}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v nvcc >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu bench: no nvcc or no NVIDIA GPU here: nothing run"
    exit 0
fi
if [ ! -f "$dir/manifest.tsv" ]; then
    echo "gpu bench: $dir/manifest.tsv is missing: run \`cargo bench --bench gpu\` first" >&2
    exit 1
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | head -1)
nvcc_version=$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "gpu bench: $gpu; nvcc $nvcc_version; $(head -1 "$dir/manifest.tsv" | cut -f2)"

# nvcc for this machine's GPU (sm_90 where -arch=native is not understood).
build() {
    nvcc -O3 -arch=native -Xptxas -v -o "$2" "$1" >"$2.build.log" 2>&1 ||
        nvcc -O3 -arch=sm_90 -Xptxas -v -o "$2" "$1" >"$2.build.log" 2>&1
}

# Build everything at once (the machine's cores), run one at a time (timings).
build "$here/copy_bandwidth.cu" "$dir/copy_bandwidth" &
while read -r case variant harness useful; do
    case "$case" in \#*) continue ;; esac
    (cd "$dir" && build "$harness" "${harness%.cu}") &
done <"$dir/manifest.tsv"
wait

failed=0
copy=$("$dir/copy_bandwidth" | sed -n 's/.*gbps=\([0-9.]*\).*/\1/p')
if [ -z "$copy" ]; then
    echo "gpu bench: the copy-bandwidth probe failed" >&2
    exit 1
fi
echo "device-to-device copy: $copy GB/s (read + written)"
echo
printf '| %-10s | %-24s | %9s | %9s | %7s | %6s | %6s | %8s | %-6s |\n' case variant "median µs" "min µs" "GB/s" "% copy" "vs 1st" "nc loads" output
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------ -------------------------- ----------: ----------: ---------: --------: --------: ----------: --------
first_case=""
while read -r case variant harness useful; do
    case "$case" in \#*) continue ;; esac
    bin="$dir/${harness%.cu}"
    if [ ! -x "$bin" ]; then
        echo "| $case | $variant | build failed: see $bin.build.log |"
        sed 's/^/    /' "$bin.build.log" | tail -20
        failed=1
        continue
    fi
    line=$("$bin" 2>"$bin.run.log" | grep '^ALPINE_BENCH')
    if [ -z "$line" ]; then
        echo "| $case | $variant | run failed: $(head -c 300 "$bin.run.log") |"
        failed=1
        continue
    fi
    median=$(sed -n 's/.*median_us=\([0-9.]*\).*/\1/p' <<<"$line")
    min=$(sed -n 's/.*min_us=\([0-9.]*\).*/\1/p' <<<"$line")
    sum=$(sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' <<<"$line")
    if [ "$case" != "$first_case" ]; then
        first_case=$case
        ref_sum=$sum
        ref_median=$median
    fi
    if [ "$sum" = "$ref_sum" ]; then same=equal; else same=DIFFERS; failed=1; fi
    nc=$(cuobjdump -sass "$bin" 2>/dev/null | grep -c 'LDG.*CONSTANT')
    awk -v c="$case" -v v="$variant" -v med="$median" -v mn="$min" -v u="$useful" -v cp="$copy" -v ref="$ref_median" -v nc="$nc" -v s="$same" \
        'BEGIN { gbps = u / (med * 1e-6) / 1e9; printf "| %-10s | %-24s | %9.1f | %9.1f | %7.0f | %5.0f%% | %5.2f× | %8d | %-6s |\n", c, v, med, mn, gbps, 100 * gbps / cp, ref / med, nc, s }'
done <"$dir/manifest.tsv"
exit $failed
