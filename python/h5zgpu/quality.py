"""`h5zgpu check` and `h5zgpu sweep` of the Python package: HDF5 datasets (`file.h5:/dataset`)
beside raw files, the compression ratio of a compressed dataset, and plots (`--plot DIR`, with
matplotlib). The metrics and the sweep are the compiled tool's (h5zgpu/bin/h5zgpu): this module
reads datasets through h5py (a compressed one through the plugin), hands the tool raw copies,
and adds what needs HDF5 or matplotlib.

    h5zgpu check A B [--json] [--plot DIR] [--kmax K] [--pk-band X] [-t T -d D]
    h5zgpu check FILE.h5:/dataset --original A [...]
    h5zgpu sweep FIELD [--plot DIR] [the compiled sweep's options]
"""
import json
import os
import subprocess
import sys
import tempfile

# options of the compiled tool that take a value, passed through as they are
_VALUED = {"-t", "--type", "-d", "--dims", "--kmax", "--pk-band", "--codec", "--mode", "--chunk",
           "--bounds", "--pk", "--psnr", "--ssim", "--missing"}


def _fail(msg, status=2):
    print(f"h5zgpu: {msg}", file=sys.stderr)
    return status


def _split(argv):
    """(positionals, {option: value}, flags) of a command line; ValueError when one is bad."""
    pos, opts, flags = [], {}, set()
    it = iter(argv)
    for a in it:
        if a in ("--json",):
            flags.add(a)
        elif a in _VALUED or a in ("--plot", "--original"):
            try:
                opts[a] = next(it)
            except StopIteration:
                raise ValueError(f"option {a} needs a value") from None
        elif a.startswith("-") and len(a) > 1:
            raise ValueError(f"unknown option {a} (see h5zgpu --help)")
        else:
            pos.append(a)
    return pos, opts, flags


def dataset_spec(spec):
    """(file, dataset) when spec names an HDF5 dataset as FILE:/PATH, else None (a raw file)."""
    path, sep, name = spec.rpartition(":")
    if sep and name.startswith("/") and os.path.isfile(path):
        return path, name
    return None


def _missing_of(d):
    """The user's missing value in a dataset's stored cd_values of filter 33900, or None: the
    user's part is the stored values less the 7 + rank set_local appends (docs/FILTER.md)."""
    from . import FILTER_ID, eb_from_words
    dcpl = d.id.get_create_plist()
    for i in range(dcpl.get_nfilters()):
        fid, _, cd, _ = dcpl.get_filter(i)
        user = len(cd) - 7 - (len(d.chunks) if d.chunks else 0)
        if fid == FILTER_ID and user >= 7 and cd[4] & 1:
            return eb_from_words(cd[5], cd[6])
    return None


def _read(spec):
    """The array of FILE:/dataset, its ratio (raw bytes over stored ones; None when the dataset
    is stored as it is) and the missing value its filter was given (None: none)."""
    import h5py
    import numpy as np
    from . import register
    try:
        register()   # the package's plugin, where this h5zgpu carries one
    except FileNotFoundError:
        pass         # HDF5_PLUGIN_PATH may still name one
    path, name = dataset_spec(spec)
    with h5py.File(path, "r") as f:
        d = f[name]
        a = d[...]
        stored = d.id.get_storage_size()
        filtered = d.compression is not None or d.id.get_create_plist().get_nfilters() > 0
        missing = _missing_of(d)
    if a.dtype not in (np.float32, np.float64):
        raise ValueError(f"{spec} holds {a.dtype}, not float32 or float64")
    ratio = a.nbytes / stored if filtered and stored else None
    return a, ratio, missing


def _inputs(specs, opts, tmp):
    """Raw files for the tool, their -t and -d (none when every spec is a raw file), and the last
    spec's ratio when it is a compressed dataset. A missing value a dataset's filter was given
    goes to opts as --missing, unless one is there."""
    import numpy as np
    shape = dtype = None
    files, ratio = [], None
    for k, spec in enumerate(specs):
        ratio = None
        if dataset_spec(spec) is None:
            files.append(spec)
            continue
        a, ratio, missing = _read(spec)
        if missing is not None:
            opts.setdefault("--missing", repr(missing))
        if shape is not None and (a.shape, a.dtype) != (shape, dtype):
            raise ValueError(f"{specs[0]} and {spec} differ in shape or type")
        shape, dtype = a.shape, a.dtype
        raw = os.path.join(tmp, f"{k}.raw")
        a.astype(a.dtype.newbyteorder("<"), copy=False).tofile(raw)
        files.append(raw)
    if shape is None:
        return files, [], None
    t = "f32" if dtype == np.float32 else "f64"
    given_t, given_d = opts.get("-t", opts.get("--type")), opts.get("-d", opts.get("--dims"))
    d = ",".join(map(str, shape)) if shape else "1"
    if (given_t and given_t != t) or (given_d and given_d != d):
        raise ValueError(f"-t {given_t} -d {given_d} do not match the dataset's -t {t} -d {d}")
    return files, ["-t", t, "-d", d], ratio


