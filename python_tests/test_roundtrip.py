"""Chunked float datasets through filter 33900 with h5py: every value within its bound, with
each codec: fixed-length (1), Huffman (2) and auto (0, the smaller per chunk)."""
import h5py
import numpy as np
import pytest

import h5zgpu
from checks import (assert_within_bound, chunk_codecs, constant, noise, smooth, wide,
                    with_specials)

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
CODECS = ["fixed", "huffman", "auto"]
# the codec bytes a chunk written with each codec may carry (0: stored raw, it did not shrink)
WRITTEN = {"fixed": {0, 1}, "huffman": {0, 2}, "auto": {0, 1, 2}}


def write_read(path, a, chunks, opts, **kw):
    """Writes a through the filter, reads it back: (values, stored bytes, the filter pipeline,
    each stored chunk's codec byte)."""
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks, **opts, **kw)
        stored = d.id.get_storage_size()
    with h5py.File(path, "r") as f:
        d = f["x"]
        pipeline = [d.id.get_create_plist().get_filter(i)
                    for i in range(d.id.get_create_plist().get_nfilters())]
        return d[...], stored, pipeline, chunk_codecs(d)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("shape,chunks", SHAPES, ids=["3d-edge", "3d-exact", "2d-edge", "1d-edge"])
@pytest.mark.parametrize("mode,eb", BOUNDS, ids=[f"{m}{eb:g}" for m, eb in BOUNDS])
def test_smooth_with_nan_inf(tmp_path, dtype, shape, chunks, mode, eb, codec):
    a = with_specials(smooth(shape, dtype))
    opts = h5zgpu.filter(codec=codec, mode=mode, eb=eb)
    back, stored, pipeline, codecs = write_read(tmp_path / "t.h5", a, chunks, opts)
    assert_within_bound(a, back, mode, eb, chunks)
    code, _flags, values, name = pipeline[0]
    assert code == h5zgpu.FILTER_ID and b"h5zgpu" in name
    assert tuple(values[:4]) == opts["compression_opts"]
    assert set(codecs) <= WRITTEN[codec], codecs
    if eb >= 1e-2:  # smooth data at a loose bound must shrink
        assert stored < a.nbytes / 2


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-3), ("pwrel", 1e-3)],
                         ids=["abs", "rel", "pwrel"])
def test_hard_data(tmp_path, dtype, kind, mode, eb, codec):
    shape, chunks = (30, 40, 50), (16, 16, 16)
    a = KINDS[kind](shape, dtype)
    back, _, _, codecs = write_read(tmp_path / "t.h5", a, chunks,
                                    h5zgpu.filter(codec=codec, mode=mode, eb=eb))
    assert_within_bound(a, back, mode, eb, chunks)
    assert set(codecs) <= WRITTEN[codec], codecs


@pytest.mark.parametrize("codec", ["huffman", "auto"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("mode,eb", [("abs", 1e-2), ("rel", 1e-3), ("pwrel", 1e-3)],
                         ids=["abs", "rel", "pwrel"])
def test_huffman_chunks_are_written(tmp_path, report, dtype, mode, eb, codec):
    """Smooth 3-D chunks: Huffman writes codec 2 chunks that shrink; auto picks per chunk."""
    shape, chunks = (64, 64, 64), (32, 32, 32)
    a = smooth(shape, dtype)
    back, stored, _, codecs = write_read(tmp_path / "t.h5", a, chunks,
                                         h5zgpu.filter(codec=codec, mode=mode, eb=eb))
    assert_within_bound(a, back, mode, eb, chunks)
    assert len(codecs) == 8 and set(codecs) <= WRITTEN[codec] and codecs.count(0) == 0, codecs
    if codec == "huffman":
        assert stored < a.nbytes / 2
    report(f"{codec} {np.dtype(dtype).name} {mode} {eb:g} smooth 64^3 in 32^3 chunks: "
           f"ratio {a.nbytes / stored:.2f}, chunk codecs {sorted(set(codecs))}")


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-3), ("pwrel", 1e-3)],
                         ids=["abs", "rel", "pwrel"])
def test_dataset_fill_value(tmp_path, dtype, mode, eb, codec):
    """HDF5's fill value (create_dataset(fillvalue=...)) is the codec's: elements equal to it
    come back bit for bit and stay out of REL ranges; chunks never written read as it."""
    fill = -9999.0
    shape, chunks = (70, 90), (32, 32)
    a = with_specials(smooth(shape, dtype))
    a[10:40, 5:50] = fill  # whole chunks and parts of chunks
    a[::7, ::11] = fill
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=shape, dtype=dtype, chunks=chunks, fillvalue=fill,
                             **h5zgpu.filter(codec=codec, mode=mode, eb=eb))
        d[:64] = a[:64]  # the chunks of rows 64.. stay unwritten
    with h5py.File(path, "r") as f:
        back = f["x"][...]
        codecs = chunk_codecs(f["x"])
    want = a.copy()
    want[64:] = fill
    assert_within_bound(want, back, mode, eb, chunks, fill=fill)
    assert (back[64:] == dtype(fill)).all()
    assert set(codecs) <= WRITTEN[codec], codecs


@pytest.mark.parametrize("codec", CODECS)
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


@pytest.mark.parametrize("codec", CODECS)
def test_zero_bound_is_lossless(tmp_path, codec):
    a = with_specials(noise((20, 30), np.float64))
    back, _, _, _ = write_read(tmp_path / "t.h5", a, (8, 8),
                               h5zgpu.filter(codec=codec, mode="abs", eb=0))
    assert np.array_equal(a.view(np.uint64), back.view(np.uint64))
