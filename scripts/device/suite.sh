#!/usr/bin/env bash
# On the GPU machine (the `device` tool), from the repository root, with .debs/ carried along
# (scripts/device/fetch-hdf5-debs.sh): what the GPU path must show, in four parts that each fit
# one call of at most 600 s (each step has its own timeout; the sum of a part's timeouts leaves
# about 2 minutes for a build on a fresh machine). Logs and tables go to $OUT; every step
# prints the seconds since the part began.
#   bash scripts/device/suite.sh tests     build; ctest (gpu_identity's synthetic and fill cases for
#                                          codecs 1, 2 and 0 included) and pytest with
#                                          H5ZGPU_DEVICE=gpu; compute-sanitizer on gpu_identity
#   bash scripts/device/suite.sh identity  CPU/GPU identity on the six Nyx-like fields at REL
#                                          1e-2 1e-3 1e-4, codec 1, then 2, then 0
#   bash scripts/device/suite.sh bench     HDF5 tests with Debian's tools; gpu_bench (codecs 1, 2
#                                          and 0, beside the copy bandwidths); ratio table
#   bash scripts/device/suite.sh bench2    main job through h5py; property run
#   bash scripts/device/suite.sh huffman   the Huffman codec's device evidence in one call: CPU/GPU
#                                          identity of codec 2 on the six fields, then gpu_bench
#                                          (codecs 1, 2, 0; ratios, GB/s, copy bandwidth)
#   bash scripts/device/suite.sh profile   per-kernel times (ncu, the card's own clocks) of codec 2
#                                          on velocity_x and baryon_density, one call per bound
#   bash scripts/device/suite.sh compare   gpu_bench of a baseline revision (.baseline/, made here by
#                                          scripts/device/make-baseline.sh REV and carried) and of
#                                          this tree, one after the other on the same card
#   bash scripts/device/suite.sh nyx       the nyx_writer runs of io alone
#   bash scripts/device/suite.sh sweep     h5zgpu sweep --pk 0.01 on each of the six fields (and
#                                          --kmax 64 on one), --psnr 80 on one: winners, seconds
#   bash scripts/device/suite.sh quality   the quality metrics: ctest quality_* (GPU against CPU),
#                                          compute-sanitizer; check of 512^3 pairs on the GPU and
#                                          on the CPU's cores (bench/check_times.py: seconds per
#                                          pattern, agreement); sweep --pk and --ssim on one field
#   bash scripts/device/suite.sh ratio     fixed ratio: ratio_test and golden with H5ZGPU_DEVICE=gpu,
#                                          gpu_identity --small (its fixed-ratio cases among them),
#                                          the dataset library's and h5zgpu.write's whole-selection
#                                          ratio from device buffers (h5_dataset_ratio_test,
#                                          test_ratio_mode.py with CuPy)
#   bash scripts/device/suite.sh ratio-bench  dataset_ratio (the library from a device buffer
#                                          beside the filter's per-chunk search and ABS) on the six
#                                          fields, velocity_x with NaN over half of it, and the
#                                          fixed-length codec on two; bench/ratio_targets.py
#                                          through h5py when RATIO_H5PY=1
#   bash scripts/device/suite.sh nan       velocity_x with NaN over half of it (bench/mask_nan.py):
#                                          CPU/GPU identity of codecs 1 and 2, then gpu_bench, and
#                                          the baseline's too where .baseline/ was carried
#   bash scripts/device/suite.sh wide      the fixed-length kernels' 64-bit positions (chunks of 2^31
#                                          elements or more) on every chunk: a build with
#                                          -DFL_POS32_MAX=0, then gpu_identity --small, golden,
#                                          codec_corrupt and codec_roundtrip on the GPU
#   bash scripts/device/suite.sh io        needs .debs-mpi/ too (fetch-mpi-debs.sh): the dataset
#                                          library's and nyx_writer's tests on the GPU, the device
#                                          batch API, test_bulk.py with CuPy; bulk_io.py; dataset_io
#                                          (whole fields through HDF5: uncompressed, filter,
#                                          library); nyx_writer on 1, 2, 4 ranks (one GPU each,
#                                          as many as the machine has), and the AMReX layout
set -uo pipefail
part=${1:?tests, identity, bench, bench2, huffman, profile, compare, sweep, quality, ratio, ratio-bench, wide, nan, nyx or io}
OUT=${OUT:-$PWD/out}
N=${N:-512}
B=$PWD/build-dev
DATA=/tmp/nyx$N
mkdir -p "$OUT"
eval "$(bash scripts/device/use-hdf5-debs.sh .debs)"
H5ZGPU_MPI_CMAKE_FLAGS=
if [ -d .debs-mpi ]; then   # OpenMPI and parallel HDF5 for nyx_writer and the MPI tests
  eval "$(bash scripts/device/use-mpi-debs.sh .debs-mpi)"
