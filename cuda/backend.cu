/* The C ABI of backend_gpu.h: a pool of per-device workspaces, host staging, and the order of
 * kernels for one chunk. Written without the C++ runtime (no new, no exceptions, no static
 * guards) so that the static library links into a C program or plugin with cudart alone. */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

extern "C" {
#include "backend_gpu.h"
#include "error.h"
#include "fixed.h"
#include "parallel.h"
}

/* Device buffers grow by this much more than asked, so that chunks of slowly growing sizes do
 * not reallocate every call; the pad lets the assembly kernel read a word past the end. */
#define HZC_GROW_NUM 9
#define HZC_GROW_DEN 8
#define HZC_PAD 64
/* The look-back's 62-bit offsets and a 1-D grid of tiles bound the chunks a launch takes. */
#define HZC_MAX_TILES ((uint64_t)INT_MAX)
#define HF_TABLE_ENTRIES (1u << HF_MAX_LEN)   /* the Huffman decoder table */

typedef struct hzc_buf {
    void *p;
    size_t cap;
} hzc_buf;

typedef struct hzc_ws {
    int device, busy, sms;
    cudaStream_t stream;      /* for calls given no stream; blocking, so it orders with the
                                 legacy default stream as a caller of the NULL stream expects */
    hzc_buf in, tab, pay, fin, status, part;   /* device */
    hzc_buf tok, rec, sub, plan;               /* device, Huffman codec */
    hzc_buf host;                              /* pinned */
    hzc_buf htab;                              /* pinned: the Huffman decoder table */
    hzc_scalars *sc;                           /* device */
    hzc_scalars *hsc;                          /* pinned */
    struct hzc_ws *next;
} hzc_ws;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static hzc_ws *pool;

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int count_cached;

/* H5ZGPU_GPU_MEMORY_LIMIT: bytes of device memory all workspaces together may hold (K, M, G:
 * binary multiples). Lets a test force the out-of-memory path; 0 (unset) means no cap. */
static pthread_once_t limit_once = PTHREAD_ONCE_INIT;
static uint64_t limit_bytes;
static int limit_bad;
static uint64_t held_bytes;   /* device bytes held by workspaces, under the cap's accounting */

static void limit_init(void)
{
    const char *v = getenv("H5ZGPU_GPU_MEMORY_LIMIT");
    if (!v || !*v)
        return;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (end == v || *end || !isdigit((unsigned char)*v) || n == 0 || n > (UINT64_MAX >> shift))
        limit_bad = 1;
    else
        limit_bytes = (uint64_t)n << shift;
}

static void count_init(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        n = 0;
        cudaGetLastError();
    }
    count_cached = n;
}

extern "C" int hzc_device_count(void)
{
    pthread_once(&count_once, count_init);
    return count_cached;
}

static h5zgpu_status cuda_fail(cudaError_t e, const char *what)
{
    cudaGetLastError();   /* clear a non-sticky error so the next call starts clean */
    return hz_fail(H5ZGPU_E_DEVICE,
                   "CUDA %s failed: %s; the CPU path is used unless H5ZGPU_DEVICE=gpu "
                   "(set H5ZGPU_DEVICE=cpu to avoid the GPU)",
                   what, cudaGetErrorString(e));
}

/* Books n more device bytes against H5ZGPU_GPU_MEMORY_LIMIT before they are allocated. */
static h5zgpu_status dev_reserve(uint64_t n)
{
    pthread_once(&limit_once, limit_init);
    if (limit_bad)
        return hz_fail(H5ZGPU_E_DEVICE, "H5ZGPU_GPU_MEMORY_LIMIT='%s' is not a byte count such as "
                                        "512M; the CPU path is used unless H5ZGPU_DEVICE=gpu",
                       getenv("H5ZGPU_GPU_MEMORY_LIMIT"));
    uint64_t now = __atomic_add_fetch(&held_bytes, n, __ATOMIC_RELAXED);
    if (limit_bytes && now > limit_bytes) {
        __atomic_sub_fetch(&held_bytes, n, __ATOMIC_RELAXED);
        return hz_fail(H5ZGPU_E_DEVICE,
                       "GPU work needs %llu more bytes of device memory, past "
                       "H5ZGPU_GPU_MEMORY_LIMIT (%llu bytes, %llu held); the CPU path is used "
                       "unless H5ZGPU_DEVICE=gpu (raise the limit or use smaller chunks)",
                       (unsigned long long)n, (unsigned long long)limit_bytes,
                       (unsigned long long)(now - n));
    }
    return H5ZGPU_OK;
}

