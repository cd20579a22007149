"""A chunk damaged inside the file: reading it raises OSError carrying the filter's message, under
HDF5 1.10 and 2.x alike; nothing crashes; the undamaged chunks still read correctly; h5dump exits
non-zero. No wrong value is ever returned: a damaged chunk either raises or is not read at all.

test/hdf5/h5_filter_test.c (`hdf5_corrupt_chunk`) flips one byte through the C API; here every
part of the chunk is hit (header fields, the payload's tables, its data, the last byte), with
the fixed-length and the Huffman codec, and chunks are cut short or lengthened through h5py's
direct chunk write.
"""
import subprocess

import h5py
import numpy as np
import pytest

import h5zgpu
from checks import assert_within_bound, chunk_slices, smooth

EB = 1e-3
BAD = 1  # index of the damaged chunk; a full chunk, so its header has no fill value
OUR_MESSAGE = "h5zgpu: cannot decompress a chunk"

LAYOUTS = {  # name: (shape, chunks, dtype)
    "f32_1d": ((4000,), (1000,), np.float32),
    "f64_2d": ((64, 96), (32, 32), np.float64),
}


def header_len(rank):
    return 40 + 4 * rank  # docs/FORMAT.md, no fill value


# Where to flip a byte (XOR 0xFF), as a function of the stored size and the header length.
FLIPS = {
    "magic": lambda size, h: 0,
    "format version": lambda size, h: 4,
    "element type": lambda size, h: 6,
    "checksum": lambda size, h: 13,
    "eb_abs": lambda size, h: 30,
    "payload length": lambda size, h: 32,
    "chunk dims": lambda size, h: 41,
    "payload tables": lambda size, h: h + 2,
    "payload middle": lambda size, h: (h + size) // 2,
    "last byte": lambda size, h: size - 1,
}

# Replacements for the whole stored chunk, from its original bytes.
REWRITES = {
    "truncated to half": lambda b: b[: len(b) // 2],
    "truncated by one byte": lambda b: b[:-1],
    "header only": lambda b: b[:48],
    "one byte": lambda b: b[:1],
    "extra bytes": lambda b: b + b"\0" * 16,
}


CODECS = {"fixed": 1, "huffman": 2}


def write(path, layout, codec="fixed"):
    shape, chunks, dtype = LAYOUTS[layout]
    a = smooth(shape, dtype)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks,
                             **h5zgpu.filter(codec=codec, mode="abs", eb=EB))
        info = d.id.get_chunk_info(BAD)
        stored = d.id.read_direct_chunk(info.chunk_offset)[1]
    assert info.size > header_len(len(shape)) + 16, "the chunk did not compress"
    assert stored[5] == CODECS[codec], f"chunk {BAD} was written with codec {stored[5]}"
    return a, info


def assert_damage_is_refused(path, a, layout, h5dump=None):
    shape, chunks, _ = LAYOUTS[layout]
    slices = list(chunk_slices(shape, chunks))
    with h5py.File(path, "r") as f:
        d = f["x"]
        with pytest.raises(OSError) as whole:
            d[...]
        with pytest.raises(OSError) as alone:
            d[slices[BAD]]
        for e in (whole, alone):
            assert OUR_MESSAGE in str(e.value), str(e.value)
        # every other chunk still reads, each value within the bound
        for i, s in enumerate(slices):
            if i != BAD:
                assert_within_bound(a[s], d[s], "abs", EB, chunks)
        # and the damaged one still refuses after the others were read (no cached wrong values)
        with pytest.raises(OSError):
            d[slices[BAD]]
    if h5dump:
        r = subprocess.run([h5dump, "--enable-error-stack", "-d", "/x", str(path)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0, "h5dump read the damaged dataset without an error"
        assert OUR_MESSAGE in r.stdout + r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("where", list(FLIPS))
def test_flipped_byte_is_refused(tmp_path, layout, where, codec):
    path = tmp_path / "damaged.h5"
    a, info = write(path, layout, codec)
    pos = FLIPS[where](info.size, header_len(len(LAYOUTS[layout][0])))
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset + pos)
        b = fh.read(1)
        fh.seek(info.byte_offset + pos)
        fh.write(bytes([b[0] ^ 0xFF]))
    assert_damage_is_refused(path, a, layout)


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("how", list(REWRITES))
def test_rewritten_chunk_is_refused(tmp_path, layout, how, codec):
    path = tmp_path / "damaged.h5"
    a, info = write(path, layout, codec)
    with open(path, "rb") as fh:
        fh.seek(info.byte_offset)
        stored = fh.read(info.size)
    with h5py.File(path, "r+") as f:
        f["x"].id.write_direct_chunk(info.chunk_offset, REWRITES[how](stored))
    assert_damage_is_refused(path, a, layout)


@pytest.mark.parametrize("codec", list(CODECS))
def test_h5dump_fails_on_a_damaged_chunk(tmp_path, h5dump, codec):
    """h5dump (Debian's HDF5 1.10 tools, the plugin from HDF5_PLUGIN_PATH) exits non-zero and
    its error stack names our message."""
    path = tmp_path / "damaged.h5"
    a, info = write(path, "f32_1d", codec)
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset + info.size // 2)
        b = fh.read(1)
        fh.seek(info.byte_offset + info.size // 2)
        fh.write(bytes([b[0] ^ 0xFF]))
    assert_damage_is_refused(path, a, "f32_1d", h5dump=h5dump)
