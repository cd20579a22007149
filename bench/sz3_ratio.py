"""Ratio of h5zgpu's Huffman codec against SZ3 at the same absolute bound, through h5py in one
process: the six Nyx-like fields, bounds of 1e-2, 1e-3 and 1e-4 of each field's range, chunks of
64^3 and 256^3 (36 cases). Both are read back and every value checked against the bound in
float64. Prints a markdown table and the tally (cases at or above SZ3, the lowest quotient).

usage: python bench/sz3_ratio.py DATA_DIR N [--chunks 64,256] [--rel 1e-2,1e-3,1e-4]
                                 [--fields a,b] [--out table.md]
  DATA_DIR holds nyx_<field>.f32 (bench/gen_nyx_like.py DATA_DIR N)
Needs h5py, numpy, hdf5plugin, and HDF5_PLUGIN_PATH naming the directory of libh5zgpu_filter.so
(H5ZGPU_DEVICE=cpu or gpu picks where h5zgpu runs; the chunks are the same bytes either way).
"""
import argparse
import os
import sys
import tempfile

import hdf5plugin
import numpy as np

from h5_peers import run_one   # the write and read through h5py, timed

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import h5zgpu  # noqa: E402

FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]


def one(path, a, kw, chunk, tol):
    """Ratio, write and read seconds, and the largest error over the bound."""
    stored, write_s, read_s, b = run_one(path, a, kw, (chunk,) * 3)
    err = float(np.max(np.abs(b.astype(np.float64) - a.astype(np.float64))))
    return a.nbytes / stored, write_s, read_s, err / tol


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("n", type=int)
    ap.add_argument("--chunks", default="64,256")
    ap.add_argument("--rel", default="1e-2,1e-3,1e-4")
    ap.add_argument("--fields", default=",".join(FIELDS))
    ap.add_argument("--out")
    args = ap.parse_args()
    n = args.n
    chunks = [int(c) for c in args.chunks.split(",")]
    rels = [float(r) for r in args.rel.split(",")]
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "x.h5")
    rows = ["| field | chunks | bound (x range) | h5zgpu Huffman | SZ3 | h5zgpu / SZ3 | "
            "max err / bound (h5zgpu, SZ3) | write s (h5zgpu, SZ3) |",
            "|---|---|---|---|---|---|---|---|"]
    quotients, missed = [], 0
    for name in args.fields.split(","):
        a = np.fromfile(os.path.join(args.data, f"nyx_{name}.f32"), dtype=np.float32)
        a = a.reshape(n, n, n)
        span = float(a.max()) - float(a.min())
        for chunk in chunks:
            for rel in rels:
                tol = rel * span
                h = one(path, a, h5zgpu.filter(codec="huffman", mode="abs", eb=tol), chunk, tol)
                s = one(path, a, dict(hdf5plugin.SZ3(absolute=tol)), chunk, tol)
                q = h[0] / s[0]
                quotients.append(q)
                missed += h[3] > 1 or s[3] > 1
                rows.append(f"| {name} | {chunk}^3 | {rel:g} | {h[0]:.2f} | {s[0]:.2f} | {q:.2f} "
                            f"| {h[3]:.3f}, {s[3]:.3f} | {h[1]:.2f}, {s[1]:.2f} |")
                print(rows[-1], flush=True)
    at_or_above = sum(q >= 1.0 for q in quotients)
    tally = (f"h5zgpu at or above SZ3 in {at_or_above} of {len(quotients)} cases; lowest "
             f"quotient {min(quotients):.2f}; bound missed in {missed} cases")
    text = "\n".join(rows) + "\n\n" + tally + "\n"
    print(tally)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
