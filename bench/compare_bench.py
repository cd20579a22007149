#!/usr/bin/env python3
"""Two gpu_bench reports of the same run side by side: per codec and row, this tree's GB/s and
ratio against the baseline's, and the geometric means of the quotients.

usage: compare_bench.py BASELINE.md TREE.md
"""
import math
import sys


def tables(path):
    """{codec name: [(field, bound, compress, decompress, ratio)]} from gpu_bench's tables, each
    named by the line before it ("Huffman codec (device-to-device copy ...)")."""
    out, cur, title = {}, None, ""
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("|"):
                title = line.split("(")[0].strip()
            if line.startswith("| field |"):
                cur = title or str(len(out))
                out[cur] = []
            elif line.startswith("| chunk") or not line.startswith("|"):
                cur = None   # the sub-chunk sweep, or the end of a table
            elif cur is not None and not line.startswith("|---"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                out[cur].append((cells[0], cells[1], float(cells[2]), float(cells[3]),
                                 float(cells[4])))
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(base_path, tree_path):
    base, tree = tables(base_path), tables(tree_path)
    for k in tree:
        rows = list(zip(base.get(k, []), tree[k]))
        if not rows:
            continue
        print(f"\n{k}\n")
        print("| field | bound | compress GB/s base / tree | decompress GB/s base / tree "
              "| ratio base / tree |")
        print("|---|---|---|---|---|")
        qc, qd, qr = [], [], []
        for b, t in rows:
            qc.append(t[2] / b[2])
            qd.append(t[3] / b[3])
            qr.append(t[4] / b[4])
            print(f"| {t[0]} | {t[1]} | {b[2]:g} / {t[2]:g} | {b[3]:g} / {t[3]:g} "
                  f"| {b[4]:g} / {t[4]:g} |")
        print(f"\ntree / baseline, geometric mean over {len(rows)} rows: compress "
              f"{geomean(qc):.3f} (lowest {min(qc):.3f}), decompress {geomean(qd):.3f} "
              f"(lowest {min(qd):.3f}), ratio {geomean(qr):.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
