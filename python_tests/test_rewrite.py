"""Datasets written in parts through h5py, the file closed and opened again between writes: HDF5
decompresses each chunk a write touches, changes the part and compresses the whole chunk again.
Every value must stay within its bound of what was last written to it (REL: of the largest
range its chunk had at any write since), and writing back what was read moves nothing in ABS
and PWREL.
"""
import h5py
import numpy as np
import pytest

import h5zgpu
from checks import chunk_slices

EB = 1e-3
SHAPE, CHUNKS = (30, 40, 50), (16, 16, 16)
# (index of the part written, scale of the new values): slabs along each axis, a box, an edge
WRITES = [
    (np.s_[:, 5:9, :], 3.0),
    (np.s_[10:14, 20:24, 30:34], 40.0),
    (np.s_[:, :, 0:7], 0.5),
    (np.s_[25:, 33:, :], 1.0),
    (np.s_[7:8, :, :], 2.0),
]


def field(shape, scale, seed):
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    v = scale * (np.sin(grids[0] + seed) * np.cos(grids[1]) + 0.3 * np.sin(grids[2]))
    return v + 0.01 * scale * rng.standard_normal(shape) + 0.25


def chunk_ranges(values):
    """max - min of each chunk's values, spread over the chunk's elements."""
    r = np.zeros(values.shape)
    for s in chunk_slices(values.shape, CHUNKS):
        r[s] = np.ptp(values[s].astype(np.float64))
    return r


def touched(index):
    """The elements of the chunks a write to `index` touches."""
    mark = np.zeros(SHAPE, dtype=bool)
    mark[index] = True
    out = np.zeros(SHAPE, dtype=bool)
    for s in chunk_slices(SHAPE, CHUNKS):
        out[s] = mark[s].any()
    return out, mark


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["abs", "rel", "pwrel"])
@pytest.mark.parametrize("codec", ["fixed", "huffman", "auto"])
def test_partial_writes_keep_the_bound(tmp_path, codec, mode, dtype):
    path = tmp_path / "rewrite.h5"
    want = field(SHAPE, 1.0, 0).astype(dtype)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=want, chunks=CHUNKS,
                         **h5zgpu.filter(codec, mode=mode, eb=EB))
    with h5py.File(path, "r") as f:
        held = f["x"][...]
    span = chunk_ranges(held)  # REL: the largest range of each element's chunk since written
    for k, (index, scale) in enumerate(WRITES, start=1):
        new = field(want[index].shape, scale, k).astype(dtype)
        chunks, mark = touched(index)
        after = held.copy()
        after[index] = new
        now = chunk_ranges(after)
        span = np.where(mark, now, np.where(chunks, np.maximum(span, now), span))
        want[index] = new
        with h5py.File(path, "r+") as f:
            f["x"][index] = new
        with h5py.File(path, "r") as f:
            held = f["x"][...]
        err = np.abs(held.astype(np.float64) - want.astype(np.float64))
        bound = {"abs": np.full(SHAPE, EB), "rel": EB * span,
                 "pwrel": EB * np.abs(want.astype(np.float64))}[mode]
        miss = ~(err <= bound)
        assert not miss.any(), (
            f"after write {k} ({index}): {int(miss.sum())} values out of bound; worst error "
            f"{err[miss].max():.6g} against {bound[miss].min():.6g}")

    with h5py.File(path, "r+") as f:
        f["x"][...] = held
    with h5py.File(path, "r") as f:
        again = f["x"][...]
    if mode != "rel":
        assert (again.view(np.uint8) == held.view(np.uint8)).all(), \
            "writing back the values read moved some of them"
    err = np.abs(again.astype(np.float64) - want.astype(np.float64))
    assert (err <= {"abs": EB, "rel": EB * span,
                    "pwrel": EB * np.abs(want.astype(np.float64))}[mode]).all()
