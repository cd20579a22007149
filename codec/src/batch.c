/* Many chunks in one call: the chunks of a device batch that the GPU codes together
 * (batch_group.c) first, then the others on up to HZ_BATCH_STREAMS threads at once on the GPU,
 * each call with its own workspace and stream (cuda/backend/workspace.cu), so that one chunk's
 * copies, kernels and synchronisations overlap the others'; on the CPU one after another, each
 * spread over the cores. Device buffers always go the GPU way. Either way the bytes are those
 * of one call a chunk. */
#include "batch.h"

#include "error.h"
#include "executor.h"
#include "parallel.h"
#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* Chunks in flight on the GPU: enough to hide a chunk's synchronisations behind the others'
 * kernels, few enough that the workspaces stay small. The GPU takes a process's streams on
 * CUDA_DEVICE_MAX_CONNECTIONS hardware queues (8 unless set before the process's first CUDA
 * call), and streams past them share queues, each waiting for the work ahead of it there: so
 * as many chunks as queues, 8 to 16, and 8 for chunks above 16 MiB, whose kernels fill the GPU
 * anyway (1 MiB Huffman chunks: 7.8 GB/s with 8 queues, 12.2 with 32 queues and 16 chunks). */
#define HZ_BATCH_STREAMS 16
#define HZ_BATCH_STREAMS_MIN 8
#define HZ_BATCH_SMALL_BYTES ((size_t)16 << 20)

void hz_batch_record(hz_batch *b, size_t i, h5zgpu_status st)
{
    b->st[i] = st;
    if (st == H5ZGPU_OK)
        return;
    pthread_mutex_lock(&b->lock);
    if (i < b->failed) {
        __atomic_store_n(&b->failed, i, __ATOMIC_RELAXED);
        snprintf(b->why, sizeof b->why, "%s", h5zgpu_last_error());
    }
    pthread_mutex_unlock(&b->lock);
}

int hz_batch_past_failure(hz_batch *b, size_t i)
{
    return i > __atomic_load_n(&b->failed, __ATOMIC_RELAXED);
}

static void run_one(hz_batch *b, size_t i)
{
    h5zgpu_status st;
    if (b->device >= 0)   /* a NULL stream: the call's own workspace stream */
        st = b->p ? h5zgpu_compress_device(b->p, b->in[i], b->out[i], b->out_cap[i],
                                           &b->out_len[i], b->device, NULL)
                  : h5zgpu_decompress_device(b->in[i], b->in_len[i], b->out[i], b->out_cap[i],
                                             &b->out_len[i], b->device, NULL);
    else
        st = b->p ? h5zgpu_compress(b->p, b->in[i], b->out[i], b->out_cap[i], &b->out_len[i],
                                    b->exec)
                  : h5zgpu_decompress(b->in[i], b->in_len[i], b->out[i], b->out_cap[i],
                                      &b->out_len[i], b->exec);
    hz_batch_record(b, i, st);
}

static void *worker(void *arg)
{
    hz_batch *b = arg;
#ifdef H5ZGPU_HAVE_CUDA
    hzc_set_sleeping_waits(b->sleep);
#endif
    for (;;) {
        const size_t i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->count || hz_batch_past_failure(b, i))
            break;
        if (!b->taken[i])
            run_one(b, i);
    }
#ifdef H5ZGPU_HAVE_CUDA
    hzc_set_sleeping_waits(0);
#endif
    return NULL;
}

/* The largest chunk of the batch in bytes of values (of room for them, decompressing). */
static size_t largest_chunk(const hz_batch *b)
{
    if (b->p) {
        size_t n = b->p->dtype == H5ZGPU_FLOAT32 ? 4 : 8;
        for (unsigned d = 0; d < b->p->rank && d < H5ZGPU_MAX_RANK; d++)
            n *= (size_t)b->p->dims[d];
        return n;
    }
    size_t n = 0;
    for (size_t i = 0; i < b->count; i++)
        n = b->out_cap[i] > n ? b->out_cap[i] : n;
    return n;
}

static unsigned in_flight(const hz_batch *b)
{
    const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const long queues = v ? strtol(v, NULL, 10) : HZ_BATCH_STREAMS_MIN;
    if (queues <= HZ_BATCH_STREAMS_MIN || largest_chunk(b) > HZ_BATCH_SMALL_BYTES)
        return HZ_BATCH_STREAMS_MIN;
    return queues < HZ_BATCH_STREAMS ? (unsigned)queues : HZ_BATCH_STREAMS;
}

