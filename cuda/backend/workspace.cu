#include "workspace.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "parallel.h"
}

/* Device buffers grow by this much more than asked, so that chunks of slowly growing sizes do
 * not reallocate every call; the pad lets the assembly kernel read a word past the end. */
#define HZC_GROW_NUM 9
#define HZC_GROW_DEN 8
#define HZC_PAD 64

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static hzc_ws *pool;

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


h5zgpu_status hzc_cuda_fail(cudaError_t e, const char *what)
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
h5zgpu_status hzc_buf_need(hzc_buf *b, uint64_t n, int pinned)
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

h5zgpu_status hzc_job_arrays(hzc_ws *w, unsigned count, unsigned n, const uint64_t *item,
                             void **d, void **h)
{
    uint64_t total = 0;
    for (unsigned k = 0; k < n; k++)
        total += (count * item[k] + 15) & ~(uint64_t)15;
    h5zgpu_status st;
    if ((st = hzc_buf_need(&w->jobs, total, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->hjobs, total, 1)) != H5ZGPU_OK)
        return st;
    uint64_t at = 0;
    for (unsigned k = 0; k < n; k++) {
        d[k] = (uint8_t *)w->jobs.p + at;
        h[k] = (uint8_t *)w->hjobs.p + at;
        at += (count * item[k] + 15) & ~(uint64_t)15;
    }
    return H5ZGPU_OK;
}

/* The device buffers that grow with the chunks. */
static void free_chunk_bufs(hzc_ws *w)
{
    buf_free(&w->in, 0);
    buf_free(&w->tab, 0);
    buf_free(&w->pay, 0);
    buf_free(&w->fin, 0);
    buf_free(&w->status, 0);
    buf_free(&w->tok, 0);
    buf_free(&w->rec, 0);
    buf_free(&w->sub, 0);
    buf_free(&w->plan, 0);
    buf_free(&w->ans, 0);
    buf_free(&w->coded, 0);
    buf_free(&w->jobs, 0);
}

