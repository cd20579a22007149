#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, codec sources instrumented) and runs each for
# a bounded time, from a copy of its committed seed corpus. Prints executions, time and crashes per
# target; exits non-zero when any target crashes, leaks or fails to build.
#
#   bash test/fuzz/run_fuzzers.sh            # 30 s per target
#   FUZZ_SECONDS=300 bash test/fuzz/run_fuzzers.sh
#   FUZZ_BUILD=dir FUZZ_TARGETS="decode payload" bash test/fuzz/run_fuzzers.sh
# (filter, the HDF5 filter's decode entry, needs libhdf5-dev)
#
# Needs clang with libFuzzer: on Debian 12 the packages clang and libclang-rt-14-dev, installed
# here with apt-get when missing (root). Crashing inputs are kept in $FUZZ_BUILD/fuzz/crashes/;
# rerun one with: $FUZZ_BUILD/fuzz/fuzz_<target> <file>.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${FUZZ_SECONDS:-30}"
build="${FUZZ_BUILD:-$root/build-fuzz}"
targets="${FUZZ_TARGETS:-header decode payload roundtrip filter}"

have_libfuzzer() {
  command -v clang >/dev/null || return 1
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer,address,undefined - -o /dev/null 2>/dev/null
}
if ! have_libfuzzer; then
  echo "run_fuzzers: installing clang and libFuzzer (clang, libclang-rt-14-dev)"
  if [ "$(id -u)" -ne 0 ]; then
    echo "run_fuzzers: not root: install clang and libclang-rt-14-dev (Debian 12), then rerun" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
  have_libfuzzer || { echo "run_fuzzers: clang cannot link -fsanitize=fuzzer" >&2; exit 1; }
fi

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DH5ZGPU_CUDA=OFF -DH5ZGPU_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
for t in $targets; do
  cmake --build "$build" -j"$(nproc)" --target "fuzz_$t" >"$build/build.log" 2>&1 ||
    { cat "$build/build.log"; exit 1; }
done

export H5ZGPU_DEVICE=cpu
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fz="$build/fuzz"
rm -rf "$fz/crashes"
mkdir -p "$fz/crashes"
status=0
printf '%-10s %12s %8s %8s %s\n' target executions seconds crashes corpus
for t in $targets; do
  work="$fz/corpus-$t"
  rm -rf "$work"
  mkdir -p "$work"
  cp "$root/test/fuzz/corpus/$t/"* "$work/"
  extra=()
  case $t in header | decode | filter) extra=("$root/test/golden") ;; esac
  log="$fz/$t.log"
  rc=0
  "$fz/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$fz/crashes/$t-" "$work" "${extra[@]}" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  crashes=$(ls "$fz/crashes" | grep -c "^$t-" || true)
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1
  printf '%-10s %12s %8s %8s %s\n' "$t" "${execs:-?}" "${secs:-$seconds}" "$crashes" \
    "$(ls "$work" | wc -l) inputs"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    echo "run_fuzzers: $t failed (exit $rc); the end of $log:" >&2
    tail -40 "$log" >&2
  fi
done
exit $status
