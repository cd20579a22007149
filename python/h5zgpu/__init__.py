"""h5py helper for the h5zgpu HDF5 filter (ID 33900).

    import h5py, h5zgpu        # installed with `pip install .`: h5py finds the plugin now
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("rho", data=a, chunks=(64, 64, 64),
                         compression=h5zgpu.Huffman(mode="rel", eb=1e-3))

The filter's parameters (cd_values) are four unsigned 32-bit integers: codec, error mode, and the
error bound as the low and high 32-bit words of its IEEE-754 binary64 pattern (docs/USAGE.md).
The codec is Huffman unless asked otherwise, here as in the h5zgpu command.

Installed from the repository root (`pip install .`), the package carries the plugin
(h5zgpu/plugin), the codec library (h5zgpu/lib) and the command (h5zgpu/bin), and importing it
adds the plugin's directory to h5py's search path. Installed from python/ it is this Python
alone: register() then finds a plugin built or installed separately; write() and read()
(h5zgpu.bulk) call the codec library, libh5zgpu.so, through ctypes.
"""
import math
import numbers
import os
import struct
import sys

# Hardware queues for this process's CUDA streams, read when its CUDA context is made (so it
# takes effect when this import comes first): a batch of small chunks runs 16 at once on the
# GPU instead of 8 (codec/src/batch.c); left alone when set.
os.environ.setdefault("CUDA_DEVICE_MAX_CONNECTIONS", "32")

__version__ = "0.1.0"
__all__ = ["FILTER_ID", "FILTER_NAME", "CODECS", "MODES", "DEFAULT_CODEC", "filter", "cd_values",
           "eb_to_words", "eb_from_words", "plugin_dir", "register", "write", "read",
           "gpu_available", "Huffman", "Fixed", "Auto"]

FILTER_ID = 33900
FILTER_NAME = "h5zgpu"
PLUGIN_FILE = "libh5zgpu_filter.so"
CODECS = {"auto": 0, "fixed": 1, "huffman": 2}
MODES = {"abs": 0, "rel": 1, "pwrel": 2, "ratio": 3}
RATIO_MAX = 1e6
# the densest codec, and on a GPU the fastest (docs/USAGE.md, "Which codec"); the h5zgpu
# command's default too
DEFAULT_CODEC = "huffman"
# where `pip install .` puts the plugin: inside this package
_PACKAGE_PLUGIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin")

# Where `cmake --install` puts the plugin (HDF5's built-in directory under the default prefix,
# lib/hdf5/plugin under another, such as this environment's) and where Debian keeps plugins.
_INSTALLED_DIRS = ("/usr/local/hdf5/lib/plugin",
                   os.path.join(sys.prefix, "lib", "hdf5", "plugin"),
                   "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins")


def _pick(what, value, table):
    if isinstance(value, str) and value.lower() in table:
        return table[value.lower()]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and value in table.values():
        return int(value)
    names = ", ".join(f"{k!r} ({v})" for k, v in table.items())
    raise ValueError(f"h5zgpu: {what} {value!r} is not one of {names}")


def eb_to_words(eb):
    """The error bound as (low, high) 32-bit words of its binary64 pattern, low word first."""
    return struct.unpack("<II", struct.pack("<d", float(eb)))


def eb_from_words(lo, hi):
    """The inverse of eb_to_words."""
    return struct.unpack("<d", struct.pack("<II", lo, hi))[0]


RADIUS_MIN, RADIUS_MAX = 2, 1024