fi
export H5ZGPU_APT=0 PYTHON=python3 H5ZGPU_VERBOSE=1
step() { printf '== %s (at %d s)\n' "$*" "$SECONDS"; }

step "build"
# the quality part builds what it runs alone (a fresh machine's whole build takes minutes)
build_targets=
[ "$part" = quality ] && build_targets="--target h5zgpu quality_gpu quality_api"
[ "$part" = ratio ] && build_targets="--target h5zgpu_filter h5zgpu_shared ratio_test golden_test
  gpu_identity h5_dataset_test h5_dataset_ratio_test"
[ "$part" = ratio-bench ] && build_targets="--target h5zgpu_filter dataset_ratio"
[ "$part" = wide ] && build_targets="--target h5zgpu"
# FFTW3 for the power spectrum of check and sweep, where fetch-hdf5-debs.sh brought it
FFTW_FLAGS=
if [ -f "$HDF5_ROOT/include/fftw3.h" ]; then
  fftw_lib=$HDF5_ROOT/lib/x86_64-linux-gnu
  FFTW_FLAGS="-DH5ZGPU_FFTW_INCLUDE=$HDF5_ROOT/include -DH5ZGPU_FFTW_LIB=$fftw_lib/libfftw3.so
    -DH5ZGPU_FFTW_THREADS_LIB=$fftw_lib/libfftw3_threads.so"
fi
# Debian's HDF5 unpacked under /opt: its h5cc wrapper points at /usr, so FindHDF5 gets the paths
cmake -S . -B "$B" -DH5ZGPU_CUDA=ON -DHDF5_C_COMPILER_EXECUTABLE=/nonexistent \
  -DHDF5_C_INCLUDE_DIR="$HDF5_ROOT/include/hdf5/serial" \
  -DHDF5_hdf5_LIBRARY_RELEASE="$H5DEB_LIB/libhdf5.so" $H5ZGPU_MPI_CMAKE_FLAGS $FFTW_FLAGS \
  >"$OUT/configure.log" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" $build_targets >"$OUT/build.log" 2>&1 ||
  { tail -n 30 "$OUT/configure.log" "$OUT/build.log"; exit 1; }
grep -E '^-- h5zgpu:' "$OUT/configure.log"

# The six Nyx-like fields, made once per machine (the parts after `tests` need them).
fields=()
need_fields() {
  if [ ! -s "$DATA/nyx_velocity_z.f32" ]; then
    step "generate the Nyx-like fields, $N^3"
    mkdir -p "$DATA"
    python3 bench/gen_nyx_like.py "$DATA" "$N" 11 >"$OUT/gen.log" 2>&1
  fi
  for f in baryon_density dark_matter_density temperature velocity_x velocity_y velocity_z; do
    fields+=("$DATA/nyx_$f.f32" "$N,$N,$N")
  done
}

