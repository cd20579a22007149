/* Whole-dataset I/O with host buffers. HDF5 is called from the calling thread only; a helper
 * thread compresses (or decompresses) one batch with the batched codec API while the calling
 * thread stores the batch before it (or reads the batch after it). */
#include "host_io.h"

#include "ratio_sample.h"
#include "worker.h"

#include "error.h"

#include <stdlib.h>
#include <string.h>

typedef struct batch {
    ds_slot slot;                /* first: the pipeline's view (worker, chunk range) */
    const ds_plan *pl;
    const h5zgpu_exec *exec;
    h5zgpu_ratio_budget *ratio;  /* the batches' parameters, fixed ratio's moved in turn */
    size_t size;                 /* chunks it has room for */
    unsigned char *chunks;       /* size x chunk_bytes */
    unsigned char *blobs;        /* size x cap: compressed chunks, made (writes) or read (reads);
                                  * writes decompress a partly covered chunk's old bytes there */
    size_t *stored;              /* reads: chunk c's bytes in the file (0: never written) */
    size_t *which;               /* reads: the batch index of the n-th stored chunk */
    const void **in;
    void **out;
    size_t *in_len, *out_cap, *out_len;
    void **at;                   /* each chunk's buffer, for the copies to and from the block */
    uint64_t *box;               /* each chunk's overlap with the block: its position in the
                                  * block, in the chunk and its extent, rank values each */
    void *block;                 /* the caller's buffer */
} batch;

static void batch_free(batch *b)
{
    free(b->chunks);
    free(b->blobs);
    free(b->stored);
    free(b->which);
    free(b->in);
    free(b->out);
    free(b->in_len);
    free(b->out_cap);
    free(b->out_len);
    free(b->at);
    free(b->box);
}

static h5zgpu_status batch_alloc(batch *b, const ds_plan *pl, const h5zgpu_exec *exec,
                                 size_t size)
{
    memset(b, 0, sizeof *b);
    b->pl = pl;
    b->exec = exec;
    b->size = size;
    b->chunks = malloc(size * pl->chunk_bytes);
    b->blobs = malloc(size * pl->cap);
    b->stored = malloc(size * sizeof *b->stored);
    b->which = malloc(size * sizeof *b->which);
    b->in = malloc(size * sizeof *b->in);
    b->out = malloc(size * sizeof *b->out);
    b->in_len = malloc(size * sizeof *b->in_len);
    b->out_cap = malloc(size * sizeof *b->out_cap);
    b->out_len = malloc(size * sizeof *b->out_len);
    b->at = malloc(size * sizeof *b->at);
    b->box = malloc(3 * size * pl->rank * sizeof *b->box);
    if (!b->chunks || !b->blobs || !b->stored || !b->which || !b->in || !b->out || !b->in_len ||
        !b->out_cap || !b->out_len || !b->at || !b->box) {
        batch_free(b);
        return hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory for a batch of %zu "
                       "chunks", size);
    }
    return H5ZGPU_OK;
}

/* Copies between the block and the batch's chunks, their rows shared among the cores. */
static void copy_chunks(batch *b, int to_chunks)
{
    const ds_plan *pl = b->pl;
    const size_t n = b->slot.count, r = pl->rank;
    uint64_t *in_block = b->box, *in_chunk = b->box + n * r, *ext = b->box + 2 * n * r;
    uint64_t dims[H5ZGPU_MAX_RANK], chunk[H5ZGPU_MAX_RANK];
    for (size_t d = 0; d < r; d++) {
        dims[d] = pl->count[d];
        chunk[d] = pl->chunk[d];
    }
    for (size_t i = 0; i < n; i++) {
        ds_overlap ov;
        ds_overlap_of(pl, b->slot.first + i, &ov);
        b->at[i] = b->chunks + i * pl->chunk_bytes;
        for (size_t d = 0; d < r; d++) {
            in_block[i * r + d] = ov.in_block[d];
            in_chunk[i * r + d] = ov.in_chunk[d];
            ext[i * r + d] = ov.n[d];
        }
    }
    /* the plan's boxes lie inside the block and their chunks: nothing to refuse */
    if (to_chunks)
        h5zgpu_gather_boxes(b->block, pl->rank, dims, chunk, pl->elem, n, in_block, in_chunk,
                            ext, b->at);
    else
        h5zgpu_scatter_boxes(b->block, pl->rank, dims, chunk, pl->elem, n, in_block, in_chunk,
                             ext, (const void *const *)b->at);
}

static void *compress_batch(void *arg)
{
    batch *b = arg;
    const ds_plan *pl = b->pl;
    for (size_t i = 0; i < b->slot.count; i++) {
        b->in[i] = b->chunks + i * pl->chunk_bytes;
        b->out[i] = b->blobs + i * pl->cap;
        b->out_cap[i] = pl->cap;
    }
    size_t done = 0;
    h5zgpu_status st = h5zgpu_compress_batch(&b->ratio->p, b->slot.count, b->in, b->out,
                                             b->out_cap, b->out_len, b->exec, &done);
    if (st != H5ZGPU_OK)
        ds_worker_failed(&b->slot.w, pl, b->slot.first + done, st, "compressing");
    else
        h5zgpu_ratio_account(b->ratio, b->out_len, b->slot.count);
    return NULL;
}

