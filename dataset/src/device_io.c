/* Whole-dataset I/O with device buffers. Writes: the calling thread cuts a batch of chunks out
 * of the block on the GPU (cudaMemcpy3D over the fill value, or over the stored chunk
 * decompressed there) while a helper thread compresses the batch before it on the GPU
 * (h5zgpu_compress_device_batch: several chunks in flight) and brings back only its compressed
 * bytes, which the calling thread then stores with H5Dwrite_chunk. Reads go the other way.
 * HDF5 is called from the calling thread only. The block is read or written after the work
 * the caller queued on the legacy default stream. */
#include "device_io.h"

#include "ratio_sample.h"
#include "worker.h"

#include "error.h"

#ifdef H5ZGPU_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dbatch {
    ds_slot slot;                /* first: the pipeline's view (worker, chunk range) */
    const ds_plan *pl;
    h5zgpu_ratio_budget *ratio;  /* the batches' parameters, fixed ratio's moved in turn */
    int device;
    void *block;
    size_t size;                 /* chunks it has room for */
    cudaStream_t s;              /* this batch's copies */
    unsigned char *d_chunks;     /* size x chunk_bytes */
    unsigned char *d_blobs;      /* size x cap */
    unsigned char *h_blobs;      /* size x cap, pinned */
    const void **in;
    void **out;
    size_t *in_len, *out_cap, *out_len;
    size_t *stored;              /* reads: chunk c's bytes in the file (0: never written) */
    size_t *which;               /* reads: the batch index of the n-th stored chunk */
    const void *fill;            /* a device chunk of the fill value */
} dbatch;

static h5zgpu_status cuda_failed(cudaError_t e, const char *what)
{
    return hz_fail(H5ZGPU_E_DEVICE, "h5zgpu_dataset: %s failed: %s", what,
                   cudaGetErrorString(e));
}

static void dbatch_free(dbatch *b)
{
    if (b->s)
        cudaStreamDestroy(b->s);
    cudaFree(b->d_chunks);
    cudaFree(b->d_blobs);
    cudaFreeHost(b->h_blobs);
    free(b->in);
    free(b->out);
    free(b->in_len);
    free(b->out_cap);
    free(b->out_len);
    free(b->stored);
    free(b->which);
}

static h5zgpu_status dbatch_alloc(dbatch *b, const ds_plan *pl, int device, void *block,
                                  const void *fill, size_t size)
{
    cudaError_t e;
    memset(b, 0, sizeof *b);
    b->pl = pl;
    b->device = device;
    b->block = block;
    b->fill = fill;
    b->size = size;
    b->in = malloc(size * sizeof *b->in);
    b->out = malloc(size * sizeof *b->out);
    b->in_len = malloc(size * sizeof *b->in_len);
    b->out_cap = malloc(size * sizeof *b->out_cap);
    b->out_len = malloc(size * sizeof *b->out_len);
    b->stored = malloc(size * sizeof *b->stored);
    b->which = malloc(size * sizeof *b->which);
    if (!b->in || !b->out || !b->in_len || !b->out_cap || !b->out_len || !b->stored ||
        !b->which) {
        dbatch_free(b);
        return hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory");
    }
    if ((e = cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaMalloc((void **)&b->d_chunks, size * pl->chunk_bytes)) != cudaSuccess ||
        (e = cudaMalloc((void **)&b->d_blobs, size * pl->cap)) != cudaSuccess ||
        (e = cudaMallocHost((void **)&b->h_blobs, size * pl->cap)) != cudaSuccess) {
        dbatch_free(b);
        return cuda_failed(e, "setting up a batch's device buffers");
    }
    return H5ZGPU_OK;
}

/* Copies a chunk's overlap between the block and a chunk buffer, both in device memory, on
 * stream s; axes are padded to three in front. */
static cudaError_t copy_overlap(const ds_plan *pl, const ds_overlap *ov, int to_chunk,
                                void *block, void *chunk, cudaStream_t s)
{
    size_t n[3], bs[3], bp[3], cs[3], cp[3];
    unsigned pad = 3 - pl->rank;
    for (unsigned d = 0; d < 3; d++) {
        int real = d >= pad;
        n[d] = real ? (size_t)ov->n[d - pad] : 1;
        bs[d] = real ? (size_t)pl->count[d - pad] : 1;
        bp[d] = real ? (size_t)ov->in_block[d - pad] : 0;
        cs[d] = real ? (size_t)pl->chunk[d - pad] : 1;
        cp[d] = real ? (size_t)ov->in_chunk[d - pad] : 0;
    }
    size_t e = pl->elem;
    struct cudaPitchedPtr bptr = {.ptr = block, .pitch = bs[2] * e, .xsize = bs[2] * e,
                                  .ysize = bs[1]};
    struct cudaPitchedPtr cptr = {.ptr = chunk, .pitch = cs[2] * e, .xsize = cs[2] * e,
                                  .ysize = cs[1]};
    struct cudaPos bpos = {.x = bp[2] * e, .y = bp[1], .z = bp[0]};
    struct cudaPos cpos = {.x = cp[2] * e, .y = cp[1], .z = cp[0]};
    struct cudaMemcpy3DParms m = {0};
    m.srcPtr = to_chunk ? bptr : cptr;
    m.srcPos = to_chunk ? bpos : cpos;
    m.dstPtr = to_chunk ? cptr : bptr;
    m.dstPos = to_chunk ? cpos : bpos;
    m.extent = (struct cudaExtent){.width = n[2] * e, .height = n[1], .depth = n[0]};
    m.kind = cudaMemcpyDeviceToDevice;
    return cudaMemcpy3DAsync(&m, s);
}

