# shellcheck shell=bash
# Shared by scripts/test.sh and scripts/run_nyx.sh (sourced, not run): package installation and
# the build. Expects ROOT (the repository) and BUILD (the build directory) to be set.

say() { printf '== %s\n' "$*"; }

# Installs the Debian packages among "$@" that are missing, quietly. Where apt cannot run (not
# root and no sudo, no network, not Debian) it says which are missing and goes on: the build
# and the tests then say precisely what is absent. H5ZGPU_APT=0 skips it (machines that have
# the tools by other means and no package access).
ensure_packages() {
  [ "${H5ZGPU_APT:-1}" = 0 ] && return 0
  command -v dpkg-query >/dev/null 2>&1 || { say "no dpkg: not installing $*"; return 0; }
  local missing=() p sudo=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  say "installing ${missing[*]}"
  # another apt or dpkg run holding the lock is waited for (up to 10 minutes), not failed on
  local wait=(-o DPkg::Lock::Timeout=600)
  if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" update -qq &&
         "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq \
           --no-install-recommends "${missing[@]}"; } >"${TMPDIR:-/tmp}/h5zgpu-apt.log" 2>&1; then
    say "warning: could not install ${missing[*]} (see ${TMPDIR:-/tmp}/h5zgpu-apt.log); going on"
  fi
}

# Configures and builds BUILD (CUDA AUTO unless H5ZGPU_CUDA says otherwise), showing the logs
# only when a step fails.
build_project() {
  mkdir -p "$BUILD"
  say "building in $BUILD (H5ZGPU_CUDA=${H5ZGPU_CUDA:-AUTO})"
  if ! cmake -S "$ROOT" -B "$BUILD" -DH5ZGPU_CUDA="${H5ZGPU_CUDA:-AUTO}" \
      >"$BUILD/configure.log" 2>&1; then
    tail -n 40 "$BUILD/configure.log"
    say "configure failed (log: $BUILD/configure.log)"
    return 1
  fi
  grep -E '^-- h5zgpu:' "$BUILD/configure.log" || true
  if ! cmake --build "$BUILD" -j "$(nproc)" >"$BUILD/build.log" 2>&1; then
    grep -E 'error|Error' "$BUILD/build.log" | head -n 40
    say "build failed (log: $BUILD/build.log)"
    return 1
  fi
}

# A Python with h5py and numpy: $PYTHON, else Debian's /usr/bin/python3, else python3 on PATH.
find_python() {
  local py
  for py in ${PYTHON:-} /usr/bin/python3 python3; do
    if "$py" -c 'import h5py, numpy' >/dev/null 2>&1; then
      echo "$py"
      return 0
    fi
  done
  return 1
}
