"""h5repack and h5dump with the plugin, and the h5zgpu command, as a user runs them."""
import json
import subprocess

import h5py
import numpy as np
import pytest

import h5zgpu
from checks import assert_within_bound, chunk_codecs, smooth, with_specials

# h5repack's UD codec number, and the codec bytes its chunks may carry (0: stored raw)
REPACK_CODECS = {"fixed": (1, {0, 1}), "huffman": (2, {0, 2}), "auto": (0, {0, 1, 2})}


def run(*args, ok=True):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if ok:
        assert p.returncode == 0, f"{args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


@pytest.fixture
def plain_file(tmp_path):
    path = tmp_path / "in.h5"
    a = with_specials(smooth((40, 36, 50), np.float32))
    b = smooth((300, 70), np.float64, seed=5)
    with h5py.File(path, "w") as f:
        f.create_dataset("rho", data=a, chunks=(16, 16, 16))
        f.create_dataset("grp/t", data=b, chunks=(64, 64))
    return path, {"rho": a, "grp/t": b}


@pytest.mark.parametrize("codec", list(REPACK_CODECS))
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-4), ("pwrel", 1e-3)])
def test_h5repack_compress_dump_restore(tmp_path, plain_file, h5repack, h5dump, mode, eb, codec):
    src, data = plain_file
    number, written = REPACK_CODECS[codec]
    lo, hi = h5zgpu.eb_to_words(eb)
    packed, restored = tmp_path / "out.h5", tmp_path / "back.h5"
    run(h5repack, "-f", f"UD=33900,0,4,{number},{h5zgpu.MODES[mode]},{lo},{hi}", src, packed)

    dump = run(h5dump, "-pH", packed).stdout
    assert "33900" in dump and "h5zgpu" in dump, dump
    assert f"PARAMS {{ {number} {h5zgpu.MODES[mode]} " in dump, dump
    # h5dump decodes every chunk (values within bound: h5py below, on the same file)
    run(h5dump, "-d", "/rho", packed)

    with h5py.File(packed, "r") as f:
        for name, a in data.items():
            d = f[name]
            assert d.id.get_create_plist().get_filter(0)[0] == 33900
            assert d.id.get_storage_size() < a.nbytes
            assert_within_bound(a, d[...], mode, eb, d.chunks)
            codecs = chunk_codecs(d)
            assert set(codecs) <= written, codecs
            if codec == "huffman":
                assert 2 in codecs, codecs
            chunks = d.chunks

    run(h5repack, "-f", "NONE", packed, restored)
    with h5py.File(restored, "r") as f:
        for name, a in data.items():
            assert f[name].id.get_create_plist().get_nfilters() == 0
            assert_within_bound(a, f[name][...], mode, eb, chunks)


def test_h5repack_refuses_a_bad_bound(tmp_path, plain_file, h5repack):
    """h5repack answers a dataset it cannot create by copying it unfiltered (HDF5's own
    fallback): the bad bound must never produce a filtered dataset."""
    src, data = plain_file
    lo, hi = h5zgpu.eb_to_words(-1.0)
    out = tmp_path / "out.h5"
    p = run(h5repack, "-v", "-f", f"UD=33900,0,4,1,0,{lo},{hi}", src, out)
    assert "could not create dataset" in p.stdout, p.stdout
    with h5py.File(out, "r") as f:
        for name, a in data.items():
            assert f[name].id.get_create_plist().get_nfilters() == 0
            assert np.array_equal(f[name][...].view(np.uint8), a.view(np.uint8))


@pytest.mark.parametrize("codec,mode,eb", [("huffman", "abs", 1e-3), ("fixed", "rel", 1e-4),
                                           ("auto", "pwrel", 0.5)])
def test_cdvalues_command_matches_helper(h5zgpu_bin, codec, mode, eb):
    out = run(h5zgpu_bin, "cdvalues", "--codec", codec, "--mode", mode, "--eb", repr(eb))
    c, m, lo, hi = h5zgpu.cd_values(codec, mode=mode, eb=eb)
    assert out.stdout.splitlines() == [
        f"UD=33900,0,4,{c},{m},{lo},{hi}",
        f"compression=33900, compression_opts=({c}, {m}, {lo}, {hi})"]