# nyx_writer on 1, 2 and 4 ranks (one GPU each, as many as the machine has) at N^3 in boxes
# of 128^3, each path; --verify at 256^3; the AMReX layout at three chunk sizes. Ranks are not
# bound to a core (mpirun's default binding leaves a rank's host threads one core).
nyx_writer_runs() {
  export HDF5_PLUGIN_PATH=$B/plugin
  gpus=$(nvidia-smi -L | wc -l)
  for np in 1 2 4; do
    [ "$np" -gt "$gpus" ] && break
    step "nyx_writer, $np rank(s), N=$N box 128, paths none, filter, direct"
    timeout 150 "$MPIRUN" -n "$np" --oversubscribe --bind-to none "$B/bin/nyx_writer" --n "$N" --box 128 \
      --out /dev/shm/nyx.h5 --path none,filter,direct 2>&1 | tee -a "$OUT/nyx_writer.txt"
  done
  step "nyx_writer --verify, $gpus ranks, N=256 box 64"
  timeout 100 "$MPIRUN" -n "$gpus" --oversubscribe --bind-to none "$B/bin/nyx_writer" --n 256 --box 64 \
    --out /dev/shm/nyx.h5 --path filter,direct --verify 2>&1 | tee -a "$OUT/nyx_writer.txt"
  for c in 1024 32768 262144; do
    step "nyx_writer --layout amrex, $gpus ranks, N=256 box 64, chunks of $c"
    timeout 100 "$MPIRUN" -n "$gpus" --oversubscribe --bind-to none "$B/bin/nyx_writer" --n 256 --box 64 \
      --out /dev/shm/nyx.h5 --layout amrex --chunk "$c" --path none,filter --verify 2>&1 |
      tee -a "$OUT/nyx_amrex.txt"
  done
  rm -f /dev/shm/nyx.h5
}

case $part in
tests)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
  date -u +%FT%TZ | tee -a "$OUT/device.txt"
  step "ctest, H5ZGPU_DEVICE=gpu"
  (cd "$B" && H5ZGPU_DEVICE=gpu timeout 330 ctest -j 8 --output-on-failure) >"$OUT/ctest-gpu.log" 2>&1
  grep -E 'tests passed|Failed|Skipped|\(Timeout\)' "$OUT/ctest-gpu.log"
  # every test's output, passing ones included: gpu_identity's case counts and coverage tally
  cp "$B/Testing/Temporary/LastTest.log" "$OUT/ctest-gpu-all.log"
  grep -E '^gpu_(identity|faults): |^property_test: [0-9]' "$OUT/ctest-gpu-all.log"
  step "pytest, $(python3 -c 'import h5py; print("h5py", h5py.__version__, "HDF5", h5py.version.hdf5_version)'), H5ZGPU_DEVICE=gpu"
  HDF5_PLUGIN_PATH=$B/plugin H5ZGPU_BIN=$B/bin/h5zgpu H5ZGPU_DEVICE=gpu timeout 90 \
    python3 -m pytest python_tests -q -p no:cacheprovider >"$OUT/pytest-gpu.log" 2>&1
  tail -n 3 "$OUT/pytest-gpu.log"
  # the Huffman kernels and, through auto, the fixed-length ones
  step "compute-sanitizer memcheck, gpu_identity --small --codecs 2,0"
  timeout 50 compute-sanitizer --tool memcheck --error-exitcode 3 "$B/test/gpu/gpu_identity" \
    --small --codecs 2,0 >"$OUT/memcheck.log" 2>&1
  echo "exit $?"; tail -n 3 "$OUT/memcheck.log"
  ;;
identity)
  need_fields
  # one run per codec, so that a timeout costs one codec's rows only; the CPU reference of
  # codec 2 and auto (which encodes with both codecs) take most of the time
  step "GPU stages against the CPU's, six Nyx-like fields at $N^3, REL 1e-2 1e-3 1e-4"
  timeout 150 "$B/test/gpu/gpu_stages" "${fields[@]}" >"$OUT/stages.log" 2>&1
  echo "exit $?"; tail -n 2 "$OUT/stages.log"; grep -m 5 FAIL "$OUT/stages.log"
  for c in 1 2 0; do
    step "CPU/GPU identity, codec $c, six Nyx-like fields at $N^3, REL 1e-2 1e-3 1e-4"
    timeout 150 "$B/test/gpu/gpu_identity" --codecs $c "${fields[@]}" >"$OUT/identity-$c.log" 2>&1
    echo "exit $?"; grep -E '^\| |checks' "$OUT/identity-$c.log"; grep -m 5 FAIL "$OUT/identity-$c.log"
  done
  ;;
