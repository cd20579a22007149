"""A user missing value (netCDF's _FillValue convention) given in cd_values after the four:
{flags (bit 0: a missing value follows, bit 2: a Huffman radius follows), missing value low
word, high word, radius} (docs/FILTER.md).

With each codec, missing points come back bit for bit, every other value within ABS 0.01, and
the codec's chunks carry the missing value as their fill value. Bad optional values fail at
create_dataset.
"""
import h5py
import numpy as np
import pytest

import h5zgpu
from checks import chunk_codecs, chunk_slices

EB = 0.01
FLAG_MISSING = 1
FLAG_RADIUS = 4
CODECS = ["fixed", "huffman", "auto"]


def cd_with_missing(missing, eb=EB, codec="fixed"):
    """For a float32 dataset the missing value must be a float32 value (float(np.float32(x))),
    as netCDF stores a float variable's _FillValue."""
    return (*h5zgpu.cd_values(codec, mode="abs", eb=eb), FLAG_MISSING,
            *h5zgpu.eb_to_words(missing))


def ocean(shape, dtype, missing, fraction, seed):
    """A smooth sea-surface-like field with land (missing) on `fraction` of the points: a few
    large land masses plus scattered islands."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 4, n) for n in shape], indexing="ij")
    field = 15 + 10 * np.sin(grids[0]) * np.cos(grids[-1]) + rng.standard_normal(shape) * 0.02
    land_score = np.sin(2.1 * grids[0] + 1) + np.cos(1.7 * grids[-1]) + rng.random(shape) * 0.6
    land = land_score > np.quantile(land_score, 1 - fraction)
    a = field.astype(dtype)
    a[land] = dtype(missing)
    return a, land


CASES = {  # name: (dtype, missing value, fraction missing)
    "f32 -1e34 on 40%": (np.float32, -1e34, 0.40),
    "f32 -1e10 on 40%": (np.float32, -1e10, 0.40),
    "f64 -1e34 on 40%": (np.float64, -1e34, 0.40),
    "f64 -1e10 on 70%": (np.float64, -1e10, 0.70),
}


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("case", list(CASES))
def test_missing_value_exact_others_within_abs(tmp_path, report, case, codec):
    dtype, missing, fraction = CASES[case]
    shape, chunks = (90, 120), (32, 64)  # edge chunks are partial
    a, land = ocean(shape, dtype, missing, fraction, seed=len(case))
    path = tmp_path / "m.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("sst", data=a, chunks=chunks, compression=h5zgpu.FILTER_ID,
                         compression_opts=cd_with_missing(float(dtype(missing)), codec=codec))
    with h5py.File(path, "r") as f:
        d = f["sst"]
        back = d[...]
        stored = d.id.get_storage_size()
        codecs = chunk_codecs(d)
        if codec == "huffman":
            assert set(codecs) == {2}, codecs
        # each chunk holding land carries the missing value as its fill value (docs/FORMAT.md)
        for i, s in enumerate(chunk_slices(shape, chunks)):
            if land[s].any():
                raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)[1]
                assert raw[9] & 1, f"chunk {i} has missing values but no fill value in its header"
                width = 4 if dtype == np.float32 else 8
                at = 40 + 4 * len(shape)  # the fill value follows the dims
                fill = np.frombuffer(raw[at:at + width], dtype=dtype)[0]
                assert fill.tobytes() == dtype(missing).tobytes()
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert (back.view(bits)[land] == a.view(bits)[land]).all(), "missing values changed"
    err = np.abs(back[~land].astype(np.float64) - a[~land].astype(np.float64))
    assert err.max() <= EB, f"max error {err.max()} > {EB}"
    ratio = a.nbytes / stored
    report(f"missing value {case}, {codec}: {land.mean():.1%} missing, ABS {EB}, "
           f"max error {err.max():.3g}, ratio {ratio:.2f}, chunk codecs {sorted(set(codecs))}")
    assert ratio > 1


@pytest.mark.parametrize("codec", CODECS)
def test_missing_value_left_out_of_rel_range(tmp_path, codec):
    """REL: the bound is eb x the range of each chunk's values that are not missing; with -1e34
    counted it would be about 1e31 and nothing would survive."""
    eb, shape, chunks = 1e-3, (64, 128), (32, 64)  # whole chunks: no padding in the ranges
    a, land = ocean(shape, np.float64, -1e34, 0.4, seed=7)
    with h5py.File(tmp_path / "r.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=chunks, compression=h5zgpu.FILTER_ID,
                             compression_opts=(*h5zgpu.cd_values(codec, mode="rel", eb=eb),
                                               FLAG_MISSING, *h5zgpu.eb_to_words(-1e34)))
        back = d[...]
    assert (back[land] == -1e34).all()
    for s in chunk_slices(shape, chunks):
        sea = ~land[s]
        if sea.any():
            v = a[s][sea]
            err = np.abs(back[s][sea] - v).max()
            assert err <= eb * (v.max() - v.min()), (s, err)


def test_flags_without_missing_value(tmp_path):
    """flags = 0: five user values, no missing value; HDF5's fill value stays the codec's."""
    a = np.linspace(0, 100, 5000, dtype=np.float32)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("x", data=a, chunks=(1000,), compression=h5zgpu.FILTER_ID,
                             compression_opts=(*h5zgpu.cd_values("fixed", mode="abs", eb=EB), 0))
        assert np.abs(d[...] - a).max() <= EB


BAD = {  # case: (cd_values, dtype, what the message must name)
    "unknown flag bits": ((*h5zgpu.cd_values("fixed", mode="abs", eb=EB), 8, 0, 0),
                          np.float32, "cd_values[4]=8 has unknown flag bits"),
    "flag without value": ((*h5zgpu.cd_values("fixed", mode="abs", eb=EB), 1),
                           np.float32, "cd_values[4]=1 announces 2 more values but only 0 follow"),
    "missing value not float32": (cd_with_missing(0.1), np.float32, "is not a float32 value"),
    "radius without value": ((*cd_with_missing(-1e34, codec="huffman")[:4],
                              FLAG_MISSING | FLAG_RADIUS, *h5zgpu.eb_to_words(-1e34)),
                             np.float64, "cd_values[4]=5 announces 3 more values but only 2 follow"),
    "radius 1": ((*h5zgpu.cd_values("huffman", mode="abs", eb=EB), FLAG_RADIUS, 1),
                 np.float32, "radius 1 is outside 2..1024"),
    "radius 1025": ((*h5zgpu.cd_values("auto", mode="rel", eb=EB), FLAG_RADIUS, 1025),
                    np.float64, "radius 1025 is outside 2..1024"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_missing_value_fails_at_create(tmp_path, case):
    cd, dtype, text = BAD[case]
    with h5py.File(tmp_path / "t.h5", "w") as f:
        with pytest.raises(Exception) as info:
            f.create_dataset("x", data=np.ones((10, 10), dtype), chunks=True,
                             compression=h5zgpu.FILTER_ID, compression_opts=cd)
        assert "x" not in f
    assert "h5zgpu: " in str(info.value) and text in str(info.value), str(info.value)


@pytest.mark.parametrize("codec", CODECS)
def test_helper_rounds_the_missing_value_to_the_dataset_type(tmp_path, codec):
    """h5zgpu.filter(missing=-1e34, dtype=np.float32) names the float32 -1e34 the data holds."""
    a, land = ocean((64, 80), np.float32, -1e34, 0.4, seed=7)
    path = tmp_path / "h.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("sst", data=a, chunks=(32, 40),
                         **h5zgpu.filter(codec, mode="abs", eb=EB, missing=-1e34,
                                         dtype=np.float32))
    with h5py.File(path, "r") as f:
        back = f["sst"][...]
    assert np.array_equal(back[land].view(np.uint32), a[land].view(np.uint32))
    assert np.max(np.abs(back[~land].astype(np.float64) - a[~land].astype(np.float64))) <= EB


@pytest.mark.parametrize("radius", [8, 64, 1024])
def test_huffman_radius_with_missing_value(tmp_path, radius):
    """A radius after the missing value (flags bit 2): every radius keeps the bound; the chunks
    are Huffman's."""
    a, land = ocean((64, 96), np.float32, -1e34, 0.4, seed=3)
    path = tmp_path / "r.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("sst", data=a, chunks=(32, 48),
                         **h5zgpu.filter("huffman", mode="abs", eb=EB, missing=-1e34,
                                         dtype=np.float32, radius=radius))
    with h5py.File(path, "r") as f:
        back = f["sst"][...]
        codecs = chunk_codecs(f["sst"])
    assert set(codecs) <= {0, 2} and 2 in codecs, codecs
    assert np.array_equal(back[land].view(np.uint32), a[land].view(np.uint32))
    assert np.max(np.abs(back[~land].astype(np.float64) - a[~land].astype(np.float64))) <= EB


