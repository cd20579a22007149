#!/usr/bin/env python3
"""The seconds per pattern of two `h5zgpu check --json` objects of one pair (say the GPU's and
the CPU's: H5ZGPU_DEVICE=gpu, then cpu), their ratio, and the largest relative difference
between their metrics.

    python3 bench/check_times.py check-gpu.json check-cpu.json
"""
import json
import math
import sys

PARTS = ["setup", "staging", "pointwise", "stencils", "ssim", "power_spectrum"]


def metrics(obj):
    """Every number of the object but the timings, flattened (lists element by element)."""
    out = {}
    for key, value in obj.items():
        if key in ("seconds", "executor"):
            continue
        values = value if isinstance(value, list) else [value]
        for i, v in enumerate(values):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[f"{key}[{i}]" if isinstance(value, list) else key] = float(v)
    return out


def main():
    first, second = (json.load(open(path)) for path in sys.argv[1:3])
    names = [first["executor"], second["executor"]]
    print(f"| part | {names[0]} s | {names[1]} s | {names[1]} / {names[0]} |")
    print("|---|---|---|---|")
    totals, compute = [0.0, 0.0], [0.0, 0.0]
    for part in PARTS + ["metrics alone", "all"]:
        if part == "all":
            t = totals
        elif part == "metrics alone":   # what the passes take, without setup and staging
            t = compute
        else:
            t = [first["seconds"][part], second["seconds"][part]]
            totals = [totals[0] + t[0], totals[1] + t[1]]
            if part not in ("setup", "staging"):
                compute = [compute[0] + t[0], compute[1] + t[1]]
        ratio = t[1] / t[0] if t[0] > 0 else math.inf
        print(f"| {part} | {t[0]:.4f} | {t[1]:.4f} | {ratio:.1f} |")
    a, b = metrics(first), metrics(second)
    worst, where = 0.0, None
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if x == y:
            continue
        d = abs(x - y) / max(abs(x), abs(y))
        if d > worst:
            worst, where = d, key
    print(f"largest relative difference between the metrics: {worst:.3g}"
          + (f" ({where}: {a[where]!r} / {b[where]!r})" if where else ""))
    for key in ("psnr", "ssim", "pearson", "laplacian_psnr", "pk_ratio_max_deviation"):
        print(f"  {key} {first.get(key)}")


if __name__ == "__main__":
    main()