static void dev_unreserve(uint64_t n)
{
    __atomic_sub_fetch(&held_bytes, n, __ATOMIC_RELAXED);
}

#define CK(call, what)                                                                        \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            st = cuda_fail(e_, what);                                                         \
            goto done;                                                                        \
        }                                                                                     \
    } while (0)

static void buf_free(hzc_buf *b, int pinned)
{
    if (b->p) {
        if (pinned) {
            cudaFreeHost(b->p);
        } else {
            cudaFree(b->p);
            dev_unreserve(b->cap);
        }
    }
    b->p = NULL;
    b->cap = 0;
}

/* Grow-only: a buffer of at least n bytes (the old contents are not kept). */
static h5zgpu_status buf_need(hzc_buf *b, uint64_t n, int pinned)
{
    if (b->p && b->cap >= n)
        return H5ZGPU_OK;
    buf_free(b, pinned);
    size_t want = (size_t)(n / HZC_GROW_DEN * HZC_GROW_NUM + n % HZC_GROW_DEN + HZC_PAD);
    h5zgpu_status st;
    if (!pinned && (st = dev_reserve(want)) != H5ZGPU_OK)
        return st;
    cudaError_t e = pinned ? cudaMallocHost(&b->p, want) : cudaMalloc(&b->p, want);
    if (e != cudaSuccess) {
        b->p = NULL;
        if (!pinned)
            dev_unreserve(want);
        cudaGetLastError();
        return hz_fail(H5ZGPU_E_DEVICE,
                       "GPU %s memory for %zu bytes could not be allocated (%s); the CPU path "
                       "is used unless H5ZGPU_DEVICE=gpu",
                       pinned ? "pinned host" : "device", want, cudaGetErrorString(e));
    }
    b->cap = want;
    return H5ZGPU_OK;
}

static void ws_destroy(hzc_ws *w)
{
    buf_free(&w->in, 0);
    buf_free(&w->tab, 0);
    buf_free(&w->pay, 0);
    buf_free(&w->fin, 0);
    buf_free(&w->status, 0);
    buf_free(&w->part, 0);
    buf_free(&w->tok, 0);
    buf_free(&w->rec, 0);
    buf_free(&w->sub, 0);
    buf_free(&w->plan, 0);
    buf_free(&w->host, 1);
    buf_free(&w->htab, 1);
    if (w->sc) {
        cudaFree(w->sc);
        dev_unreserve(sizeof(hzc_scalars));
    }
    if (w->hsc)
        cudaFreeHost(w->hsc);
    if (w->stream)
        cudaStreamDestroy(w->stream);
    free(w);
}

