"""h5zgpu.write and h5zgpu.read (batched compression, direct chunk I/O) against the filter path:
the same writes through `dset[...] = ` and through h5zgpu.write leave every chunk byte for byte
the same, for each codec and mode, float32 and float64, little- and big-endian files, edge
chunks, a fill value, and hyperslabs that cover chunks in part (the chunk's other values are
kept), in one batch and in batches of three (pipelined); h5zgpu.read equals h5py's read.
Datasets it cannot write as the filter would (another filter, no chunks) are refused with a
message.
"""
import ctypes
import gc
import itertools

import h5py
import numpy as np
import pytest

import h5zgpu
import h5zgpu.bulk

SHAPE, CHUNKS = (37, 50, 21), (16, 16, 16)


def field(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape).cumsum(axis=-1) + 0.5).astype(np.float64)


def same_chunks(d1, d2):
    """Every chunk's stored bytes, d1 against d2."""
    for o in itertools.product(*[range(0, n, c) for n, c in zip(d1.shape, d1.chunks)]):
        i1, i2 = d1.id.get_chunk_info_by_coord(o), d2.id.get_chunk_info_by_coord(o)
        assert (i1.byte_offset is None) == (i2.byte_offset is None), f"chunk {o} allocated once"
        if i1.byte_offset is not None:
            assert d1.id.read_direct_chunk(o) == d2.id.read_direct_chunk(o), f"chunk {o} differs"


def pair(tmp_path, dtype, codec, mode, eb, **kw):
    f1 = h5py.File(tmp_path / "filter.h5", "w")
    f2 = h5py.File(tmp_path / "bulk.h5", "w")
    opts = dict(shape=SHAPE, dtype=dtype, chunks=CHUNKS, **h5zgpu.filter(codec, mode=mode, eb=eb),
                **kw)
    return f1, f2, f1.create_dataset("x", **opts), f2.create_dataset("x", **opts)


def small_batches(monkeypatch, batch):
    """Batches of `batch` chunks (None: the default): each batch is made while the one before
    is stored (or read while the one before is placed), in two alternating slots."""
    if batch:
        monkeypatch.setattr(h5zgpu.bulk, "BATCH_CHUNKS", batch)
        monkeypatch.setattr(h5zgpu.bulk, "BATCH_MIN", 1)


@pytest.mark.parametrize("dtype", ["<f4", "<f8", ">f4"])
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-3), ("pwrel", 1e-2)])
@pytest.mark.parametrize("codec", ["fixed", "huffman", "auto"])
@pytest.mark.parametrize("batch", [None, 3])
def test_write_matches_the_filter(tmp_path, monkeypatch, batch, codec, mode, eb, dtype):
    small_batches(monkeypatch, batch)
    f1, f2, d1, d2 = pair(tmp_path, dtype, codec, mode, eb)
    with f1, f2:
        a = field(SHAPE, 1)
        d1[...] = a
        h5zgpu.write(d2, a)
        same_chunks(d1, d2)
        # parts of chunks, over what is stored: the rest of each chunk is kept
        b = field((9, 30, 7), 2) * 3
        sel = np.s_[5:14, 11:41, 3:10]
        d1[sel] = b
        h5zgpu.write(d2, b, sel)
        same_chunks(d1, d2)
        np.testing.assert_array_equal(h5zgpu.read(d2), d1[...])
        np.testing.assert_array_equal(h5zgpu.read(d2, np.s_[3:30, 0:17, 5:21]),
                                      d1[3:30, 0:17, 5:21])


def test_strided_arrays(tmp_path):
    """A non-contiguous array to write and a strided out to read into take the same path's
    bytes and values as contiguous ones."""
    f1, f2, d1, d2 = pair(tmp_path, "<f4", "huffman", "rel", 1e-3)
    with f1, f2:
        a = np.asfortranarray(field(SHAPE, 6).astype(np.float32))
        d1[...] = a
        h5zgpu.write(d2, a[:, :, :])
        same_chunks(d1, d2)
        big = np.zeros((SHAPE[0], SHAPE[1], 2 * SHAPE[2]), np.float32)
        out = big[:, :, ::2]
        assert h5zgpu.read(d2, out=out) is out
        np.testing.assert_array_equal(out, d1[...])
        assert not big[:, :, 1::2].any()
        frozen = np.zeros(SHAPE, np.float32)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            h5zgpu.read(d2, out=frozen)


def test_host_buffers_kept_and_reused(tmp_path):
    """The chunk buffers of write and read come from the library's host memory and go back to
    the package's spares when the call ends: a second call takes them again, none more."""
    f1, f2, d1, d2 = pair(tmp_path, "<f4", "fixed", "abs", 1e-3)
    with f1, f2:
        a = field(SHAPE, 7)
        h5zgpu.write(d2, a)
        h5zgpu.read(d2)
        gc.collect()
        kept = {n: sorted(v) for n, v in h5zgpu.bulk._spare.items()}
        assert kept and all(len(v) == 2 for v in kept.values())
        h5zgpu.write(d2, a)
        h5zgpu.read(d2)
        gc.collect()
        assert {n: sorted(v) for n, v in h5zgpu.bulk._spare.items()} == kept


