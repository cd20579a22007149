#!/bin/sh
# valgrind memcheck over the CPU path: round trips (the round-trip fuzzer's corpus and a share of
# the property test), the decoder on valid, golden and damaged chunks. Any invalid read or write,
# use of uninitialised memory or definite leak fails the test. Exit 77 (ctest: skipped) when
# valgrind is not installed.
#   valgrind_test.sh BUILD_TEST_DIR SOURCE_TEST_DIR
set -u
bin="$1"
src="$2"
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind_test: skipped: valgrind is not installed (apt-get install valgrind)"
  exit 77
fi
export H5ZGPU_DEVICE=cpu
vg="valgrind -q --error-exitcode=99 --leak-check=full"
status=0
run() {
  echo "valgrind_test: $*"
  $vg "$@" || { echo "valgrind_test: FAILED: $*"; status=1; }
}
run "$bin/fuzz/fuzz_roundtrip_replay" "$src/fuzz/corpus/roundtrip"
run "$bin/fuzz/fuzz_decode_replay" "$src/fuzz/corpus/decode" "$src/golden"
run "$bin/fuzz/fuzz_payload_replay" "$src/fuzz/corpus/payload"
run "$bin/codec_corrupt"
run "$bin/concurrency/pool_test"
# every 37th case of the CI run: 37 is prime to every axis of the case space, so every
# generator, mode, bound, type and shape still occurs
run "$bin/property/property_test" small --stride 37
exit $status