/* The block is exactly one chunk: it is compressed where it lies. */
static int block_is_the_chunk(const ds_plan *pl)
{
    ds_overlap ov;
    ds_overlap_of(pl, 0, &ov);
    return pl->nchunks == 1 && ov.whole;
}

/* Batch b's chunks, cut out of the block on the GPU: over what a partly covered chunk held
 * (decompressed there) or the fill value. */
static h5zgpu_status cut_batch(ds_slot *s, void *ctx)
{
    dbatch *b = (dbatch *)s;
    const ds_plan *pl = b->pl;
    (void)ctx;
    cudaError_t e = cudaSuccess;
    if (block_is_the_chunk(pl)) {
        b->in[0] = b->block;
        return H5ZGPU_OK;
    }
    for (size_t c = 0; c < b->slot.count; c++) {
        ds_overlap ov;
        unsigned char *chunk = b->d_chunks + c * pl->chunk_bytes;
        size_t len = 0, got = 0;
        b->in[c] = chunk;
        ds_overlap_of(pl, b->slot.first + c, &ov);
        /* a partly covered chunk's old bytes: through this chunk's pinned and device slots */
        h5zgpu_status st = ov.whole ? H5ZGPU_OK
                                    : ds_stored(pl, ov.origin, b->h_blobs + c * pl->cap, &len);
        if (st != H5ZGPU_OK)
            return st;
        if (len) {
            unsigned char *d_old = b->d_blobs + c * pl->cap;
            e = cudaMemcpy(d_old, b->h_blobs + c * pl->cap, len, cudaMemcpyHostToDevice);
            if (e != cudaSuccess)
                return cuda_failed(e, "copying a stored chunk to the GPU");
            st = h5zgpu_decompress_device(d_old, len, chunk, pl->chunk_bytes, &got, b->device,
                                          NULL);
            if (st == H5ZGPU_OK && got != pl->chunk_bytes)
                st = hz_fail(H5ZGPU_E_CORRUPT, "the chunk decompressed to the wrong size");
            if (st != H5ZGPU_OK) {
                ds_worker_failed(&b->slot.w, pl, b->slot.first + c, st, "decompressing the stored");
                return hz_fail(st, "%s", b->slot.w.msg);
            }
        } else if (!ov.whole) {
            e = cudaMemcpyAsync(chunk, b->fill, pl->chunk_bytes, cudaMemcpyDeviceToDevice, b->s);
        }
        if (e != cudaSuccess || (e = copy_overlap(pl, &ov, 1, b->block, chunk, b->s)) !=
                                    cudaSuccess)
            return cuda_failed(e, "cutting a chunk on the GPU");
    }
    e = cudaStreamSynchronize(b->s);
    return e == cudaSuccess ? H5ZGPU_OK : cuda_failed(e, "cutting chunks on the GPU");
}

static void *compress_batch(void *arg)
{
    dbatch *b = arg;
    const ds_plan *pl = b->pl;
    size_t done = 0;
    cudaSetDevice(b->device);
    for (size_t c = 0; c < b->slot.count; c++) {
        b->out[c] = b->d_blobs + c * pl->cap;
        b->out_cap[c] = pl->cap;
    }
    h5zgpu_status st =
        h5zgpu_compress_device_batch(&b->ratio->p, b->slot.count, b->in, b->out, b->out_cap,
                                     b->out_len, b->device, &done);
    if (st != H5ZGPU_OK) {
        ds_worker_failed(&b->slot.w, pl, b->slot.first + done, st, "compressing");
        return NULL;
    }
    h5zgpu_ratio_account(b->ratio, b->out_len, b->slot.count);
    for (size_t c = 0; c < b->slot.count; c++) {
        cudaError_t e = cudaMemcpyAsync(b->h_blobs + c * pl->cap, b->out[c], b->out_len[c],
                                        cudaMemcpyDeviceToHost, b->s);
        if (e == cudaSuccess && c + 1 == b->slot.count)
            e = cudaStreamSynchronize(b->s);
        if (e != cudaSuccess) {
            cuda_failed(e, "copying compressed chunks to the host");
            ds_worker_failed(&b->slot.w, pl, b->slot.first + c, H5ZGPU_E_DEVICE, "copying");
            return NULL;
        }
    }
    return NULL;
}