/* Runs the batch and reports the first failure in chunk order; *done: the chunks before it. */
static h5zgpu_status run(hz_batch *b, size_t *done)
{
    hz_target t = {.gpu = 1};
    h5zgpu_status st = b->device >= 0 ? H5ZGPU_OK : hz_resolve(b->exec, &t);
    if (st != H5ZGPU_OK)
        return st;
    const size_t n = b->count ? b->count : 1;
    b->st = malloc(n * sizeof *b->st);
    b->taken = calloc(n, 1);
    if (!b->st || !b->taken) {
        free(b->st);
        free(b->taken);
        return hz_fail(H5ZGPU_E_NOMEM, "no host memory for a batch of %zu chunks", b->count);
    }
    for (size_t i = 0; i < b->count; i++)
        b->st[i] = H5ZGPU_E_INVALID_ARG;   /* not run: after a failure */
    hz_batch_group(b);
    size_t left = 0;   /* chunks still to run, before any failure */
    for (size_t i = 0; i < b->count && !hz_batch_past_failure(b, i); i++)
        left += !b->taken[i];
    pthread_t tid[HZ_BATCH_STREAMS];
    unsigned nt = 0;
    const size_t most = in_flight(b);
    const size_t want = t.gpu ? (left < most ? left : most) : 0;
    /* CUDA's waits spin while the process has cores to spare; threads that outnumber the cores
     * would spin on the cores the other chunks' launches need (a process on one core: 1 MiB
     * Huffman chunks 1.4 GB/s spinning, 4.6 sleeping), where cores enough spin faster */
    b->sleep = want > hz_threads();
    while (nt + 1 < want && pthread_create(&tid[nt], NULL, worker, b) == 0)
        nt++;
    worker(b);   /* the caller's thread is one of them: the chunks left before any failure */
    for (unsigned k = 0; k < nt; k++)
        pthread_join(tid[k], NULL);
    size_t i = 0;
    while (i < b->count && b->st[i] == H5ZGPU_OK)
        i++;
    st = i < b->count ? b->st[i] : H5ZGPU_OK;
    free(b->st);
    free(b->taken);
    if (st != H5ZGPU_OK)
        hz_fail(st, "chunk %zu of the batch: %s", i, b->why);
    if (done)
        *done = i;
    return st;
}

h5zgpu_status h5zgpu_compress_batch(const h5zgpu_params *p, size_t count, const void *const *in,
                                    void *const *out, const size_t *out_cap, size_t *out_len,
                                    const h5zgpu_exec *exec, size_t *done)
{
    if (done)
        *done = 0;
    if (count && (!p || !in || !out || !out_cap || !out_len))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a batch pointer is NULL");
    hz_batch b = {.count = count, .p = p, .in = in, .out = out, .out_cap = out_cap,
               .out_len = out_len, .exec = exec, .device = -1,
               .lock = PTHREAD_MUTEX_INITIALIZER, .failed = count};
    return run(&b, done);
}

h5zgpu_status h5zgpu_decompress_batch(size_t count, const void *const *in, const size_t *in_len,
                                      void *const *out, const size_t *out_cap, size_t *out_len,
                                      const h5zgpu_exec *exec, size_t *done)
{
    if (done)
        *done = 0;
    if (count && (!in || !in_len || !out || !out_cap || !out_len))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a batch pointer is NULL");
    hz_batch b = {.count = count, .in = in, .in_len = in_len, .out = out, .out_cap = out_cap,
               .out_len = out_len, .exec = exec, .device = -1,
               .lock = PTHREAD_MUTEX_INITIALIZER, .failed = count};
    return run(&b, done);
}

h5zgpu_status h5zgpu_compress_device_batch(const h5zgpu_params *p, size_t count,
                                           const void *const *d_in, void *const *d_out,
                                           const size_t *out_cap, size_t *out_len, int device,
                                           size_t *done)
{
    if (done)
        *done = 0;
    if (count && (!p || !d_in || !d_out || !out_cap || !out_len))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a batch pointer is NULL");
    if (device < 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "CUDA device %d does not exist", device);
    hz_batch b = {.count = count, .p = p, .in = d_in, .out = d_out, .out_cap = out_cap,
               .out_len = out_len, .device = device, .lock = PTHREAD_MUTEX_INITIALIZER,
               .failed = count};
    return run(&b, done);
}

h5zgpu_status h5zgpu_decompress_device_batch(size_t count, const void *const *d_in,
                                             const size_t *in_len, void *const *d_out,
                                             const size_t *out_cap, size_t *out_len, int device,
                                             size_t *done)
{
    if (done)
        *done = 0;
    if (count && (!d_in || !in_len || !d_out || !out_cap || !out_len))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "a batch pointer is NULL");
    if (device < 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "CUDA device %d does not exist", device);
    hz_batch b = {.count = count, .in = d_in, .in_len = in_len, .out = d_out, .out_cap = out_cap,
               .out_len = out_len, .device = device, .lock = PTHREAD_MUTEX_INITIALIZER,
               .failed = count};
    return run(&b, done);
}