static void ws_destroy(hzc_ws *w)
{
    free_chunk_bufs(w);
    buf_free(&w->part, 0);
    buf_free(&w->host, 1);
    buf_free(&w->htab, 1);
    buf_free(&w->hhead, 1);
    buf_free(&w->hjobs, 1);
    if (w->sc) {
        cudaFree(w->sc);
        dev_unreserve(sizeof(hzc_scalars));
    }
    if (w->hsc)
        cudaFreeHost(w->hsc);
    if (w->done)
        cudaEventDestroy(w->done);
    if (w->fork)
        cudaEventDestroy(w->fork);
    if (w->join)
        cudaEventDestroy(w->join);
    if (w->side)
        cudaStreamDestroy(w->side);
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
    CK(cudaEventCreateWithFlags(&w->done, cudaEventBlockingSync | cudaEventDisableTiming),
       "event creation");
    CK(cudaStreamCreateWithFlags(&w->side, cudaStreamNonBlocking), "stream creation");
    CK(cudaEventCreateWithFlags(&w->fork, cudaEventDisableTiming), "event creation");
    CK(cudaEventCreateWithFlags(&w->join, cudaEventDisableTiming), "event creation");
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
    if ((st = hzc_buf_need(&w->part, sizeof(hzc_minmax) * HZC_STATS_CTAS, 0)) != H5ZGPU_OK)
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


/* H5ZGPU_GPU_FAULT=init|kernel makes every call fail as if the CUDA context could not be
 * created (at the call's start) or a kernel had failed (when its results are read back, after
 * the kernels ran): the fallback paths that real faults take, reachable from a test. Read at
 * each call, so that a test may set and clear it. */
static int injected(const char *fault)
{
    const char *v = getenv("H5ZGPU_GPU_FAULT");
    return v && strcmp(v, fault) == 0;
}

h5zgpu_status hzc_call_begin(hzc_call *c, int device, void *stream)
{
    h5zgpu_status st = H5ZGPU_OK;
    c->ws = NULL;
    c->prev_device = -1;
    if (device < 0 || device >= hzc_device_count())
        return hz_fail(H5ZGPU_E_DEVICE, "CUDA device %d does not exist (%d found)", device,
                       hzc_device_count());
    if (injected("init"))
        return hzc_cuda_fail(cudaErrorInitializationError,
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
void hzc_call_end(hzc_call *c, h5zgpu_status st)
{
    if (c->ws && st == H5ZGPU_E_DEVICE)
        free_chunk_bufs(c->ws);
    if (c->ws)
        ws_release(c->ws);
    if (c->prev_device >= 0)
        cudaSetDevice(c->prev_device);
}

/* Copies of HZC_HOST_PAR bytes or more between the caller's host memory and the pinned buffer
 * run in slices over the cores (hz_parallel_for): one core's memcpy held a 64 MiB chunk's
 * transfer to ~7 GB/s against the DMA's 55. Smaller ones stay a memcpy on the calling thread:
 * waking the pool's threads costs more than they would save. */
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

static void copy_on_cores(void *dst, const void *src, uint64_t n)
{
    if (n < HZC_HOST_PAR) {
        memcpy(dst, src, n);
        return;
    }
    host_copy J = {(uint8_t *)dst, (const uint8_t *)src, n};
    hz_parallel_for((n + HZC_HOST_SLICE - 1) / HZC_HOST_SLICE, host_copy_slice, &J);
}

/* Whether host memory at p is page-locked for CUDA (h5zgpu_alloc_host, cudaHostAlloc or
 * cudaHostRegister): copies then go straight between it and the device, with no pass through
 * the pinned staging buffer. */
int hzc_host_pinned(const void *p)
{
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();   /* a pointer CUDA cannot tell: ordinary memory */
        return 0;
    }
    return at.type == cudaMemoryTypeHost;
}

/* Device copy of a host input (through the pinned staging buffer unless it is pinned itself)
 * or the input itself. */
h5zgpu_status hzc_stage_in(hzc_call *c, const void *in, int in_dev, uint64_t n,
                              const void **d_in)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    if (in_dev) {
        *d_in = in;
        return H5ZGPU_OK;
    }
    if ((st = hzc_buf_need(&w->in, n, 0)) != H5ZGPU_OK)
        return st;
    if (hzc_host_pinned(in)) {
        CK(cudaMemcpyAsync(w->in.p, in, n, cudaMemcpyHostToDevice, c->s), "input upload");
    } else {
        if ((st = hzc_buf_need(&w->host, n, 1)) != H5ZGPU_OK)
            return st;
        copy_on_cores(w->host.p, in, n);
        CK(cudaMemcpyAsync(w->in.p, w->host.p, n, cudaMemcpyHostToDevice, c->s), "input upload");
    }
    *d_in = w->in.p;
done:
    return st;
}

/* Copies between host buffers over the cores, in slices of HZC_HOST_SLICE: slice k is slice
 * k - first[i] of copy i, where first[] counts the slices before each copy. */
typedef struct host_moves {
    void *const *dst;
    const void *const *src;
    const uint64_t *len, *first;
    unsigned count;
} host_moves;

static void host_moves_slice(void *ctx, uint64_t k)
{
    const host_moves *M = (const host_moves *)ctx;
    unsigned lo = 0, hi = M->count - 1;   /* the last copy whose first slice is at most k */
    while (lo < hi) {
        const unsigned mid = (lo + hi + 1) / 2;
        if (M->first[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    const uint64_t off = (k - M->first[lo]) * HZC_HOST_SLICE, len = M->len[lo] - off;
    memcpy((uint8_t *)M->dst[lo] + off, (const uint8_t *)M->src[lo] + off,
           len < HZC_HOST_SLICE ? len : HZC_HOST_SLICE);
}

h5zgpu_status hzc_copy_host_many(unsigned count, void *const *dst, const void *const *src,
                                 const uint64_t *len)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < count; i++)
        total += len[i];
    if (total < HZC_HOST_PAR) {
        for (unsigned i = 0; i < count; i++)
            memcpy(dst[i], src[i], len[i]);
        return H5ZGPU_OK;
    }
    uint64_t *first = (uint64_t *)malloc((count + 1) * sizeof *first);
    if (!first)
        return hz_fail(H5ZGPU_E_NOMEM, "no host memory for the copies of %u chunks", count);
    first[0] = 0;
    for (unsigned i = 0; i < count; i++)
        first[i + 1] = first[i] + (len[i] + HZC_HOST_SLICE - 1) / HZC_HOST_SLICE;
    host_moves M = {dst, src, len, first, count};
    hz_parallel_for(first[count], host_moves_slice, &M);
    free(first);
    return H5ZGPU_OK;
}

h5zgpu_status hzc_stage_in_many(hzc_call *c, const void *const *in, unsigned count, uint64_t n,
                                uint8_t **d_base)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    const uint64_t total = count * n;
    void **dst = (void **)malloc(count * sizeof *dst);
    uint64_t *len = (uint64_t *)malloc(count * sizeof *len);
    if (!dst || !len) {
        st = hz_fail(H5ZGPU_E_NOMEM, "no host memory for the copies of %u chunks", count);
        goto done;
    }
    if ((st = hzc_buf_need(&w->in, total, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->host, total, 1)) != H5ZGPU_OK)
        goto done;
    for (unsigned i = 0; i < count; i++) {
        dst[i] = (uint8_t *)w->host.p + i * n;
        len[i] = n;
    }
    if ((st = hzc_copy_host_many(count, dst, in, len)) != H5ZGPU_OK)
        goto done;
    CK(cudaMemcpyAsync(w->in.p, w->host.p, total, cudaMemcpyHostToDevice, c->s), "input upload");
    *d_base = (uint8_t *)w->in.p;
done:
    free(dst);
    free(len);
    return st;
}

static __thread int sleeping_waits;

void hzc_set_sleeping_waits(int on)
{
    sleeping_waits = on;
}

cudaError_t hzc_wait(const hzc_call *c)
{
    if (!sleeping_waits)
        return cudaStreamSynchronize(c->s);
    cudaError_t e = cudaEventRecord(c->ws->done, c->s);
    return e == cudaSuccess ? cudaEventSynchronize(c->ws->done) : e;
}

h5zgpu_status hzc_sync_many(hzc_call *c, hzc_scalars *hsc, const hzc_scalars *sc, unsigned count)
{
    h5zgpu_status st = H5ZGPU_OK;
    CK(cudaMemcpyAsync(hsc, sc, count * sizeof(hzc_scalars), cudaMemcpyDeviceToHost, c->s),
       "download of the counters");
    CK(hzc_wait(c), "kernel execution");
    if (injected("kernel"))
        st = hzc_cuda_fail(cudaErrorLaunchFailure,
                       "kernel execution (injected by H5ZGPU_GPU_FAULT=kernel)");
done:
    return st;
}

h5zgpu_status hzc_sync_scalars(hzc_call *c)
{
    return hzc_sync_many(c, c->ws->hsc, c->ws->sc, 1);
}

void hzc_quant_from(const hzc_scalars *hs, const hzc_encode_args *a, qz_quant *Q)
{
    qz_census census;
    qz_init(Q, a->mode, a->eb, a->is_f32, hs->any, hs->lo, hs->hi);
    Q->keep = a->keep;
    census.fill = hs->fill_count;
    census.nan = hs->nan_count;
    census.nan_bits = hs->nan_bits;
    qz_choose_fill(Q, a->has_fill, a->fill_bits, &census);
}

/* The statistics pass on the device, then the quantiser on the host from its results
 * (qz_init, keep, and the chunk's fill value). */
static h5zgpu_status quant_on_device(hzc_call *c, const void *d_in, uint64_t n,
                                     const hzc_encode_args *a, qz_quant *Q)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    CK(cudaMemsetAsync(w->sc, 0, sizeof(hzc_scalars), c->s), "reset of the counters");
    CK(hzc_launch_stats(d_in, n, a->is_f32, a->mode == H5ZGPU_MODE_PWREL, a->has_fill,
                        a->fill_bits, (hzc_minmax *)w->part.p, w->sc, w->sms, c->s),
       "launch of the statistics kernel");
    if ((st = hzc_sync_scalars(c)) != H5ZGPU_OK)
        goto done;
    hzc_quant_from(w->hsc, a, Q);
done:
    return st;
}