NAN_WAYS = {  # how the missing points are given: (mask value, filter options)
    "-1e34 declared": (-1e34, {"missing": -1e34}),
    "NaN, nothing declared": (np.nan, {}),
    "NaN declared": (np.nan, {"missing": float("nan")}),
    # x86's 0/0 gives a NaN with the sign bit set: not the declared NaN's bits
    "-NaN, NaN declared": (-np.nan, {"missing": float("nan")}),
}


def write_masked(path, a, land, mask, codec, dtype, opts):
    """a with mask on land through the filter (ABS EB); the values read back and the ratio."""
    b = a.copy()
    b[land] = dtype(mask) if not np.isnan(mask) else np.copysign(dtype(np.nan), mask)
    with h5py.File(path, "w") as f:
        f.create_dataset("sst", data=b, chunks=(16, 32, 32),
                         **h5zgpu.filter(codec, mode="abs", eb=EB, dtype=dtype, **opts))
    with h5py.File(path, "r") as f:
        back = f["sst"][...]
        ratio = b.nbytes / f["sst"].id.get_storage_size()
    bits = np.uint32 if dtype == np.float32 else np.uint64
    assert np.array_equal(back[land].view(bits), b[land].view(bits)), "missing values changed"
    err = np.abs(back[~land].astype(np.float64) - b[~land].astype(np.float64))
    assert err.max() <= EB, err.max()
    return b, back, ratio


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_costs_what_a_declared_missing_value_costs(tmp_path, report, codec, dtype):
    """NaN as the missing value, with no option at all (the dataset's fill value is HDF5's 0),
    compresses within 5% of the same land given as -1e34 with the missing-value option: each
    chunk makes its first NaN its fill value (docs/FORMAT.md, "Fill values")."""
    a, land = ocean((48, 64, 64), dtype, -1e34, 0.5, seed=11)
    ratios = {way: write_masked(tmp_path / f"{k}.h5", a, land, mask, codec, dtype, opts)[2]
              for k, (way, (mask, opts)) in enumerate(NAN_WAYS.items())}
    report(f"NaN as missing, {codec} {np.dtype(dtype).name}, 50% land, ABS {EB}: " +
           ", ".join(f"{w} {r:.2f}" for w, r in ratios.items()))
    numeric = ratios["-1e34 declared"]
    for way, r in ratios.items():
        assert abs(r / numeric - 1) <= 0.05, (way, ratios)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fill_value_beside_more_nan_stays_exact(tmp_path, codec, dtype):
    """Sea points exactly 0, HDF5's fill value, on 1% of the sea beside 50% NaN land: the NaN
    outnumber them and become the chunks' fill value, and the zeros still come back bit for
    bit (a declared -999 likewise); their negations are values like any other."""
    a, land = ocean((48, 64, 64), dtype, -1e34, 0.5, seed=11)
    rng = np.random.default_rng(5)
    for value, opts in ((0.0, {}), (-999.0, {"missing": -999.0})):
        spots = ~land & (rng.random(a.shape) < 0.01)
        c = a.copy()
        c[spots] = np.where(rng.random(a.shape) < 0.5, value, -value)[spots]
        _, back, ratio = write_masked(tmp_path / "z.h5", c, land, np.nan, codec, dtype, opts)
        bits = np.uint32 if dtype == np.float32 else np.uint64
        declared = c.view(bits) == np.array(value, dtype).view(bits)
        assert declared.sum() > 0.002 * c.size
        assert np.array_equal(back[declared].view(bits), c[declared].view(bits)), value
        assert ratio > 2, ratio
