"""`h5zgpu sweep`: for each codec, the bound of the grid (and its refinement) with the highest
ratio that meets the criteria. Checked independently: the winner's cd_values written through
h5py's filter path with the same chunks give the ratio the sweep reports and meet the criteria
by NumPy's PSNR and power spectrum; every try's verdict follows from its own metrics; the
larger bound tried before the winner fails by NumPy's metrics too."""
import json
import subprocess

import h5py
import numpy as np
import pytest

from test_check_metrics import power_ratio

PSNR, PK = 60.0, 0.01
SHAPE, CHUNK = (40, 40, 40), 16   # edge chunks partial: padded as HDF5 pads them


def field():
    z, y, x = np.meshgrid(*[np.linspace(0, 6, n) for n in SHAPE], indexing="ij")
    rng = np.random.default_rng(3)
    return (np.sin(z) * np.cos(1.3 * y) + 0.2 * np.sin(3 * x) +
            0.01 * rng.standard_normal(SHAPE)).astype(np.float32)


def sweep(tmp_path, h5zgpu_bin, *args):
    a = field()
    a.tofile(tmp_path / "f.raw")
    return subprocess.run([h5zgpu_bin, "sweep", str(tmp_path / "f.raw"), "-t", "f32", "-d",
                           ",".join(map(str, SHAPE)), "--chunk", str(CHUNK), *args],
                          capture_output=True, text=True)


def psnr(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return 20 * np.log10((a.max() - a.min()) / np.sqrt(np.mean((b - a) ** 2)))


def through_filter(tmp_path, a, cd):
    """The values read back (in a new handle: HDF5's chunk cache holds what was written) and
    the ratio."""
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f.create_dataset("x", data=a, chunks=(CHUNK,) * 3, compression=33900,
                         compression_opts=tuple(int(v) for v in cd))
    with h5py.File(tmp_path / "w.h5", "r") as f:
        return f["x"][...], a.nbytes / f["x"].id.get_storage_size()


@pytest.mark.parametrize("mode", ["rel", "abs"])
def test_sweep_picks_the_densest_bound_that_meets_the_criteria(tmp_path, h5zgpu_bin, plugin,
                                                               mode):
    run = sweep(tmp_path, h5zgpu_bin, "--psnr", str(PSNR), "--pk", str(PK), "--mode", mode,
                "--bounds", "8", "--json")
    if run.returncode != 0 and "FFTW3" in run.stderr:
        pytest.skip("this build has no FFTW3 (Debian: libfftw3-dev; scripts/test.sh installs it, "
                    "so CI runs this)")
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    a = field()
    for t in got["tries"]:   # a null PSNR is an exact reconstruction's
        meets = (t["psnr"] is None or t["psnr"] >= PSNR) and t["pk_ratio_max_deviation"] <= PK
        assert t["accepted"] == meets, t
    for codec in ("fixed", "huffman"):
        mine = [t for t in got["tries"] if t["codec"] == codec]
        win = got["winners"][codec]
        assert win is not None, codec
        best = max(t["ratio"] for t in mine if t["accepted"])
        assert win["ratio"] == best
        back, ratio = through_filter(tmp_path, a, win["cd_values"])
        assert ratio == pytest.approx(win["ratio"], rel=1e-12)
        mine_win = [t for t in mine if t["eb"] == win["eb"]][0]
        assert psnr(a, back) == pytest.approx(mine_win["psnr"], rel=1e-9) and psnr(a, back) >= PSNR
        dev = np.abs(power_ratio(a, back) - 1).max()
        assert dev == pytest.approx(mine_win["pk_ratio_max_deviation"], rel=1e-6) and dev <= PK
        # the grid's bound just above the winner's (or the refinement's failures) fail by NumPy
        failed = [t for t in mine if not t["accepted"] and t["eb"] > win["eb"]]
        assert failed, "no larger bound failed: the grid does not reach the criteria's edge"
        t = min(failed, key=lambda t: t["eb"])
        cd = list(win["cd_values"])
        cd[2], cd[3] = np.array([t["eb"]]).view(np.uint32)
        back, ratio = through_filter(tmp_path, a, cd)
        assert psnr(a, back) < PSNR or np.abs(power_ratio(a, back) - 1).max() > PK


def test_sweep_table_names_the_winner_and_its_cd_values(tmp_path, h5zgpu_bin):
    run = sweep(tmp_path, h5zgpu_bin, "--psnr", str(PSNR), "--codec", "huffman", "--bounds", "6")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("h5zgpu sweep ") and "6 rel bounds" in lines[0]
    assert any(line.startswith("huffman: rel ") for line in lines)
    assert any(line.startswith("UD=33900,0,4,2,1,") for line in lines)


def test_sweep_without_a_bound_that_meets_fails(tmp_path, h5zgpu_bin):
    run = sweep(tmp_path, h5zgpu_bin, "--psnr", "400", "--bounds", "3", "--codec", "fixed")
    assert run.returncode == 1
    assert "fixed: no bound of the grid meets the criteria" in run.stdout


@pytest.mark.parametrize("args,text", [
    ((), "sweep needs a criterion"),
    (("--psnr", "60", "--bounds", "1"), "--bounds 1 is not valid"),
    (("--ssim", "-1"), "--ssim -1 is not valid"),
])
def test_sweep_refuses_bad_command_lines(tmp_path, h5zgpu_bin, args, text):
    run = sweep(tmp_path, h5zgpu_bin, *args)
    assert run.returncode == 2 and text in run.stderr, run.stderr
