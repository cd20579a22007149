"""`h5zgpu check --json`'s quality metrics against an independent NumPy computation: the error's
mean, extremes and histogram, SNR, Pearson, the error's autocorrelation at lags 1..10 (array
order), SSIM (windows of 8 per axis, shorter axes whole, step 1) and the PSNR of first and second
differences and of the Laplacian, on 1-D to 3-D arrays of both types, with and without
non-finite values (left out of every metric; SSIM skips the windows holding one, a stencil the
values it touches)."""
import json
import subprocess

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from checks import same_metrics

TOL = 1e-9


def reference(a, b):
    x, y = a.astype(np.float64), b.astype(np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    e = np.where(ok, y - x, 0.0)
    xs, ys, es = x[ok], y[ok], (y - x)[ok]
    nz = ok & (x != 0)
    rel = np.abs((y - x)[nz]) / np.abs(x[nz])
    out = {"mean_error": es.mean(), "min_error": es.min(), "max_error": es.max(),
           "pw_rel_error_min": rel.min(), "pw_rel_error_max": rel.max(),
           "pw_rel_error_mean": rel.mean(),
           "pearson": np.corrcoef(xs, ys)[0, 1],
           "snr": 10 * np.log10(((xs - xs.mean()) ** 2).sum() / (es ** 2).sum())}
    m = es.mean()
    d = np.where(ok, e - m, 0.0).ravel()   # a non-finite point takes no part in a pair
    out["autocorrelation"] = [(d[:-k] * d[k:]).sum() / (d * d).sum() for k in range(1, 11)]
    finite_x = x[np.isfinite(x)]
    L = finite_x.max() - finite_x.min()
    c1, c2 = (0.01 * L) ** 2, (0.03 * L) ** 2
    w = tuple(min(8, n) for n in x.shape)
    ax = tuple(range(x.ndim, 2 * x.ndim))
    good = sliding_window_view(ok, w).all(axis=ax)
    wa, wb = sliding_window_view(np.where(ok, x, 0), w), sliding_window_view(np.where(ok, y, 0), w)
    ma, mb = wa.mean(axis=ax), wb.mean(axis=ax)
    va, vb = wa.var(axis=ax), wb.var(axis=ax)
    cov = (wa * wb).mean(axis=ax) - ma * mb
    s = ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma ** 2 + mb ** 2 + c1) * (va + vb + c2))
    out["ssim"] = s[good].mean()
    out.update(stencils(x, y))
    return out


def psnr(da, db):
    ok = np.isfinite(da) & np.isfinite(db)
    da, db = da[ok], db[ok]
    return 20 * np.log10((da.max() - da.min()) / np.sqrt(((db - da) ** 2).mean()))


def second(v, k):
    n = v.shape[k]
    take = lambda lo, hi: np.take(v, range(lo, hi), axis=k)  # noqa: E731
    return take(2, n) - 2 * take(1, n - 1) + take(0, n - 2)


def stencils(x, y):
    d1a = np.concatenate([np.diff(x, axis=k).ravel() for k in range(x.ndim)])
    d1b = np.concatenate([np.diff(y, axis=k).ravel() for k in range(x.ndim)])
    d2a = np.concatenate([second(x, k).ravel() for k in range(x.ndim)])
    d2b = np.concatenate([second(y, k).ravel() for k in range(x.ndim)])
    inner = lambda v, k: v[tuple(slice(None) if j == k else slice(1, -1)  # noqa: E731
                                 for j in range(x.ndim))]
    la = sum(inner(second(x, k), k) for k in range(x.ndim))
    lb = sum(inner(second(y, k), k) for k in range(x.ndim))
    return {"derivative_psnr": psnr(d1a, d1b), "second_derivative_psnr": psnr(d2a, d2b),
            "laplacian_psnr": psnr(la.ravel(), lb.ravel())}