def test_cdvalues_fixed_ratio_matches_helper(h5zgpu_bin):
    out = run(h5zgpu_bin, "cdvalues", "--mode", "ratio", "--target", "10")
    c, m, lo, hi = h5zgpu.cd_values("huffman", mode="ratio", target=10)
    assert out.stdout.splitlines() == [
        f"UD=33900,0,4,{c},{m},{lo},{hi}",
        f"compression=33900, compression_opts=({c}, {m}, {lo}, {hi})"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_cdvalues_missing_value_matches_helper(h5zgpu_bin, dtype):
    out = run(h5zgpu_bin, "cdvalues", "--codec", "fixed", "--mode", "abs", "--eb", "0.01",
              "--missing", "-1e34", "-t", dtype)
    cd = h5zgpu.cd_values("fixed", mode="abs", eb=0.01, missing=-1e34,
                          dtype="float32" if dtype == "f32" else "float64")
    assert out.stdout.splitlines() == [
        "UD=33900,0,7," + ",".join(map(str, cd)),
        "compression=33900, compression_opts=(" + ", ".join(map(str, cd)) + ")"]


@pytest.mark.parametrize("args,text", [
    (["cdvalues", "--mode", "abs", "--eb", "-1"], "not a finite number >= 0"),
    (["cdvalues", "--mode", "bogus", "--eb", "1"], "abs, rel, pwrel or ratio"),
    (["cdvalues", "--eb", "1"], "--mode and --eb (--target for --mode ratio) are required"),
    (["cdvalues", "--mode", "ratio", "--target", "1"], "target ratio 1 is not above 1"),
    (["compress", "-i", "x", "-o", "y", "-t", "f16", "-d", "4", "--mode", "abs", "--eb", "1"],
     "f32 or f64"),
    (["compress", "-i", "x", "-o", "y", "-t", "f32", "-d", "4,0", "--mode", "abs", "--eb", "1"],
     "-d 4,0"),
    (["frobnicate"], "unknown command"),
])
def test_command_usage_errors(h5zgpu_bin, args, text):
    p = run(h5zgpu_bin, *args, ok=False)
    assert p.returncode == 2 and text in p.stderr, p.stderr


@pytest.mark.parametrize("codec", ["fixed", "huffman", "auto"])
@pytest.mark.parametrize("dtype,flag", [(np.float32, "f32"), (np.float64, "f64")])
@pytest.mark.parametrize("mode,eb", [("abs", 1e-3), ("rel", 1e-3), ("pwrel", 1e-2)])
def test_command_compress_decompress_check(tmp_path, h5zgpu_bin, dtype, flag, mode, eb, codec):
    a = with_specials(smooth((20, 30, 40), dtype))
    raw, packed, back = tmp_path / "a.raw", tmp_path / "a.h5zg", tmp_path / "b.raw"
    a.tofile(raw)
    report = run(h5zgpu_bin, "compress", "-i", raw, "-o", packed, "-t", flag, "-d", "20,30,40",
                 "--codec", codec, "--mode", mode, "--eb", repr(eb)).stdout
    assert "bound holds" in report and "ratio" in report, report
    chunk = packed.read_bytes()
    assert chunk[:4] == b"H5ZG" and chunk[5] in REPACK_CODECS[codec][1], chunk[:8]
    run(h5zgpu_bin, "decompress", "-i", packed, "-o", back)
    b = np.fromfile(back, dtype=dtype).reshape(a.shape)
    assert_within_bound(a, b, mode, eb, a.shape)  # the whole array is one chunk

    check = run(h5zgpu_bin, "check", raw, back, "-t", flag, "-d", "20,30,40", "--json").stdout
    m = json.loads(check)
    x = a[np.isfinite(a)].astype(np.float64)
    err = np.abs(b[np.isfinite(a)].astype(np.float64) - x)
    assert m["nonfinite_mismatch"] == 0 and m["finite"] == x.size
    assert m["max_abs_error"] == err.max()
    assert m["rmse"] == pytest.approx(np.sqrt(np.mean(err ** 2)), rel=1e-12)
    assert m["range"] == x.max() - x.min()


def test_command_rejects_a_damaged_chunk(tmp_path, h5zgpu_bin):
    a = smooth((64, 64), np.float32)
    raw, packed = tmp_path / "a.raw", tmp_path / "a.h5zg"
    a.tofile(raw)
    run(h5zgpu_bin, "compress", "-i", raw, "-o", packed, "-t", "f32", "-d", "64,64",
        "--mode", "abs", "--eb", "1e-2")
    data = bytearray(packed.read_bytes())
    data[len(data) // 2] ^= 0x40
    packed.write_bytes(bytes(data))
    p = run(h5zgpu_bin, "decompress", "-i", packed, "-o", tmp_path / "b.raw", ok=False)
    assert p.returncode == 1 and "checksum" in p.stderr, p.stderr
