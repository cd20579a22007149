"""The Python package as `pip install <repository>` leaves it, run with no h5zgpu or HDF5
environment variable set (scripts/test.sh runs this file in a fresh venv with the pip h5py wheel,
and in one with Debian's python3-h5py, both from one wheel built by `pip wheel`). Importing
h5zgpu must be all it takes for h5py to write and read compressed datasets."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5zgpu

PKG = os.path.dirname(os.path.abspath(h5zgpu.__file__))


def field():
    z, y, x = np.meshgrid(*[np.linspace(0, 3, n) for n in (40, 36, 50)], indexing="ij")
    return (np.sin(z) * np.cos(2 * y) + 0.1 * x).astype(np.float32)


def test_installed_not_the_source_tree():
    assert "site-packages" in PKG
    for var in ("HDF5_PLUGIN_PATH", "H5ZGPU_PLUGIN_DIR", "H5ZGPU_LIB", "PYTHONPATH"):
        assert var not in os.environ, var


def test_the_package_carries_its_parts():
    for part in ("plugin/libh5zgpu_filter.so", "lib/libh5zgpu.so", "bin/h5zgpu"):
        assert os.path.isfile(os.path.join(PKG, part)), part
    # h5py's plugin path gets this directory: it holds the plugin and nothing else
    assert os.listdir(os.path.join(PKG, "plugin")) == ["libh5zgpu_filter.so"]
    assert h5zgpu.plugin_dir() == os.path.join(PKG, "plugin")


@pytest.mark.parametrize("codec", [h5zgpu.Huffman, h5zgpu.Fixed])
def test_h5py_writes_and_reads_after_import_alone(tmp_path, codec):
    a = field()
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=a, chunks=(16, 16, 16), compression=codec(mode="abs",
                                                                                 eb=1e-3))
        assert d.id.get_storage_size() < a.nbytes / 2
    # a fresh interpreter that imports h5zgpu and reads it back
    code = ("import h5py, h5zgpu, numpy, sys; "
            "sys.stdout.buffer.write(h5py.File(sys.argv[1])['x'][...].tobytes())")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         check=True).stdout
    back = np.frombuffer(out, dtype=np.float32).reshape(a.shape)
    assert np.abs(back.astype(np.float64) - a).max() <= 1e-3


def test_whole_dataset_io_uses_the_carried_library(tmp_path):
    a = field()
    with h5py.File(tmp_path / "w.h5", "w") as f:
        d = f.create_dataset("x", shape=a.shape, dtype="f4", chunks=(16, 16, 16),
                             **h5zgpu.filter(mode="rel", eb=1e-3))
        h5zgpu.write(d, a)
        np.testing.assert_array_equal(h5zgpu.read(d), d[...])
    from h5zgpu import bulk
    assert bulk.library_path() == os.path.join(PKG, "lib", "libh5zgpu.so")


def test_the_command():
    tool = os.path.join(os.path.dirname(sys.executable), "h5zgpu")
    out = subprocess.run([tool, "cdvalues", "--mode", "abs", "--eb", "1e-3"], capture_output=True,
                         text=True, check=True).stdout
    assert out.splitlines()[0] == "UD=33900,0,4,2,0,3539053052,1062232653"


def test_info_reports_a_readable_file(tmp_path):
    path = tmp_path / "i.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=field(), chunks=(16, 16, 16),
                         compression=h5zgpu.Huffman(mode="rel", eb=1e-3))
    tool = os.path.join(os.path.dirname(sys.executable), "h5zgpu")
    r = subprocess.run([tool, "info", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "filter 33900 available" in r.stdout
    assert r.stdout.splitlines()[-1].split()[:7][2:5] == ["huffman", "REL", "0.001"]
