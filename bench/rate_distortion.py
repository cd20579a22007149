"""Rate-distortion of h5zgpu (Huffman and fixed-length codecs) against Debian's H5Z-ZFP plugin
(filter 32013, accuracy mode) on the Nyx-like fields, through h5py in one process; with --sz3,
against PyPI's hdf5plugin instead (SZ3 absolute and ZFP accuracy) in a venv that has it.

Every filter gets the same absolute tolerance, REL x the field's value range (h5zgpu in ABS mode,
ZFP's accuracy), the same chunks and the same data. Per point: bits per value (32 x stored /
raw bytes) and PSNR against the field's value range, in double precision. Plots PSNR against bits
per value per field, prints a markdown table of the points and, per field, how Huffman's PSNR
compares with ZFP's at the same bit rate (ZFP's curve interpolated in log bits/value).

usage: python3 bench/rate_distortion.py DATA_DIR N [--png docs/rd_nyx.png] [--out points.md]
           [--rel 1e-1,...,1e-5] [--zfp-rel 1,...,1e-5] [--fields a,b] [--chunk 64]
           [--plugin-dir build/plugin] [--sz3]
  DATA_DIR holds nyx_<field>.f32 (bench/gen_nyx_like.py DATA_DIR N).
Needs Debian's python3-h5py, python3-numpy, python3-matplotlib and hdf5-filter-plugin-zfp-serial
(apt-get install ...), or with --sz3 h5py, numpy, matplotlib and hdf5plugin from PyPI; the
h5zgpu plugin from a build (--plugin-dir, else h5zgpu.plugin_dir()).
Exits 1 if an h5zgpu value misses its bound.
"""
import argparse
import os
import struct
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import h5zgpu  # noqa: E402

FIELDS = ["baryon_density", "dark_matter_density", "temperature",
          "velocity_x", "velocity_y", "velocity_z"]
RELS = "1e-1,3e-2,1e-2,3e-3,1e-3,3e-4,1e-4,3e-5,1e-5"
# ZFP spends a fraction of its tolerance; looser ones reach down to h5zgpu's low bit rates.
ZFP_RELS = "1,3e-1," + RELS
ZFP_ID = 32013
ZFP_MODE_ACCURACY = 3
ZFP_DIR = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
FILTERS = ("h5zgpu huffman", "h5zgpu fixed", "ZFP accuracy")
SHORT = {"h5zgpu huffman": "huffman", "h5zgpu fixed": "fixed", "ZFP accuracy": "ZFP",
         "SZ3 abs": "SZ3"}
PEERS = None   # hdf5plugin with --sz3


def zfp_accuracy(tol):
    """H5Z-ZFP's generic cd_values for accuracy mode (H5Pset_zfp_accuracy_cdata)."""
    lo, hi = struct.unpack("<II", struct.pack("<d", tol))
    return {"compression": ZFP_ID, "compression_opts": (ZFP_MODE_ACCURACY, 0, lo, hi)}


def options(name, tol):
    if name == "ZFP accuracy":
        return dict(PEERS.Zfp(accuracy=tol)) if PEERS else zfp_accuracy(tol)
    if name == "SZ3 abs":
        return dict(PEERS.SZ3(absolute=tol))
    return h5zgpu.filter(codec=name.split()[1], mode="abs", eb=tol)


def roundtrip(h5py, path, a, kw, chunks):
    """(stored bytes, data read back) of one dataset written with kw."""
    with h5py.File(path, "w") as f:
        stored = f.create_dataset("x", data=a, chunks=chunks, **kw).id.get_storage_size()
    with h5py.File(path, "r") as f:
        return stored, f["x"][...]


def gap_to_zfp(points, peer="ZFP accuracy"):
    """{REL: Huffman's PSNR minus the peer's interpolated at Huffman's bit rate} for the Huffman
    points inside the bit rates the peer covers (points of one field)."""
    zfp = sorted((p["bits"], p["psnr"]) for p in points if p["filter"] == peer)
    zb, zq = np.log([b for b, _ in zfp]), np.array([q for _, q in zfp])
    return {p["rel"]: p["psnr"] - float(np.interp(np.log(p["bits"]), zb, zq))
            for p in points if p["filter"] == "h5zgpu huffman"
            and zb.min() <= np.log(p["bits"]) <= zb.max()}


def summary(fields, gaps, peer):
    """Per field: the Huffman points at or above the peer, and the range of the differences."""
    rows = ["", f"| field | Huffman points at or above {peer} | huffman - {peer} dB, min .. max |",
            "|---|---|---|"]
    for field in fields:
        g = list(gaps[field].values())
        rows.append(f"| {field} | {sum(d >= 0 for d in g)} of {len(g)} | "
                    + (f"{min(g):+.2f} .. {max(g):+.2f} |" if g else "no overlap |"))
    return rows


