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
from checks import same_metrics

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
    assert same_metrics(got, want)


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


def test_missing_value_is_left_out_of_check_and_sweep(tmp_path, h5zgpu_bin, plugin):
    """A land mask of -1e34 would make the range, and so PSNR, meaningless: check --missing (and
    the Python command, from the dataset's cd_values) leaves its points out, once they came back
    bit for bit; sweep --missing compresses with it as the missing value and judges without it."""
    from test_missing_value import ocean
    eb = 0.01
    a, land = ocean((32, 40, 48), np.float32, -1e34, 0.4, seed=5)
    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        f["orig"] = a
        f.create_dataset("comp", data=a, chunks=(16, 20, 24),
                         **h5zgpu.filter("huffman", mode="abs", eb=eb, missing=-1e34,
                                         dtype=np.float32))
    with h5py.File(path, "r") as f:
        b = f["comp"][...]
    sea_a, sea_b = a[~land].astype(np.float64), b[~land].astype(np.float64)
    want = 20 * np.log10((sea_a.max() - sea_a.min()) / np.sqrt(np.mean((sea_b - sea_a) ** 2)))
    got = json.loads(run(h5zgpu_bin, "check", f"{path}:/orig", f"{path}:/comp", "--json").stdout)
    assert got["missing"] == land.sum() and got["missing_mismatch"] == 0
    assert got["psnr"] == pytest.approx(want, rel=1e-12)
    assert got["max_abs_error"] <= eb
    a.tofile(tmp_path / "a.raw")
    b.tofile(tmp_path / "b.raw")
    raw = [h5zgpu_bin, "check", str(tmp_path / "a.raw"), str(tmp_path / "b.raw"), "-t", "f32",
           "-d", "32,40,48", "--json"]
    explicit = json.loads(subprocess.run(raw + ["--missing", "-1e34"], capture_output=True,
                                         text=True, check=True).stdout)
    assert explicit["psnr"] == got["psnr"]
    without = json.loads(subprocess.run(raw, capture_output=True, text=True, check=True).stdout)
    assert without["range"] > 1e33 and without["missing"] == 0
    sweep = subprocess.run([h5zgpu_bin, "sweep", str(tmp_path / "a.raw"), "-t", "f32", "-d",
                            "32,40,48", "--chunk", "16", "--bounds", "5", "--psnr", "60",
                            "--missing", "-1e34", "--codec", "huffman", "--json"],
                           capture_output=True, text=True, check=True)
    win = json.loads(sweep.stdout)["winners"]["huffman"]
    cd = win["cd_values"]
    assert len(cd) == 7 and cd[4] == 1 and h5zgpu.eb_from_words(cd[5], cd[6]) == \
        float(np.float32(-1e34))
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(16, 16, 16), compression=33900,
                         compression_opts=tuple(cd))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        back, stored = f["x"][...], f["x"].id.get_storage_size()
    assert a.nbytes / stored == pytest.approx(win["ratio"], rel=1e-12)
    assert (back[land] == a[land]).all()
    sea_w = back[~land].astype(np.float64)
    assert 20 * np.log10((sea_a.max() - sea_a.min()) /
                         np.sqrt(np.mean((sea_w - sea_a) ** 2))) >= 60
