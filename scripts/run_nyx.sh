#!/usr/bin/env bash
# The main job: build h5zgpu, generate the six Nyx-like fields (bench/gen_nyx_like.py), write them
# with filter 33900 into one HDF5 file (the Huffman codec, the densest, through h5zgpu.write: the
# fastest path), read them back, and print per field the ratio, write/read throughput and the
# largest error against the bound, and where it ran; then the same written uncompressed.
#
# usage: bash scripts/run_nyx.sh [N] [--codec huffman] [--mode rel] [--eb 1e-3] [--chunk 128]
#                                [--path bulk|filter]
#   N defaults to 512 where a GPU is usable, else 128. Build directory: build/, or $BUILD.
#   H5ZGPU_DEVICE=auto|cpu|gpu|gpu:N picks the executor; PYTHON picks the interpreter (one with
#   h5py and numpy; default Debian's /usr/bin/python3).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(mkdir -p "${BUILD:-$ROOT/build}" && cd "${BUILD:-$ROOT/build}" && pwd)
. "$ROOT/scripts/lib.sh"

n=
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
  n=$1
  shift
fi

ensure_packages build-essential cmake libhdf5-dev hdf5-tools python3-h5py python3-numpy
build_project
py=$(find_python) || { say "no Python with h5py and numpy (set PYTHON)"; exit 1; }

# The library's own answer, H5ZGPU_DEVICE included; a fallback at run time is reported on
# stderr (H5ZGPU_VERBOSE=1).
export H5ZGPU_VERBOSE=1
executor=$("$BUILD/bin/h5zgpu" --version | sed -n 's/^executor: //p')
[ -n "$n" ] || { [ "${executor%%:*}" = gpu ] && n=512 || n=128; }
"$BUILD/bin/h5zgpu" --version | head -n 1

data=$BUILD/nyx-$n
want=$((n * n * n * 4))
if [ "$(stat -c %s "$data/nyx_velocity_z.f32" 2>/dev/null || echo 0)" != "$want" ]; then
  say "generating the Nyx-like fields, $n^3, in $data"
  mkdir -p "$data"
  "$py" "$ROOT/bench/gen_nyx_like.py" "$data" "$n"
fi

say "writing and reading through h5py ($py)"
HDF5_PLUGIN_PATH="$BUILD/plugin" "$py" "$ROOT/examples/nyx_h5py.py" "$data" "$n" \
  --executor "$executor" "$@"
