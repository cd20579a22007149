#!/usr/bin/env bash
# h5zgpu's fixed-length and Huffman codecs beside cuSZp v3 (plain and outlier modes), built
# from its public source in the same run, on the same fields and REL bounds, with the device's
# copy bandwidth: one markdown table on standard output.
#   bash bench/gpu/cuszp_side_by_side.sh CUSZP_SRC GPU_BENCH FIELD_DIR N
#   CUSZP_BUILD=DIR bash bench/gpu/cuszp_side_by_side.sh CUSZP_SRC --build-only
# CUSZP_SRC: cuSZp's source tree (scripts/device/fetch-cuszp.sh puts it in .cuszp);
# GPU_BENCH: h5zgpu's gpu_bench binary; FIELD_DIR: nyx_<field>.f32 of N^3 values
# (bench/gen_nyx_like.py). Both time
# device-resident data: gpu_bench the median of 10 calls, cuSZp's CLI one call after ten
# warm-ups, each compressing (decompressing) the whole field. Logs go to ${OUT:-./out}.
set -euo pipefail
src=${1:?CUSZP_SRC}; gpu_bench=${2:?GPU_BENCH}; dir=${3:-}; n=${4:-}
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cuSZp's CMakeLists pins architectures that CUDA 13 no longer builds: build for this card,
# in $CUSZP_BUILD when given (kept, and reused when its CLI is already there); CUSZP_ARCH
# (e.g. 90) where nvidia-smi cannot tell.
build=${CUSZP_BUILD:-$work/build}
find_cli() { find "$build" -type f -name cuSZp -perm -u+x 2>/dev/null | head -n 1; }
if [ -z "$(find_cli)" ]; then
  arch=${CUSZP_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)}
  arch=${arch//./}
  cp -r "$src" "$work/cuszp"
  sed -i "s/^set(CMAKE_CUDA_ARCHITECTURES .*)/set(CMAKE_CUDA_ARCHITECTURES $arch)/" \
    "$work/cuszp/CMakeLists.txt"
  cmake -S "$work/cuszp" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$OUT/cuszp-configure.log" 2>&1
  cmake --build "$build" -j "$(nproc)" --target cuSZp >"$OUT/cuszp-build.log" 2>&1
fi
cuszp=$(find_cli)
[ -x "$cuszp" ] || { echo "cuSZp's CLI was not built (see $OUT/cuszp-build.log)" >&2; exit 1; }
[ "$gpu_bench" = --build-only ] && exit 0

[ -n "$dir" ] && [ -n "$n" ] || { echo "FIELD_DIR and N are needed" >&2; exit 2; }
fields=(baryon_density dark_matter_density temperature velocity_x velocity_y velocity_z)
args=()
for f in "${fields[@]}"; do args+=("$dir/nyx_$f.f32" "$n,$n,$n"); done
"$gpu_bench" --codecs 1,2 --sweep 0 "${args[@]}" >"$OUT/h5zgpu.md"

: >"$OUT/cuszp.txt"
for f in "${fields[@]}"; do
  for eb in 1e-2 1e-3 1e-4; do
    for run in "plain 1" "plain 3" "outlier 3"; do
      set -- $run
      dims=$([ "$2" = 1 ] && echo 1 || echo "3 $n $n $n")
      printf '@ %s %s %s-%sD\n' "$f" "$eb" "$1" "$2" >>"$OUT/cuszp.txt"
      "$cuszp" -i "$dir/nyx_$f.f32" -t f32 -m "$1" -d $dims -eb rel "$eb" >>"$OUT/cuszp.txt" 2>&1 ||
        echo "exit $?" >>"$OUT/cuszp.txt"
    done
  done
done
python3 "$here/side_by_side.py" "$OUT/h5zgpu.md" "$OUT/cuszp.txt"
