#!/usr/bin/env bash
# The test command: installs what is missing (Debian packages, a venv with the pip h5py wheel),
# builds, runs ctest, the libFuzzer targets for FUZZ_SECONDS each (default 20), then the pytest
# suite under Debian's python3-h5py (HDF5 1.10) and under the pip h5py wheel (its own HDF5 2.x),
# with the same plugin file. Ends with one line
# "N passed, M failed" over everything; exits non-zero if anything failed.
#
# usage: bash scripts/test.sh            (build directory: build/, or $BUILD)
#   H5ZGPU_CUDA=AUTO|ON|OFF picks the CUDA backend (default AUTO); H5ZGPU_DEVICE is passed through.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(mkdir -p "${BUILD:-$ROOT/build}" && cd "${BUILD:-$ROOT/build}" && pwd)
. "$ROOT/scripts/lib.sh"
export PIP_DISABLE_PIP_VERSION_CHECK=1

passed=0 failed=0 lines=()

# record LABEL JUNIT_XML EXIT_STATUS: adds a stage's counts. A stage that failed without a
# failing test in its report (it crashed, or never started) counts as one failure.
record() {
  local counts p=0 f=0 s=0
  if [ -s "$2" ] && counts=$(/usr/bin/python3 - "$2" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
t = f = s = 0
for x in suites:
    t += int(x.get("tests", 0))
    f += int(x.get("failures", 0)) + int(x.get("errors", 0))
    s += int(x.get("skipped", 0)) + int(x.get("disabled", 0))
print(t - f - s, f, s)
PY
  ); then
    read -r p f s <<<"$counts"
  fi
  [ "$3" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  passed=$((passed + p)) failed=$((failed + f))
  lines+=("$(printf '%-58s %5d passed, %d failed, %d skipped' "$1" "$p" "$f" "$s")")
}

summary() {
  say "summary"
  printf '%s\n' "${lines[@]}"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

run_pytest() {  # LABEL PYTHON JUNIT
  say "$1"
  (cd "$ROOT" && HDF5_PLUGIN_PATH="$BUILD/plugin" H5ZGPU_BIN="$BUILD/bin/h5zgpu" \
     "$2" -m pytest python_tests -p no:cacheprovider -rfEs --tb=short --junitxml="$3")
  record "$1" "$3" $?
}

hdf5_of() {  # PYTHON -> "h5py X, HDF5 Y"
  "$1" -c 'import h5py; print(f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}")'
}

ensure_packages build-essential cmake libhdf5-dev hdf5-tools python3-h5py python3-numpy \
  python3-pytest python3-venv openmpi-bin libopenmpi-dev libhdf5-openmpi-dev netcdf-bin \
  libnetcdf-dev libfftw3-dev python3-matplotlib

rm -f "$BUILD"/junit-*.xml
if ! build_project; then
  record "build" /dev/null 1
  summary
  exit 1
fi

say "ctest"
(cd "$BUILD" && ctest --output-on-failure --no-tests=error -j "$(nproc)" \
   --output-junit "$BUILD/junit-ctest.xml")
record "ctest" "$BUILD/junit-ctest.xml" $?

# libFuzzer targets (clang, ASan + UBSan) for a bounded time each; a row per target, crashes last
fuzz_seconds=${FUZZ_SECONDS:-20}
say "fuzzing, $fuzz_seconds s per target"
FUZZ_SECONDS=$fuzz_seconds FUZZ_BUILD="$BUILD/fuzz" bash "$ROOT/test/fuzz/run_fuzzers.sh" \
  | tee "$BUILD/fuzz.txt"
fuzz_rc=${PIPESTATUS[0]}
read -r fp ff < <(awk '$NF == "inputs" { if ($4 == "0") p++; else f++ } END { print p+0, f+0 }' \
  "$BUILD/fuzz.txt")
[ "$fuzz_rc" -ne 0 ] && [ "$ff" -eq 0 ] && ff=1
passed=$((passed + fp)) failed=$((failed + ff))
lines+=("$(printf '%-58s %5d passed, %d failed, %d skipped' "fuzzing ($fuzz_seconds s per target)" "$fp" "$ff" 0)")

run_pytest "pytest, Debian python3-h5py ($(hdf5_of /usr/bin/python3))" /usr/bin/python3 \
  "$BUILD/junit-pytest-debian.xml"

# The pip wheel in a venv, reused across runs; the helper installed as a user installs it, from
# a copy so that pip's build files stay out of the source tree.
venv=$BUILD/venv-wheel
say "venv with the pip h5py wheel: $venv"
# (xarray and h5netcdf for the netCDF recipes' test, matplotlib for check's and sweep's plots)
if ! "$venv/bin/python" \
     -c 'import h5py, numpy, pytest, setuptools, wheel, xarray, h5netcdf, matplotlib' \
     >/dev/null 2>&1; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" &&
    "$venv/bin/pip" install -q h5py numpy pytest setuptools wheel xarray h5netcdf matplotlib
fi
helper_src=$(mktemp -d)
if cp -r "$ROOT/python" "$helper_src/" &&
   "$venv/bin/pip" install -q --no-deps --no-build-isolation --force-reinstall \
     "$helper_src/python"; then
  run_pytest "pytest, pip wheel ($(hdf5_of "$venv/bin/python"))" "$venv/bin/python" \
    "$BUILD/junit-pytest-wheel.xml"
else
  record "pytest, pip wheel (venv setup failed)" /dev/null 1
fi
rm -rf "$helper_src"

# `pip wheel` of the repository root (the package with its plugin, library and command; CUDA left
# out here to keep CI short: H5ZGPU_WHEEL_CUDA=AUTO builds it in), installed into a fresh venv
# with the pip h5py wheel and into one with Debian's python3-h5py, each then run with no h5zgpu
# or HDF5 variable set.
say "pip wheel of the repository, installed into fresh venvs"
wheel_dir=$BUILD/wheel
rm -rf "$wheel_dir" "$BUILD"/venv-pip-*
if /usr/bin/python3 -m venv "$BUILD/venv-pip-build" &&
   CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$BUILD/venv-pip-build/bin/pip" wheel -q --no-deps \
     -w "$wheel_dir" --config-settings=cmake.define.H5ZGPU_CUDA="${H5ZGPU_WHEEL_CUDA:-OFF}" "$ROOT" \
     >"$BUILD/wheel.log" 2>&1; then
  for flavour in wheel debian; do
    v=$BUILD/venv-pip-$flavour
    if [ $flavour = wheel ]; then
      /usr/bin/python3 -m venv "$v" && "$v/bin/pip" install -q pytest "$wheel_dir"/h5zgpu-*.whl
    else   # Debian's h5py and numpy, and the wheel without its dependencies
      /usr/bin/python3 -m venv --system-site-packages "$v" &&
        "$v/bin/pip" install -q --no-deps "$wheel_dir"/h5zgpu-*.whl
    fi
    label="pytest, pip-installed package ($(hdf5_of "$v/bin/python" 2>/dev/null))"
    say "$label"
    (cd "$BUILD" && env -i PATH="$v/bin:/usr/bin:/bin" HOME="$HOME" "$v/bin/python" -m pytest \
       "$ROOT/test/python_package" -p no:cacheprovider -rfEs --tb=short \
       --junitxml="$BUILD/junit-package-$flavour.xml")
    record "$label" "$BUILD/junit-package-$flavour.xml" $?
  done
else
  tail -n 30 "$BUILD/wheel.log"
  record "pip wheel of the repository (log: $BUILD/wheel.log)" /dev/null 1
fi

summary