/* A free workspace of the current device, made when none is free. */
static h5zgpu_status ws_acquire(int device, hzc_ws **out)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w;
    pthread_mutex_lock(&pool_lock);
    for (w = pool; w; w = w->next)
        if (!w->busy && w->device == device)
            break;
    if (w)
        w->busy = 1;
    pthread_mutex_unlock(&pool_lock);
    if (w) {
        *out = w;
        return H5ZGPU_OK;
    }
    w = (hzc_ws *)calloc(1, sizeof *w);
    if (!w)
        return hz_fail(H5ZGPU_E_NOMEM, "no host memory for a GPU workspace");
    w->device = device;
    w->busy = 1;
    CK(cudaStreamCreate(&w->stream), "stream creation");
    if ((st = dev_reserve(sizeof(hzc_scalars))) != H5ZGPU_OK)
        goto done;
    {
        cudaError_t e = cudaMalloc(&w->sc, sizeof(hzc_scalars));
        if (e != cudaSuccess) {
            w->sc = NULL;
            dev_unreserve(sizeof(hzc_scalars));
            CK(e, "allocation of the workspace counters");
        }
    }
    CK(cudaMallocHost(&w->hsc, sizeof(hzc_scalars)), "allocation of pinned counters");
    CK(cudaDeviceGetAttribute(&w->sms, cudaDevAttrMultiProcessorCount, device),
       "query of the multiprocessor count");
    if ((st = buf_need(&w->part, sizeof(hzc_minmax) * HZC_STATS_CTAS, 0)) != H5ZGPU_OK)
        goto done;
    pthread_mutex_lock(&pool_lock);
    w->next = pool;
    pool = w;
    pthread_mutex_unlock(&pool_lock);
    *out = w;
done:
    if (st != H5ZGPU_OK)
        ws_destroy(w);
    return st;
}

static void ws_release(hzc_ws *w)
{
    pthread_mutex_lock(&pool_lock);
    w->busy = 0;
    pthread_mutex_unlock(&pool_lock);
}

/* The state of one call: its workspace, stream, and the caller's device to restore. */
typedef struct hzc_call {
    hzc_ws *ws;
    cudaStream_t s;
    int prev_device;
} hzc_call;

/* H5ZGPU_GPU_FAULT=init|kernel makes every call fail as if the CUDA context could not be
 * created (at the call's start) or a kernel had failed (when its results are read back, after
 * the kernels ran): the fallback paths that real faults take, reachable from a test. Read at
 * each call, so that a test may set and clear it. */
static int injected(const char *fault)
{
    const char *v = getenv("H5ZGPU_GPU_FAULT");
    return v && strcmp(v, fault) == 0;
}

static h5zgpu_status call_begin(hzc_call *c, int device, void *stream)
{
    h5zgpu_status st = H5ZGPU_OK;
    c->ws = NULL;
    c->prev_device = -1;
    if (device < 0 || device >= hzc_device_count())
        return hz_fail(H5ZGPU_E_DEVICE, "CUDA device %d does not exist (%d found)", device,
                       hzc_device_count());
    if (injected("init"))
        return cuda_fail(cudaErrorInitializationError,
                         "initialisation (injected by H5ZGPU_GPU_FAULT=init)");
    CK(cudaGetDevice(&c->prev_device), "query of the current device");
    if (c->prev_device != device)
        CK(cudaSetDevice(device), "selection of the device");
    if ((st = ws_acquire(device, &c->ws)) != H5ZGPU_OK)
        goto done;
    c->s = stream ? (cudaStream_t)stream : c->ws->stream;
done:
    return st;
}

/* A call that failed on the device gives back its workspace's chunk buffers, so that a fault
 * past H5ZGPU_GPU_MEMORY_LIMIT does not leave memory held that smaller chunks then lack. */
static void call_end(hzc_call *c, h5zgpu_status st)
{
    if (c->ws && st == H5ZGPU_E_DEVICE) {
        buf_free(&c->ws->in, 0);
        buf_free(&c->ws->tab, 0);
        buf_free(&c->ws->pay, 0);
        buf_free(&c->ws->fin, 0);
        buf_free(&c->ws->status, 0);
        buf_free(&c->ws->tok, 0);
        buf_free(&c->ws->rec, 0);
        buf_free(&c->ws->sub, 0);
        buf_free(&c->ws->plan, 0);
    }
    if (c->ws)
        ws_release(c->ws);
    if (c->prev_device >= 0)
        cudaSetDevice(c->prev_device);
}

/* Copies of HZC_HOST_PAR bytes or more between the caller's host memory and the pinned buffer
 * run in slices over the cores (hz_parallel_for): one core's memcpy held a 64 MiB chunk's
 * transfer to ~7 GB/s against the DMA's 55. Smaller ones stay a memcpy on the calling thread,
 * which is what hz_parallel_for would leave them (it gives a thread 8 slices at a time) after
 * asking the system for its cores. */
