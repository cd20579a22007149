#!/usr/bin/env python3
"""gpu_bench's tables and cuSZp's CLI output of one run merged into one markdown table, each
throughput also as a share of the run's device-to-device copy (read + write of the input size).

usage: side_by_side.py H5ZGPU.md CUSZP.txt
"""
import re
import sys


def h5zgpu_rows(path):
    """({(codec index, field, bound): (compress, decompress, ratio)}, copy GB/s)."""
    rows, copy, codec = {}, None, -1
    with open(path) as f:
        for line in f:
            m = re.match(r"\| device to device \| (\d+)", line)
            if m:
                copy = float(m.group(1))
            if line.startswith("| field |"):
                codec += 1
            elif line.startswith("| nyx_") or line.startswith("| ") and "REL" in line:
                c = [x.strip() for x in line.strip().strip("|").split("|")]
                field = re.sub(r"^nyx_|\.f32$", "", c[0])
                bound = c[1].replace("REL ", "")
                rows[(codec, field, float(bound))] = (float(c[2]), float(c[3]), float(c[4]))
    return rows, copy


def cuszp_rows(path):
    """{(field, bound, mode): (compress, decompress, ratio, passed)} from the CLI's output."""
    rows, key, cur = {}, None, {}
    for line in open(path, errors="replace"):
        if line.startswith("@ "):
            _, field, bound, mode = line.split()
            key, cur = (field, float(bound), mode), {}
            rows[key] = cur
        elif key:
            m = re.search(r"compression\s+end-to-end speed: ([\d.]+)", line)
            if m and "decompression" not in line:
                cur["c"] = float(m.group(1))
            m = re.search(r"decompression end-to-end speed: ([\d.]+)", line)
            if m:
                cur["d"] = float(m.group(1))
            m = re.search(r"compression ratio: ([\d.]+)", line)
            if m:
                cur["r"] = float(m.group(1))
            if "Pass error check" in line:
                cur["ok"] = True
            if "Fail error check" in line:
                cur["ok"] = False
    return rows


def main(h5_path, cz_path):
    h5, copy = h5zgpu_rows(h5_path)
    cz = cuszp_rows(cz_path)
    modes = sorted({k[2] for k in cz})
    print(f"device-to-device copy in this run: {copy:.0f} GB/s copied "
          f"({2 * copy:.0f} read + write); GB/s = input bytes / time\n")
    head = ["field", "REL", "h5zgpu fixed c / d / ratio", "h5zgpu Huffman c / d / ratio"]
    head += [f"cuSZp {m} c / d / ratio" for m in modes]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    best = []
    for (codec, field, bound), _ in sorted(h5.items(), key=lambda kv: (kv[0][1], -kv[0][2])):
        if codec != 0:
            continue
        cells = [field, f"{bound:g}"]
        for k in (0, 1):
            c, d, r = h5.get((k, field, bound), (0, 0, 0))
            cells.append(f"{c:.0f} / {d:.0f} / {r:.2f}")
        plain = []
        for m in modes:
            v = cz.get((field, bound, m), {})
            ok = "" if v.get("ok") else " (no pass)"
            cells.append(f"{v.get('c', 0):.0f} / {v.get('d', 0):.0f} / {v.get('r', 0):.2f}{ok}")
            if m.startswith("plain"):
                plain.append((v.get("c", 0), v.get("d", 0)))
        print("| " + " | ".join(cells) + " |")
        fc, fd, _ = h5[(0, field, bound)]
        pc, pd = max(p[0] for p in plain), max(p[1] for p in plain)
        best.append((fc / pc if pc else 0, fd / pd if pd else 0, fc, fd, pc, pd))
    if best and copy:
        col = list(zip(*best))
        print("\nfixed-length against cuSZp plain's faster dimensionality, row by row: compress "
              f"{span(col[0], 2, 'x')}, decompress {span(col[1], 2, 'x')}")
        share = [[100 * v / copy for v in c] for c in col[2:]]
        print(f"share of the copy ({copy:.0f} GB/s): h5zgpu fixed compress {span(share[0])}, "
              f"decompress {span(share[1])}; cuSZp plain compress {span(share[2])}, "
              f"decompress {span(share[3])}")


def span(values, digits=0, unit="%"):
    """'lo-hi' of values with the unit."""
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}{unit}"

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
