"""Whole-dataset writes and reads that bypass HDF5's one-chunk-at-a-time filter pipeline.

`write(dset, data, selection)` compresses every chunk the selection covers through the codec
library (libh5zgpu.so, batches of chunks, several in flight on the GPU) and stores the finished
chunks with HDF5's direct chunk write; `read` reads them back with direct chunk reads and batched
decompression. The chunks are byte for byte those the filter would write for the same values
(edge chunks padded with the codec's fill value, as HDF5 pads them), so any reader with the plugin
reads the file; under fixed ratio (mode 3) the selection's chunks instead share one budget, so
that together they land at the target (h5zgpu_ratio_begin), each an ABS chunk that records its
bound. data may be a NumPy array or a GPU array (`__cuda_array_interface__`, with CuPy
installed): then chunks are cut and compressed on the GPU and only compressed bytes cross PCIe.

The dataset must be chunked with filter 33900 as its only filter (other filters would have to
run on the chunks too: write through h5py then).
"""
import ctypes
import itertools
import math
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

FILTER_ID = 33900
MAX_RANK = 32
# A batch is compressed (or decompressed) together while the previous one is stored (or placed):
# at most 64 chunks and 64 MiB of values, at least 8 chunks (the batch API keeps 8 or 16 in
# flight).
BATCH_CHUNKS = 64
BATCH_BYTES = 64 << 20
BATCH_MIN = 8
# Fixed ratio: a sample of a 32nd of the whole chunks (at least 8, at most 256 MiB of them)
# gives the first bound, and batches of at most an eighth of the chunks move it (the dataset
# library's figures, dataset/src/ratio_sample.h).
MODE_RATIO = 3
RATIO_SHARE, RATIO_LEAST, RATIO_BYTES, RATIO_BATCHES = 32, 8, 256 << 20, 8
_LIB_FILE = "libh5zgpu.so"


class _Params(ctypes.Structure):
    """h5zgpu_params (codec/include/h5zgpu.h)."""
    _fields_ = [("codec", ctypes.c_int), ("mode", ctypes.c_int), ("eb", ctypes.c_double),
                ("dtype", ctypes.c_int), ("rank", ctypes.c_uint),
                ("dims", ctypes.c_uint64 * MAX_RANK), ("has_fill", ctypes.c_int),
                ("fill", ctypes.c_double), ("radius", ctypes.c_uint)]


_lib = None