#define HZC_HOST_SLICE (256u << 10)
#define HZC_HOST_PAR (16u * HZC_HOST_SLICE)

typedef struct host_copy {
    uint8_t *dst;
    const uint8_t *src;
    uint64_t n;
} host_copy;

static void host_copy_slice(void *ctx, uint64_t k)
{
    const host_copy *J = (const host_copy *)ctx;
    const uint64_t off = k * HZC_HOST_SLICE, len = J->n - off;
    memcpy(J->dst + off, J->src + off, len < HZC_HOST_SLICE ? len : HZC_HOST_SLICE);
}

static void host_copy_cores(void *dst, const void *src, uint64_t n)
{
    if (n < HZC_HOST_PAR) {
        memcpy(dst, src, n);
        return;
    }
    host_copy J = {(uint8_t *)dst, (const uint8_t *)src, n};
    hz_parallel_for((n + HZC_HOST_SLICE - 1) / HZC_HOST_SLICE, host_copy_slice, &J);
}

/* Device copy of a host input (through the pinned staging buffer) or the input itself. */
static h5zgpu_status stage_in(hzc_call *c, const void *in, int in_dev, uint64_t n,
                              const void **d_in)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    if (in_dev) {
        *d_in = in;
        return H5ZGPU_OK;
    }
    if ((st = buf_need(&w->in, n, 0)) != H5ZGPU_OK || (st = buf_need(&w->host, n, 1)) != H5ZGPU_OK)
        return st;
    host_copy_cores(w->host.p, in, n);
    CK(cudaMemcpyAsync(w->in.p, w->host.p, n, cudaMemcpyHostToDevice, c->s), "input upload");
    *d_in = w->in.p;
done:
    return st;
}

static h5zgpu_status sync_scalars(hzc_call *c)
{
    h5zgpu_status st = H5ZGPU_OK;
    CK(cudaMemcpyAsync(c->ws->hsc, c->ws->sc, sizeof(hzc_scalars), cudaMemcpyDeviceToHost, c->s),
       "download of the counters");
    CK(cudaStreamSynchronize(c->s), "kernel execution");
    if (injected("kernel"))
        st = cuda_fail(cudaErrorLaunchFailure,
                       "kernel execution (injected by H5ZGPU_GPU_FAULT=kernel)");
done:
    return st;
}

static h5zgpu_status check_tiles(const fl_geom *g)
{
    if (g->ntiles > HZC_MAX_TILES)
        return hz_fail(H5ZGPU_E_DEVICE, "chunk of %llu tiles is too large for one GPU launch "
                                        "(at most %llu); use smaller chunks",
                       (unsigned long long)g->ntiles, (unsigned long long)HZC_MAX_TILES);
    return H5ZGPU_OK;
}

/* The statistics pass on the device, then the quantiser on the host from its results. */
static h5zgpu_status quant_on_device(hzc_call *c, const void *d_in, uint64_t n, h5zgpu_mode mode,
                                     double eb, int is_f32, int keep, int has_fill,
                                     uint64_t fill_bits, qz_quant *Q)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c->s), "reset of the counters");
    CK(hzc_launch_stats(d_in, n, is_f32, mode == H5ZGPU_MODE_PWREL, has_fill, fill_bits,
                        (hzc_minmax *)w->part.p, w->sc, w->sms, c->s),
       "launch of the statistics kernel");
    if ((st = sync_scalars(c)) != H5ZGPU_OK)
        goto done;
    qz_init(Q, mode, eb, is_f32, w->hsc->any, w->hsc->lo, w->hsc->hi);
    Q->keep = keep;
    /* a chunk without fill elements is coded as if it had no fill value (FORMAT.md) */
    Q->has_fill = has_fill && w->hsc->fill_seen;
    Q->fill_bits = fill_bits;