def cd_values(codec=DEFAULT_CODEC, *, mode, eb=None, missing=None, dtype=None, radius=None,
              target=None):
    """The filter's cd_values (codec, mode, eb_lo, eb_hi) for the given codec, mode and bound.

    codec: "auto" | "fixed" | "huffman" (or 0, 1, 2); mode: "abs" | "rel" | "pwrel" | "ratio"
    (or 0..3); eb: finite and >= 0 (0 means lossless); below 1 for "pwrel". mode "ratio" takes
    target (the ratio each chunk aims at, above 1) instead of eb: each chunk chooses its bound
    and records it in its header.
    missing: an optional missing value; dtype: the dataset's element type, to round the missing
    value to float32 when it is. radius: the Huffman codec's quantisation radius (2..1024,
    default 512). Optional values follow a flags word (bit 0 missing, bit 2 radius) as
    (flags, [missing low word, high word], [radius]) (docs/FILTER.md).
    """
    c = _pick("codec", codec, CODECS)
    m = _pick("error mode", mode, MODES)
    if m == MODES["ratio"]:
        if (target is None) == (eb is None):
            raise ValueError("h5zgpu: mode 'ratio' takes target=R (the ratio), not eb")
        eb = _real("target ratio", target if target is not None else eb)
        if not (math.isfinite(eb) and 1 < eb <= RATIO_MAX):
            raise ValueError(f"h5zgpu: target ratio {eb!r} is not above 1 and at most "
                             f"{RATIO_MAX:g}")
    elif target is not None or eb is None:
        raise ValueError("h5zgpu: give eb for modes 'abs', 'rel' and 'pwrel' (target is mode "
                         "'ratio''s)")
    eb = _real("error bound", eb)
    if not (math.isfinite(eb) and eb >= 0):
        raise ValueError(f"h5zgpu: error bound {eb!r} is not a finite number >= 0 "
                         "(0 means lossless)")
    if m == MODES["pwrel"] and eb >= 1:
        raise ValueError(f"h5zgpu: PWREL error bound {eb!r} must be below 1 "
                         "(it is a fraction of |x|)")
    lo, hi = eb_to_words(eb)
    if missing is None and radius is None:
        return (c, m, lo, hi)
    flags, extra = 0, ()
    if missing is not None:
        flags |= 1
        extra += eb_to_words(_missing_value(missing, dtype))
    if radius is not None:
        if isinstance(radius, bool) or not isinstance(radius, numbers.Integral) \
                or not RADIUS_MIN <= radius <= RADIUS_MAX:
            raise ValueError(f"h5zgpu: radius {radius!r} is not an integer "
                             f"{RADIUS_MIN}..{RADIUS_MAX}")
        flags |= 4
        extra += (int(radius),)
    return (c, m, lo, hi, flags, *extra)