def test_boxes_outside_refused():
    """The library's copies between an array and chunks check every box."""
    lib = h5zgpu.bulk._load()
    u64 = ctypes.c_uint64
    array, chunk = np.zeros((4, 6), np.float32), np.zeros((2, 3), np.float32)
    ptrs = (ctypes.c_void_p * 1)(chunk.ctypes.data)

    def gather(pos, cpos, n):
        return lib.h5zgpu_gather_boxes(array.ctypes.data, 2, (u64 * 2)(4, 6), (u64 * 2)(2, 3), 4,
                                       1, (u64 * 2)(*pos), (u64 * 2)(*cpos), (u64 * 2)(*n), ptrs)

    array[...] = np.arange(24).reshape(4, 6)
    assert gather((2, 3), (0, 0), (2, 3)) == 0
    np.testing.assert_array_equal(chunk, array[2:4, 3:6])
    assert gather((3, 3), (0, 0), (2, 3)) != 0     # past the array's last row
    assert gather((0, 0), (1, 1), (2, 2)) != 0     # past the chunk's last row
    assert b"box 0" in lib.h5zgpu_last_error()


def test_fill_value_and_unwritten_chunks(tmp_path):
    missing = float(np.float32(-1e34))
    f1, f2, d1, d2 = pair(tmp_path, "<f4", "huffman", "rel", 1e-3, fillvalue=missing)
    with f1, f2:
        a = field((20, 50, 21), 3)
        a[::3, ::5] = missing
        d1[0:20] = a
        h5zgpu.write(d2, a, np.s_[0:20, :, :])
        same_chunks(d1, d2)   # chunks beyond z = 32 stay unallocated in both
        back = h5zgpu.read(d2)
        np.testing.assert_array_equal(back, d1[...])
        assert (back[32:] == np.float32(missing)).all()


def test_refused(tmp_path):
    with h5py.File(tmp_path / "r.h5", "w") as f:
        two = f.create_dataset("two", shape=(64,), dtype="f4", chunks=(32,), fletcher32=True,
                               **h5zgpu.filter("fixed", mode="abs", eb=1e-3))
        with pytest.raises(ValueError, match="filter 33900 alone"):
            h5zgpu.write(two, np.zeros(64, np.float32))
        plain = f.create_dataset("plain", shape=(64,), dtype="f4")
        with pytest.raises(ValueError, match="not chunked"):
            h5zgpu.write(plain, np.zeros(64, np.float32))
        one = f.create_dataset("one", shape=(64,), dtype="f4", chunks=(32,),
                               **h5zgpu.filter("fixed", mode="abs", eb=1e-3))
        with pytest.raises(ValueError, match="shape"):
            h5zgpu.write(one, np.zeros(63, np.float32))
        with pytest.raises(ValueError, match="step 1"):
            h5zgpu.write(one, np.zeros(32, np.float32), np.s_[::2])


def _cupy_on_a_gpu():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0 and h5zgpu.gpu_available()
    except Exception:   # no CuPy, no driver, or a plugin built without CUDA
        return False


@pytest.mark.skipif(not _cupy_on_a_gpu(), reason="needs CuPy, a GPU and a CUDA build: runs on "
                    "the device (scripts/device/suite.sh io)")
@pytest.mark.parametrize("codec", ["fixed", "huffman"])
@pytest.mark.parametrize("batch", [None, 3])
def test_gpu_arrays_match_the_filter(tmp_path, monkeypatch, codec, batch):
    """From and into CuPy arrays: the same chunks as the filter path, edge and partial chunks
    included, and reads equal h5py's; in one batch, and in batches of three (made while the one
    before is stored)."""
    import cupy as cp

    small_batches(monkeypatch, batch)
    f1, f2, d1, d2 = pair(tmp_path, "<f4", codec, "rel", 1e-3)
    with f1, f2:
        a = field(SHAPE, 4).astype(np.float32)
        d1[...] = a
        h5zgpu.write(d2, cp.asarray(a))
        same_chunks(d1, d2)
        b = (field((9, 30, 7), 5) * 3).astype(np.float32)
        sel = np.s_[5:14, 11:41, 3:10]
        d1[sel] = b
        h5zgpu.write(d2, cp.asarray(b), sel)
        same_chunks(d1, d2)
        out = cp.empty(SHAPE, dtype=np.float32)
        assert h5zgpu.read(d2, out=out) is out
        np.testing.assert_array_equal(cp.asnumpy(out), d1[...])
        part = cp.empty((27, 17, 16), dtype=np.float32)
        h5zgpu.read(d2, np.s_[3:30, 0:17, 5:21], out=part)
        np.testing.assert_array_equal(cp.asnumpy(part), d1[3:30, 0:17, 5:21])
