"""Fixed ratio through h5py: each Nyx-like field written with h5zgpu's mode "ratio" at several
targets (64^3 chunks), through the filter (`dset[...] = `: each chunk searches its own bound)
and through h5zgpu.write (the whole dataset's chunks share one budget), the whole dataset's
achieved ratio, the time against one error-bounded write of the same path (REL 1e-3), the
PSNR, and ZFP's fixed-rate mode (hdf5plugin, rate = 32 / target bits a value) at the same
targets in the same process. Prints a markdown table.

usage: python bench/ratio_targets.py DATA_DIR N [--targets 5,10,20,50] [--codec huffman]
                                     [--fields a,b]
  DATA_DIR holds nyx_<field>.f32 (bench/gen_nyx_like.py DATA_DIR N; bench/mask_nan.py makes
  a field with NaN over half of it)
Needs h5py, numpy, HDF5_PLUGIN_PATH naming the directory of libh5zgpu_filter.so; hdf5plugin for
the ZFP columns.
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
except ImportError:  # the peer is optional
    hdf5plugin = None

FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]


def write(path, data, kwargs, bulk=False):
    """Seconds to write data with the filter's keyword arguments (through h5zgpu.write when
    bulk), the stored bytes, the data read back."""
    with h5py.File(path, "w") as f:
        t0 = time.perf_counter()
        if bulk:
            d = f.create_dataset("x", shape=data.shape, dtype=data.dtype, chunks=(64, 64, 64),
                                 **kwargs)
            h5zgpu.write(d, data)
        else:
            d = f.create_dataset("x", data=data, chunks=(64, 64, 64), **kwargs)
        f.flush()
        seconds = time.perf_counter() - t0
        stored = d.id.get_storage_size()
    with h5py.File(path, "r") as f:
        back = f["x"][...]
    return seconds, stored, back


def psnr(a, b):
    """Over the finite points of a (a field with missing values marked NaN)."""
    keep = np.isfinite(a)
    a64, b64 = a[keep].astype(np.float64), b[keep].astype(np.float64)
    rmse = np.sqrt(np.mean((b64 - a64) ** 2))
    return float("inf") if rmse == 0 else 20 * np.log10((a64.max() - a64.min()) / rmse)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("n", type=int)
    ap.add_argument("--targets", default="5,10,20,50")
    ap.add_argument("--codec", default="huffman")
    ap.add_argument("--fields", default=",".join(FIELDS))
    args = ap.parse_args()
    targets = [float(t) for t in args.targets.split(",")]
    print("| field | target | filter: ratio | off | time / REL 1e-3 write | PSNR dB | "
          "h5zgpu.write: ratio | off | time / REL 1e-3 write | PSNR dB | "
          "ZFP fixed-rate ratio | ZFP PSNR dB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst, total_stored, total_raw = {False: 0.0, True: 0.0}, {t: 0 for t in targets}, 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.h5")
        for field in args.fields.split(","):
            a = np.fromfile(os.path.join(args.data, f"nyx_{field}.f32"),
                            dtype=np.float32).reshape((args.n,) * 3)
            rel = h5zgpu.filter(args.codec, mode="rel", eb=1e-3)
            base = {bulk: write(path, a, rel, bulk)[0] for bulk in (False, True)}
            total_raw += a.nbytes
            for t in targets:
                cells = []
                for bulk in (False, True):
                    s, stored, back = write(path, a, h5zgpu.filter(args.codec, mode="ratio",
                                                                   target=t), bulk)
                    ratio = a.nbytes / stored
                    if bulk:
                        total_stored[t] += stored
                    worst[bulk] = max(worst[bulk], abs(ratio / t - 1))
                    cells.append(f"{ratio:.2f} | {100 * (ratio / t - 1):+.1f}% | "
                                 f"{s / base[bulk]:.2f} | {psnr(a, back):.2f}")
                zfp = "|"
                if hdf5plugin is not None:
                    _, zs, zback = write(path, a, dict(hdf5plugin.Zfp(rate=32.0 / t)))
                    zfp = f"{a.nbytes / zs:.2f} | {psnr(a, zback):.2f}"
                print(f"| {field} | {t:g} | {' | '.join(cells)} | {zfp} |", flush=True)
    print()
    print(f"largest |ratio / target - 1| of a field: filter {100 * worst[False]:.1f}%, "
          f"h5zgpu.write {100 * worst[True]:.1f}%; h5zgpu.write, all fields together: "
          + ", ".join(f"{t:g}: {total_raw / total_stored[t]:.2f}" for t in targets))


if __name__ == "__main__":
    main()
