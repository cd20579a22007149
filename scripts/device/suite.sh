#!/usr/bin/env bash
# On the GPU machine (the `device` tool), from the repository root, with .debs/ carried along
# (scripts/device/fetch-hdf5-debs.sh): what the GPU path must show, in two parts that each fit
# one call. Logs and tables go to $OUT.
#   bash scripts/device/suite.sh tests   build; ctest and pytest with H5ZGPU_DEVICE=gpu; CPU/GPU
#                                        identity on the Nyx-like fields; compute-sanitizer
#   bash scripts/device/suite.sh bench   kernel benchmark, ratio table, main job, property run
set -uo pipefail
part=${1:?tests or bench}
OUT=${OUT:-$PWD/out}
N=${N:-512}
B=$PWD/build-dev
DATA=/tmp/nyx$N
mkdir -p "$OUT"
eval "$(bash scripts/device/use-hdf5-debs.sh .debs)"
export H5ZGPU_APT=0 PYTHON=python3 H5ZGPU_VERBOSE=1
step() { printf '== %s\n' "$*"; }

step "build"
# Debian's HDF5 unpacked under /opt: its h5cc wrapper points at /usr, so FindHDF5 gets the paths
cmake -S . -B "$B" -DH5ZGPU_CUDA=ON -DHDF5_C_COMPILER_EXECUTABLE=/nonexistent \
  -DHDF5_C_INCLUDE_DIR="$HDF5_ROOT/include/hdf5/serial" \
  -DHDF5_hdf5_LIBRARY_RELEASE="$H5DEB_LIB/libhdf5.so" >"$OUT/configure.log" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" >"$OUT/build.log" 2>&1 ||
  { tail -n 30 "$OUT/configure.log" "$OUT/build.log"; exit 1; }
grep -E '^-- h5zgpu:' "$OUT/configure.log"
if [ ! -s "$DATA/nyx_velocity_z.f32" ]; then
  mkdir -p "$DATA"
  python3 bench/gen_nyx_like.py "$DATA" "$N" 11 >"$OUT/gen.log" 2>&1
fi
fields=()
for f in baryon_density dark_matter_density temperature velocity_x velocity_y velocity_z; do
  fields+=("$DATA/nyx_$f.f32" "$N,$N,$N")
done

case $part in
tests)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
  date -u +%FT%TZ | tee -a "$OUT/device.txt"
  step "ctest, H5ZGPU_DEVICE=gpu"
  (cd "$B" && H5ZGPU_DEVICE=gpu timeout 300 ctest -j 8 --output-on-failure) >"$OUT/ctest-gpu.log" 2>&1
  grep -E 'tests passed|Failed|Skipped' "$OUT/ctest-gpu.log"
  step "pytest, $(python3 -c 'import h5py; print("h5py", h5py.__version__, "HDF5", h5py.version.hdf5_version)'), H5ZGPU_DEVICE=gpu"
  HDF5_PLUGIN_PATH=$B/plugin H5ZGPU_BIN=$B/bin/h5zgpu H5ZGPU_DEVICE=gpu timeout 300 \
    python3 -m pytest python_tests -q -p no:cacheprovider >"$OUT/pytest-gpu.log" 2>&1
  tail -n 3 "$OUT/pytest-gpu.log"
  step "CPU/GPU identity, six Nyx-like fields at $N^3, REL 1e-2 1e-3 1e-4"
  timeout 300 "$B/test/gpu/gpu_identity" "${fields[@]}" >"$OUT/identity.log" 2>&1
  echo "exit $?"; tail -n 8 "$OUT/identity.log"
  step "compute-sanitizer memcheck"
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 3 "$B/test/gpu/gpu_identity" --small \
    >"$OUT/memcheck.log" 2>&1
  echo "exit $?"; tail -n 3 "$OUT/memcheck.log"
  ;;
bench)
  step "HDF5 tests (Debian's HDF5 1.10 tools), H5ZGPU_DEVICE=gpu"
  (cd "$B" && H5ZGPU_DEVICE=gpu timeout 120 ctest -R 'hdf5|plugin' --output-on-failure) \
    >"$OUT/ctest-hdf5-gpu.log" 2>&1
  grep -E 'tests passed|Failed' "$OUT/ctest-hdf5-gpu.log"
  step "kernel benchmark"
  timeout 240 "$B/bin/gpu_bench" "${fields[@]}" >"$OUT/bench.md" 2>&1
  echo "exit $?"; cat "$OUT/bench.md"
  step "ratio against cuSZp"
  H5ZGPU_DEVICE=gpu timeout 240 python3 bench/ratio_table.py "$B/bin/h5zgpu" "$DATA" "$N" \
    --out "$OUT/ratio.md" | tail -n 2
  step "main job"
  BUILD=$B timeout 240 bash scripts/run_nyx.sh "$N" >"$OUT/nyx.log" 2>&1
  echo "exit $?"; tail -n 10 "$OUT/nyx.log"
  step "property test, large, H5ZGPU_DEVICE=gpu"
  H5ZGPU_DEVICE=gpu timeout 200 "$B/test/property/property_test" large >"$OUT/property.log" 2>&1
  echo "exit $?"; tail -n 3 "$OUT/property.log"
  ;;
esac
