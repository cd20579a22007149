"""Format 4's and 6's Huffman payloads through HDF5: the ANS form (form 3), the axis order and
the built-in ANS tables reach the file through the filter, every value reads back within its
bound, and the chunks are smaller than the Huffman forms alone would make them (docs/FORMAT.md,
"Axis order", "ANS form")."""
import h5py
import numpy as np
import pytest

import h5zgpu

SHAPE = (48, 64, 64)
CHUNKS = (48, 64, 64)   # one chunk: its payload is read back whole
HEADER = 40 + 4 * 3     # docs/FORMAT.md, "Chunk header": rank 3, no fill value
FORM, AXES = 8, 14      # "Payload layout": the form byte and the axis order
PREDICTOR, TABLES = 9, 28   # the predictor byte (0: interpolation); the ANS tables' nibbles
BOOKS = 32              # format 6: head numbers 1..32 name built-in tables


def anisotropic(shape, seed=7):
    """Smooth along z and y, rough along x (fine structure, like a velocity's component along its
    own axis): the axis order puts x first."""
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in shape), indexing="ij")
    smooth = np.sin(z / 9.0) + np.cos(y / 11.0) + 0.5 * np.sin((z + y) / 7.0)
    rough = np.sin(x * 1.3) * (1.0 + 0.2 * rng.standard_normal(shape))
    return (smooth + 0.3 * rough).astype(np.float32)


def payload(dset):
    info = dset.id.get_chunk_info(0)
    return dset.id.read_direct_chunk(info.chunk_offset)[1]


@pytest.mark.parametrize("eb", [1e-2, 1e-3])
def test_ans_form_and_axis_order_through_hdf5(tmp_path, eb):
    a = anisotropic(SHAPE)
    tol = eb * float(a.max() - a.min())
    path = tmp_path / "f4.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=CHUNKS,
                             **h5zgpu.filter("huffman", mode="abs", eb=tol))
        raw = payload(d)
        stored = d.id.get_storage_size()
    assert raw[:4] == b"H5ZG" and raw[4] == 6 and raw[5] == 2, "not a format 6 Huffman chunk"
    assert raw[HEADER + FORM] == 3, f"form {raw[HEADER + FORM]}, not the ANS form"
    assert raw[HEADER + AXES] != 0, "the axes were not permuted"
    with h5py.File(path, "r") as f:
        b = f["x"][...]
    err = np.abs(b.astype(np.float64) - a.astype(np.float64))
    assert err.max() <= tol
    print(f"ABS {eb:g} of the range: ratio {a.nbytes / stored:.2f}, form 3, axes "
          f"{raw[HEADER + AXES]}")


def test_isotropic_field_keeps_its_axes(tmp_path):
    """A field alike along every axis is coded in its own order (no transpose to pay for)."""
    rng = np.random.default_rng(3)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in SHAPE), indexing="ij")
    a = (np.sin(z / 5.0) + np.sin(y / 5.0) + np.sin(x / 5.0)
         + 0.01 * rng.standard_normal(SHAPE)).astype(np.float32)
    tol = 1e-3 * float(a.max() - a.min())
    with h5py.File(tmp_path / "iso.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=CHUNKS,
                             **h5zgpu.filter("huffman", mode="abs", eb=tol))
        raw = payload(d)
        b = d[...]
    assert raw[HEADER + AXES] == 0
    assert np.abs(b.astype(np.float64) - a.astype(np.float64)).max() <= tol


def table_heads(pay):
    """The head number of each ANS table of a format 6 payload ("ANS form": numbers in 3-bit
    nibble groups, low first, bit 3 set on all but a number's last; a stored table's head is
    32 + m, its frequencies follow, a zero one followed by the count of further zeros)."""
    nib = [(pay[TABLES + k // 2] >> (4 * (k % 2))) & 15 for k in range(2 * (len(pay) - TABLES))]
    k = 0

    def number():
        nonlocal k
        v, sh = 0, 0
        while True:
            v |= (nib[k] & 7) << sh
            k, sh = k + 1, sh + 3
            if not nib[k - 1] & 8:
                return v

    heads = []
    for _ in range(12 if pay[PREDICTOR] == 0 else 3):
        h = number()
        heads.append(h)
        t, m, total = 0, h - BOOKS if h > BOOKS else 0, 0
        while t < m:
            f = number()
            total += f
            t += 1 if f else number() + 1
        assert m == 0 or total == 1 << 14, f"a stored table adds up to {total}, not 2^14"
    return heads


def test_builtin_tables_through_hdf5(tmp_path):
    """Small chunks of a smooth field take some of their ANS tables from the library's built-in
    ones (format 6) and store others; what h5py reads back is within the bound."""
    a = anisotropic((64, 64, 64))
    tol = 1e-2 * float(a.max() - a.min())
    path = tmp_path / "books.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=(32, 32, 32),
                             **h5zgpu.filter("huffman", mode="abs", eb=tol))
        raws = [d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)[1]
                for i in range(d.id.get_num_chunks())]
        stored = d.id.get_storage_size()
    heads = [h for raw in raws if raw[HEADER + FORM] == 3 for h in table_heads(raw[HEADER:])]
    assert all(raw[4] == 6 for raw in raws), "not format 6 chunks"
    assert any(1 <= h <= BOOKS for h in heads), f"no built-in table among heads {heads}"
    assert any(h > BOOKS for h in heads), f"no stored table among heads {heads}"
    with h5py.File(path, "r") as f:
        b = f["x"][...]
    assert np.abs(b.astype(np.float64) - a.astype(np.float64)).max() <= tol
    print(f"32^3 chunks, ABS 1e-2 of the range: ratio {a.nbytes / stored:.2f}, "
          f"{sum(1 <= h <= BOOKS for h in heads)} of {len(heads)} ANS tables built-in")
