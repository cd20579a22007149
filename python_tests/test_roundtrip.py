"""Chunked float datasets through filter 33900 with h5py: every value within its bound."""
import h5py
import numpy as np
import pytest

import h5zgpu
from checks import assert_within_bound, constant, noise, smooth, wide, with_specials

SHAPES = [  # (shape, chunks)
    ((40, 50, 60), (16, 16, 16)),  # 3-D, partial edge chunks on every axis
    ((32, 32, 64), (16, 32, 32)),  # 3-D, chunks tile the dataset exactly
    ((100, 130), (32, 40)),        # 2-D, partial edges
    ((10007,), (1000,)),           # 1-D, a partial last chunk
]
BOUNDS = [("abs", 1e-2), ("abs", 1e-5), ("rel", 1e-2), ("rel", 1e-4), ("pwrel", 1e-2),
          ("pwrel", 1e-4)]
DTYPES = [np.float32, np.float64]
KINDS = {"noise": noise, "wide": wide, "constant": constant}


def write_read(path, a, chunks, opts):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks, **opts)
        stored = d.id.get_storage_size()
    with h5py.File(path, "r") as f:
        d = f["x"]
        pipeline = [d.id.get_create_plist().get_filter(i)
                    for i in range(d.id.get_create_plist().get_nfilters())]
        return d[...], stored, pipeline


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("shape,chunks", SHAPES, ids=["3d-edge", "3d-exact", "2d-edge", "1d-edge"])
@pytest.mark.parametrize("mode,eb", BOUNDS, ids=[f"{m}{eb:g}" for m, eb in BOUNDS])
def test_smooth_with_nan_inf(tmp_path, dtype, shape, chunks, mode, eb):
    a = with_specials(smooth(shape, dtype))
    opts = h5zgpu.filter(codec="fixed", mode=mode, eb=eb)
    back, stored, pipeline = write_read(tmp_path / "t.h5", a, chunks, opts)
    assert_within_bound(a, back, mode, eb, chunks)
    code, _flags, values, name = pipeline[0]
    assert code == h5zgpu.FILTER_ID and b"h5zgpu" in name
    assert tuple(values[:4]) == opts["compression_opts"]
    if eb >= 1e-2:  # smooth data at a loose bound must shrink
        assert stored < a.nbytes / 2


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-3), ("pwrel", 1e-3)],
                         ids=["abs", "rel", "pwrel"])
def test_hard_data(tmp_path, dtype, kind, mode, eb):
    shape, chunks = (30, 40, 50), (16, 16, 16)
    a = KINDS[kind](shape, dtype)
    back, _, _ = write_read(tmp_path / "t.h5", a, chunks,
                            h5zgpu.filter(codec="fixed", mode=mode, eb=eb))
    assert_within_bound(a, back, mode, eb, chunks)


@pytest.mark.parametrize("codec", ["fixed", "auto"])
def test_raw_cd_values_and_partial_reads(tmp_path, codec):
    """compression_opts written by hand, and reads of sub-blocks that cut through chunks."""
    a = smooth((48, 40, 36), np.float32)
    lo, hi = h5zgpu.eb_to_words(1e-3)
    opts = {"compression": 33900,
            "compression_opts": (h5zgpu.CODECS[codec], h5zgpu.MODES["abs"], lo, hi)}
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 16, 16), **opts)
    with h5py.File(path, "r") as f:
        part = f["x"][5:37, 3:30, 10:11]
    assert_within_bound(a[5:37, 3:30, 10:11], part, "abs", 1e-3, (16, 16, 16))


def test_zero_bound_is_lossless(tmp_path):
    a = with_specials(noise((20, 30), np.float64))
    back, _, _ = write_read(tmp_path / "t.h5", a, (8, 8),
                            h5zgpu.filter(codec="fixed", mode="abs", eb=0))
    assert np.array_equal(a.view(np.uint64), back.view(np.uint64))