bench)
  need_fields
  step "HDF5 tests (Debian's HDF5 1.10 tools), H5ZGPU_DEVICE=gpu"
  (cd "$B" && H5ZGPU_DEVICE=gpu timeout 60 ctest -R 'hdf5|plugin' --output-on-failure) \
    >"$OUT/ctest-hdf5-gpu.log" 2>&1
  grep -E 'tests passed|Failed' "$OUT/ctest-hdf5-gpu.log"
  step "kernel benchmark, codecs 1, 2, 0"
  timeout 240 "$B/bin/gpu_bench" --codecs 1,2,0 "${fields[@]}" >"$OUT/bench.md" 2>&1
  echo "exit $?"; cat "$OUT/bench.md"
  step "ratio against cuSZp"
  H5ZGPU_DEVICE=gpu timeout 180 python3 bench/ratio_table.py "$B/bin/h5zgpu" "$DATA" "$N" \
    --out "$OUT/ratio.md" | tail -n 2
  ;;
huffman)
  need_fields
  step "CPU/GPU identity, codec 2, six Nyx-like fields at $N^3, REL 1e-2 1e-3 1e-4"
  timeout 170 "$B/test/gpu/gpu_identity" --codecs 2 "${fields[@]}" >"$OUT/identity-2.log" 2>&1
  echo "exit $?"; grep -E '^\| |checks' "$OUT/identity-2.log"; grep -m 5 FAIL "$OUT/identity-2.log"
  step "kernel benchmark, codecs 1, 2, 0"
  timeout 240 "$B/bin/gpu_bench" --codecs 1,2,0 "${fields[@]}" >"$OUT/bench.md" 2>&1
  echo "exit $?"; cat "$OUT/bench.md"
  ;;
profile)
  need_fields
  step "kernel benchmark, codec 2"
  timeout 120 "$B/bin/gpu_bench" --codecs 2 --sweep 0 "${fields[@]}" >"$OUT/bench-2.md" 2>&1
  echo "exit $?"; cat "$OUT/bench-2.md"
  for f in velocity_x baryon_density temperature; do
    step "ncu, codec 2, $f"
    timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum \
      --print-summary per-kernel "$B/bin/gpu_bench" --repeat 1 --codecs 2 --sweep 0 \
      "$DATA/nyx_$f.f32" "$N,$N,$N" >"$OUT/ncu-$f.log" 2>&1
    echo "exit $?"
    # one line per kernel: its name and its average time over the 9 calls (3 bounds x 3)
    awk '/^  [a-z_]/ {name=($1 == "void" ? $2 : $1); sub(/\(.*/, "", name)}
         /gpu__time_duration.sum/ {printf "%-28s %8s %s\n", name, $NF, $(NF-3)}' \
      "$OUT/ncu-$f.log"
  done
  ;;
bench2)
  need_fields
  step "main job"
  BUILD=$B timeout 240 bash scripts/run_nyx.sh "$N" >"$OUT/nyx.log" 2>&1
  echo "exit $?"; tail -n 10 "$OUT/nyx.log"
  step "property test, large, H5ZGPU_DEVICE=gpu, four processes"
  # 430-480 s in one process (the CPU reference interpolates too), so four share the space
  for k in 0 1 2 3; do
    H5ZGPU_DEVICE=gpu timeout 400 "$B/test/property/property_test" large --stride 4 --first $k \
      >"$OUT/property-$k.log" 2>&1 &
  done
  rc=0; for k in 0 1 2 3; do wait -n || rc=$?; done
  echo "exit $rc"; tail -q -n 1 "$OUT"/property-?.log
  ;;