done:
    return st;
}

/* Copies the n bytes the device produced at src to out (device or host). */
static h5zgpu_status deliver(hzc_call *c, void *out, int out_dev, const void *src, uint64_t n,
                             const char *what)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    if (out_dev) {
        CK(cudaMemcpyAsync(out, src, n, cudaMemcpyDeviceToDevice, c->s), what);
        CK(cudaStreamSynchronize(c->s), what);
    } else {
        if ((st = buf_need(&w->host, n, 1)) != H5ZGPU_OK)
            goto done;
        CK(cudaMemcpyAsync(w->host.p, src, n, cudaMemcpyDeviceToHost, c->s), what);
        CK(cudaStreamSynchronize(c->s), what);
        host_copy_cores(out, w->host.p, n);
    }
done:
    return st;
}

extern "C" h5zgpu_status hzc_fixed_encode(const fl_geom *g, h5zgpu_mode mode, double eb,
                                          int is_f32, int keep, int has_fill, uint64_t fill_bits,
                                          const void *in, int in_dev, uint8_t *out, int out_dev,
                                          uint64_t fill_shift, uint64_t cap, uint64_t *len,
                                          double *eb_abs, uint32_t *sum, int *held_fill,
                                          int device, void *stream)
{
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    uint8_t *dst;
    const uint64_t n = g->nz * g->ny * g->nx, raw = n * (is_f32 ? 4u : 8u);
    uint64_t tables, paycap;
    h5zgpu_status st = check_tiles(g);
    *held_fill = 0;
    if (st != H5ZGPU_OK)
        return st;
    if ((st = call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = stage_in(&c, in, in_dev, raw, &d_in)) != H5ZGPU_OK ||
        (st = quant_on_device(&c, d_in, n, mode, eb, is_f32, keep, has_fill, fill_bits, &Q)) !=
            H5ZGPU_OK)
        goto done;
    *held_fill = Q.has_fill;
    if (Q.has_fill)
        out += fill_shift;
    tables = fl_tables_size(g, Q.has_fill);
    paycap = cap > tables ? cap - tables : 0;

    if ((st = buf_need(&w->tab, tables + g->nblocks, 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->pay, paycap, 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->status, 2 * g->ntiles * sizeof(unsigned long long), 0)) != H5ZGPU_OK)
        goto done;
    if (!out_dev && (st = buf_need(&w->fin, cap, 0)) != H5ZGPU_OK)
        goto done;
    dst = out_dev ? out : (uint8_t *)w->fin.p;
    CK(cudaMemsetAsync(w->status.p, 0, 2 * g->ntiles * sizeof(unsigned long long), c.s),
       "reset of the look-back status");
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_encode(g, &Q, d_in, (uint8_t *)w->tab.p, (uint8_t *)w->pay.p, paycap,
                         (unsigned long long *)w->status.p, w->sc, c.s),
       "launch of the compression kernel");
    CK(hzc_launch_assemble((const uint8_t *)w->tab.p, (const uint8_t *)w->pay.p, dst, cap, tables,
                           w->sc, w->sms, c.s),
       "launch of the assembly kernel");
    if ((st = sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    *len = tables + w->hsc->nhdr_total + w->hsc->bytes_total;
    if (*len > cap) {
        st = hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL, "payload of %llu bytes exceeds %llu",
                     (unsigned long long)*len, (unsigned long long)cap);
        goto done;
    }
    if (!out_dev && (st = deliver(&c, out, 0, dst, *len, "download of the payload")) != H5ZGPU_OK)
        goto done;
    *eb_abs = Q.eb;
    *sum = w->hsc->sum;
done:
    call_end(&c, st);
    return st;
}

