"""Write the six Nyx-like fields with filter 33900 into one HDF5 file, read them back, and print
per field: ratio, write and read throughput, and the largest error against the bound (REL: per
chunk, eb x the chunk's finite value range); then the same fields written and read uncompressed
(same chunks), the baseline.

usage: python examples/nyx_h5py.py DATA_DIR N [--codec huffman] [--mode rel] [--eb 1e-3]
                                   [--chunk 128] [--path bulk|filter] [--out FILE.h5]
                                   [--executor LABEL]
  DATA_DIR holds nyx_<field>.f32 from bench/gen_nyx_like.py DATA_DIR N.
  --path bulk: h5zgpu.write / h5zgpu.read (batched compression, direct chunk I/O);
  --path filter: h5py's create_dataset(data=...) and dset[...] through the filter.
  The plugin is found through h5zgpu.plugin_dir() (H5ZGPU_PLUGIN_DIR, HDF5_PLUGIN_PATH, build/).
Exits 1 if any value misses its bound.
"""
import argparse
import itertools
import os
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import h5zgpu  # noqa: E402

FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]


def worst_error(a, b, mode, eb, chunk):
    """(max abs error, max of error / bound) over all values, chunk by chunk in float64."""
    max_err = worst = 0.0
    for start in itertools.product(*[range(0, n, chunk) for n in a.shape]):
        s = tuple(slice(i, i + chunk) for i in start)
        x = a[s].astype(np.float64)
        err = np.abs(b[s].astype(np.float64) - x)
        finite = np.isfinite(x)
        if not finite.all():
            bits = a[s].view(np.uint32) != b[s].view(np.uint32)
            if (bits & ~finite).any():
                return max_err, np.inf  # NaN/Inf must come back bit for bit
        if mode == "abs":
            bound = eb
        elif mode == "rel":
            v = x[finite]
            bound = eb * (v.max() - v.min()) if v.size else 0.0
        else:
            bound = eb * np.abs(x)
        e = np.where(finite, err, 0.0)
        max_err = max(max_err, float(e.max()))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(e > 0, e / bound, 0.0)
        worst = max(worst, float(r.max()))
    return max_err, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--codec", default="huffman")
    ap.add_argument("--mode", default="rel")
    ap.add_argument("--eb", type=float, default=1e-3)
    ap.add_argument("--chunk", type=int, default=128)
    ap.add_argument("--path", choices=("bulk", "filter"), default="bulk")
    ap.add_argument("--out", default=None)
    ap.add_argument("--executor", default="?", help="label for the table (from h5zgpu --version)")
    args = ap.parse_args()

    opts = h5zgpu.filter(codec=args.codec, mode=args.mode, eb=args.eb)
    h5zgpu.register()
    out = args.out or os.path.join(args.data_dir, f"nyx_{args.n}.h5")
    shape, chunks = (args.n,) * 3, (min(args.chunk, args.n),) * 3
    data = {f: np.fromfile(os.path.join(args.data_dir, f"nyx_{f}.f32"), dtype=np.float32)
            .reshape(shape) for f in FIELDS}

    def write(f, name, a, filtered):
        if not filtered:
            return f.create_dataset(name, data=a, chunks=chunks)
        if args.path == "filter":
            return f.create_dataset(name, data=a, chunks=chunks, **opts)
        d = f.create_dataset(name, shape=a.shape, dtype=a.dtype, chunks=chunks, **opts)
        h5zgpu.write(d, a)
        return d

    def read(d, filtered):
        return h5zgpu.read(d) if filtered and args.path == "bulk" else d[...]

    def run(path, filtered):
        write_s, stored, read_s, back = {}, {}, {}, {}
        with h5py.File(path, "w") as f:
            for name, a in data.items():
                t0 = time.perf_counter()
                d = write(f, name, a, filtered)
                f.flush()
                write_s[name] = time.perf_counter() - t0
                stored[name] = d.id.get_storage_size()
        with h5py.File(path, "r") as f:
            for name in FIELDS:
                t0 = time.perf_counter()
                back[name] = read(f[name], filtered)
                read_s[name] = time.perf_counter() - t0
        return write_s, stored, read_s, back

    write_s, stored, read_s, back = run(out, True)
    plain = os.path.splitext(out)[0] + "_uncompressed.h5"
    base_w, base_stored, base_r, _ = run(plain, False)
    os.remove(plain)

    how = ("h5zgpu.write / h5zgpu.read" if args.path == "bulk"
           else "the filter (create_dataset, dset[...])")
    print(f"h5py {h5py.version.version} (HDF5 {h5py.version.hdf5_version}), {args.n}^3 float32, "
          f"chunks {chunks[0]}^3, codec {args.codec}, {args.mode.upper()} {args.eb:g}, "
          f"through {how}, file {out}")
    head = (f"{'field':<21}{'ratio':>9}{'write MB/s':>12}{'read MB/s':>11}{'max error':>13}"
            f"{'err/bound':>11}  executor")
    print(head)
    print("-" * len(head))
    ok = True
    for name in FIELDS:
        a = data[name]
        max_err, worst = worst_error(a, back[name], args.mode, args.eb, chunks[0])
        ok = ok and worst <= 1
        print(f"{name:<21}{a.nbytes / stored[name]:>9.2f}{a.nbytes / write_s[name] / 1e6:>12.1f}"
              f"{a.nbytes / read_s[name] / 1e6:>11.1f}{max_err:>13.4g}{worst:>11.4f}  "
              f"{args.executor}")
    total = sum(a.nbytes for a in data.values())
    print(f"{'all six':<21}{total / sum(stored.values()):>9.2f}"
          f"{total / sum(write_s.values()) / 1e6:>12.1f}"
          f"{total / sum(read_s.values()) / 1e6:>11.1f}")
    print(f"{'all six uncompressed':<21}{total / sum(base_stored.values()):>9.2f}"
          f"{total / sum(base_w.values()) / 1e6:>12.1f}{total / sum(base_r.values()) / 1e6:>11.1f}"
          "  (the baseline: the same chunks, no filter)")
    print("every value within its bound" if ok else "BOUND MISSED: see err/bound above 1")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