def library_path():
    """libh5zgpu.so: $H5ZGPU_LIB, else near the plugin's directory (build/lib beside a build's
    plugin/; PREFIX/lib for PREFIX/lib/hdf5/plugin and for /usr/local/hdf5/lib/plugin), else
    the system's search path."""
    from . import plugin_dir

    explicit = os.environ.get("H5ZGPU_LIB")
    if explicit:
        return explicit
    try:
        d = plugin_dir()
    except FileNotFoundError:
        return _LIB_FILE
    for up in (("..", "lib"), ("..", ".."), ("..", "..", "..", "lib")):
        cand = os.path.join(d, *up, _LIB_FILE)
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    return _LIB_FILE


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        P = ctypes.POINTER
        vpp, szp = P(ctypes.c_void_p), P(ctypes.c_size_t)
        lib.h5zgpu_params_from_cd_values.argtypes = [ctypes.c_size_t, P(ctypes.c_uint),
                                                     P(_Params), P(ctypes.c_int)]
        lib.h5zgpu_compress_bound.argtypes = [P(_Params)]
        lib.h5zgpu_compress_bound.restype = ctypes.c_size_t
        lib.h5zgpu_compress_batch.argtypes = [P(_Params), ctypes.c_size_t, vpp, vpp, szp, szp,
                                              ctypes.c_void_p, szp]
        lib.h5zgpu_decompress_batch.argtypes = [ctypes.c_size_t, vpp, szp, vpp, szp, szp,
                                                ctypes.c_void_p, szp]
        lib.h5zgpu_compress_device.argtypes = [P(_Params), ctypes.c_void_p, ctypes.c_void_p,
                                               ctypes.c_size_t, szp, ctypes.c_int,
                                               ctypes.c_void_p]
        lib.h5zgpu_decompress_device.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                 ctypes.c_void_p, ctypes.c_size_t, szp,
                                                 ctypes.c_int, ctypes.c_void_p]
        lib.h5zgpu_compress_device_batch.argtypes = [P(_Params), ctypes.c_size_t, vpp, vpp, szp,
                                                     szp, ctypes.c_int, szp]
        lib.h5zgpu_decompress_device_batch.argtypes = [ctypes.c_size_t, vpp, szp, vpp, szp, szp,
                                                       ctypes.c_int, szp]
        u64p = P(ctypes.c_uint64)
        boxes = [ctypes.c_void_p, ctypes.c_uint, u64p, u64p, ctypes.c_size_t, ctypes.c_size_t,
                 u64p, u64p, u64p, vpp]
        lib.h5zgpu_gather_boxes.argtypes = boxes
        lib.h5zgpu_scatter_boxes.argtypes = boxes
        lib.h5zgpu_ratio_begin.argtypes = [P(_Params), ctypes.c_uint64, ctypes.c_size_t, vpp,
                                           vpp, szp, szp, ctypes.c_int, ctypes.c_void_p,
                                           ctypes.c_void_p]
        lib.h5zgpu_ratio_account.argtypes = [ctypes.c_void_p, szp, ctypes.c_size_t]
        lib.h5zgpu_ratio_budget_size.restype = ctypes.c_size_t
        lib.h5zgpu_alloc_host.argtypes = [ctypes.c_size_t]
        lib.h5zgpu_alloc_host.restype = ctypes.c_void_p
        lib.h5zgpu_free_host.argtypes = [ctypes.c_void_p]
        lib.h5zgpu_last_error.restype = ctypes.c_char_p
        lib.h5zgpu_status_string.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def gpu_available():
    return bool(_load().h5zgpu_gpu_available())


_spare_lock = threading.RLock()   # re-entrant: a collection inside may return another array
_spare = {}   # bytes -> addresses of library host buffers free for the next array
HOST_MOST = 128 << 20   # larger chunk buffers (8 chunks of over 16 MiB): ordinary arrays


def _host_array(shape, dtype):
    """An empty C-order array in the library's host memory, which the GPU path copies straight
    to and from (page-locked when the work runs on a GPU). Its buffer is kept for the process
    and reused when the array goes: page-locking costs tens of ms a 64 MiB, more than a batch's
    work. Above HOST_MOST bytes an ordinary array, staged by the library as any other."""
    n = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
    if n > HOST_MOST:
        return np.empty(shape, dtype=dtype)
    with _spare_lock:
        free = _spare.get(n)
        p = free.pop() if free else None
    if p is None:
        p = _load().h5zgpu_alloc_host(n)
        if not p:
            raise MemoryError(f"h5zgpu: no host memory for {n} bytes")
    a = np.frombuffer((ctypes.c_uint8 * n).from_address(p), dtype=dtype,
                      count=int(np.prod(shape))).reshape(shape)
    weakref.finalize(a, _spare_again, n, p)
    return a


def _spare_again(n, p):
    with _spare_lock:
        _spare.setdefault(n, []).append(p)


def _check(st, what):
    if st != 0:
        lib = _load()
        raise OSError(f"h5zgpu: {what} failed ({lib.h5zgpu_status_string(st).decode()}): "
                      f"{lib.h5zgpu_last_error().decode()}")


