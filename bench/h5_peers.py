"""Side-by-side run of h5zgpu and its CPU peers through h5py, one process, one machine.

Every filter gets the same absolute tolerance (a fraction of each field's value range), the
same 64^3 chunks and the same data: h5zgpu (filter 33900, ABS), SZ3 and ZFP (accuracy mode) from
PyPI's hdf5plugin, and gzip-1 + shuffle as the lossless anchor. Prints a markdown table.

usage: python bench/h5_peers.py DATA_DIR N [--tol 1e-3,1e-4] [--fields a,b] [--filters h5zgpu,SZ3]
                                [--out file.md]
  DATA_DIR holds nyx_<field>.f32 (bench/gen_nyx_like.py DATA_DIR N)
Needs h5py, numpy, hdf5plugin, and HDF5_PLUGIN_PATH naming the directory of libh5zgpu_filter.so.
"""
import argparse
import os
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import h5zgpu  # noqa: E402

try:
    import hdf5plugin
except ImportError:  # the peers are optional; h5zgpu and gzip still run
    hdf5plugin = None

FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]


def filters(tol):
    out = [("h5zgpu fixed", h5zgpu.filter(codec="fixed", mode="abs", eb=tol)),
           ("h5zgpu huffman", h5zgpu.filter(codec="huffman", mode="abs", eb=tol))]
    if hdf5plugin is not None:
        out.append(("SZ3 abs", dict(hdf5plugin.SZ3(absolute=tol))))
        out.append(("ZFP accuracy", dict(hdf5plugin.Zfp(accuracy=tol))))
    out.append(("gzip-1+shuffle", dict(compression="gzip", compression_opts=1, shuffle=True)))
    return out


def run_one(path, a, kw, chunks):
    t0 = time.perf_counter()
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks, **kw)
        stored = d.id.get_storage_size()
    t1 = time.perf_counter()
    with h5py.File(path, "r") as f:
        b = f["x"][...]
    t2 = time.perf_counter()
    return stored, t1 - t0, t2 - t1, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("n", type=int)
    ap.add_argument("--tol", default="1e-3,1e-4")
    ap.add_argument("--fields", default=",".join(FIELDS))
    ap.add_argument("--filters", default="",
                    help="only the filters whose names start with one of these (default: all)")
    ap.add_argument("--out")
    args = ap.parse_args()
    n = args.n
    chunks = (min(64, n),) * 3
    rows = ["| field | filter | tolerance | ratio | write MB/s | read MB/s | max err / tol | PSNR dB |",
            "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "peer.h5")
        for field in args.fields.split(","):
            a = np.fromfile(os.path.join(args.data, f"nyx_{field}.f32"), dtype=np.float32)
            a = a.reshape(n, n, n)
            rng = float(a.max()) - float(a.min())
            for rel in (float(t) for t in args.tol.split(",")):
                tol = rel * rng
                for name, kw in filters(tol):
                    if args.filters and not name.startswith(tuple(args.filters.split(","))):
                        continue
                    lossless = name.startswith("gzip")
                    if lossless and rel != float(args.tol.split(",")[0]):
                        continue
                    stored, tw, tr, b = run_one(path, a, kw, chunks)
                    err = np.abs(b.astype(np.float64) - a.astype(np.float64))
                    mse = float(np.mean(err * err))
                    psnr = float("inf") if mse == 0 else 20 * np.log10(rng) - 10 * np.log10(mse)
                    mb = a.nbytes / 1e6
                    rows.append(f"| {field} | {name} | {'lossless' if lossless else f'{rel:g} x range'} "
                                f"| {a.nbytes / stored:.2f} | {mb / tw:.0f} | {mb / tr:.0f} "
                                f"| {0 if lossless else err.max() / tol:.3f} | {psnr:.1f} |")
                    print(rows[-1], flush=True)
    text = "\n".join(rows)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
