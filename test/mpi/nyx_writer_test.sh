#!/bin/sh
# nyx_writer under MPI, two ranks, each path and both layouts, every value checked (--verify),
# and the direct path over three and ten ranks;
# then its files read by programs that know nothing of it, with only HDF5_PLUGIN_PATH set:
# h5dump, and serial h5py, which compares the compressed files with the uncompressed one under
# the bound and the direct file's chunks with the filter file's, byte for byte.
#   nyx_writer_test.sh MPIEXEC NYX_WRITER H5DUMP PLUGIN_DIR WORK_DIR
set -eu
mpiexec=$1 writer=$2 h5dump=$3 plugins=$4 work=$5
python=$(command -v "${PYTHON:-/usr/bin/python3}")   # Debian's python3-h5py unless PYTHON says
rm -rf "$work" && mkdir -p "$work"
run() {  # OUT ARGS...: NP ranks, two unless said (--oversubscribe: CI may have fewer slots),
         # root allowed
  out=$1
  shift
  echo "== nyx_writer -n ${NP:-2} $*"
  HDF5_PLUGIN_PATH=$plugins OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$mpiexec" -n "${NP:-2}" --oversubscribe "$writer" --n 64 --box 32 --out "$work/$out" \
    --verify "$@"
}
for p in none filter direct; do
  run "native_$p.h5" --path "$p"
done
# the direct path's turn of storing over three ranks (boxes 3, 3 and 2) and over ten (two
# without a box); their chunks are compared with the filter's below
NP=3 run native_direct3.h5 --path direct
NP=10 run native_direct10.h5 --path direct
for p in none filter; do
  run "amrex_$p.h5" --layout amrex --path "$p"
done
# fixed ratio: --verify holds every value to the bound its chunk's header records
run native_ratio.h5 --path filter,direct --bound all=RATIO@10
run amrex_ratio.h5 --layout amrex --path filter --bound data=RATIO@5

alone() { env -i PATH="$PATH" HDF5_PLUGIN_PATH="$plugins" "$@"; }
for f in native_filter.h5:/native_fields/velocity_x native_direct.h5:/native_fields/temperature \
         amrex_filter.h5:/level_0/data:datatype=0; do
  file=${f%%:*} dset=${f#*:}
  echo "== h5dump $file $dset"
  alone "$h5dump" -d "$dset" -s 0 -c 4 "$work/$file" > "$work/dump.txt"
  grep -q "DATA" "$work/dump.txt"
  if grep -q "FAILED\|error" "$work/dump.txt"; then cat "$work/dump.txt"; exit 1; fi
done

echo "== serial h5py ($("$python" -c 'import h5py; print(h5py.__file__)'))"
alone "$python" - "$work" <<'PY'
import sys
import h5py
import numpy as np

work = sys.argv[1]
FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]


def rel_misses(want, got, group_shape):
    """Values outside eb x (max - min) of their chunk, REL 1e-3 (nyx_writer's default)."""
    misses = 0
    it = np.ndindex(*[w // g for w, g in zip(want.shape, group_shape)])
    for idx in it:
        sl = tuple(slice(i * g, (i + 1) * g) for i, g in zip(idx, group_shape))
        w, g = want[sl].astype(np.float64), got[sl].astype(np.float64)
        misses += int(np.count_nonzero(~(np.abs(g - w) <= 1e-3 * (w.max() - w.min()))))
    return misses


bad = 0
with h5py.File(f"{work}/native_none.h5", "r") as raw, \
        h5py.File(f"{work}/native_filter.h5", "r") as filt, \
        h5py.File(f"{work}/native_direct.h5", "r") as direct, \
        h5py.File(f"{work}/native_direct3.h5", "r") as direct3, \
        h5py.File(f"{work}/native_direct10.h5", "r") as direct10:
    for name in FIELDS:
        want = raw["native_fields"][name][...]
        for f in (filt, direct):
            got = f["native_fields"][name][...]
            m = rel_misses(want, got, (32, 32, 32))
            print(f"{f.filename.split('/')[-1]} {name}: {m} values outside the bound")
            bad += m
        a = filt["native_fields"][name]
        for other in (direct, direct3, direct10):
            b = other["native_fields"][name]
            for origin in np.ndindex(2, 2, 2):
                o = tuple(32 * i for i in origin)
                if a.id.read_direct_chunk(o) != b.id.read_direct_chunk(o):
                    print(f"{name}: the chunk at {o} differs between the filter file and "
                          f"{other.filename.split('/')[-1]}")
                    bad += 1
with h5py.File(f"{work}/amrex_none.h5", "r") as raw, \
        h5py.File(f"{work}/amrex_filter.h5", "r") as filt:
    want = raw["level_0/data:datatype=0"][...]
    got = filt["level_0/data:datatype=0"][...]
    m = rel_misses(want, got, (1024,))
    print(f"amrex_filter.h5 data: {m} values outside the bound")
    bad += m
    offsets = filt["level_0/data:offsets=0"][...]
    if offsets[-1] != want.size:
        print(f"data:offsets=0 ends at {offsets[-1]}, the data holds {want.size}")
        bad += 1
# the fixed-ratio files: each dataset's ratio near its target (chunks land within a few
# percent; 64^3 fields in 32^3 boxes)
for file, group, names, target in (("native_ratio.h5", "native_fields", FIELDS, 10.0),
                                   ("amrex_ratio.h5", "level_0", ["data:datatype=0"], 5.0)):
    with h5py.File(f"{work}/{file}", "r") as f:
        for name in names:
            d = f[group][name]
            ratio = d.size * d.dtype.itemsize / d.id.get_storage_size()
            print(f"{file} {name}: ratio {ratio:.2f}, target {target}")
            if abs(ratio / target - 1) > 0.1:
                bad += 1
sys.exit(1 if bad else 0)
PY
echo "nyx_writer_test: passed"