def _real(what, value):
    """A real number as a float; ValueError for anything else, huge integers included."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"h5zgpu: {what} {value!r} is not a number")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"h5zgpu: {what} {value!r} is too large for a binary64 number") from None


_FLOAT_NAMES = {"f": 4, "f4": 4, "float32": 4, "single": 4,
                "d": 8, "f8": 8, "float64": 8, "double": 8}


def _float_size(dtype):
    """4 or 8: the element size of a float32 or float64 type given in any of NumPy's spellings
    (numpy.float32, numpy.dtype('>f4'), 'f', 'd', 'float64', ...); ValueError for others."""
    try:
        import numpy
    except ImportError:  # the names alone, without NumPy's parser
        name = dtype.lstrip("<>=") if isinstance(dtype, str) else getattr(dtype, "__name__", "")
        if name in _FLOAT_NAMES:
            return _FLOAT_NAMES[name]
    else:
        try:
            dt = numpy.dtype(dtype)
        except TypeError:
            dt = None
        if dt is not None and dt.kind == "f" and dt.itemsize in (4, 8):
            return dt.itemsize
    raise ValueError(f"h5zgpu: dtype {dtype!r} is not float32 or float64")


def _missing_value(missing, dtype):
    """The missing value as the dataset's element type holds it, as a float.

    The filter compares bits in the element type and refuses, for a float32 dataset, a value that
    is not a float32 number; with dtype naming float32 the value is rounded to float32 here.
    """
    missing = _real("missing value", missing)
    if dtype is None or _float_size(dtype) == 8:
        return missing
    return struct.unpack("<f", struct.pack("<f", missing))[0]


def filter(codec=DEFAULT_CODEC, *, mode, eb=None, missing=None,  # noqa: A001 - users' name
           dtype=None, radius=None, target=None):
    """Keyword arguments for h5py's create_dataset: compression=33900 and its compression_opts.

    missing: an optional missing value (netCDF's _FillValue) that comes back bit for bit and stays
    out of REL ranges; give dtype (e.g. numpy.float32) to round it to a float32 dataset's type.
    radius: the Huffman codec's quantisation radius (2..1024; default 512).
    target: mode "ratio"'s target ratio, e.g. filter(mode="ratio", target=10).
    """
    return {"compression": FILTER_ID,
            "compression_opts": cd_values(codec, mode=mode, eb=eb, missing=missing, dtype=dtype,
                                          radius=radius, target=target)}


def _source_build_dir():
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "build", "plugin"))


def plugin_dir():
    """The directory holding libh5zgpu_filter.so.

    Looked for in order: $H5ZGPU_PLUGIN_DIR (which must hold it if set), each entry of
    $HDF5_PLUGIN_PATH, this package's own plugin/ (pip install .), the source tree's
    build/plugin, then the installed locations.
    """
    explicit = os.environ.get("H5ZGPU_PLUGIN_DIR")
    if explicit:
        if os.path.isfile(os.path.join(explicit, PLUGIN_FILE)):
            return os.path.abspath(explicit)
        raise FileNotFoundError(f"h5zgpu: H5ZGPU_PLUGIN_DIR={explicit} has no {PLUGIN_FILE}")
    candidates = [d for d in os.environ.get("HDF5_PLUGIN_PATH", "").split(os.pathsep) if d]
    candidates += [_PACKAGE_PLUGIN_DIR, _source_build_dir(), *_INSTALLED_DIRS]
    for d in candidates:
        if os.path.isfile(os.path.join(d, PLUGIN_FILE)):
            return os.path.abspath(d)
    raise FileNotFoundError(
        f"h5zgpu: no {PLUGIN_FILE} in {', '.join(candidates)}; pip install the repository's "
        "root (which carries the plugin), build the project (cmake -S . -B build && cmake "
        "--build build) or set H5ZGPU_PLUGIN_DIR")


def register():
    """Adds plugin_dir() to h5py's plugin search path unless it is there.

    At the end of the path, or before its first entry that is not a directory: HDF5 1.10 ends
    its search at a directory it cannot open (Debian's default plugin directory is absent
    until a plugin package creates it), so a plugin after one is never found. Returns the
    directory. Needed only when HDF5_PLUGIN_PATH did not name it when HDF5 started.
    """
    import h5py.h5pl

    d = plugin_dir()
    path = [os.path.abspath(p.decode() if isinstance(p, bytes) else p)
            for p in (h5py.h5pl.get(i) for i in range(h5py.h5pl.size()))]
    if d not in path:
        missing = [i for i, p in enumerate(path) if not os.path.isdir(p)]
        if missing:
            h5py.h5pl.insert(d.encode(), missing[0])
        else:
            h5py.h5pl.append(d.encode())
    return d


def write(dset, data, selection=None):
    """Writes data (NumPy, or a GPU array with CuPy) into dset[selection] with batched
    compression and direct chunk writes: the filter's bytes, faster (h5zgpu.bulk)."""
    from .bulk import write as _write

    return _write(dset, data, selection)


def read(dset, selection=None, out=None):
    """dset[selection] through direct chunk reads and batched decompression, into out when given
    (NumPy, or a GPU array with CuPy, filled on the GPU) (h5zgpu.bulk)."""
    from .bulk import read as _read

    return _read(dset, selection, out)


def gpu_available():
    """True when the codec library (libh5zgpu.so) was built with CUDA and sees a usable GPU."""
    from .bulk import gpu_available as _gpu_available

    return _gpu_available()


def _filter_base():
    """h5py's FilterRefBase (compression=<instance> in create_dataset), or a plain Mapping of the
    same keys where h5py is absent or older than 3.0."""
    try:
        import h5py
        # the class h5py's own Dataset code checks: Debian's python3-h5py imports its modules
        # under a second name too, and only this one passes isinstance there
        return sys.modules[h5py.Dataset.__module__].filters.FilterRefBase
    except (ImportError, KeyError, AttributeError):
        from collections.abc import Mapping

        class _Base(Mapping):
            filter_id, filter_options = None, ()

            def _kwargs(self):
                return {"compression": self.filter_id, "compression_opts": self.filter_options}

            def __getitem__(self, key):
                return self._kwargs()[key]

            def __iter__(self):
                return iter(self._kwargs())

            def __len__(self):
                return 2

            def __hash__(self):
                return hash((self.filter_id, tuple(self.filter_options)))

        return _Base


class _H5zgpu(_filter_base()):
    """Filter 33900 with one codec, in hdf5plugin's style: pass an instance as compression=, or
    unpack it (**instance) into create_dataset's keyword arguments."""
    filter_id = FILTER_ID
    codec = None

    def __init__(self, *, mode, eb=None, missing=None, dtype=None, radius=None, target=None):
        self.filter_options = cd_values(self.codec, mode=mode, eb=eb, missing=missing,
                                        dtype=dtype, radius=radius, target=target)

    def __repr__(self):
        return f"h5zgpu.{type(self).__name__}(cd_values={self.filter_options})"


class Huffman(_H5zgpu):
    """The Huffman codec (cuSZ family): the default, the densest."""
    codec = "huffman"


class Fixed(_H5zgpu):
    """The fixed-length codec (cuSZp family): the fastest on the CPU."""
    codec = "fixed"


class Auto(_H5zgpu):
    """Per chunk, the smaller of the two codecs' outputs (encodes with both)."""
    codec = "auto"


def _register_package_plugin():
    """pip install . put the plugin in this package: make h5py find it on import."""
    if os.environ.get("H5ZGPU_PLUGIN_DIR") or \
            not os.path.isfile(os.path.join(_PACKAGE_PLUGIN_DIR, PLUGIN_FILE)):
        return
    try:
        import h5py.h5pl  # noqa: F401
    except ImportError:   # h5py comes later: register() then
        return
    register()


_register_package_plugin()
