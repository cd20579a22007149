"""What must fail at create_dataset, with the filter's own message, and never crash."""
import math

import h5py
import numpy as np
import pytest

import h5zgpu

GOOD = h5zgpu.cd_values("fixed", mode="abs", eb=1e-3)


def words(eb):
    return h5zgpu.eb_to_words(eb)


BAD_CD_VALUES = {  # case: (cd_values, what the message must name)
    "none": ((), "got 0 values"),
    "one value": ((1,), "got 1 values"),
    "three values": (GOOD[:3], "got 3 values"),
    "unknown codec": ((7, 0, *GOOD[2:]), "cd_values[0]=7"),
    "unknown mode": ((1, 9, *GOOD[2:]), "cd_values[1]=9"),
    "negative bound": ((1, 0, *words(-1e-3)), "error bound -0.001"),
    "NaN bound": ((1, 0, *words(math.nan)), "error bound nan"),
    "infinite bound": ((1, 0, *words(math.inf)), "error bound inf"),
    "PWREL bound 1.5": ((1, 2, *words(1.5)), "PWREL error bound 1.5"),
    "flags word 2": ((1, 0, *words(1e-3), 2), "cd_values[4]=2 has unknown flag bits"),
    "a value past the flags word's": ((1, 0, *words(1e-3), 0, 7),
                                      "1 values after the 5 the flags word announces"),
}


def create_error(tmp_path, data, opts):
    with h5py.File(tmp_path / "t.h5", "w") as f:
        with pytest.raises(Exception) as info:
            f.create_dataset("x", data=data, chunks=True, **opts)
        assert "x" not in f
    return str(info.value)


@pytest.mark.parametrize("case", sorted(BAD_CD_VALUES))
def test_bad_cd_values_fail_at_create(tmp_path, case):
    cd, text = BAD_CD_VALUES[case]
    msg = create_error(tmp_path, np.ones((10, 10), np.float32),
                       {"compression": 33900, "compression_opts": cd})
    assert "h5zgpu: " in msg and text in msg, msg


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.uint8, np.float16])
def test_unsupported_types_fail_at_create(tmp_path, dtype):
    msg = create_error(tmp_path, np.arange(100, dtype=dtype).reshape(10, 10),
                       h5zgpu.filter(codec="fixed", mode="abs", eb=1e-3))
    assert "h5zgpu: " in msg and "float32 and float64" in msg, msg


def test_file_stays_usable_after_a_refused_dataset(tmp_path):
    path = tmp_path / "t.h5"
    a = np.linspace(0, 1, 1000, dtype=np.float32)
    with h5py.File(path, "w") as f:
        with pytest.raises(Exception):
            f.create_dataset("bad", data=a.astype(np.int32), chunks=(100,),
                             **h5zgpu.filter(codec="fixed", mode="abs", eb=1e-3))
        f.create_dataset("good", data=a, chunks=(100,),
                         **h5zgpu.filter(codec="fixed", mode="abs", eb=1e-3))
    with h5py.File(path, "r") as f:
        assert list(f) == ["good"]
        assert np.abs(f["good"][...] - a).max() <= 1e-3


@pytest.mark.parametrize("extra", [dict(shuffle=True), dict(scaleoffset=3)])
def test_a_filter_before_h5zgpu_fails_at_create(tmp_path, extra):
    # h5py puts shuffle and scaleoffset before compression: h5zgpu would see shuffled bytes or be
    # skipped, so the dataset is refused
    msg = create_error(tmp_path, np.ones((10, 10), np.float32),
                       {**h5zgpu.filter(codec="auto", mode="abs", eb=1e-3), **extra})
    assert "comes before h5zgpu in the dataset's pipeline" in msg, msg


def test_fletcher32_after_h5zgpu_works(tmp_path):
    a = np.linspace(0, 1, 1000, dtype=np.float32)
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(100,), fletcher32=True,
                         **h5zgpu.filter(codec="auto", mode="abs", eb=1e-3))
    with h5py.File(tmp_path / "t.h5", "r") as f:
        assert np.abs(f["x"][...] - a).max() <= 1e-3


def test_bad_device_fails_at_create(tmp_path, monkeypatch):
    monkeypatch.setenv("H5ZGPU_DEVICE", "bogus")
    msg = create_error(tmp_path, np.ones((10, 10), np.float32),
                       h5zgpu.filter(codec="fixed", mode="abs", eb=1e-3))
    assert "H5ZGPU_DEVICE='bogus' is not auto, cpu, gpu or gpu:N" in msg, msg


def test_a_write_the_filter_cannot_do_fails(tmp_path, monkeypatch):
    # h5py marks filters optional, and HDF5 stores a chunk whose optional filter failed raw and
    # in silence: set_local makes h5zgpu mandatory
    a = np.linspace(0, 1, 1000, dtype=np.float32)
    with h5py.File(tmp_path / "t.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype=a.dtype, chunks=(100,),
                             **h5zgpu.filter(codec="fixed", mode="abs", eb=1e-3))
        monkeypatch.setenv("H5ZGPU_DEVICE", "bogus")
        with pytest.raises(Exception) as info:
            d[...] = a
            f.flush()
        assert "h5zgpu: compression failed" in str(info.value)
        monkeypatch.delenv("H5ZGPU_DEVICE")
