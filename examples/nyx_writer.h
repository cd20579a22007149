/* What the parts of nyx_writer share: the run's options, a rank's share of the state, and the
 * writes and reads of each layout (nyx_native.c, nyx_amrex.c). */
#ifndef H5ZGPU_EXAMPLES_NYX_WRITER_H
#define H5ZGPU_EXAMPLES_NYX_WRITER_H

#include "h5zgpu.h"
#include "nyx_state.h"

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

typedef enum nw_path { NW_NONE, NW_FILTER, NW_DIRECT } nw_path;

typedef struct nw_bound {
    h5zgpu_mode mode;
    double eb;
} nw_bound;

typedef struct nw_opts {
    size_t n, box, chunk;      /* chunk: elements of a 1-D chunk of the AMReX layout */
    const char *out;
    nw_path path;              /* the one being written */
    nw_path paths[3];          /* --path: those to write in turn, from the same state */
    int npaths;
    int amrex, verify;
    int threads;               /* MPI lets a thread beside the main one (MPI_THREAD_FUNNELED) */
    h5zgpu_codec codec;
    nw_bound bound[NS_FIELDS];
} nw_opts;

/* The direct path's buffers, kept from one write to the next as a simulation's writer keeps
 * them, grown when short: a GPU rank's device batch output (one field's at a time), and each
 * field's compressed boxes back to back on the host (pinned on a GPU rank: fresh pageable
 * memory took 0.13 s of a 0.23 s Huffman compression phase at 512^3 on an H100, and 0.44 of
 * 0.55 s for fixed-length boxes, faulting its pages in as the copies landed). */
typedef struct nw_direct {
    void *scratch;
    size_t scratch_cap;
    unsigned char *blobs[NS_FIELDS];
    size_t blobs_cap[NS_FIELDS];
} nw_direct;

/* A rank's boxes (a contiguous range of the N^3 domain's boxes in C order) and their fields:
 * on the host (what was generated: the truth --verify compares with) and, with a GPU, the same
 * in GPU memory, where the writes start from. Box i of a field starts at element i x box^3. */
typedef struct nw_rank {
    int rank, size, device;    /* device: the CUDA device, -1 without one */
    size_t boxes_total, first, count, most;   /* most: the largest count of any rank */
    size_t cells;              /* box^3 */
    float *host[NS_FIELDS];
    void *dev[NS_FIELDS];
    nw_direct *direct;
} nw_rank;

/* What a write measured, per field (ratio: raw bytes / stored bytes, 0 when unknown). */
typedef struct nw_result {
    double ratio[NS_FIELDS];
    double worst[NS_FIELDS];   /* --verify: max |error| / bound (none: max |error|) */
    size_t misses[NS_FIELDS];  /* --verify: values outside their bound */
} nw_result;

/* The first corner of global box k. */
void nw_box_origin(const nw_opts *o, size_t k, size_t origin[3]);

/* Copies n floats of field f starting at element at of the rank's share to host memory dst,
 * from the GPU when the rank has one (pinned dst makes it faster). 0 on success. */
int nw_to_host(const nw_rank *r, int f, size_t at, size_t n, float *dst);

/* Host memory for copies off the GPU: pinned when the rank has one. */
float *nw_stage_alloc(const nw_rank *r, size_t n);
void nw_stage_free(const nw_rank *r, float *p);

/* Frees the rank's direct-path buffers. */
void nw_direct_free(const nw_rank *r);

/* A chunk's filter parameters as HDF5 stores them for dset (after set_local). */
int nw_dataset_params(hid_t dset, h5zgpu_params *p);

/* Compresses the rank's boxes of field f in one batch (on its GPU when it has one: only the
 * compressed bytes come back) into blobs blob[i] of len[i] bytes, in the rank's buffer of
 * field f (r->direct), valid until the next write compresses that field. */
int nw_compress_boxes(const nw_rank *r, const h5zgpu_params *p, int f, void **blob,
                      size_t *len);

/* Checks got (n values) against want under bound b (REL: ranges over groups of `group`
 * consecutive values, the chunks; RATIO: group g's own bound recorded[g]), folding the worst
 * error / bound and the misses into res. */
void nw_check(const nw_bound *b, const nw_bound *recorded, int exact, const float *want,
              const float *got, size_t n, size_t group, double *worst, size_t *misses);

/* The bounds that the count chunks of dataset `name` in file `path` at offsets (rank numbers
 * each) record in their headers, as ABS bounds (0: stored exactly), read with H5Dread_chunk on
 * the file opened serially. 0 on success. */
int nw_recorded_bounds(const char *path, const char *name, int rank, const hsize_t *offsets,
                       size_t count, nw_bound *out);

/* The dataset creation properties of a field written by path p: chunk dims, and filter 33900
 * with bound b unless p is NW_NONE; fill time NEVER for the AMReX layout (as AMReX sets). */
hid_t nw_dcpl(const nw_opts *o, nw_path p, const nw_bound *b, int rank, const hsize_t *chunk);

/* Each layout writes o->out along o->path (collectively: every rank calls), and inspects what
 * it wrote: the ratios, and with --verify every value of the rank's boxes read back and
 * checked against its bound. 0 on success.
 * The native layout: native_fields/<name>, N^3, one chunk a box; *made_s: the seconds to the
 * datasets' creation and, for the direct path, to the rank's last compression (the fields
 * compressed before it are stored beside it). */
int nw_native_write(const nw_opts *o, const nw_rank *r, hid_t fapl, double *made_s);
int nw_native_inspect(const nw_opts *o, const nw_rank *r, hid_t fapl, nw_result *res);

/* AMReX's plotfile layout: level_0/data:datatype=0, every box's six components back to back
 * in 1-D chunks of o->chunk elements (one bound, o->bound[0]; results in element 0). */
int nw_amrex_write(const nw_opts *o, const nw_rank *r, hid_t fapl);
int nw_amrex_inspect(const nw_opts *o, const nw_rank *r, hid_t fapl, nw_result *res);

#endif