extern "C" h5zgpu_status hzc_fixed_decode(const fl_geom *g, unsigned version,
                                          h5zgpu_mode mode, double eb_abs, int is_f32,
                                          int has_fill, uint64_t fill_bits, const uint8_t *in,
                                          int in_dev, uint64_t len, void *out, int out_dev,
                                          uint32_t *sum, int device, void *stream)
{
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    void *d_out;
    const uint64_t n = g->nz * g->ny * g->nx, raw = n * (is_f32 ? 4u : 8u);
    const uint64_t tables = fl_tables_size(g, has_fill);
    h5zgpu_status st = check_tiles(g);
    if (st != H5ZGPU_OK)
        return st;
    if (len < tables)
        return hz_fail(H5ZGPU_E_CORRUPT, "fixed-length payload of %llu bytes is shorter than its "
                                         "tables (%llu): the chunk is damaged",
                       (unsigned long long)len, (unsigned long long)tables);
    /* as the CPU decoder: the bound and version from the header, the anchor from the payload */
    qz_decoder(&Q, mode, eb_abs, is_f32, version);
    Q.has_fill = has_fill;
    Q.fill_bits = fill_bits;
    if ((st = call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = stage_in(&c, in, in_dev, len, &d_in)) != H5ZGPU_OK ||
        (st = buf_need(&w->status, 2 * g->ntiles * sizeof(unsigned long long), 0)) != H5ZGPU_OK)
        goto done;
    if (!out_dev && (st = buf_need(&w->fin, raw, 0)) != H5ZGPU_OK)
        goto done;
    d_out = out_dev ? out : w->fin.p;
    CK(cudaMemsetAsync(w->status.p, 0, 2 * g->ntiles * sizeof(unsigned long long), c.s),
       "reset of the look-back status");
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_sum((const uint8_t *)d_in, len, g->ntiles, w->sc, w->sms, c.s),
       "launch of the checksum kernel");
    CK(hzc_launch_decode(g, &Q, (const uint8_t *)d_in, len, d_out,
                         (unsigned long long *)w->status.p, w->sc, c.s),
       "launch of the decompression kernel");
    if ((st = sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    if (w->hsc->corrupt) {
        st = hz_fail(H5ZGPU_E_CORRUPT, "fixed-length payload is malformed (a length, code or "
                                       "offset is out of range): the chunk is damaged");
        goto done;
    }
    if (!out_dev && (st = deliver(&c, out, 0, d_out, raw, "download of the values")) != H5ZGPU_OK)
        goto done;
    *sum = w->hsc->sum;
done:
    call_end(&c, st);
    return st;
}

/* Rounds a byte count up to whole 8-byte words, to lay arrays one after another. */
static uint64_t words8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

/* The payload is assembled in the workspace and copied out only when it fits cap, so a payload
 * that does not fit leaves out as it was (auto on the device keeps the fixed-length one). */
extern "C" h5zgpu_status hzc_huff_encode(const hf_geom *g, h5zgpu_mode mode, double eb,
                                         int is_f32, int keep, unsigned radius, int has_fill,
                                         uint64_t fill_bits, const void *in, int in_dev,
                                         uint8_t *out, int out_dev, uint64_t fill_shift,
                                         uint64_t cap, uint64_t *len, double *eb_abs,
                                         uint32_t *sum, int *held_fill, int device, void *stream)
{
    hzc_call c;
    qz_quant Q;
    const void *d_in;
    hzc_huff_bufs b;
    const unsigned esize = is_f32 ? 4u : 8u;
    uint64_t rec_bytes, sub_bytes;
    h5zgpu_status st;
    *held_fill = 0;
    if ((st = call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = stage_in(&c, in, in_dev, g->n * esize, &d_in)) != H5ZGPU_OK ||
        (st = quant_on_device(&c, d_in, g->n, mode, eb, is_f32, keep, has_fill, fill_bits, &Q)) !=
            H5ZGPU_OK)
        goto done;
    *held_fill = Q.has_fill;
    if (Q.has_fill)
        out += fill_shift;

    /* outliers and verbatim values beyond what cap could hold are not kept */
    b.kmax_out = cap / 8;
    b.kmax_verb = cap / (4 + esize);
    rec_bytes = words8(8 * b.kmax_out) + words8(4 * b.kmax_verb) + 8 * b.kmax_verb;
    sub_bytes = 4 * g->nsub;
    /* tokens, then int32 arrays: interpolation's codes, its deltas, its even lattice's deltas */
    if ((st = buf_need(&w->tok, words8(2 * (g->n + 8)) + 8 * g->n + 4 * hzc_ip_even_count(g),
                       0)) != H5ZGPU_OK ||
        (st = buf_need(&w->rec, rec_bytes, 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->sub, sub_bytes, 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->plan, sizeof(hzc_huff_plan), 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->status, (2 * g->ntiles + g->nsub) * sizeof(unsigned long long), 0)) !=
            H5ZGPU_OK ||
        (st = buf_need(&w->fin, cap, 0)) != H5ZGPU_OK)
        goto done;
    b.tok = (uint16_t *)w->tok.p;
    b.ip_u = (int32_t *)((uint8_t *)w->tok.p + words8(2 * (g->n + 8)));
    b.ip_delta = b.ip_u + g->n;
    b.ip_delta2 = b.ip_delta + g->n;
    b.verb_bits = (uint64_t *)w->rec.p;
    b.out_pos = (uint32_t *)((uint8_t *)w->rec.p + 8 * b.kmax_verb);
    b.out_delta = (int32_t *)(b.out_pos + b.kmax_out);
    b.verb_pos = (uint32_t *)((uint8_t *)b.out_pos + words8(8 * b.kmax_out));
    b.subbits = (uint32_t *)w->sub.p;
    b.status = (unsigned long long *)w->status.p;
    b.suboff = (uint64_t *)(b.status + 2 * g->ntiles);   /* after the tiles' words */
    b.plan = (hzc_huff_plan *)w->plan.p;
    b.dst = (uint8_t *)w->fin.p;
    b.cap = cap;
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_huff_launch_encode(g, &Q, radius, d_in, &b, w->sc, w->sms, c.s),
       "launch of the Huffman compression kernels");
    if ((st = sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    *len = w->hsc->bytes_total;
    if (*len > cap) {
        st = hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL, "Huffman payload of %llu bytes exceeds %llu",
                     (unsigned long long)*len, (unsigned long long)cap);
        goto done;
    }
    if ((st = deliver(&c, out, out_dev, b.dst, *len, "download of the payload")) != H5ZGPU_OK)
        goto done;
    *eb_abs = Q.eb;
    *sum = w->hsc->sum;
done:
    call_end(&c, st);
    return st;
}

extern "C" h5zgpu_status hzc_huff_decode(const hf_geom *g, unsigned version, h5zgpu_mode mode,
                                         double eb_abs, int is_f32, int has_fill,
                                         uint64_t fill_bits,
                                         const uint8_t *in, int in_dev, uint64_t len, void *out,
                                         int out_dev, uint32_t *sum, int device, void *stream)
{
    hzc_call c;
    qz_quant Q;
    hf_layout L;
    const void *d_in;
    void *d_out;
    uint8_t head[HF_HEAD_MAX];
    const unsigned esize = is_f32 ? 4u : 8u;
    const uint64_t raw = g->n * esize, nhead = len < HF_HEAD_MAX ? len : HF_HEAD_MAX;
    uint16_t *table;
    h5zgpu_status st;
    /* as the CPU decoder: the bound and version from the header, the anchor from the payload */
    qz_decoder(&Q, mode, eb_abs, is_f32, version);
    Q.has_fill = has_fill;
    Q.fill_bits = fill_bits;
    if ((st = call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    /* pinned and kept with the workspace: the upload below is asynchronous, and the next call
     * on this workspace comes after this one's last synchronisation */
    if ((st = buf_need(&w->htab, sizeof(uint16_t) * HF_TABLE_ENTRIES, 1)) != H5ZGPU_OK)
        goto done;
    table = (uint16_t *)w->htab.p;
    if (in_dev) {
        CK(cudaMemcpyAsync(head, in, nhead, cudaMemcpyDeviceToHost, c.s),
           "download of the payload's head");
        CK(cudaStreamSynchronize(c.s), "download of the payload's head");
    } else {
        memcpy(head, in, nhead);
    }
    if ((st = hf_parse(g, version, esize, head, nhead, len, &L, table)) != H5ZGPU_OK)
        goto done;
    if (!qz_get_anchor(head, &Q)) {
        st = hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed (base or code offset out of "
                                       "range): the chunk is damaged");
        goto done;
    }
    /* the kernels read the stream a 32-bit word at a time */
    if (in_dev && ((uintptr_t)in & 3u)) {
        if ((st = buf_need(&w->in, len, 0)) != H5ZGPU_OK)
            goto done;
        CK(cudaMemcpyAsync(w->in.p, in, len, cudaMemcpyDeviceToDevice, c.s),
           "alignment of the payload");
        d_in = w->in.p;
    } else if ((st = stage_in(&c, in, in_dev, len, &d_in)) != H5ZGPU_OK) {
        goto done;
    }
    /* the deltas, and for interpolation its codes after them */
    if ((st = buf_need(&w->tok, (L.order == HF_PRED_INTERP ? 8 : 4) * g->n, 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->sub, 8 * (g->nsub + 1), 0)) != H5ZGPU_OK ||
        (st = buf_need(&w->plan, sizeof(uint16_t) * HF_TABLE_ENTRIES, 0)) != H5ZGPU_OK)
        goto done;
    if (!out_dev && (st = buf_need(&w->fin, raw, 0)) != H5ZGPU_OK)
        goto done;
    d_out = out_dev ? out : w->fin.p;
    CK(cudaMemcpyAsync(w->plan.p, table, sizeof(uint16_t) * HF_TABLE_ENTRIES,
                       cudaMemcpyHostToDevice, c.s),
       "upload of the decoder table");
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_sum((const uint8_t *)d_in, len, 0, w->sc, w->sms, c.s),
       "launch of the checksum kernel");
    CK(hzc_huff_launch_decode(g, &Q, &L, (const uint8_t *)d_in, len,
                              (const uint16_t *)w->plan.p, (int32_t *)w->tok.p,
                              (uint64_t *)w->sub.p, d_out, w->sc, w->sms, c.s),
       "launch of the Huffman decompression kernels");
    if ((st = sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    if (w->hsc->corrupt) {
        st = hz_fail(H5ZGPU_E_CORRUPT, "Huffman payload is malformed (a code, length or "
                                       "position is invalid): the chunk is damaged");
        goto done;
    }
    if (!out_dev && (st = deliver(&c, out, 0, d_out, raw, "download of the values")) != H5ZGPU_OK)
        goto done;
    *sum = w->hsc->sum;
done:
    call_end(&c, st);
    return st;
}

extern "C" h5zgpu_status hzc_sum(const void *p_dev, uint64_t n, uint32_t *sum, int device,
                                 void *stream)
{
    hzc_call c;
    h5zgpu_status st = call_begin(&c, device, stream);
    if (st != H5ZGPU_OK)
        goto done;
    CK(cudaMemsetAsync(c.ws->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_sum((const uint8_t *)p_dev, n, 0, c.ws->sc, c.ws->sms, c.s),
       "launch of the checksum kernel");
    if ((st = sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    *sum = c.ws->hsc->sum;
done:
    call_end(&c, st);
    return st;
}

extern "C" h5zgpu_status hzc_copy(void *dst, int dst_dev, const void *src, int src_dev, uint64_t n,
                                  int device, void *stream)
{
    hzc_call c;
    h5zgpu_status st;
    (void)dst_dev, (void)src_dev;   /* unified addressing tells the kinds apart */
    if (n == 0)
        return H5ZGPU_OK;
    if ((st = call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c.s), "copy");
    CK(cudaStreamSynchronize(c.s), "copy");
done:
    call_end(&c, st);
    return st;
}
