#include "ratio_sample.h"

#include "error.h"

#include <stdlib.h>

/* How many of `whole` chunks the sample takes. */
static size_t sample_size(const ds_plan *pl, size_t whole)
{
    const size_t share = (whole + DS_RATIO_SHARE - 1) / DS_RATIO_SHARE;
    const size_t fits = DS_RATIO_BYTES / pl->chunk_bytes;
    size_t n = share > DS_RATIO_LEAST ? share : DS_RATIO_LEAST;
    n = n < fits ? n : fits ? fits : 1;
    return n < whole ? n : whole;
}

size_t ds_ratio_most(const ds_plan *pl)
{
    return sample_size(pl, pl->nchunks);
}

size_t ds_ratio_sample(const ds_plan *pl, size_t *pick)
{
    size_t whole = 0;
    for (size_t k = 0; k < pl->nchunks; k++) {
        ds_overlap ov;
        ds_overlap_of(pl, k, &ov);
        whole += ov.whole;
    }
    const size_t n = sample_size(pl, whole);
    size_t next = 0;
    for (size_t k = 0; k < pl->nchunks && next < n; k++) {
        ds_overlap ov;
        ds_overlap_of(pl, k, &ov);
        if (ov.whole)
            pick[next++] = k;
    }
    return next;
}

size_t ds_ratio_batch(const ds_plan *pl, size_t size)
{
    const size_t eighth = (pl->nchunks + 7) / 8;
    return size < eighth ? size : eighth;
}

void ds_ratio_off(const ds_plan *pl, h5zgpu_ratio_budget *b)
{
    *b = (h5zgpu_ratio_budget){.p = pl->p};
}

h5zgpu_status ds_ratio_host(const ds_plan *pl, const void *block, const h5zgpu_exec *exec,
                            h5zgpu_ratio_budget *b)
{
    const size_t most = ds_ratio_most(pl), r = pl->rank;
    ds_ratio_off(pl, b);
    size_t *pick = malloc(most * sizeof *pick), *out_cap = malloc(most * sizeof *out_cap);
    size_t *out_len = malloc(most * sizeof *out_len);
    void **in = malloc(most * sizeof *in), **out = malloc(most * sizeof *out);
    uint64_t *box = malloc(3 * most * r * sizeof *box);
    unsigned char *chunks = h5zgpu_alloc_host(most * pl->chunk_bytes);
    unsigned char *blobs = malloc(most * pl->cap);
    h5zgpu_status st = H5ZGPU_OK;
    if (!pick || !out_cap || !out_len || !in || !out || !box || !chunks || !blobs) {
        st = hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory for the fixed ratio's "
                     "sample of %zu chunks", most);
        goto done;
    }
    const size_t n = ds_ratio_sample(pl, pick);
    uint64_t dims[H5ZGPU_MAX_RANK], chunk[H5ZGPU_MAX_RANK];
    uint64_t *in_block = box, *in_chunk = box + n * r, *ext = box + 2 * n * r;
    for (size_t d = 0; d < r; d++) {
        dims[d] = pl->count[d];
        chunk[d] = pl->chunk[d];
    }
    for (size_t i = 0; i < n; i++) {
        ds_overlap ov;
        ds_overlap_of(pl, pick[i], &ov);
        for (size_t d = 0; d < r; d++) {
            in_block[i * r + d] = ov.in_block[d];
            in_chunk[i * r + d] = 0;
            ext[i * r + d] = pl->chunk[d];
        }
        in[i] = chunks + i * pl->chunk_bytes;
        out[i] = blobs + i * pl->cap;
        out_cap[i] = pl->cap;
    }
    if (n && (st = h5zgpu_gather_boxes(block, pl->rank, dims, chunk, pl->elem, n, in_block,
                                       in_chunk, ext, in)) == H5ZGPU_OK)
        st = h5zgpu_ratio_begin(&pl->p, pl->nchunks, n, (const void *const *)in, out, out_cap,
                                out_len, -1, exec, b);
done:
    free(pick);
    free(out_cap);
    free(out_len);
    free(in);
    free(out);
    free(box);
    h5zgpu_free_host(chunks);
    free(blobs);
    return st;
}
