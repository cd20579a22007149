"""The h5zgpu Python helper: cd_values, validation, plugin lookup, registration."""
import math
import os

import h5py
import pytest

import h5zgpu


def test_documented_example_words():
    # docs/FILTER.md: ABS 1e-3 with Huffman is UD=33900,0,4,2,0,3539053052,1062232653
    assert h5zgpu.cd_values("huffman", mode="abs", eb=1e-3) == (2, 0, 3539053052, 1062232653)


@pytest.mark.parametrize("eb", [0.0, 1e-3, 0.1, 12.5, 1e-300, 5e-324])
def test_words_round_trip(eb):
    assert h5zgpu.eb_from_words(*h5zgpu.eb_to_words(eb)) == eb


@pytest.mark.parametrize("codec,mode,expect", [
    ("fixed", "rel", (1, 1)), ("auto", "abs", (0, 0)), ("FIXED", "PWREL", (1, 2)), (1, 2, (1, 2)),
])
def test_filter_kwargs(codec, mode, expect):
    kw = h5zgpu.filter(codec=codec, mode=mode, eb=1e-2)
    assert kw["compression"] == 33900
    assert kw["compression_opts"] == (*expect, *h5zgpu.eb_to_words(1e-2))


@pytest.mark.parametrize("kwargs,text", [
    (dict(codec="zfp", mode="abs", eb=1e-3), "codec 'zfp'"),
    (dict(codec=3, mode="abs", eb=1e-3), "codec 3"),
    (dict(mode="relative", eb=1e-3), "error mode 'relative'"),
    (dict(mode=True, eb=1e-3), "error mode True"),
    (dict(mode="abs", eb=-1e-3), "not a finite number >= 0"),
    (dict(mode="abs", eb=math.nan), "not a finite number >= 0"),
    (dict(mode="abs", eb=math.inf), "not a finite number >= 0"),
    (dict(mode="abs", eb="1e-3"), "is not a number"),
    (dict(mode="pwrel", eb=1.0), "must be below 1"),
    (dict(mode="abs", eb=0.1, missing="land"), "missing value 'land' is not a number"),
    (dict(mode="abs", eb=0.1, missing=-1.0, dtype="int32"), "is not float32 or float64"),
    (dict(mode="abs", eb=0.1, missing=-1.0, dtype="f2"), "is not float32 or float64"),
    (dict(mode="abs", eb=10**400), "too large for a binary64 number"),
    (dict(mode="abs", eb=0.1, missing=-10**400), "too large for a binary64 number"),
])
def test_invalid_arguments(kwargs, text):
    with pytest.raises(ValueError, match="h5zgpu: .*" + text.replace("(", r"\(")):
        h5zgpu.filter(**kwargs)


@pytest.mark.parametrize("dtype,size", [
    ("f", 4), ("f4", 4), ("<f4", 4), (">f4", 4), ("float32", 4), ("d", 8), (">f8", 8),
    ("float64", 8),
])
def test_missing_value_dtype_spellings(dtype, size):
    import numpy as np
    for given in (dtype, np.dtype(dtype), np.dtype(dtype).type):
        cd = h5zgpu.cd_values("fixed", mode="abs", eb=0.1, missing=-1e34, dtype=given)
        want = float(np.float32(-1e34)) if size == 4 else -1e34
        assert h5zgpu.eb_from_words(cd[5], cd[6]) == want


def test_mode_and_bound_are_required():
    with pytest.raises(TypeError):
        h5zgpu.filter(codec="fixed")


def touch_plugin(d):
    d.mkdir(parents=True, exist_ok=True)
    (d / h5zgpu.PLUGIN_FILE).write_bytes(b"")
    return d


def test_plugin_dir_order(tmp_path, monkeypatch):
    first, second = touch_plugin(tmp_path / "a"), touch_plugin(tmp_path / "b")
    monkeypatch.delenv("H5ZGPU_PLUGIN_DIR", raising=False)
    monkeypatch.setenv("HDF5_PLUGIN_PATH", os.pathsep.join([str(tmp_path / "none"), str(second)]))
    assert h5zgpu.plugin_dir() == str(second)
    monkeypatch.setenv("H5ZGPU_PLUGIN_DIR", str(first))
    assert h5zgpu.plugin_dir() == str(first)


def test_plugin_dir_explicit_but_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("H5ZGPU_PLUGIN_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="H5ZGPU_PLUGIN_DIR"):
        h5zgpu.plugin_dir()


def test_plugin_dir_finds_the_real_plugin(plugin):
    assert os.path.isfile(os.path.join(h5zgpu.plugin_dir(), h5zgpu.PLUGIN_FILE))


def test_register_is_idempotent(plugin):
    h5zgpu.register()
    n = h5py.h5pl.size()
    assert h5zgpu.register() == plugin
    assert h5py.h5pl.size() == n


def test_register_goes_before_a_missing_directory(plugin, tmp_path):
    """HDF5 1.10 stops searching at a directory it cannot open: the plugin must come first."""
    import subprocess
    import sys
    missing = str(tmp_path / "absent")
    code = ("import h5py, h5py.h5pl as P, h5zgpu\n"
            "[P.remove(0) for _ in range(P.size())]\n"
            f"P.append({missing!r}.encode())\n"
            "d = h5zgpu.register()\n"
            "print([p.decode() for p in (P.get(i) for i in range(P.size()))] == [d, "
            f"{missing!r}])\n")
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    env["H5ZGPU_PLUGIN_DIR"] = plugin
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(h5zgpu.__file__))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == "True"


def test_one_default_codec(tmp_path):
    """Huffman unless asked otherwise: filter(), cd_values(), the classes and the command."""
    import subprocess
    assert h5zgpu.DEFAULT_CODEC == "huffman"
    assert h5zgpu.filter(mode="abs", eb=1e-3)["compression_opts"][0] == 2
    assert h5zgpu.cd_values(mode="abs", eb=1e-3)[0] == 2
    tool = os.environ.get("H5ZGPU_BIN")
    if tool:   # conftest's: the build's command; the same default
        out = subprocess.run([tool, "cdvalues", "--mode", "abs", "--eb", "1e-3"],
                             capture_output=True, text=True, check=True).stdout
        assert out.splitlines()[0] == "UD=33900,0,4,2,0,3539053052,1062232653"


@pytest.mark.parametrize("cls,codec", [(h5zgpu.Huffman, 2), (h5zgpu.Fixed, 1), (h5zgpu.Auto, 0)])
def test_filter_classes(tmp_path, plugin, cls, codec):
    """hdf5plugin's idiom: compression=h5zgpu.Huffman(...), or ** of the same object."""
    import numpy as np
    a = np.linspace(0, 1, 32 * 32 * 16, dtype=np.float32).reshape(32, 32, 16)
    f = cls(mode="rel", eb=1e-3)
    assert f.filter_id == 33900
    assert tuple(f.filter_options) == h5zgpu.cd_values(codec, mode="rel", eb=1e-3)
    with h5py.File(tmp_path / "c.h5", "w") as h:
        d1 = h.create_dataset("a", data=a, chunks=(16, 16, 16), compression=f)
        d2 = h.create_dataset("b", data=a, chunks=(16, 16, 16), **f)
        for d in (d1, d2):
            filters = d.id.get_create_plist().get_filter(0)
            assert filters[0] == 33900 and filters[2][:4] == tuple(f.filter_options)
            assert np.abs(d[...] - a).max() <= 1e-3 * (a.max() - a.min())