def plot(points, fields, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 3
    rows = (len(fields) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    for ax, field in zip(axes.flat, fields):
        for name, style in zip(FILTERS, ("o-", "s--", "^-", "v-")):
            pts = sorted((p["bits"], p["psnr"]) for p in points
                         if p["field"] == field and p["filter"] == name)
            ax.plot([b for b, _ in pts], [q for _, q in pts], style, label=name, ms=4)
        ax.set_xscale("log")
        ax.set_title(field)
        ax.set_xlabel("bits per value")
        ax.set_ylabel("PSNR (dB, value range)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(fields):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="directory of nyx_<field>.f32")
    ap.add_argument("n", type=int, help="edge of the cube the fields were generated with")
    ap.add_argument("--rel", default=RELS, help="h5zgpu's tolerances, fractions of the range")
    ap.add_argument("--zfp-rel", default=ZFP_RELS, help="ZFP's tolerances, fractions of the range")
    ap.add_argument("--fields", default=",".join(FIELDS))
    ap.add_argument("--chunk", type=int, default=64, help="chunk edge (HDF5 chunks are cubes)")
    ap.add_argument("--plugin-dir", help="directory of libh5zgpu_filter.so")
    ap.add_argument("--png", default="docs/rd_nyx.png")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--sz3", action="store_true",
                    help="peers from PyPI's hdf5plugin: SZ3 (absolute) and ZFP (accuracy)")
    args = ap.parse_args()
    global FILTERS, PEERS

    try:
        import matplotlib  # noqa: F401 - checked before the long run, used by plot()
    except ImportError:
        sys.exit("rate_distortion.py needs matplotlib: apt-get install python3-matplotlib")
    # HDF5 reads the search path when it first loads a plugin: ours and Debian's ZFP.
    ours = os.path.abspath(args.plugin_dir) if args.plugin_dir else h5zgpu.plugin_dir()
    os.environ["HDF5_PLUGIN_PATH"] = ours if args.sz3 else os.pathsep.join((ours, ZFP_DIR))
    import h5py
    if args.sz3:
        import hdf5plugin
        PEERS = hdf5plugin
        FILTERS = FILTERS + ("SZ3 abs",)

    n, fields = args.n, args.fields.split(",")
    chunks = (min(args.chunk, n),) * 3
    runs = [(float(r), name) for r in args.rel.split(",") for name in FILTERS[:2]]
    runs += [(float(r), FILTERS[2]) for r in args.zfp_rel.split(",")]
    runs += [(float(r), name) for r in args.rel.split(",") for name in FILTERS[3:]]
    points, worst = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rd.h5")
        for field in fields:
            a = np.fromfile(os.path.join(args.data, f"nyx_{field}.f32"), dtype=np.float32)
            a = a.reshape(n, n, n)
            x = a.astype(np.float64)
            rng = float(x.max() - x.min())
            for rel, name in runs:
                tol = rel * rng
                stored, b = roundtrip(h5py, path, a, options(name, tol), chunks)
                err = b.astype(np.float64) - x
                mse = float(np.mean(err * err))
                e_tol = float(np.abs(err).max()) / tol
                if name.startswith("h5zgpu"):
                    worst = max(worst, e_tol)
                points.append({
                    "field": field, "rel": rel, "filter": name,
                    "bits": 32.0 * stored / a.nbytes, "ratio": a.nbytes / stored,
                    "psnr": float("inf") if mse == 0 else
                    20 * np.log10(rng) - 10 * np.log10(mse),
                    "err_tol": e_tol})
                print(f"{field} {rel:g} {name}: {points[-1]['bits']:.3f} bits/value, "
                      f"PSNR {points[-1]['psnr']:.2f} dB", file=sys.stderr, flush=True)

    rows = [f"h5py {h5py.version.version} (HDF5 {h5py.version.hdf5_version}), {n}^3 float32, "
            f"chunks {chunks[0]}^3; tolerance = REL x the field's range (h5zgpu ABS, ZFP "
            "accuracy); bits = bits/value, dB = PSNR; huffman - ZFP: PSNR difference at "
            "Huffman's bit rate (ZFP interpolated in log bits/value)", "",
            "| field | REL | " + " | ".join(f"{SHORT[f]} bits | {SHORT[f]} dB" for f in FILTERS)
            + " | ZFP max err / tol | huffman - ZFP dB |"
            + (" huffman - SZ3 dB |" if PEERS else ""),
            "|" + "---|" * (4 + 2 * len(FILTERS) + (1 if PEERS else 0))]
    at = {(p["field"], p["rel"], p["filter"]): p for p in points}
    gaps, sz3_gaps = {}, {}
    for field in fields:
        gaps[field] = gap = gap_to_zfp([p for p in points if p["field"] == field])
        sz3_gaps[field] = gap3 = (gap_to_zfp([p for p in points if p["field"] == field],
                                             "SZ3 abs") if PEERS else {})
        for rel in sorted({p["rel"] for p in points}, reverse=True):
            cells = [field, f"{rel:g}"]
            for name in FILTERS:
                p = at.get((field, rel, name))
                cells += [f"{p['bits']:.3f}", f"{p['psnr']:.2f}"] if p else ["", ""]
            p = at.get((field, rel, FILTERS[2]))
            cells.append(f"{p['err_tol']:.3f}" if p else "")
            cells.append(f"{gap[rel]:+.2f}" if rel in gap else "")
            if PEERS:
                cells.append(f"{gap3[rel]:+.2f}" if rel in gap3 else "")
            rows.append("| " + " | ".join(cells) + " |")
    rows += summary(fields, gaps, "ZFP")
    if PEERS:
        rows += summary(fields, sz3_gaps, "SZ3")
    rows += ["", f"largest h5zgpu error / tolerance {worst:.4f}"]
    text = "\n".join(rows)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    plot(points, fields, args.png, f"Nyx-like {n}^3 float32, chunks {chunks[0]}^3: "
         "PSNR vs bits/value")
    sys.exit(1 if worst > 1.0 else 0)


if __name__ == "__main__":
    main()