sweep)
  need_fields
  # one JSON at a time (the device tool returns 8 files a call): winners and seconds a try
  summary() { python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
for c, w in j["winners"].items():
    mine = [t for t in j["tries"] if t["codec"] == c]
    print(c, "none" if w is None else "REL %.3g ratio %.2f" % (w["eb"], w["ratio"]),
          "| %d tries, codec %.2f s, metrics %.2f s a try" % (len(mine),
          sum(t["codec_seconds"] for t in mine) / len(mine),
          sum(t["metrics_seconds"] for t in mine) / len(mine)))' "$1"; }
  for spec in baryon_density dark_matter_density temperature velocity_x velocity_y velocity_z \
      "velocity_x --kmax 64"; do
    set -- $spec
    step "sweep --pk 0.01 ${*:2}, $1"
    s0=$SECONDS
    timeout 90 "$B/bin/h5zgpu" sweep "$DATA/nyx_$1.f32" -t f32 -d "$N,$N,$N" --pk 0.01 "${@:2}" \
      --json >"$OUT/sweep.json" 2>"$OUT/sweep.err"
    echo "exit $? after $((SECONDS - s0)) s"
    summary "$OUT/sweep.json"
  done
  step "sweep --psnr 80 --codec huffman, velocity_x"
  timeout 90 "$B/bin/h5zgpu" sweep "$DATA/nyx_velocity_x.f32" -t f32 -d "$N,$N,$N" --psnr 80 \
    --codec huffman --json >"$OUT/sweep.json" 2>"$OUT/sweep.err"
  summary "$OUT/sweep.json"
  ;;
quality)
  nvidia-smi --query-gpu=name --format=csv,noheader; date -u +%FT%TZ
  step "ctest quality_api, quality_gpu"
  (cd "$B" && timeout 120 ctest -R '^quality' --output-on-failure) | tail -n 4
  "$B/test/gpu/quality_gpu" | tail -n 12
  step "compute-sanitizer on quality_gpu"
  timeout 200 compute-sanitizer --error-exitcode 9 "$B/test/gpu/quality_gpu" \
    >"$OUT/quality-sanitizer.log" 2>&1
  echo "exit $?"; grep -E 'ERROR SUMMARY|checks' "$OUT/quality-sanitizer.log"
  need_fields
  for f in velocity_x temperature; do
    step "$f: Huffman REL 1e-3 on the GPU, then check on the GPU and on $(nproc) cores"
    "$B/bin/h5zgpu" compress -i "$DATA/nyx_$f.f32" -o /tmp/q.h5zc -t f32 -d "$N,$N,$N" \
      --codec huffman --mode rel --eb 1e-3 | grep -E 'ratio|max abs'
    "$B/bin/h5zgpu" decompress -i /tmp/q.h5zc -o /tmp/q.f32 >/dev/null
    for dev in gpu cpu; do
      s0=$EPOCHREALTIME
      H5ZGPU_DEVICE=$dev timeout 200 "$B/bin/h5zgpu" check "$DATA/nyx_$f.f32" /tmp/q.f32 \
        -t f32 -d "$N,$N,$N" --json >"$OUT/check-$dev.json"
      echo "check on the $dev: exit $?, $(awk "BEGIN { print $EPOCHREALTIME - $s0 }") s for the command"
    done
    python3 bench/check_times.py "$OUT/check-gpu.json" "$OUT/check-cpu.json"
  done
  step "sweep --pk 0.01 --kmax 64, velocity_x (both codecs)"
  s0=$SECONDS
  timeout 150 "$B/bin/h5zgpu" sweep "$DATA/nyx_velocity_x.f32" -t f32 -d "$N,$N,$N" --pk 0.01 \
    --kmax 64 --json >"$OUT/sweep-pk.json" 2>"$OUT/sweep.err"
  echo "exit $? after $((SECONDS - s0)) s"
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j["tries"]
print("winners", {c: w and (w["eb"], w["ratio"]) for c, w in j["winners"].items()},
      "| %d tries, codec %.3f s, metrics %.3f s a try" % (len(t),
      sum(x["codec_seconds"] for x in t) / len(t), sum(x["metrics_seconds"] for x in t) / len(t)))' \
    "$OUT/sweep-pk.json"
  step "sweep --ssim 0.9999 --psnr 80 --codec huffman, velocity_x (metrics on the GPU)"
  s0=$SECONDS
  timeout 150 "$B/bin/h5zgpu" sweep "$DATA/nyx_velocity_x.f32" -t f32 -d "$N,$N,$N" \
    --ssim 0.9999 --psnr 80 --codec huffman --json >"$OUT/sweep.json" 2>"$OUT/sweep.err"
  echo "exit $? after $((SECONDS - s0)) s"
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t = j["tries"]
print("winner", j["winners"], "| %d tries, codec %.3f s, metrics %.3f s a try" % (len(t),
      sum(x["codec_seconds"] for x in t) / len(t), sum(x["metrics_seconds"] for x in t) / len(t)))' \
    "$OUT/sweep.json"
  ;;
