"""`h5zgpu check` and `h5zgpu sweep` on HDF5 datasets (FILE.h5:/dataset, the Python package's
command): the same metrics as on raw copies of the arrays, the compressed dataset's ratio, the
--original form, and the PNGs of --plot."""
import importlib.util
import json
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5zgpu

HELPER = os.path.dirname(os.path.dirname(os.path.abspath(h5zgpu.__file__)))
NEEDS_MPL = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                               reason="needs matplotlib: scripts/test.sh installs it (Debian's "
                                      "python3-matplotlib, and pip's in its venv)")


def run(h5zgpu_bin, *args, cwd=None):
    env = {**os.environ, "PYTHONPATH": HELPER, "H5ZGPU_BIN": h5zgpu_bin}
    return subprocess.run([sys.executable, "-m", "h5zgpu", *args], capture_output=True,
                          text=True, env=env, cwd=cwd)


@pytest.fixture
def pair(tmp_path, plugin):
    z, y, x = np.meshgrid(*[np.linspace(0, 6, 32)] * 3, indexing="ij")
    a = (np.sin(z) * np.cos(1.3 * y) + 0.2 * np.sin(3 * x)).astype(np.float32)
    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f["orig"] = a
        f.create_dataset("comp", data=a, chunks=(16, 16, 16),
                         compression=h5zgpu.Huffman(mode="rel", eb=1e-3))
    with h5py.File(path, "r") as f:
        b, stored = f["comp"][...], f["comp"].id.get_storage_size()
    return path, a, b, a.nbytes / stored


def test_check_on_datasets_equals_check_on_raw_copies(tmp_path, h5zgpu_bin, pair):
    path, a, b, ratio = pair
    got = run(h5zgpu_bin, "check", f"{path}:/orig", f"{path}:/comp", "--json")
    assert got.returncode == 0, got.stderr
    got = json.loads(got.stdout)
    a.tofile(tmp_path / "a.raw")
    b.tofile(tmp_path / "b.raw")
    raw = subprocess.run([h5zgpu_bin, "check", str(tmp_path / "a.raw"), str(tmp_path / "b.raw"),
                          "-t", "f32", "-d", "32,32,32", "--json"], capture_output=True,
                         text=True, check=True)
    want = json.loads(raw.stdout)
    assert got.pop("compression_ratio") == pytest.approx(ratio, rel=1e-12)
    assert got == want


def test_check_original_form_and_text(h5zgpu_bin, pair):
    path, _, _, ratio = pair
    got = run(h5zgpu_bin, "check", f"{path}:/comp", "--original", f"{path}:/orig")
    assert got.returncode == 0, got.stderr
    assert f"h5zgpu check {path}:/comp against {path}:/orig" in got.stdout
    assert f"compression ratio {ratio:.4g}" in got.stdout
    # an uncompressed B has no ratio
    got = run(h5zgpu_bin, "check", f"{path}:/orig", f"{path}:/orig", "--json")
    assert json.loads(got.stdout)["compression_ratio"] is None


def test_check_dataset_against_raw_file(tmp_path, h5zgpu_bin, pair):
    path, a, _, _ = pair
    a.tofile(tmp_path / "a.raw")
    got = run(h5zgpu_bin, "check", str(tmp_path / "a.raw"), f"{path}:/comp", "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["max_abs_error"] > 0
    bad = run(h5zgpu_bin, "check", str(tmp_path / "a.raw"), f"{path}:/comp", "-d", "16,64,32")
    assert bad.returncode == 1 and "do not match the dataset's -t f32 -d 32,32,32" in bad.stderr


@NEEDS_MPL
def test_check_plots(tmp_path, h5zgpu_bin, pair):
    path = pair[0]
    got = run(h5zgpu_bin, "check", f"{path}:/orig", f"{path}:/comp", "--plot",
              str(tmp_path / "p"))
    assert got.returncode == 0, got.stderr
    assert "PSNR" in got.stdout
    for name in ("error_histogram.png", "slice.png", "pk_ratio.png"):
        data = (tmp_path / "p" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000, name


@NEEDS_MPL
def test_sweep_of_a_dataset_with_plot(tmp_path, h5zgpu_bin, pair):
    path, a, _, _ = pair
    got = run(h5zgpu_bin, "sweep", f"{path}:/orig", "--psnr", "60", "--chunk", "16", "--bounds",
              "6", "--json", "--plot", str(tmp_path / "p"))
    assert got.returncode == 0, got.stderr
    winners = json.loads(got.stdout)["winners"]
    a.tofile(tmp_path / "a.raw")
    raw = subprocess.run([h5zgpu_bin, "sweep", str(tmp_path / "a.raw"), "-t", "f32", "-d",
                          "32,32,32", "--psnr", "60", "--chunk", "16", "--bounds", "6", "--json"],
                         capture_output=True, text=True, check=True)
    assert winners == json.loads(raw.stdout)["winners"]
    data = (tmp_path / "p" / "sweep.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