def _command(tool, cmd, pos, opts, tmp):
    """The compiled tool's command line for the fields pos (datasets copied to raw files in
    tmp), the raw files, their -t and -d, and the last field's ratio."""
    files, shape_args, ratio = _inputs(pos, opts, tmp)
    skip = {"--plot", "--original"} | ({"-t", "--type", "-d", "--dims"} if shape_args else set())
    rest = [x for k, v in opts.items() if k not in skip for x in (k, v)]
    return [tool, cmd, *files, *shape_args, *rest], files, shape_args, ratio


def check(argv, tool):
    try:
        pos, opts, flags = _split(argv)
        if "--original" in opts:
            if len(pos) != 1:
                raise ValueError("check B --original A takes one dataset or file, B")
            pos = [opts["--original"], pos[0]]
        if len(pos) != 2:
            raise ValueError("check needs A (the original) and B, or B --original A")
    except ValueError as e:
        return _fail(str(e))
    plot = opts.get("--plot")
    with tempfile.TemporaryDirectory(prefix="h5zgpu-check-") as tmp:
        try:
            args, files, shape_args, ratio = _command(tool, "check", pos, opts, tmp)
        except (ValueError, OSError, KeyError) as e:
            return _fail(str(e), 1)
        # one run: the table, or the JSON object, or the table with the object beside it
        as_file = plot and "--json" not in flags
        json_path = os.path.join(tmp, "check.json")
        extra = ["--json"] if "--json" in flags else ["--json-file", json_path] if as_file else []
        run = subprocess.run(args + extra, capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            return run.returncode
        got = None
        if "--json" in flags:
            got = json.loads(run.stdout)
        else:
            sys.stdout.write(run.stdout.replace(files[1], pos[1]).replace(files[0], pos[0]))
            if ratio is not None:
                print(f"  compression ratio {ratio:.4g} (the dataset's bytes over its stored ones)")
            if as_file:
                with open(json_path) as f:
                    got = json.load(f)
        if got is not None:
            got["compression_ratio"] = ratio
        if plot:
            from .plots import check_plots
            check_plots(plot, got, _load(files[0], shape_args, opts),
                        _load(files[1], shape_args, opts), pos[0], pos[1],
                        float(opts.get("--pk-band", 0.01)), int(opts.get("--kmax", 0)))
        if "--json" in flags:
            print(json.dumps(got, indent=2))
        return 0


def _load(raw, shape_args, opts):
    """A raw file as the array -t and -d describe, its missing value (--missing) NaN."""
    import numpy as np
    args = dict(zip(shape_args[::2], shape_args[1::2])) or opts
    t = args.get("-t", args.get("--type"))
    d = args.get("-d", args.get("--dims"))
    a = np.fromfile(raw, "<f4" if t == "f32" else "<f8").reshape([int(x) for x in d.split(",")])
    if "--missing" in opts:
        a[a == a.dtype.type(float(opts["--missing"]))] = np.nan
    return a


def sweep(argv, tool):
    try:
        pos, opts, flags = _split(argv)
        if len(pos) != 1:
            raise ValueError("sweep needs one field: a raw file (-t, -d) or FILE.h5:/dataset")
    except ValueError as e:
        return _fail(str(e))
    plot = opts.get("--plot")
    with tempfile.TemporaryDirectory(prefix="h5zgpu-sweep-") as tmp:
        try:
            args = _command(tool, "sweep", pos, opts, tmp)[0]
        except (ValueError, OSError, KeyError) as e:
            return _fail(str(e), 1)
        if not plot:
            return subprocess.run(args + (["--json"] if "--json" in flags else [])).returncode
        run = subprocess.run(args + ["--json"], stdout=subprocess.PIPE, text=True)
        if run.stdout:
            got = json.loads(run.stdout)
            from .plots import sweep_plot
            sweep_plot(plot, got, pos[0])
            if "--json" in flags:
                print(json.dumps(got, indent=2))
            else:
                for codec, w in got["winners"].items():
                    print(f"{codec}: " + ("no bound of the grid meets the criteria" if w is None
                                          else f"{got['mode']} {w['eb']:.3g}, ratio "
                                               f"{w['ratio']:.2f}, cd_values "
                                               f"{tuple(w['cd_values'])}"))
        return run.returncode