ratio)
  nvidia-smi --query-gpu=name --format=csv,noheader; date -u +%FT%TZ
  step "ratio_test and golden on the GPU"
  H5ZGPU_DEVICE=gpu timeout 60 "$B/test/ratio_test" | tail -n 1
  H5ZGPU_DEVICE=gpu timeout 60 "$B/test/golden_test" test/golden | tail -n 1
  step "gpu_identity --small (fixed-ratio cases among them)"
  timeout 200 "$B/test/gpu/gpu_identity" --small >"$OUT/identity-small.log" 2>&1
  echo "exit $?"; grep -E 'cases|checks' "$OUT/identity-small.log"; grep -m 5 FAIL "$OUT/identity-small.log"
  step "h5_dataset_ratio_test and h5_dataset_test from device and host buffers, on the GPU"
  for t in h5_dataset_ratio_test h5_dataset_test; do
    (cd "$B/test" && HDF5_PLUGIN_PATH=$B/plugin timeout 60 ./$t device /dev/shm/dr-d.h5 |
      tail -n 8)
    (cd "$B/test" && HDF5_PLUGIN_PATH=$B/plugin H5ZGPU_DEVICE=gpu timeout 60 \
      ./$t host /dev/shm/dr-h.h5 | tail -n 1)
  done
  step "test_ratio_mode.py and test_bulk.py (h5zgpu.write from NumPy and CuPy) on the GPU"
  HDF5_PLUGIN_PATH=$B/plugin H5ZGPU_DEVICE=gpu timeout 120 \
    python3 -m pytest -q -rs -p no:cacheprovider python_tests/test_ratio_mode.py \
    python_tests/test_bulk.py 2>&1 | tail -n 12
  ;;
ratio-bench)
  nvidia-smi --query-gpu=name --format=csv,noheader; date -u +%FT%TZ
  need_fields
  for f in baryon_density dark_matter_density temperature velocity_x velocity_y velocity_z; do
    step "dataset_ratio $f, Huffman"
    HDF5_PLUGIN_PATH=$B/plugin timeout 90 "$B/bin/dataset_ratio" "$DATA/nyx_$f.f32" "$N" \
      /dev/shm/drb.h5 | tee -a "$OUT/dataset-ratio.md"
  done
  python3 bench/mask_nan.py "$DATA/nyx_velocity_x.f32" "$N" "$DATA/nyx_velocity_x_nan.f32"
  step "dataset_ratio velocity_x with NaN over half of it, Huffman"
  HDF5_PLUGIN_PATH=$B/plugin timeout 90 "$B/bin/dataset_ratio" "$DATA/nyx_velocity_x_nan.f32" \
    "$N" /dev/shm/drb.h5 | tee -a "$OUT/dataset-ratio.md"
  for f in temperature velocity_x; do
    step "dataset_ratio $f, fixed-length"
    HDF5_PLUGIN_PATH=$B/plugin timeout 90 "$B/bin/dataset_ratio" "$DATA/nyx_$f.f32" "$N" \
      /dev/shm/drb.h5 --codec fixed | tee -a "$OUT/dataset-ratio.md"
  done
  if [ "${RATIO_H5PY:-0}" = 1 ]; then
    step "bench/ratio_targets.py, the six fields at $N^3 through h5py, on the GPU"
    HDF5_PLUGIN_PATH=$B/plugin H5ZGPU_DEVICE=gpu timeout 330 python3 bench/ratio_targets.py \
      "$DATA" "$N" | tee "$OUT/ratio-targets.md"
  fi
  ;;