static void *decompress_batch(void *arg)
{
    batch *b = arg;
    const ds_plan *pl = b->pl;
    size_t n = 0, done = 0;
    for (size_t c = 0; c < b->slot.count; c++) {
        unsigned char *chunk = b->chunks + c * pl->chunk_bytes;
        if (!b->stored[c]) {
            ds_fill_chunk(pl, chunk);
            continue;
        }
        b->which[n] = c;
        b->in[n] = b->blobs + c * pl->cap;
        b->in_len[n] = b->stored[c];
        b->out[n] = chunk;
        b->out_cap[n++] = pl->chunk_bytes;
    }
    h5zgpu_status st = n ? h5zgpu_decompress_batch(n, b->in, b->in_len, b->out, b->out_cap,
                                                   b->out_len, b->exec, &done)
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
    copy_chunks(b, 0);
    return NULL;
}

/* What a partly covered chunk held before: decompressed from the file (its bytes read into
 * scratch, pl->cap bytes) or, new to the file, the fill value (HDF5's calls stay on this
 * thread). Chunks the block covers whole need none. */
static h5zgpu_status prepare_chunk(const ds_plan *pl, const h5zgpu_exec *exec, size_t k,
                                   void *chunk, void *scratch)
{
    ds_overlap ov;
    ds_overlap_of(pl, k, &ov);
    if (ov.whole)
        return H5ZGPU_OK;
    size_t len, got = 0;
    h5zgpu_status st = ds_stored(pl, ov.origin, scratch, &len);
    if (st != H5ZGPU_OK)
        return st;
    if (!len) {
        ds_fill_chunk(pl, chunk);
        return H5ZGPU_OK;
    }
    st = h5zgpu_decompress(scratch, len, chunk, pl->chunk_bytes, &got, exec);
    if (st == H5ZGPU_OK && got != pl->chunk_bytes)
        st = hz_fail(H5ZGPU_E_CORRUPT, "the chunk decompressed to the wrong size");
    if (st != H5ZGPU_OK) {
        char where[256], msg[512];
        snprintf(msg, sizeof msg, "%s", h5zgpu_last_error());
        return hz_fail(st, "h5zgpu_dataset: the stored chunk at %s: %s",
                       ds_origin_text(pl, ov.origin, where, sizeof where), msg);
    }
    return H5ZGPU_OK;
}

/* The batch's chunks as the filter gets them: the block's values over what prepare_chunk left. */
static h5zgpu_status cut_batch(ds_slot *s, void *ctx)
{
    batch *b = (batch *)s;
    (void)ctx;
    for (size_t c = 0; c < b->slot.count; c++) {
        h5zgpu_status st = prepare_chunk(b->pl, b->exec, b->slot.first + c,
                                         b->chunks + c * b->pl->chunk_bytes,
                                         b->blobs + c * b->pl->cap);
        if (st != H5ZGPU_OK)
            return st;
    }
    copy_chunks(b, 1);
    return H5ZGPU_OK;
}

static h5zgpu_status store_batch(ds_slot *s, void *ctx)
{
    const batch *b = (const batch *)s;
    (void)ctx;
    return ds_store(b->pl, b->slot.first, b->slot.count, b->blobs, b->out_len);
}

/* The stored bytes of the batch's chunks into its blobs (stored[c] 0: never written). */
static h5zgpu_status fetch_batch(ds_slot *s, void *ctx)
{
    batch *b = (batch *)s;
    (void)ctx;
    return ds_fetch(b->pl, b->slot.first, b->slot.count, b->blobs, b->stored);
}

/* writes: cut batch i, then store batch i-1 while batch i compresses;
 * reads: fetch batch i's stored bytes while batch i-1 decompresses into the block */
static h5zgpu_status pipeline(const ds_plan *pl, void *block, const h5zgpu_exec *exec,
                              int writing, h5zgpu_ratio_budget *ratio)
{
    size_t size = ratio->on ? ds_ratio_batch(pl, ds_batch_chunks(pl)) : ds_batch_chunks(pl);
    batch b[2];
    h5zgpu_status st = batch_alloc(&b[0], pl, exec, size);
    if (st != H5ZGPU_OK)
        return st;
    if ((st = batch_alloc(&b[1], pl, exec, size)) != H5ZGPU_OK) {
        batch_free(&b[0]);
        return st;
    }
    b[0].block = b[1].block = block;
    b[0].ratio = b[1].ratio = ratio;
    ds_slot *const slots[2] = {&b[0].slot, &b[1].slot};
    const ds_stages w = {cut_batch, compress_batch, store_batch, NULL};
    const ds_stages r = {fetch_batch, decompress_batch, NULL, NULL};
    st = ds_pipeline(pl, size, slots, writing ? &w : &r);
    batch_free(&b[0]);
    batch_free(&b[1]);
    return st;
}

h5zgpu_status ds_write_host(const ds_plan *pl, const void *block, const h5zgpu_exec *exec)
{
    h5zgpu_ratio_budget ratio;
    ds_ratio_off(pl, &ratio);
    h5zgpu_status st =
        pl->p.mode == H5ZGPU_MODE_RATIO ? ds_ratio_host(pl, block, exec, &ratio) : H5ZGPU_OK;
    return st == H5ZGPU_OK ? pipeline(pl, (void *)block, exec, 1, &ratio) : st;
}

h5zgpu_status ds_read_host(const ds_plan *pl, void *block, const h5zgpu_exec *exec)
{
    h5zgpu_ratio_budget none;
    ds_ratio_off(pl, &none);
    return pipeline(pl, block, exec, 0, &none);
}
