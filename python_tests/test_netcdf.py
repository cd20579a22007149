"""The netCDF recipes of docs/NETCDF.md, each run: nccopy -F with `h5zgpu cdvalues --nccopy`,
netCDF-C's nc_def_var_filter, and xarray through h5netcdf. Each checks the values against the
bound, the fill values bit for bit, and the ratio. They need netCDF's tools and library (Debian's
netcdf-bin and libnetcdf-dev, which scripts/test.sh installs) or xarray and h5netcdf (in the
pip-wheel venv scripts/test.sh makes), and skip, saying which is missing, without them."""
import importlib.util
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import h5zgpu

HERE = os.path.dirname(os.path.abspath(__file__))
FILL = np.float32(-1e34)
EB = 0.01


def sst():
    """A land/sea field: 4 x 60 x 90 float32, 1 point in 7 land (the fill value)."""
    t, y, x = np.meshgrid(np.arange(4), np.arange(60), np.arange(90), indexing="ij")
    a = (20 + 8 * np.sin(0.1 * x + 0.3 * t) * np.cos(0.07 * y)).astype(np.float32)
    a[(x + y) % 7 == 0] = FILL
    return a


def check(path, a, var="sst"):
    """Values within EB, fill values exact; returns the ratio (raw / stored bytes)."""
    with h5py.File(path, "r") as f:
        d = f[var]
        assert d.id.get_create_plist().get_filter(0)[0] == h5zgpu.FILTER_ID
        b = d[...]
        land = a == FILL
        assert (b[land] == FILL).all()
        assert np.abs(b[~land].astype(np.float64) - a[~land]).max() <= EB
        return a.nbytes / d.id.get_storage_size()


def need(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: netcdf-bin; scripts/test.sh installs "
                    "it, so CI runs this)")


def cdl(a):
    rows = ", ".join("_" if v == FILL else f"{v:.6g}" for v in a.ravel())
    return ("netcdf sst {\ndimensions:\n  time = 4 ; lat = 60 ; lon = 90 ;\nvariables:\n"
            "  float sst(time, lat, lon) ;\n    sst:_FillValue = -1.e+34f ;\n"
            "    sst:_ChunkSizes = 2, 30, 45 ;\n"
            f"data:\n sst = {rows} ;\n}}\n")


def test_nccopy(tmp_path, plugin, h5zgpu_bin):
    need("ncgen", "nccopy", "ncdump")
    a = sst()
    (tmp_path / "sst.cdl").write_text(cdl(a))
    subprocess.run(["ncgen", "-k", "nc4", "-o", str(tmp_path / "sst.nc"),
                    str(tmp_path / "sst.cdl")], check=True)
    a = h5py.File(tmp_path / "sst.nc", "r")["sst"][...]   # as ncgen stored it
    ratios = {}
    for label, extra in (("missing", ["--missing", "-1e34", "-t", "f32"]), ("plain", [])):
        spec = subprocess.run([h5zgpu_bin, "cdvalues", "--mode", "abs", "--eb", str(EB),
                               "--nccopy", "sst", *extra], capture_output=True, text=True,
                              check=True).stdout.strip()
        assert spec.startswith("sst,33900,2,0,")
        out = tmp_path / f"{label}.nc"
        subprocess.run(["nccopy", "-F", spec, str(tmp_path / "sst.nc"), str(out)], check=True)
        ratios[label] = check(out, a)
        dump = subprocess.run(["ncdump", "-v", "sst", str(out)], capture_output=True, text=True,
                              check=True).stdout
        assert " sst =" in dump and "_," in dump   # values, and land as netCDF's fill
    # nccopy leaves HDF5's fill value unset (_NoFill): only the missing-value option keeps land
    # out of the prediction
    assert ratios["missing"] > 1.2 * ratios["plain"], ratios


