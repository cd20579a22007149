/* What a whole-dataset write or read works on: the dataset's chunk parameters, the selected
 * block, and the chunks that block touches (ds_ prefix: the dataset library). */
#ifndef H5ZGPU_DATASET_PLAN_H
#define H5ZGPU_DATASET_PLAN_H

#include "h5zgpu_dataset.h"

#include <stddef.h>

typedef struct ds_plan {
    hid_t dset;
    h5zgpu_params p;             /* what the filter applies to each chunk */
    unsigned rank;
    hsize_t extent[H5ZGPU_MAX_RANK];
    hsize_t chunk[H5ZGPU_MAX_RANK];
    hsize_t start[H5ZGPU_MAX_RANK], count[H5ZGPU_MAX_RANK];  /* the selected block */
    hsize_t first[H5ZGPU_MAX_RANK], grid[H5ZGPU_MAX_RANK];   /* its chunk-grid index range */
    size_t nchunks;
    size_t stride;               /* the k-th chunk is the grid's (k x stride) mod nchunks */
    size_t elem;                 /* bytes an element */
    size_t chunk_bytes;          /* bytes of a decompressed chunk */
    size_t cap;                  /* h5zgpu_compress_bound */
} ds_plan;

/* How one chunk and the selected block meet: per axis, where the overlap starts in the chunk
 * and in the block, and its length; whole when the block covers the chunk entirely (then
 * nothing stored before matters). */
typedef struct ds_overlap {
    hsize_t origin[H5ZGPU_MAX_RANK];
    hsize_t in_chunk[H5ZGPU_MAX_RANK], in_block[H5ZGPU_MAX_RANK], n[H5ZGPU_MAX_RANK];
    int whole;
} ds_overlap;

h5zgpu_status ds_plan_make(hid_t dset, hid_t file_space, ds_plan *pl);

/* The k-th chunk the block touches and its overlap: with stride 1 (ds_plan_make's) in C order
 * of the chunk grid. */
void ds_overlap_of(const ds_plan *pl, size_t k, ds_overlap *ov);

/* The chunks in a scattered order, so that any run of them samples the whole block (fixed
 * ratio's sample and batches): the k-th is the grid's k x stride mod nchunks, the stride prime
 * to nchunks near its golden section, which spreads a run over the chunk grid's every axis
 * (evenly spaced indices in C order would line up along its fastest: the field's one face). C
 * order kept where nchunks >= 2^32. */
void ds_plan_scatter(ds_plan *pl);

/* A chunk of the fill value (the padding HDF5 gives a chunk new to the file). */
void ds_fill_chunk(const ds_plan *pl, void *chunk);

/* The stored bytes of the chunk at origin into buf (pl->cap bytes); *len 0 when the chunk was
 * never written. A chunk larger than pl->cap, or stored with the filter skipped, is refused. */
h5zgpu_status ds_stored(const ds_plan *pl, const hsize_t *origin, void *buf, size_t *len);

/* Stores chunks first .. first+count-1 with H5Dwrite_chunk: chunk i's len[i] compressed bytes
 * at blobs + i x cap. */
h5zgpu_status ds_store(const ds_plan *pl, size_t first, size_t count, const unsigned char *blobs,
                       const size_t *len);

/* The stored bytes of chunks first .. first+count-1 (ds_stored): chunk i's into blobs + i x cap,
 * their lengths into len[i] (0: never written). */
h5zgpu_status ds_fetch(const ds_plan *pl, size_t first, size_t count, unsigned char *blobs,
                       size_t *len);

/* Chunks a batch: about 64 MiB of chunks and their compressed bytes (at least one, at most 64).
 * Three 8 MiB chunks a batch wrote 128^3 chunks from device memory at 12-13.5 GB/s on an H100;
 * eight, with fewer batches to overlap, at 6-7. */
size_t ds_batch_chunks(const ds_plan *pl);

/* "(z, y, x)" of a chunk origin, for messages. */
const char *ds_origin_text(const ds_plan *pl, const hsize_t *origin, char *buf, size_t size);

#endif
