"""`h5zgpu info FILE.h5`: every dataset of a file that carries filter 33900, with its codec, error
mode and bound decoded from the stored cd_values, its ratio, and whether this environment can
read it (the plugin found and loaded by this Python's HDF5, a chunk decompressed). Exit status 0
when every such dataset reads here, 1 when one does not or the file cannot be opened, 2 on a
usage error."""
import os
import sys

from . import CODECS, FILTER_ID, MODES, eb_from_words

_CODEC_NAMES = {v: k for k, v in CODECS.items()}
_MODE_NAMES = {v: k.upper() for k, v in MODES.items()}


def _plugin_state():
    """(available, how): whether this HDF5 has filter 33900, and where it came from or why not."""
    import h5py
    from . import register
    try:
        where = register()
    except FileNotFoundError as e:
        where = None
        why = str(e)
    if h5py.h5z.filter_avail(FILTER_ID):
        return True, f"plugin {where or 'on HDF5_PLUGIN_PATH'}"
    if where is None:
        return False, why
    return False, f"{where} holds the plugin, but this HDF5 did not load it"


def _describe(cd):
    """codec, mode, bound and extras from the stored cd_values (docs/FILTER.md)."""
    if len(cd) < 4:
        return "?", "?", "?", f"cd_values {tuple(cd)}"
    codec = _CODEC_NAMES.get(cd[0], f"?{cd[0]}")
    mode = _MODE_NAMES.get(cd[1], f"?{cd[1]}")
    bound = f"{eb_from_words(cd[2], cd[3]):g}"
    if cd[1] == MODES["ratio"]:   # each chunk's own bound is in its header
        bound = f"target ratio {bound}"
    extras = []
    if len(cd) > 4 and cd[4] & 1 and len(cd) > 6:
        extras.append(f"missing {eb_from_words(cd[5], cd[6]):g}")
    return codec, mode, bound, ", ".join(extras)


def _first_chunk_reads(dset):
    """None when the dataset's first chunk (or all of a small one) decompresses, else why not."""
    corner = tuple(slice(0, min(c, n)) for c, n in zip(dset.chunks, dset.shape))
    try:
        dset[corner]
        return None
    except Exception as e:   # h5py reports the plugin's and HDF5's failures as OSError
        return str(e).splitlines()[0]


def info(path, out=sys.stdout):
    """Prints the report for path; returns the exit status."""
    import h5py
    available, how = _plugin_state()
    out.write(f"{path}: h5py {h5py.version.version}, HDF5 {h5py.version.hdf5_version}; "
              f"filter {FILTER_ID} {'available' if available else 'NOT available'} ({how})\n")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        out.write(f"h5zgpu info: cannot open {path}: {e}\n")
        return 1
    rows, unreadable = [], 0
    with f:
        def visit(name, obj):
            nonlocal unreadable
            if not isinstance(obj, h5py.Dataset) or obj.chunks is None:
                return
            dcpl = obj.id.get_create_plist()
            filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
            ours = [f for f in filters if f[0] == FILTER_ID]
            if not ours:
                return
            codec, mode, bound, extras = _describe(ours[0][2])
            stored = obj.id.get_storage_size()
            raw = obj.size * obj.dtype.itemsize
            ratio = f"{raw / stored:.2f}" if stored else "-"
            why = _first_chunk_reads(obj) if stored else None
            unreadable += why is not None
            shape = "x".join(str(n) for n in obj.shape)
            rows.append((f"/{name}", f"{obj.dtype}[{shape}]", codec, mode, bound, ratio,
                         "yes" if why is None else f"NO: {why}", extras))
        f.visititems(visit)
    if not rows:
        out.write(f"no dataset in {path} carries filter {FILTER_ID}\n")
        return 0
    head = ("dataset", "type", "codec", "mode", "bound", "ratio", "reads here", "notes")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    if unreadable:
        out.write(f"h5zgpu info: {unreadable} dataset(s) cannot be read in this environment\n")
    return 1 if unreadable else 0


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        sys.stderr.write("usage: h5zgpu info FILE.h5\n")
        return 2
    if not os.path.exists(argv[0]):
        sys.stderr.write(f"h5zgpu info: {argv[0]}: no such file\n")
        return 1
    return info(argv[0])