def test_netcdf_c_def_var_filter(tmp_path, plugin):
    need("cc")
    if not os.path.exists("/usr/include/netcdf_filter.h"):
        pytest.skip("needs netCDF-C's headers (Debian: libnetcdf-dev; scripts/test.sh installs "
                    "it, so CI runs this)")
    prog = tmp_path / "def_var_filter"
    subprocess.run(["cc", "-O1", "-o", str(prog), os.path.join(HERE, "netcdf", "def_var_filter.c"),
                    "-lnetcdf", "-lm"], check=True)
    lo, hi = h5zgpu.eb_to_words(EB)
    out = tmp_path / "c.nc"
    r = subprocess.run([str(prog), str(out), "2", str(lo), str(hi)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert check(out, sst()) > 1.2


@pytest.mark.skipif(importlib.util.find_spec("xarray") is None or
                    importlib.util.find_spec("h5netcdf") is None,
                    reason="needs xarray and h5netcdf: runs in scripts/test.sh's pip-wheel venv")
def test_xarray_h5netcdf(tmp_path, plugin):
    import xarray as xr
    a = sst()
    ds = xr.Dataset({"sst": (("time", "lat", "lon"), a)})
    ds["sst"].encoding["_FillValue"] = FILL
    enc = {"chunksizes": (2, 30, 45), "_FillValue": FILL,
           **h5zgpu.filter(mode="abs", eb=EB, missing=FILL, dtype=np.float32)}
    ds.to_netcdf(tmp_path / "x.nc", engine="h5netcdf", encoding={"sst": enc})
    assert check(tmp_path / "x.nc", a) > 1.2
    back = xr.open_dataset(tmp_path / "x.nc", engine="h5netcdf")["sst"].values
    land = a == FILL
    assert np.isnan(back[land]).all()   # xarray masks the fill value as NaN on read
    assert np.abs(back[~land] - a[~land]).max() <= EB
    # the object form, as hdf5plugin's classes are passed
    enc = {"chunksizes": (2, 30, 45), "compression": h5zgpu.Huffman(mode="abs", eb=EB)}
    ds.to_netcdf(tmp_path / "y.nc", engine="h5netcdf", encoding={"sst": enc})
    with h5py.File(tmp_path / "y.nc", "r") as f:
        assert f["sst"].id.get_create_plist().get_filter(0)[0] == h5zgpu.FILTER_ID


@pytest.mark.skipif(importlib.util.find_spec("xarray") is None or
                    importlib.util.find_spec("h5netcdf") is None,
                    reason="needs xarray and h5netcdf: runs in scripts/test.sh's pip-wheel venv")
@pytest.mark.parametrize("codec", ["fixed", "huffman"])
def test_xarray_nan_costs_what_a_numeric_fill_costs(tmp_path, plugin, codec):
    """xarray's missing values are NaN, and its default _FillValue for floats is NaN, which
    h5netcdf makes the HDF5 fill value: the filter keeps NaN out of the prediction with no
    option, and the ratio is within 5% of the same mask stored as -1e34."""
    import xarray as xr
    a = sst()
    land = a == FILL
    ratios = {}
    for label, mask in (("nan", np.float32(np.nan)), ("numeric", FILL)):
        b = a.copy()
        b[land] = mask
        ds = xr.Dataset({"sst": (("time", "lat", "lon"), b)})
        enc = {"chunksizes": (2, 30, 45), **h5zgpu.filter(codec, mode="abs", eb=EB)}
        if label == "numeric":
            enc["_FillValue"] = FILL
        ds.to_netcdf(tmp_path / f"{label}.nc", engine="h5netcdf", encoding={"sst": enc})
        with h5py.File(tmp_path / f"{label}.nc", "r") as f:
            d = f["sst"]
            back = d[...]
            ratios[label] = a.nbytes / d.id.get_storage_size()
        if label == "numeric":
            assert (back[land] == FILL).all()
        else:
            assert np.isnan(back[land]).all()
        assert np.abs(back[~land].astype(np.float64) - a[~land]).max() <= EB
    print(f"{codec}: ratio with NaN {ratios['nan']:.3f}, with -1e34 {ratios['numeric']:.3f}")
    assert abs(ratios["nan"] / ratios["numeric"] - 1) <= 0.05, ratios