@pytest.mark.parametrize("shape,dtype,holes", [
    ((10, 12, 14), "f8", False), ((9, 20), "f4", False), ((50,), "f8", False),
    ((6, 11, 13), "f4", False), ((12, 12, 12), "f4", True), ((16, 30), "f8", True),
])
def test_metrics_match_numpy(tmp_path, h5zgpu_bin, shape, dtype, holes):
    rng = np.random.default_rng(len(shape) * 100 + shape[0])
    z = np.indices(shape).sum(axis=0)
    a = (np.sin(0.3 * z) + 0.1 * rng.standard_normal(shape)).astype(dtype)
    b = (a + 0.01 * rng.standard_normal(shape)).astype(dtype)
    if holes:   # NaN in the original, +inf in the reconstruction, near the start: left out
        a.flat[:40:7] = np.nan
        b.flat[60:100:13] = np.inf
    a.tofile(tmp_path / "a.raw")
    b.tofile(tmp_path / "b.raw")
    out = subprocess.run([h5zgpu_bin, "check", str(tmp_path / "a.raw"), str(tmp_path / "b.raw"),
                          "-t", "f32" if dtype == "f4" else "f64",
                          "-d", ",".join(map(str, shape)), "--json"],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    for key, want in reference(a, b).items():
        np.testing.assert_allclose(got[key], want, rtol=TOL, atol=1e-12, err_msg=key)
    e = (b.astype(np.float64) - a.astype(np.float64))
    e = e[np.isfinite(e)]
    want, _ = np.histogram(e, bins=100, range=(e.min(), e.max()))
    hist = np.array(got["error_histogram"])
    assert hist.sum() == e.size
    assert np.abs(hist - want).sum() <= 2   # a value on a bin edge may round to either side


def power_ratio(a, b):
    """P_B(k) / P_A(k) over shells of |k| rounded to the nearest integer, k = 1..n/2."""
    n = a.shape[0]
    f = np.fft.fftfreq(n) * n
    kz, ky, kx = np.meshgrid(f, f, f, indexing="ij")
    shell = np.floor(np.sqrt(kz ** 2 + ky ** 2 + kx ** 2) + 0.5).astype(int)
    pa = np.abs(np.fft.fftn(a.astype(np.float64))) ** 2
    pb = np.abs(np.fft.fftn(b.astype(np.float64))) ** 2
    ks = range(1, n // 2 + 1)
    return np.array([pb[shell == k].mean() / pa[shell == k].mean() for k in ks])


def check_json(tmp_path, h5zgpu_bin, a, b, *extra):
    a.tofile(tmp_path / "a.raw")
    b.tofile(tmp_path / "b.raw")
    out = subprocess.run([h5zgpu_bin, "check", str(tmp_path / "a.raw"), str(tmp_path / "b.raw"),
                          "-t", "f32" if a.dtype == np.float32 else "f64",
                          "-d", ",".join(map(str, a.shape)), "--json", *extra],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("n,dtype", [(16, "f8"), (12, "f4"), (9, "f8")])
def test_power_spectrum_matches_numpy(tmp_path, h5zgpu_bin, n, dtype):
    rng = np.random.default_rng(n)
    z = np.indices((n, n, n)).sum(axis=0)
    a = (np.sin(0.4 * z) + 0.3 * rng.standard_normal((n, n, n))).astype(dtype)
    b = (a + 0.05 * rng.standard_normal((n, n, n))).astype(dtype)
    got = check_json(tmp_path, h5zgpu_bin, a, b)
    if got["pk_ratio_max_deviation"] is None and not got["pk_ratio"]:
        pytest.skip("this build has no FFTW3 (Debian: libfftw3-dev; scripts/test.sh installs it, "
                    "so CI runs this)")
    want = power_ratio(a, b)
    np.testing.assert_allclose(got["pk_ratio"], want, rtol=1e-9)
    np.testing.assert_allclose(got["pk_ratio_max_deviation"], np.abs(want - 1).max(), rtol=1e-9)
    # --kmax: the deviation over k <= 2 only; --pk-band: the acceptance against 1 +- band
    dev2 = np.abs(want[:2] - 1).max()
    for band in (dev2 * 0.9, dev2 * 1.1):
        g = check_json(tmp_path, h5zgpu_bin, a, b, "--kmax", "2", "--pk-band", f"{band:.17g}")
        np.testing.assert_allclose(g["pk_ratio_max_deviation"], dev2, rtol=1e-9)
        assert g["pk_within_band"] is bool(dev2 <= band)


def test_power_spectrum_only_for_cubic_finite_fields(tmp_path, h5zgpu_bin):
    a = np.linspace(0, 1, 8 * 8 * 10).reshape(8, 8, 10)
    got = check_json(tmp_path, h5zgpu_bin, a, a + 1e-3)
    assert got["pk_ratio_max_deviation"] is None and got["pk_ratio"] == []
    c = np.linspace(0, 1, 8 ** 3).reshape(8, 8, 8)
    c[0, 0, 0] = np.nan
    got = check_json(tmp_path, h5zgpu_bin, c, c + 1e-3)
    assert got["pk_ratio_max_deviation"] is None


def test_json_file_beside_the_table(tmp_path, h5zgpu_bin):
    """--json-file F writes the object --json prints, and the table still goes to stdout (the
    Python command draws its plots from F without running check twice)."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((10, 12, 14)).astype(np.float32)
    b = (a + 0.01 * rng.standard_normal(a.shape)).astype(np.float32)
    want = check_json(tmp_path, h5zgpu_bin, a, b)
    run = subprocess.run([h5zgpu_bin, "check", str(tmp_path / "a.raw"), str(tmp_path / "b.raw"),
                          "-t", "f32", "-d", "10,12,14", "--json-file", str(tmp_path / "c.json")],
                         capture_output=True, text=True, check=True)
    assert "PSNR" in run.stdout
    assert same_metrics(json.loads((tmp_path / "c.json").read_text()), want)