wide)
  W=$PWD/build-wide
  step "build with every fixed-length chunk on 64-bit positions (-DFL_POS32_MAX=0)"
  cmake -S . -B "$W" -DH5ZGPU_CUDA=ON -DCMAKE_CUDA_FLAGS=-DFL_POS32_MAX=0 \
    -DHDF5_C_COMPILER_EXECUTABLE=/nonexistent -DHDF5_C_INCLUDE_DIR="$HDF5_ROOT/include/hdf5/serial" \
    -DHDF5_hdf5_LIBRARY_RELEASE="$H5DEB_LIB/libhdf5.so" >"$OUT/wide-configure.log" 2>&1 &&
    cmake --build "$W" -j "$(nproc)" --target gpu_identity golden_test codec_corrupt \
      codec_roundtrip >"$OUT/wide-build.log" 2>&1 || { tail -n 30 "$OUT/wide-build.log"; exit 1; }
  step "gpu_identity --small --codecs 1,0, 64-bit positions"
  timeout 200 "$W/test/gpu/gpu_identity" --small --codecs 1,0 >"$OUT/wide-identity.log" 2>&1
  echo "exit $?"; grep -E 'cases|checks' "$OUT/wide-identity.log"; grep -m 5 FAIL "$OUT/wide-identity.log"
  step "golden, codec_corrupt, codec_roundtrip on the GPU, 64-bit positions"
  for t in "golden_test test/golden" codec_corrupt codec_roundtrip; do
    H5ZGPU_DEVICE=gpu timeout 100 $W/test/$t 2>&1 | tail -n 1
  done
  ;;
nan)
  need_fields
  python3 bench/mask_nan.py "$DATA/nyx_velocity_x.f32" "$N" "$DATA/nyx_velocity_x_nan.f32"
  step "CPU/GPU identity, codecs 1 and 2, NaN-masked velocity_x at $N^3, REL 1e-2 1e-3 1e-4"
  timeout 200 "$B/test/gpu/gpu_identity" --codecs 1,2 "$DATA/nyx_velocity_x_nan.f32" "$N,$N,$N" \
    >"$OUT/identity-nan.log" 2>&1
  echo "exit $?"; grep -E '^\| |checks' "$OUT/identity-nan.log"; grep -m 5 FAIL "$OUT/identity-nan.log"
  step "kernel benchmark, codecs 1 and 2, NaN-masked velocity_x"
  timeout 60 "$B/bin/gpu_bench" --codecs 1,2 --sweep 0 "$DATA/nyx_velocity_x_nan.f32" "$N,$N,$N" \
    | tee "$OUT/bench-nan.md"
  if [ -d .baseline ]; then   # the same on a baseline (make-baseline.sh REV), for before / after
    step "the baseline's gpu_bench (.baseline/: $(cat .baseline/REVISION)), NaN-masked velocity_x"
    cmake -S .baseline -B "$PWD/build-base" -DH5ZGPU_CUDA=ON >"$OUT/base-configure.log" 2>&1 &&
      cmake --build "$PWD/build-base" -j "$(nproc)" --target gpu_bench >"$OUT/base-build.log" 2>&1 &&
      timeout 60 "$PWD/build-base/bin/gpu_bench" --codecs 1,2 --sweep 0 \
        "$DATA/nyx_velocity_x_nan.f32" "$N,$N,$N" | tee "$OUT/bench-nan-base.md"
  fi
  ;;
