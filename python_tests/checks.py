"""Test data and the bound check every round-trip test uses, in float64 as the contract says."""
import itertools

import numpy as np
import pytest

MODES = {"abs": 0, "rel": 1, "pwrel": 2}


def chunk_slices(shape, chunks):
    """Every chunk of the dataset as a tuple of slices, edge chunks cut to the extent."""
    ranges = [range(0, n, c) for n, c in zip(shape, chunks)]
    for start in itertools.product(*ranges):
        yield tuple(slice(s, min(s + c, n)) for s, c, n in zip(start, chunks, shape))


def is_fill(a, fill):
    """Elements whose bits equal the fill value's in a's type (none when fill is None)."""
    if fill is None:
        return np.zeros(a.shape, dtype=bool)
    return uint_view(a) == uint_view(np.array([fill], dtype=a.dtype))[0]


def bounds(a, mode, eb, chunks, fill=None):
    """The bound of every element: ABS eb; REL eb x (max - min) of the finite values of its
    chunk that are not fill; PWREL eb x |x|. Non-finite and fill elements get 0 (they must come
    back bit for bit)."""
    x = a.astype(np.float64)
    finite = np.isfinite(x) & ~is_fill(a, fill)
    if mode == "abs":
        b = np.full(x.shape, eb)
    elif mode == "pwrel":
        b = eb * np.abs(np.where(finite, x, 0))
    else:
        b = np.zeros(x.shape)
        for s in chunk_slices(x.shape, chunks):
            v = x[s][finite[s]]
            b[s] = eb * (v.max() - v.min()) if v.size else 0.0
    return np.where(finite, b, 0.0)


def uint_view(a):
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def assert_within_bound(a, back, mode, eb, chunks, fill=None):
    """Every value within its bound (bounds()); NaN, Inf and fill elements bit for bit."""
    assert back.dtype == a.dtype and back.shape == a.shape
    finite = np.isfinite(a) & ~is_fill(a, fill)
    same = uint_view(a) == uint_view(back)
    assert same[~finite].all(), "NaN/Inf or fill values did not come back bit for bit"
    with np.errstate(invalid="ignore"):  # Inf - Inf at the non-finite places checked above
        err = np.abs(back.astype(np.float64) - a.astype(np.float64))
    bound = bounds(a, mode, eb, chunks, fill)
    miss = finite & ~(err <= bound)
    if miss.any():
        i = np.unravel_index(np.argmax(np.where(miss, err - bound, -np.inf)), a.shape)
        raise AssertionError(
            f"{int(miss.sum())} of {a.size} values miss the {mode} {eb:g} bound; worst at {i}: "
            f"x={a[i]!r} back={back[i]!r} error={err[i]:.6g} bound={bound[i]:.6g}")


def smooth(shape, dtype, seed=0):
    """A smooth field away from zero plus a little noise: compressible, and its chunks' ranges
    would grow if zeros outside the dataset's extent were counted."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    f = 100.0 + sum(np.sin((k + 1) * g) for k, g in enumerate(grids)) * 10
    return (f + rng.standard_normal(shape) * 0.05).astype(dtype)


def with_specials(a):
    """NaN (one with payload bits), +Inf and -Inf at a few places."""
    a = a.copy()
    flat = a.reshape(-1)
    n = flat.size
    nan_payload = np.array([0x7FC00123 if a.dtype == np.float32 else 0x7FF8000000000123],
                           dtype=np.uint32 if a.dtype == np.float32 else np.uint64)
    flat[n // 7] = np.nan
    flat[n // 5] = np.inf
    flat[n // 3] = -np.inf
    flat[n - 1] = nan_payload.view(a.dtype)[0]
    return a


def noise(shape, dtype, seed=1):
    """Incompressible signed values, exact zeros among them (PWREL must keep them exact)."""
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    a.reshape(-1)[::97] = 0
    return a


def wide(shape, dtype, seed=2):
    """Magnitudes from tiny to near the type's limit: quantizer outliers."""
    rng = np.random.default_rng(seed)
    top = 30 if dtype == np.float32 else 300
    exp = rng.uniform(-top, top, shape)
    return (np.sign(rng.standard_normal(shape)) * 10.0 ** exp).astype(dtype)


def constant(shape, dtype, seed=3):
    """One value everywhere: a zero REL range, so the bound is 0 and values must be exact."""
    return np.full(shape, 3.25, dtype=dtype)


def chunk_codecs(dset):
    """The codec byte of every stored chunk's header (docs/FORMAT.md: offset 5; 0 = raw)."""
    codecs = []
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        raw = dset.id.read_direct_chunk(info.chunk_offset)[1]
        assert raw[:4] == b"H5ZG", f"chunk {i} is not an h5zgpu chunk"
        codecs.append(raw[5])
    return codecs


def same_metrics(got, want, rel=1e-9):
    """Whether two of check's JSON objects agree: counts exactly, floats within rel (the GPU's
    transform and OpenMP's reductions sum in any order), the timings left out."""
    if got.keys() != want.keys():
        return False
    for key, value in want.items():
        if key == "seconds":
            continue
        if isinstance(value, float) or (isinstance(value, list) and value and
                                        isinstance(value[0], float)):
            if got[key] != pytest.approx(value, rel=rel):
                return False
        elif got[key] != value:
            return False
    return True