static h5zgpu_status store_batch(ds_slot *s, void *ctx)
{
    const dbatch *b = (const dbatch *)s;
    (void)ctx;
    return ds_store(b->pl, b->slot.first, b->slot.count, b->h_blobs, b->out_len);
}

/* Batch b's stored chunks read straight into its pinned buffer (stored[c] 0: never written). */
static h5zgpu_status fetch_batch(ds_slot *s, void *ctx)
{
    dbatch *b = (dbatch *)s;
    (void)ctx;
    return ds_fetch(b->pl, b->slot.first, b->slot.count, b->h_blobs, b->stored);
}

static void *decompress_batch(void *arg)
{
    dbatch *b = arg;
    const ds_plan *pl = b->pl;
    size_t n = 0, done = 0;
    cudaError_t e = cudaSuccess;
    cudaSetDevice(b->device);
    for (size_t c = 0; c < b->slot.count && e == cudaSuccess; c++) {
        if (!b->stored[c])
            continue;
        e = cudaMemcpyAsync(b->d_blobs + c * pl->cap, b->h_blobs + c * pl->cap, b->stored[c],
                            cudaMemcpyHostToDevice, b->s);
        b->which[n] = c;
        b->in[n] = b->d_blobs + c * pl->cap;
        b->in_len[n] = b->stored[c];
        b->out[n] = b->d_chunks + c * pl->chunk_bytes;
        b->out_cap[n++] = pl->chunk_bytes;
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->s);
    if (e != cudaSuccess) {
        cuda_failed(e, "copying stored chunks to the GPU");
        ds_worker_failed(&b->slot.w, pl, b->slot.first + 0, H5ZGPU_E_DEVICE, "copying");
        return NULL;
    }
    h5zgpu_status st = n ? h5zgpu_decompress_device_batch(n, b->in, b->in_len, b->out,
                                                          b->out_cap, b->out_len, b->device,
                                                          &done)
                         : H5ZGPU_OK;
    for (size_t k = 0; st == H5ZGPU_OK && k < n; k++)
        if (b->out_len[k] != pl->chunk_bytes) {
            st = hz_fail(H5ZGPU_E_CORRUPT, "the chunk decompressed to the wrong size");
            done = k;
        }
    if (st != H5ZGPU_OK) {   /* done: the failing one among the stored chunks */
        ds_worker_failed(&b->slot.w, pl, b->slot.first + b->which[done], st, "decompressing");
        return NULL;
    }
    for (size_t c = 0; c < b->slot.count && e == cudaSuccess; c++) {
        ds_overlap ov;
        ds_overlap_of(pl, b->slot.first + c, &ov);
        e = copy_overlap(pl, &ov, 0, b->block,
                         b->stored[c] ? b->d_chunks + c * pl->chunk_bytes : (void *)b->fill, b->s);
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(b->s);
    if (e != cudaSuccess) {
        cuda_failed(e, "placing chunks on the GPU");
        ds_worker_failed(&b->slot.w, pl, b->slot.first + 0, H5ZGPU_E_DEVICE, "placing");
    }
    return NULL;
}

/* Fixed ratio's budget from a sample of the block's whole chunks (ds_ratio_sample), cut out
 * and coded on the GPU (ds_ratio_host's counterpart). */
static h5zgpu_status ratio_on_device(const ds_plan *pl, void *block, int device,
                                     h5zgpu_ratio_budget *b)
{
    const size_t most = ds_ratio_most(pl);
    size_t *pick = malloc(most * sizeof *pick), *out_cap = malloc(most * sizeof *out_cap);
    size_t *out_len = malloc(most * sizeof *out_len);
    void **in = malloc(most * sizeof *in), **out = malloc(most * sizeof *out);
    unsigned char *d_chunks = NULL, *d_blobs = NULL;
    cudaError_t e = cudaSuccess;
    h5zgpu_status st = H5ZGPU_OK;
    if (!pick || !out_cap || !out_len || !in || !out) {
        st = hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory");
        goto done;
    }
    const size_t n = ds_ratio_sample(pl, pick);
    if (n && ((e = cudaMalloc((void **)&d_chunks, n * pl->chunk_bytes)) != cudaSuccess ||
              (e = cudaMalloc((void **)&d_blobs, n * pl->cap)) != cudaSuccess)) {
        st = cuda_failed(e, "setting up the fixed ratio's sample");
        goto done;
    }
    for (size_t i = 0; i < n && e == cudaSuccess; i++) {
        ds_overlap ov;
        ds_overlap_of(pl, pick[i], &ov);
        in[i] = d_chunks + i * pl->chunk_bytes;
        out[i] = d_blobs + i * pl->cap;
        out_cap[i] = pl->cap;
        e = copy_overlap(pl, &ov, 1, block, in[i], 0);
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(0);
    if (e != cudaSuccess)
        st = cuda_failed(e, "cutting the fixed ratio's sample on the GPU");
    if (st == H5ZGPU_OK && n)
        st = h5zgpu_ratio_begin(&pl->p, pl->nchunks, n, (const void *const *)in, out, out_cap,
                                out_len, device, NULL, b);
done:
    cudaFree(d_chunks);
    cudaFree(d_blobs);
    free(pick);
    free(out_cap);
    free(out_len);
    free(in);
    free(out);
    return st;
}

/* What both directions share: the buffer's device, a device chunk of the fill value, two
 * batches; then ds_pipeline (writes: cut batch i while batch i-1 compresses, then store batch
 * i-1; reads: fetch batch i while batch i-1 decompresses and is placed). */
static h5zgpu_status pipeline(const ds_plan *pl, void *block, int writing)
{
    struct cudaPointerAttributes at;
    if (pl->rank > 3)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers of rank %u (at "
                       "most 3; use a host buffer)", pl->rank);
    if (cudaPointerGetAttributes(&at, block) != cudaSuccess ||
        (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged)) {
        cudaGetLastError();
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the buffer is not CUDA device "
                       "memory (pass H5ZGPU_MEMORY_HOST for host memory)");
    }
    int prev = 0;
    cudaGetDevice(&prev);
    void *fill = NULL, *host_fill = malloc(pl->chunk_bytes);
    cudaError_t e;
    if (!host_fill)
        return hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory");
    ds_fill_chunk(pl, host_fill);
    if ((e = cudaSetDevice(at.device)) != cudaSuccess ||
        (e = cudaStreamSynchronize(0)) != cudaSuccess ||   /* the caller's work on the block */
        (e = cudaMalloc(&fill, pl->chunk_bytes)) != cudaSuccess ||
        (e = cudaMemcpy(fill, host_fill, pl->chunk_bytes, cudaMemcpyHostToDevice)) !=
            cudaSuccess) {
        free(host_fill);
        cudaFree(fill);
        cudaSetDevice(prev);
        return cuda_failed(e, "setting up the device buffers");
    }
    free(host_fill);
    h5zgpu_ratio_budget ratio;
    ds_ratio_off(pl, &ratio);
    h5zgpu_status st = writing && pl->p.mode == H5ZGPU_MODE_RATIO
                           ? ratio_on_device(pl, block, at.device, &ratio)
                           : H5ZGPU_OK;
    size_t size = block_is_the_chunk(pl) ? 1 : ds_batch_chunks(pl);
    size = ratio.on ? ds_ratio_batch(pl, size) : size;
    dbatch b[2];
    if (st == H5ZGPU_OK)
        st = dbatch_alloc(&b[0], pl, at.device, block, fill, size);
    if (st == H5ZGPU_OK && (st = dbatch_alloc(&b[1], pl, at.device, block, fill, size)) !=
                               H5ZGPU_OK)
        dbatch_free(&b[0]);
    b[0].ratio = b[1].ratio = &ratio;
    if (st == H5ZGPU_OK) {
        ds_slot *const slots[2] = {&b[0].slot, &b[1].slot};
        const ds_stages w = {cut_batch, compress_batch, store_batch, NULL};
        const ds_stages r = {fetch_batch, decompress_batch, NULL, NULL};
        st = ds_pipeline(pl, size, slots, writing ? &w : &r);
        dbatch_free(&b[0]);
        dbatch_free(&b[1]);
    }
    cudaFree(fill);
    cudaSetDevice(prev);
    return st;
}

h5zgpu_status ds_write_device(const ds_plan *pl, const void *d_block)
{
    return pipeline(pl, (void *)d_block, 1);
}

h5zgpu_status ds_read_device(const ds_plan *pl, void *d_block)
{
    return pipeline(pl, d_block, 0);
}

#else

h5zgpu_status ds_write_device(const ds_plan *pl, const void *d_block)
{
    (void)pl;
    (void)d_block;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers need a build with the "
                   "CUDA backend");
}

h5zgpu_status ds_read_device(const ds_plan *pl, void *d_block)
{
    (void)pl;
    (void)d_block;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers need a build with the "
                   "CUDA backend");
}

#endif