compare)
  need_fields
  step "build the baseline's gpu_bench (.baseline/: $(cat .baseline/REVISION 2>/dev/null))"
  cmake -S .baseline -B "$PWD/build-base" -DH5ZGPU_CUDA=ON >"$OUT/base-configure.log" 2>&1 &&
    cmake --build "$PWD/build-base" -j "$(nproc)" --target gpu_bench >"$OUT/base-build.log" 2>&1 ||
    { tail -n 30 "$OUT/base-build.log"; exit 1; }
  step "gpu_bench, baseline"
  timeout 150 "$PWD/build-base/bin/gpu_bench" --codecs 1,2,0 --sweep 0 "${fields[@]}" \
    >"$OUT/bench-base.md" 2>&1
  echo "exit $?"
  step "gpu_bench, this tree"
  timeout 150 "$B/bin/gpu_bench" --codecs 1,2,0 --sweep 0 "${fields[@]}" >"$OUT/bench-tree.md" 2>&1
  echo "exit $?"
  python3 bench/compare_bench.py "$OUT/bench-base.md" "$OUT/bench-tree.md" | tee "$OUT/compare.md"
  ;;
io)
  need_fields
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
  date -u +%FT%TZ | tee -a "$OUT/device.txt"
  step "ctest: dataset library (host and device buffers), nyx_writer, MPI, examples"
  (cd "$B" && timeout 200 ctest -R 'hdf5_dataset|nyx_writer|hdf5_mpi|example' \
     --output-on-failure) >"$OUT/ctest-io.log" 2>&1
  grep -E 'Test +#|tests passed|Failed' "$OUT/ctest-io.log"
  cp "$B/Testing/Temporary/LastTest.log" "$OUT/ctest-io-all.log"
  grep -E '^h5_dataset_test: |nyx_writer_test: |values outside|differs' "$OUT/ctest-io-all.log"
  step "gpu_identity --small (the device batch API among it)"
  timeout 120 "$B/test/gpu/gpu_identity" --small >"$OUT/identity-small.log" 2>&1
  echo "exit $?"; tail -n 1 "$OUT/identity-small.log"; grep -m 5 FAIL "$OUT/identity-small.log"
  export HDF5_PLUGIN_PATH=$B/plugin
  step "pytest test_bulk.py ($(python3 -c 'import h5py; print("h5py", h5py.__version__)')), CuPy"
  H5ZGPU_BIN=$B/bin/h5zgpu timeout 120 python3 -m pytest python_tests/test_bulk.py -q -rs \
    -p no:cacheprovider >"$OUT/pytest-bulk.log" 2>&1
  tail -n 3 "$OUT/pytest-bulk.log"
  for f in velocity_x; do
    step "bulk_io.py $f (h5zgpu.write/read from NumPy and CuPy)"
    timeout 120 python3 bench/bulk_io.py "$DATA" "$N" --field "$f" 2>&1 | tee -a "$OUT/bulk_io.md"
  done
  for f in velocity_x temperature; do
    for spec in "huffman 64" "fixed 64" "huffman 128"; do
      set -- $spec
      step "dataset_io $f, codec $1, chunks $2^3"
      timeout 90 "$B/bin/dataset_io" "$DATA/nyx_$f.f32" "$N" /dev/shm/dio.h5 --codec "$1" \
        --chunk "$2" 2>&1 | tee -a "$OUT/dataset_io.txt"
    done
  done
  rm -f /dev/shm/dio.h5
  nyx_writer_runs
  ;;
nyx)
  nyx_writer_runs
  ;;
*)
  echo "suite.sh: part '$part' is not one of tests, identity, bench, bench2, huffman, profile," \
    "compare, sweep, quality, ratio, wide, nan, io, nyx" >&2
  exit 2
  ;;
esac
step "done"