/* Copies the n bytes the device produced at src to out (device or host). */
h5zgpu_status hzc_deliver(hzc_call *c, void *out, int out_dev, const void *src, uint64_t n,
                             const char *what)
{
    h5zgpu_status st = H5ZGPU_OK;
    hzc_ws *w = c->ws;
    if (out_dev || hzc_host_pinned(out)) {
        CK(cudaMemcpyAsync(out, src, n, out_dev ? cudaMemcpyDeviceToDevice
                                                : cudaMemcpyDeviceToHost, c->s), what);
        CK(hzc_wait(c), what);
    } else {
        if ((st = hzc_buf_need(&w->host, n, 1)) != H5ZGPU_OK)
            goto done;
        CK(cudaMemcpyAsync(w->host.p, src, n, cudaMemcpyDeviceToHost, c->s), what);
        CK(hzc_wait(c), what);
        copy_on_cores(out, w->host.p, n);
    }
done:
    return st;
}

h5zgpu_status hzc_finish_decode(hzc_call *c, const hzc_decode_args *a, const void *d_out,
                                uint64_t raw, const char *why, uint32_t *sum)
{
    h5zgpu_status st = hzc_sync_scalars(c);
    if (st != H5ZGPU_OK)
        return st;
    if (c->ws->hsc->corrupt)
        return hz_fail(H5ZGPU_E_CORRUPT, "%s: the chunk is damaged", why);
    if (!a->out_dev &&
        (st = hzc_deliver(c, a->out, 0, d_out, raw, "download of the values")) != H5ZGPU_OK)
        return st;
    *sum = c->ws->hsc->sum;
    return H5ZGPU_OK;
}

