"""Writing and reading a whole field through HDF5 four ways, in one process: uncompressed,
through the filter (`dset[...] = a`), through h5zgpu.write / h5zgpu.read (batched compression,
direct chunk I/O) from and into a NumPy array, and a CuPy array when CuPy and a GPU are there.
Checks that h5zgpu.write stored the filter's bytes (every chunk compared) and that every value
read back is within its bound. Prints a markdown table: GB/s of the raw field, and the ratio.

usage: python3 bench/bulk_io.py DATA_DIR N [--field velocity_x] [--chunk 64]
                                [--codecs fixed,huffman] [--eb 1e-3] [--dir /dev/shm] [--repeat 3]
  DATA_DIR holds nyx_<field>.f32 (bench/gen_nyx_like.py DATA_DIR N); REL bound per chunk. Each
  write (into a new file) and read runs --repeat times: the best time counts (a process's first
  call also pays for the GPU's context, workspaces, pinned buffers and kernels' loading).
Needs h5py, numpy and HDF5_PLUGIN_PATH naming the plugin's directory (libh5zgpu.so beside it,
in build/lib).
"""
import argparse
import itertools
import os
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import h5zgpu  # noqa: E402


REPEAT = 3


def timed(fn):
    """The best time of REPEAT calls of fn, and the last call's result."""
    best = None
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, out


def timed_write(path, opts, write):
    """The best time of REPEAT writes, each into a new file holding dataset x (opts)."""
    best = None
    for _ in range(REPEAT):
        with h5py.File(path, "w") as f:
            d = f.create_dataset("x", **opts)
            t0 = time.perf_counter()
            write(d)
            t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def same_chunks(d1, d2):
    for o in itertools.product(*[range(0, n, c) for n, c in zip(d1.shape, d1.chunks)]):
        if d1.id.read_direct_chunk(o) != d2.id.read_direct_chunk(o):
            return False
    return True


def within_rel(a, back, eb, chunk):
    """Every value within eb x (max - min) of its chunk (REL), in float64."""
    x, y = a.astype(np.float64), back.astype(np.float64)
    for s in itertools.product(*[range(0, n, chunk) for n in a.shape]):
        sl = tuple(slice(i, i + chunk) for i in s)
        if np.abs(y[sl] - x[sl]).max() > eb * (x[sl].max() - x[sl].min()):
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data_dir")
    ap.add_argument("n", type=int)
    ap.add_argument("--field", default="velocity_x")
    ap.add_argument("--chunk", type=int, default=64)
    ap.add_argument("--codecs", default="fixed,huffman")
    ap.add_argument("--eb", type=float, default=1e-3)
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    global REPEAT
    REPEAT = max(1, args.repeat)
    n, c = args.n, args.chunk
    a = np.fromfile(os.path.join(args.data_dir, f"nyx_{args.field}.f32"),
                    dtype=np.float32).reshape(n, n, n)
    gb = a.nbytes / 1e9
    try:
        import cupy as cp
        a_gpu = cp.asarray(a) if cp.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:   # no CuPy, or no GPU: the NumPy rows only
        cp, a_gpu = None, None
    h5zgpu.register()
    rows = []
    bad = False
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        def path(name):
            return os.path.join(tmp, name)

        tw = timed_write(path("plain.h5"), dict(shape=a.shape, dtype="f4", chunks=(c, c, c)),
                         lambda d: d.__setitem__(Ellipsis, a))
        with h5py.File(path("plain.h5"), "r") as f:
            tr, _ = timed(lambda: f["x"][...])
        rows.append(("uncompressed", "-", gb / tw, gb / tr, 1.0, True))
        for codec in args.codecs.split(","):
            opts = dict(shape=a.shape, dtype="f4", chunks=(c, c, c),
                        **h5zgpu.filter(codec, mode="rel", eb=args.eb))
            tw = timed_write(path("filter.h5"), opts, lambda d: d.__setitem__(Ellipsis, a))
            size = os.path.getsize(path("filter.h5"))
            with h5py.File(path("filter.h5"), "r") as f:
                tr, back = timed(lambda: f["x"][...])
            ok = within_rel(a, back, args.eb, c)
            rows.append(("filter (dset[...] = a)", codec, gb / tw, gb / tr, a.nbytes / size, ok))
            sources = [("h5zgpu.write/read, NumPy", a)]
            if a_gpu is not None:
                sources.append(("h5zgpu.write/read, CuPy", a_gpu))
            for label, src in sources:
                if a_gpu is not None and src is a_gpu:
                    cp.cuda.Device().synchronize()
                tw = timed_write(path("bulk.h5"), opts, lambda d: h5zgpu.write(d, src))
                with h5py.File(path("bulk.h5"), "r") as f, h5py.File(path("filter.h5"), "r") as g:
                    if a_gpu is not None and src is a_gpu:   # into GPU memory
                        out = cp.empty(a.shape, dtype=np.float32)
                        tr, _ = timed(lambda: (h5zgpu.read(f["x"], out=out),
                                               cp.cuda.Device().synchronize()))
                        back = cp.asnumpy(out)
                    else:
                        tr, back = timed(lambda: h5zgpu.read(f["x"]))
                    ok = same_chunks(f["x"], g["x"]) and within_rel(a, back, args.eb, c)
                rows.append((label, codec, gb / tw, gb / tr, a.nbytes / size, ok))
            bad |= not all(r[5] for r in rows)
    where = args.dir or "the temporary directory"
    print(f"h5py {h5py.version.version} (HDF5 {h5py.version.hdf5_version}), {n}^3 float32 "
          f"{args.field}, chunks {c}^3, REL {args.eb} per chunk, files in {where}; GB/s of the "
          f"raw field, the best of {REPEAT}\n")
    print("| path | codec | write GB/s | read GB/s | ratio | filter's bytes, bound |")
    print("|---|---|---|---|---|---|")
    for label, codec, w, r, ratio, ok in rows:
        print(f"| {label} | {codec} | {w:.2f} | {r:.2f} | {ratio:.2f} | {'yes' if ok else 'NO'} |")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
