"""Format 4's Huffman payloads through HDF5: the ANS form (form 3) and the axis order reach the
file through the filter, every value reads back within its bound, and the chunks are smaller
than the Huffman forms alone would make them (docs/FORMAT.md, "Axis order", "ANS form")."""
import h5py
import numpy as np
import pytest

import h5zgpu

SHAPE = (48, 64, 64)
CHUNKS = (48, 64, 64)   # one chunk: its payload is read back whole
HEADER = 40 + 4 * 3     # docs/FORMAT.md, "Chunk header": rank 3, no fill value
FORM, AXES = 8, 14      # "Payload layout": the form byte and the axis order


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