h5zgpu_status hzc_finish_encode(hzc_call *c, const hzc_encode_args *a, uint8_t *out,
                                const void *src, uint64_t len, double eb_abs, const char *what,
                                hzc_encode_result *r)
{
    h5zgpu_status st;
    r->len = len;
    if (len > a->cap)
        return hz_fail(H5ZGPU_E_OUTPUT_TOO_SMALL, "%s payload of %llu bytes exceeds %llu", what,
                       (unsigned long long)len, (unsigned long long)a->cap);
    if (src != out &&
        (st = hzc_deliver(c, out, a->out_dev, src, len, "download of the payload")) != H5ZGPU_OK)
        return st;
    r->eb_abs = eb_abs;
    r->sum = c->ws->hsc->sum;
    return H5ZGPU_OK;
}

h5zgpu_status hzc_payload_sum(hzc_call *c, const void *d_in, uint64_t len, uint64_t pop_word,
                              uint64_t npop)
{
    h5zgpu_status st = H5ZGPU_OK;
    CK(cudaMemsetAsync(c->ws->sc, 0, sizeof(hzc_scalars), c->s), "reset of the counters");
    CK(hzc_launch_checksum((const uint8_t *)d_in, len, pop_word, npop, c->ws->sc, c->ws->sms,
                           c->s),
       "launch of the checksum kernel");
done:
    return st;
}

h5zgpu_status hzc_begin_encode(hzc_call *c, const hzc_encode_args *a, uint64_t n,
                               const void **d_in, qz_quant *Q, hzc_encode_result *r,
                               uint8_t **out)
{
    h5zgpu_status st;
    r->held_fill = 0;
    *out = a->out;
    if ((st = hzc_call_begin(c, a->device, a->stream)) != H5ZGPU_OK ||
        (st = hzc_stage_in(c, a->in, a->in_dev, n * (a->is_f32 ? 4u : 8u), d_in)) !=
            H5ZGPU_OK ||
        (st = quant_on_device(c, *d_in, n, a, Q)) != H5ZGPU_OK)
        return st;
    r->held_fill = Q->has_fill;
    r->fill_bits = Q->fill_bits;
    if (a->quant)
        *a->quant = *Q;
    if (Q->has_fill)
        *out += a->fill_shift;
    return H5ZGPU_OK;
}
