"""Compression ratio of the fixed-length codec on the six Nyx-like fields at REL 1e-2, 1e-3, 1e-4,
beside cuSZp v3's better mode (plain or outlier) from ../shared/REFERENCE.md.

Each field is compressed as one chunk (the whole 512^3 array), as cuSZp compresses it, with the
REL bound relative to the field's range, through `h5zgpu compress` (GPU when H5ZGPU_DEVICE
allows). Prints a markdown table; exits 1 if a bound is missed.

usage: python3 bench/ratio_table.py H5ZGPU_BINARY DATA_DIR N [--out table.md]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# cuSZp v3 ratios, max of its plain and outlier modes: REFERENCE.md, nvidia-h100-x1, 2026-11-22,
# same generator (bench/gen_nyx_like.py DIR 512 11, on the GPU with CuPy).
CUSZP_BEST = {
    "baryon_density": (255.14, 243.08, 156.54),
    "dark_matter_density": (235.34, 78.42, 14.37),
    "temperature": (102.38, 13.91, 7.19),
    "velocity_x": (14.25, 7.22, 4.16),
    "velocity_y": (14.16, 7.08, 4.10),
    "velocity_z": (14.39, 7.61, 4.30),
}
BOUNDS = (1e-2, 1e-3, 1e-4)


def compress(binary, path, n, eb, tmp):
    out = subprocess.run(
        [binary, "compress", "-i", path, "-o", os.path.join(tmp, "c.h5zg"), "-t", "f32",
         "-d", f"{n},{n},{n}", "--codec", "fixed", "--mode", "rel", "--eb", f"{eb:g}"],
        capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"h5zgpu compress failed on {path} at {eb:g}:\n{out.stdout}{out.stderr}")
    ratio = float(re.search(r"ratio ([0-9.]+)", out.stdout).group(1))
    err = float(re.search(r"max error / bound ([0-9.]+)", out.stdout).group(1))
    where = re.search(r"executor\s+(\S+)", out.stdout).group(1)
    return ratio, err, where


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data")
    ap.add_argument("n", type=int)
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = ["| field | REL bound | cuSZp v3 best | h5zgpu fixed | ours / cuSZp | max err / bound |",
            "|---|---|---|---|---|---|"]
    worst, behind = 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for field, ref in CUSZP_BEST.items():
            path = os.path.join(args.data, f"nyx_{field}.f32")
            for eb, theirs in zip(BOUNDS, ref):
                ours, err, where = compress(args.binary, path, args.n, eb, tmp)
                worst = max(worst, err)
                behind += ours < theirs
                rows.append(f"| {field} | {eb:g} | {theirs:.2f} | {ours:.2f} | "
                            f"{ours / theirs:.2f} | {err:.4f} |")
                print(rows[-1], flush=True)
    rows.append(f"\n{len(CUSZP_BEST) * len(BOUNDS) - behind} of {len(CUSZP_BEST) * len(BOUNDS)} "
                f"cases at or above cuSZp; largest error / bound {worst:.4f}; executor {where}")
    text = "\n".join(rows)
    print(rows[-1])
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    sys.exit(1 if worst > 1.0 else 0)


if __name__ == "__main__":
    main()