class _Layout:
    """What the filter applies to dset's chunks: the parameters from its stored cd_values."""

    def __init__(self, dset):
        if dset.chunks is None:
            raise ValueError("h5zgpu: the dataset is not chunked")
        dcpl = dset.id.get_create_plist()
        filters = [dcpl.get_filter(i) for i in range(dcpl.get_nfilters())]
        if [f[0] for f in filters] != [FILTER_ID]:
            raise ValueError(f"h5zgpu: the dataset's filters are {[f[0] for f in filters]}; "
                             "write and read need filter 33900 alone (write through h5py "
                             "otherwise)")
        cd = filters[0][2]
        self.params = _Params()
        big = ctypes.c_int()
        arr = (ctypes.c_uint * len(cd))(*cd)
        _check(_load().h5zgpu_params_from_cd_values(len(cd), arr, ctypes.byref(self.params),
                                                    ctypes.byref(big)),
               "reading the dataset's cd_values")
        self.chunks = tuple(int(c) for c in dset.chunks)
        if tuple(self.params.dims[:self.params.rank]) != self.chunks:
            raise ValueError("h5zgpu: the dataset's cd_values do not match its chunk shape")
        self.dtype = np.dtype(np.float32 if self.params.dtype == 1 else np.float64)
        self.full = int(np.prod(self.chunks))
        self.batch = max(BATCH_MIN, min(BATCH_CHUNKS,
                                        BATCH_BYTES // (self.full * self.dtype.itemsize)))
        self.fill = self.dtype.type(self.params.fill if self.params.has_fill else 0.0)
        self.cap = _load().h5zgpu_compress_bound(ctypes.byref(self.params))


def _selection(dset, selection):
    """(start, stop) per axis of a selection of slices with step 1 (None: the whole dataset)."""
    shape = dset.shape
    if selection is None:
        return tuple(0 for _ in shape), tuple(shape)
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) != len(shape):
        raise ValueError(f"h5zgpu: selection {selection!r} has {len(selection)} axes, the "
                         f"dataset {len(shape)}")
    start, stop = [], []
    for s, n in zip(selection, shape):
        if not isinstance(s, slice):
            raise ValueError("h5zgpu: a selection is a tuple of slices with step 1")
        a, b, step = s.indices(n)
        if step != 1 or b < a:
            raise ValueError("h5zgpu: a selection is a tuple of slices with step 1")
        start.append(a)
        stop.append(b)
    return tuple(start), tuple(stop)


def _chunks_of(layout, shape, start, stop):
    """Chunk origins covering the box [start, stop)."""
    ranges = [range(a - a % c, b, c) for a, b, c in zip(start, stop, layout.chunks)]
    if any(len(r) == 0 for r in ranges):
        return []
    return list(itertools.product(*ranges))


def _parts(origin, chunks, shape, start, stop):
    """For one chunk: the slices of its in-extent part (chunk coordinates), of the selection's
    part inside it (chunk coordinates and selection coordinates), and whether that covers the
    in-extent part whole."""
    inside, own, sel = [], [], []
    whole = True
    for o, c, n, a, b in zip(origin, chunks, shape, start, stop):
        e = min(o + c, n)
        lo, hi = max(o, a), min(e, b)
        inside.append(slice(0, e - o))
        own.append(slice(lo - o, hi - o))
        sel.append(slice(lo - a, hi - a))
        whole = whole and lo == o and hi == e
    return tuple(inside), tuple(own), tuple(sel), whole


def _stored(dset, origin):
    """The stored bytes of the chunk at origin, or None when it has none yet."""
    info = dset.id.get_chunk_info_by_coord(origin)
    if info.byte_offset is None:
        return None
    mask, data = dset.id.read_direct_chunk(origin)
    if mask != 0:
        raise OSError(f"h5zgpu: the chunk at {origin} was stored without the filter "
                      f"(filter mask {mask})")
    return data


def _copy_boxes(layout, array, parts, chunks, gather):
    """Copies between a C-contiguous host array holding a selection and the batch's chunk
    arrays, parts[k] = (own, sel) of chunk k (_parts): gather cuts each chunk's part of the
    selection out of array into its chunk, scatter places it back (one library call, its rows
    on the library's CPU threads, without the GIL)."""
    n, r = len(parts), array.ndim
    pos = np.empty((3, n, r), dtype=np.uint64)   # in the array, in the chunk, extents
    for k, (own, sel) in enumerate(parts):
        pos[0, k] = [s.start for s in sel]
        pos[1, k] = [s.start for s in own]
        pos[2, k] = [s.stop - s.start for s in own]
    u64 = ctypes.POINTER(ctypes.c_uint64)
    dims = (ctypes.c_uint64 * r)(*array.shape)
    cdims = (ctypes.c_uint64 * r)(*layout.chunks)
    ptrs = (ctypes.c_void_p * n)(*[c.ctypes.data for c in chunks[:n]])
    fn = _load().h5zgpu_gather_boxes if gather else _load().h5zgpu_scatter_boxes
    _check(fn(array.ctypes.data, r, dims, cdims, layout.dtype.itemsize, n,
              pos[0].ctypes.data_as(u64), pos[1].ctypes.data_as(u64),
              pos[2].ctypes.data_as(u64), ptrs), "copying chunks")


def _decompress(layout, blobs, outs=None):
    """Chunk arrays from compressed chunks (bytes-like; batched), into outs when given (arrays
    of the chunk's shape, C-contiguous)."""
    lib = _load()
    n = len(blobs)
    if outs is None:
        outs = [np.empty(layout.chunks, dtype=layout.dtype) for _ in range(n)]
    views = [np.frombuffer(b, dtype=np.uint8) for b in blobs]   # no copies; kept alive here
    ins = (ctypes.c_void_p * n)(*[v.ctypes.data for v in views])
    in_len = (ctypes.c_size_t * n)(*[v.nbytes for v in views])
    out_p = (ctypes.c_void_p * n)(*[o.ctypes.data for o in outs])
    cap = (ctypes.c_size_t * n)(*[o.nbytes for o in outs])
    out_len = (ctypes.c_size_t * n)()
    done = ctypes.c_size_t()
    _check(lib.h5zgpu_decompress_batch(n, ins, in_len, out_p, cap, out_len, None,
                                       ctypes.byref(done)), "decompressing chunks")
    return outs


def _compress(layout, arrays, space, budget):
    """Compressed bytes of chunk arrays (batched; the library releases the GIL), made in space
    (a uint8 array of at least len(arrays) x layout.cap bytes) with the budget's parameters:
    views into it."""
    lib = _load()
    n = len(arrays)
    ins = (ctypes.c_void_p * n)(*[a.ctypes.data for a in arrays])
    out_p = (ctypes.c_void_p * n)(*[space.ctypes.data + i * layout.cap for i in range(n)])
    cap = (ctypes.c_size_t * n)(*([layout.cap] * n))
    out_len = (ctypes.c_size_t * n)()
    done = ctypes.c_size_t()
    _check(lib.h5zgpu_compress_batch(budget.params(), n, ins, out_p, cap, out_len, None,
                                     ctypes.byref(done)), "compressing chunks")
    budget.account(out_len)
    return [space[i * layout.cap:i * layout.cap + out_len[i]] for i in range(n)]


class _Budget:
    """The parameters of a write's batches (h5zgpu_ratio_budget, codec/include/h5zgpu.h): the
    dataset's, or under fixed ratio a bound from a sample of the chunks, moved batch by batch
    towards what the write's budget has left."""

    def __init__(self, layout, total, sample=(), device=-1):
        """sample: chunk arrays (host, or on GPU device with their device pointers); total: the
        write's chunks."""
        lib = _load()
        self._mem = (ctypes.c_double * ((lib.h5zgpu_ratio_budget_size() + 7) // 8))()
        n = len(sample)
        ptrs = [a.data.ptr if device >= 0 else a.ctypes.data for a in sample]
        space = [np.empty(layout.cap, dtype=np.uint8) for _ in range(n)] if device < 0 else \
            [_gpu_empty(layout.cap) for _ in range(n)]
        outs = [b.ctypes.data if device < 0 else b.data.ptr for b in space]
        _check(lib.h5zgpu_ratio_begin(ctypes.byref(layout.params), total, n,
                                      (ctypes.c_void_p * n)(*ptrs),
                                      (ctypes.c_void_p * n)(*outs),
                                      (ctypes.c_size_t * n)(*([layout.cap] * n)),
                                      (ctypes.c_size_t * n)(), device, None, self._mem),
               "choosing the fixed ratio's bound")

    def params(self):
        return ctypes.cast(self._mem, ctypes.POINTER(_Params))

    def account(self, lens):
        _load().h5zgpu_ratio_account(self._mem, lens, len(lens))


def _gpu_empty(nbytes):
    import cupy as cp
    return cp.empty((nbytes,), dtype=cp.uint8)


def _scattered(origins):
    """origins in a scattered order, so that any run of them samples the whole selection (fixed
    ratio's sample and batches): the k-th is origins[k x s mod n], s prime to n near its golden
    section (the dataset library's order, dataset/src/plan.h)."""
    n = len(origins)
    if n < 3:
        return origins
    s = int(n * 0.6180339887498949)
    while math.gcd(s, n) != 1:
        s += 1
    return [origins[k * s % n] for k in range(n)]


def _plan(dset, layout, start, stop):
    """The write's batches of chunk origins, and under fixed ratio the origins of its sample
    (the first whole chunks of the scattered order; else none)."""
    origins = _chunks_of(layout, dset.shape, start, stop)
    if layout.params.mode != MODE_RATIO:
        return _batches(layout, origins), []
    origins = _scattered(origins)
    whole = [o for o in origins if _is_whole(layout, dset.shape, o, start, stop)]
    fits = max(RATIO_BYTES // (layout.full * layout.dtype.itemsize), 1)
    most = min(max(-(-len(whole) // RATIO_SHARE), RATIO_LEAST), fits)
    size = max(1, min(layout.batch, -(-len(origins) // RATIO_BATCHES)))
    return [origins[i:i + size] for i in range(0, len(origins), size)], whole[:most]


def _is_whole(layout, shape, origin, start, stop):
    inside, _, _, whole = _parts(origin, layout.chunks, shape, start, stop)
    return whole and np.prod([s.stop for s in inside]) == layout.full


def _is_gpu_array(a):
    return hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray)


def _batches(layout, origins):
    return [origins[i:i + layout.batch] for i in range(0, len(origins), layout.batch)]


def _pipeline(batches, prepare, compute, use):
    """For each batch: prepare(i, batch) here while the batch before is computed, compute(i) on
    another thread (a library call, which holds no GIL), then use(i, batch, result) here while
    the next batch is computed. The calls that need the GIL (h5py's, CuPy's launches) run on
    this thread or on threads it waits for: on the other thread, each waited for Python's
    switch interval while h5py held the GIL. prepare and compute alternate between two slots
    (i % 2) of their buffers."""
    if not batches:
        return
    with ThreadPoolExecutor(max_workers=1) as worker:
        prepare(0, batches[0])
        pending = worker.submit(compute, 0)
        for i in range(len(batches)):
            if i + 1 < len(batches):
                prepare(i + 1, batches[i + 1])
            result = pending.result()
            if i + 1 < len(batches):
                pending = worker.submit(compute, i + 1)
            use(i, batches[i], result)


def write(dset, data, selection=None):
    """Writes data into dset[selection] (slices with step 1; None: the whole dataset), every
    chunk compressed as the filter would (under fixed ratio: at the bound the selection's budget
    gives its batch) and stored with a direct chunk write. Chunks the selection covers in part
    keep their other values (read and decompressed first)."""
    layout = _Layout(dset)
    start, stop = _selection(dset, selection)
    want = tuple(b - a for a, b in zip(start, stop))
    if tuple(data.shape) != want:
        raise ValueError(f"h5zgpu: data of shape {tuple(data.shape)} for a selection of "
                         f"shape {want}")
    if _is_gpu_array(data):
        return _write_gpu(dset, layout, data, start, stop)
    # the codec's element type in C order: a copy only where data is not that already
    data = np.ascontiguousarray(data, dtype=layout.dtype)
    batches, sample = _plan(dset, layout, start, stop)
    picked = [np.empty(layout.chunks, dtype=layout.dtype) for _ in sample]
    if sample:
        _copy_boxes(layout, data,
                    [_parts(o, layout.chunks, dset.shape, start, stop)[1:3] for o in sample],
                    picked, True)
    budget = _Budget(layout, sum(len(b) for b in batches), picked)
    # two slots of cut chunks and compressed bytes, reused batch after batch
    cut = [_host_array((layout.batch,) + layout.chunks, layout.dtype) for _ in range(2)]
    space = [np.empty(layout.batch * layout.cap, dtype=np.uint8) for _ in range(2)]

    def prepare(i, batch):
        """The batch's chunks as the filter gets them: the selection's values over, where it
        covers a chunk in part, the chunk's stored values or the fill value."""
        parts = []
        for o, into in zip(batch, cut[i % 2]):
            inside, own, sel, whole = _parts(o, layout.chunks, dset.shape, start, stop)
            parts.append((own, sel))
            if whole and np.prod([s.stop for s in inside]) == layout.full:
                continue
            old = None if whole else _stored(dset, o)
            if old is not None:
                _decompress(layout, [old], [into])
            else:
                into[...] = layout.fill
        _copy_boxes(layout, data, parts, cut[i % 2], True)

    def compute(i):
        return _compress(layout, cut[i % 2][:len(batches[i])], space[i % 2], budget)

    def store(i, batch, blobs):
        for o, b in zip(batch, blobs):
            dset.id.write_direct_chunk(o, b, 0)

    _pipeline(batches, prepare, compute, store)


def read(dset, selection=None, out=None):
    """dset[selection] (slices with step 1; None: the whole dataset) through direct chunk reads
    and batched decompression, into out when given: a NumPy array of the selection's shape, or a
    GPU array (CuPy), which is filled on the GPU. The next batch's chunks are read from the file
    while this batch is decompressed and placed."""
    layout = _Layout(dset)
    start, stop = _selection(dset, selection)
    want = tuple(b - a for a, b in zip(start, stop))
    if out is None:
        out = np.empty(want, dtype=layout.dtype)
    elif tuple(out.shape) != want or np.dtype(out.dtype) != layout.dtype:
        raise ValueError(f"h5zgpu: out of shape {tuple(out.shape)} and type {out.dtype} for a "
                         f"selection of shape {want} and type {layout.dtype}")
    elif isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError("h5zgpu: out is read-only")
    batches = _batches(layout, _chunks_of(layout, dset.shape, start, stop))

    def fetch(i, batch):
        return [_stored(dset, o) for o in batch]

    if _is_gpu_array(out):
        return _read_gpu(dset, layout, out, start, stop, batches, fetch)
    # the chunks are placed into C-order memory: a strided out is filled from such a copy
    into = out if out.flags.c_contiguous and out.dtype.isnative else np.empty(want, layout.dtype)
    chunks = [_host_array((layout.batch,) + layout.chunks, layout.dtype) for _ in range(2)]
    stored = [None, None]

    def prepare(i, batch):
        stored[i % 2] = fetch(i, batch)

    def compute(i):
        have = [k for k, b in enumerate(stored[i % 2]) if b is not None]
        if have:
            _decompress(layout, [stored[i % 2][k] for k in have],
                        [chunks[i % 2][k] for k in have])
        for k, b in enumerate(stored[i % 2]):
            if b is None:   # never written: the fill value, as HDF5 reads it
                chunks[i % 2][k].fill(layout.fill)

    def place(i, batch, _):
        parts = [_parts(o, layout.chunks, dset.shape, start, stop)[1:3] for o in batch]
        _copy_boxes(layout, into, parts, chunks[i % 2], False)

    _pipeline(batches, prepare, compute, place)
    if into is not out:
        out[...] = into
    return out


def _device_batch(n, pointers):
    return (ctypes.c_void_p * n)(*pointers)


_H2D, _D2H = 1, 2   # cudaMemcpyKind


def _write_gpu(dset, layout, data, start, stop):
    """write() of a GPU array: each batch of chunks cut and padded on the GPU, compressed there
    (the device batch API) while the previous batch is stored, and its compressed bytes copied
    into pinned host memory: only compressed bytes cross PCIe."""
    import cupy as cp
    import cupyx

    lib = _load()
    data = cp.asarray(data)
    dev = data.device.id
    batches, sample = _plan(dset, layout, start, stop)
    nb = max(len(b) for b in batches) if batches else 1
    with data.device:
        picked = [cp.ascontiguousarray(data[_parts(o, layout.chunks, dset.shape, start, stop)[2]])
                  for o in sample]
        cp.cuda.get_current_stream().synchronize()
        budget = _Budget(layout, sum(len(b) for b in batches), picked, dev)
        chunks = [cp.empty((nb,) + layout.chunks, dtype=layout.dtype) for _ in range(2)]
        space = [cp.empty((nb, layout.cap), dtype=cp.uint8) for _ in range(2)]
        host = cupyx.empty_pinned((nb * layout.cap,), dtype=np.uint8)
        stream = cp.cuda.get_current_stream()

        def prepare(i, batch):
            got = chunks[i % 2]
            for k, o in enumerate(batch):
                inside, own, sel, whole = _parts(o, layout.chunks, dset.shape, start, stop)
                if whole and np.prod([s.stop for s in inside]) == layout.full:
                    got[k][...] = data[sel]
                    continue
                old = None if whole else _stored(dset, o)
                if old is not None:
                    got[k][...] = cp.asarray(_decompress(layout, [old])[0])
                else:
                    got[k].fill(layout.fill)
                got[k][own] = data[sel]
            stream.synchronize()   # the library's streams read them

        def compute(i):
            n = len(batches[i])
            lens = (ctypes.c_size_t * n)()
            done = ctypes.c_size_t()
            _check(lib.h5zgpu_compress_device_batch(
                budget.params(), n,
                _device_batch(n, [chunks[i % 2][k].data.ptr for k in range(n)]),
                _device_batch(n, [space[i % 2][k].data.ptr for k in range(n)]),
                (ctypes.c_size_t * n)(*([layout.cap] * n)), lens, dev, ctypes.byref(done)),
                "compressing chunks on the GPU")
            budget.account(lens)
            return list(lens)

        def store(i, batch, lens):
            at = []
            for k, m in enumerate(lens):
                at.append(sum(lens[:k]))
                cp.cuda.runtime.memcpyAsync(host.ctypes.data + at[k], space[i % 2][k].data.ptr,
                                            m, _D2H, stream.ptr)
            stream.synchronize()
            for o, a, m in zip(batch, at, lens):
                dset.id.write_direct_chunk(o, host[a:a + m], 0)

        _pipeline(batches, prepare, compute, store)


def _read_gpu(dset, layout, out, start, stop, batches, fetch):
    """read() into a GPU array, a batch at a time: its stored bytes packed in pinned host memory
    and copied to the GPU at once (only they cross PCIe), decompressed there (the device batch
    API) and placed on the GPU. One thread: decompression is fast here, and handing the GIL to
    another thread and back cost more than overlapping it with the file's reads saved."""
    import cupy as cp
    import cupyx

    lib = _load()
    dev = out.device.id
    nb = layout.batch
    with out.device:
        chunks = cp.empty((nb,) + layout.chunks, dtype=layout.dtype)
        packed = cp.empty((nb * layout.cap,), dtype=cp.uint8)
        host = cupyx.empty_pinned((nb * layout.cap,), dtype=np.uint8)
        stream = cp.cuda.get_current_stream()
        for i, batch in enumerate(batches):
            stored = fetch(i, batch)
            have = [k for k, b in enumerate(stored) if b is not None]
            places, at = [], 0
            for k in have:
                v = np.frombuffer(stored[k], dtype=np.uint8)
                host[at:at + v.nbytes] = v
                places.append((at, v.nbytes))
                at += v.nbytes
            n = len(have)
            if n:
                stream.synchronize()   # the last batch's placing read chunks
                cp.cuda.runtime.memcpyAsync(packed.data.ptr, host.ctypes.data, at, _H2D,
                                            stream.ptr)
                stream.synchronize()
                lens = (ctypes.c_size_t * n)()
                done = ctypes.c_size_t()
                _check(lib.h5zgpu_decompress_device_batch(
                    n, _device_batch(n, [packed.data.ptr + a for a, _ in places]),
                    (ctypes.c_size_t * n)(*[m for _, m in places]),
                    _device_batch(n, [chunks[k].data.ptr for k in have]),
                    (ctypes.c_size_t * n)(*([chunks[0].nbytes] * n)), lens, dev,
                    ctypes.byref(done)), "decompressing chunks on the GPU")
            for k, (o, b) in enumerate(zip(batch, stored)):
                _, own, sel, _ = _parts(o, layout.chunks, dset.shape, start, stop)
                out[sel] = chunks[k][own] if b is not None else layout.fill
    return out
