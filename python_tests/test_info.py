"""`h5zgpu info FILE.h5` (python -m h5zgpu info): the datasets with filter 33900, their codec,
mode and bound decoded, ratio, and whether this environment reads them; exit status 1 when one
cannot be read here."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5zgpu

HELPER = os.path.dirname(os.path.dirname(os.path.abspath(h5zgpu.__file__)))


def run_info(path, **env):
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": HELPER}
    return subprocess.run([sys.executable, "-m", "h5zgpu", "info", str(path)],
                          capture_output=True, text=True, env={**base, **env})


@pytest.fixture
def mixed(tmp_path, plugin):
    a = np.linspace(0, 1, 48 ** 3, dtype=np.float32).reshape(48, 48, 48)
    path = tmp_path / "mixed.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("rho", data=a, chunks=(16, 16, 16),
                         compression=h5zgpu.Huffman(mode="rel", eb=1e-3))
        f.create_group("g").create_dataset(
            "t", data=a.astype("f8"), chunks=(16, 16, 16),
            **h5zgpu.filter("fixed", mode="pwrel", eb=1e-2, missing=-1e34))
        f.create_dataset("plain", data=a)
    return path


def test_lists_what_it_finds(mixed, plugin):
    r = run_info(mixed, HDF5_PLUGIN_PATH=plugin)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "filter 33900 available" in r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[2:]}
    assert set(rows) == {"/rho", "/g/t"}   # the unfiltered dataset is not listed
    assert rows["/rho"][2:5] == ["huffman", "REL", "0.001"]
    assert rows["/g/t"][2:5] == ["fixed", "PWREL", "0.01"] and "missing" in rows["/g/t"]
    for row in rows.values():
        assert float(row[5]) > 1 and row[6] == "yes"


def test_says_when_this_environment_cannot_read(mixed, tmp_path):
    r = run_info(mixed, H5ZGPU_PLUGIN_DIR=str(tmp_path))   # no plugin anywhere it looks
    assert r.returncode == 1
    assert "NOT available" in r.stdout and "2 dataset(s) cannot be read" in r.stdout


def test_a_file_without_the_filter(tmp_path, plugin):
    path = tmp_path / "plain.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.zeros(10))
    r = run_info(path, HDF5_PLUGIN_PATH=plugin)
    assert r.returncode == 0 and "no dataset" in r.stdout


def test_errors(tmp_path):
    assert run_info(tmp_path / "missing.h5").returncode == 1
    bad = subprocess.run([sys.executable, "-m", "h5zgpu", "info"], capture_output=True,
                         text=True, env={"PYTHONPATH": HELPER})
    assert bad.returncode == 2 and "usage" in bad.stderr
