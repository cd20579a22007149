"""Writes a copy of a raw float32 N^3 field with NaN over about half of it, in smooth patches
(land, cloud: the missing values xarray and NumPy mark with NaN), for gpu_bench and
gpu_identity on data with missing values:
    python3 bench/mask_nan.py IN.f32 N OUT.f32
"""
import sys

import numpy as np


def main():
    src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    v = np.fromfile(src, np.float32).reshape(n, n, n)
    z, y, x = np.meshgrid(*[np.linspace(0, 6, n, dtype=np.float32)] * 3, indexing="ij")
    land = np.sin(1.3 * z + 1) + np.cos(0.9 * x) + 0.3 * np.sin(2.1 * y) > 0
    v[land] = np.nan
    v.tofile(dst)
    print(f"{dst}: {land.mean():.1%} NaN")


if __name__ == "__main__":
    main()
