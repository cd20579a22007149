/* h5zgpu: GPU error-bounded lossy compression of floating-point chunks.
 *
 * The public C API. The HDF5 filter, the h5zgpu command and the benchmarks are its clients.
 * Every function is thread-safe. A compressed chunk is self-describing (docs/FORMAT.md), so
 * decompression needs only the bytes.
 *
 * Where the work runs: H5ZGPU_DEVICE=auto|cpu|gpu|gpu:N in the environment (default auto: the
 * GPU when one is usable, else the CPU), or an explicit h5zgpu_exec. Both executors write
 * byte-identical chunks; a GPU failure falls back to the CPU (H5ZGPU_VERBOSE=1 says so once).
 */
#ifndef H5ZGPU_H
#define H5ZGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define H5ZGPU_FILTER_ID 33900
#define H5ZGPU_FILTER_NAME "h5zgpu"
#define H5ZGPU_MAX_RANK 32
#define H5ZGPU_FORMAT_VERSION 6

typedef enum h5zgpu_status {
    H5ZGPU_OK = 0,
    H5ZGPU_E_INVALID_ARG = 1,     /* a parameter is out of its range */
    H5ZGPU_E_UNSUPPORTED = 2,     /* element type, codec or rank this build cannot handle */
    H5ZGPU_E_OUTPUT_TOO_SMALL = 3,
    H5ZGPU_E_CORRUPT = 4,         /* chunk fails a length, offset, code or checksum check */
    H5ZGPU_E_VERSION = 5,         /* chunk written by a newer format version */
    H5ZGPU_E_NOMEM = 6,
    H5ZGPU_E_DEVICE = 7           /* the GPU was required (H5ZGPU_DEVICE=gpu) and failed */
} h5zgpu_status;

typedef enum h5zgpu_codec {
    H5ZGPU_CODEC_AUTO = 0,    /* per chunk, the smaller of the codecs this build has */
    H5ZGPU_CODEC_FIXED = 1,   /* cuSZp family: blocks, Lorenzo, fixed bit length, bit planes */
    H5ZGPU_CODEC_HUFFMAN = 2  /* cuSZ family: dual-quant Lorenzo, canonical Huffman, runs */
} h5zgpu_codec;

typedef enum h5zgpu_mode {
    H5ZGPU_MODE_ABS = 0,   /* |x' - x| <= eb */
    H5ZGPU_MODE_REL = 1,   /* |x' - x| <= eb * (max - min) of the chunk's finite values */
    H5ZGPU_MODE_PWREL = 2, /* |x' - x| <= eb * |x|, pointwise; 0 <= eb < 1 */
    H5ZGPU_MODE_RATIO = 3  /* fixed ratio: eb is the target ratio (> 1); each chunk takes the
                            * absolute bound that brings it nearest the target, records it in
                            * its header and honours it */
} h5zgpu_mode;

typedef enum h5zgpu_dtype {
    H5ZGPU_FLOAT32 = 1,
    H5ZGPU_FLOAT64 = 2
} h5zgpu_dtype;

typedef struct h5zgpu_params {
    h5zgpu_codec codec;
    h5zgpu_mode mode;
    double eb;                         /* >= 0 and finite; 0 means lossless */
    h5zgpu_dtype dtype;
    unsigned rank;                     /* 1..H5ZGPU_MAX_RANK */
    uint64_t dims[H5ZGPU_MAX_RANK];    /* slowest-varying first, as in HDF5 and C arrays */
    /* A fill value (HDF5's, or netCDF's _FillValue): elements whose bits equal it in the element
     * type are left out of REL ranges and of prediction, and come back bit for bit. */
    int has_fill;
    double fill;                       /* float32 elements: a float32 value (or NaN) */
    /* Huffman codec: deltas within +-radius are coded, others stored as outliers; 0 means
     * the default (512), else 2..1024. Ignored by the fixed-length codec. */
    unsigned radius;
} h5zgpu_params;

typedef enum h5zgpu_exec_kind {
    H5ZGPU_EXEC_AUTO = 0,  /* GPU when usable, else CPU */
    H5ZGPU_EXEC_CPU = 1,
    H5ZGPU_EXEC_GPU = 2    /* GPU or fail with H5ZGPU_E_DEVICE; no silent fallback */
} h5zgpu_exec_kind;

typedef struct h5zgpu_exec {
    h5zgpu_exec_kind kind;
    int device;            /* CUDA device ordinal for GPU and AUTO */
} h5zgpu_exec;

/* What a chunk's header says (h5zgpu_chunk_info). */
typedef struct h5zgpu_info {
    unsigned format_version;
    unsigned codec;            /* codec that wrote the payload: 0 = stored raw, 1, 2 */
    h5zgpu_dtype dtype;
    h5zgpu_mode mode;
    double eb;                 /* the bound the caller asked for */
    double eb_abs;             /* the absolute bound applied (REL: eb x range; PWREL: eb) */
    unsigned rank;
    uint64_t dims[H5ZGPU_MAX_RANK];
    int has_fill;
    double fill;
    uint64_t header_len;
    uint64_t payload_len;
    uint64_t raw_len;          /* bytes of the decompressed chunk */
} h5zgpu_info;

/* Largest compressed size of a chunk with these parameters (0 if they are invalid). */
size_t h5zgpu_compress_bound(const h5zgpu_params *p);

/* Host buffers. exec may be NULL: then H5ZGPU_DEVICE decides. */
h5zgpu_status h5zgpu_compress(const h5zgpu_params *p, const void *in, void *out, size_t out_cap,
                              size_t *out_len, const h5zgpu_exec *exec);
h5zgpu_status h5zgpu_decompress(const void *in, size_t in_len, void *out, size_t out_cap,
                                size_t *out_len, const h5zgpu_exec *exec);

/* Device buffers (CUDA builds): d_in and d_out are device pointers; work is ordered on `stream`
 * (a cudaStream_t, or NULL for the legacy default stream); the call waits on that stream only
 * to learn the output size. Workspaces are kept by the library and reused across calls. */
h5zgpu_status h5zgpu_compress_device(const h5zgpu_params *p, const void *d_in, void *d_out,
                                     size_t out_cap, size_t *out_len, int device, void *stream);
h5zgpu_status h5zgpu_decompress_device(const void *d_in, size_t in_len, void *d_out,
                                       size_t out_cap, size_t *out_len, int device, void *stream);

/* Many chunks with the same parameters in one call (host buffers), the same bytes as a call a
 * chunk. On the GPU several chunks are in flight at once (each with its own stream), so their
 * copies, kernels and synchronisations overlap: 8, or 16 chunks of up to 16 MiB of values when
 * the environment's CUDA_DEVICE_MAX_CONNECTIONS (read by CUDA when the process makes its
 * context) gives the streams 16 hardware queues or more. Returns the first failure in chunk
 * order, its message naming the chunk; *done says how many chunks before it were finished
 * (later ones may have been too). */
h5zgpu_status h5zgpu_compress_batch(const h5zgpu_params *p, size_t count, const void *const *in,
                                    void *const *out, const size_t *out_cap, size_t *out_len,
                                    const h5zgpu_exec *exec, size_t *done);
h5zgpu_status h5zgpu_decompress_batch(size_t count, const void *const *in, const size_t *in_len,
                                      void *const *out, const size_t *out_cap, size_t *out_len,
                                      const h5zgpu_exec *exec, size_t *done);

/* The same with device buffers (CUDA builds) on one device. Fixed-length chunks with an error
 * bound (codec 1, modes ABS, REL, PWREL) are coded together: groups of up to 128 MiB of values,
 * each in one pass of launches (a few groups at once); so are Huffman chunks (codec 2, the same
 * modes) of up to 8 MiB of values, in groups of up to 64 MiB and 64 chunks, each stage launched
 * once for a group's chunks of one shape (decompressing: of one shape, predictor, radius, stream
 * kernel, mode and format grid, whose payloads start 4-aligned). Other chunks go 8 or 16 in flight
 * as above, each on its own workspace stream. Either way the work waits for work the caller queued
 * on the legacy default stream, and the call returns when every output is ready. */
h5zgpu_status h5zgpu_compress_device_batch(const h5zgpu_params *p, size_t count,
                                           const void *const *d_in, void *const *d_out,
                                           const size_t *out_cap, size_t *out_len, int device,
                                           size_t *done);
h5zgpu_status h5zgpu_decompress_device_batch(size_t count, const void *const *d_in,
                                             const size_t *in_len, void *const *d_out,
                                             const size_t *out_cap, size_t *out_len, int device,
                                             size_t *done);

/* Fixed ratio over many chunks written in batches (a dataset's, or a selection's): the chunks
 * together land near the target where they differ (some all missing, some all data), each an
 * ABS chunk that records its bound, where the filter's fixed ratio brings each chunk alone to
 * the target. h5zgpu_ratio_begin searches a bound for a sample of them, in[0..count-1] (chunks
 * of p's shape and type; a 32nd of them spread over the data is enough), as the filter searches
 * one chunk's (docs/USAGE.md) but over their total size; then b->p holds the parameters of the
 * first batch (with a mode other than H5ZGPU_MODE_RATIO, p: nothing to tune). After each
 * batch, h5zgpu_ratio_account with the batch's compressed sizes moves b->p's bound towards what
 * is left of the budget (total chunks x the chunk's bytes / target). Each batch should be
 * spread over the data too (a run of chunks in a scattered order), eight or more of them. When
 * the sample is exact at any bound (constant or all missing), b->p stays p: each chunk then
 * searches its own. Host buffers (device < 0) are coded on exec; device buffers (device >= 0,
 * CUDA builds) on that GPU. out, out_cap and out_len are scratch for the tries (out_cap[i] >=
 * h5zgpu_compress_bound). The other members are the library's. */
typedef struct h5zgpu_ratio_budget {
    h5zgpu_params p;   /* first: the parameters of the next batch */
    int on;
    double eb, size, slope;   /* the sample's model: size bytes a chunk at bound eb */
    double level;             /* log of the batches' bytes over the model's */
    double made, want;        /* bytes written, and what the target allows */
    uint64_t done, total, batches;
} h5zgpu_ratio_budget;

h5zgpu_status h5zgpu_ratio_begin(const h5zgpu_params *p, uint64_t total, size_t count,
                                 const void *const *in, void *const *out, const size_t *out_cap,
                                 size_t *out_len, int device, const h5zgpu_exec *exec,
                                 h5zgpu_ratio_budget *b);
void h5zgpu_ratio_account(h5zgpu_ratio_budget *b, const size_t *len, size_t count);

/* sizeof(h5zgpu_ratio_budget), for callers of other languages (p is at its start). */
size_t h5zgpu_ratio_budget_size(void);

/* Copies between a C-order host array of dims and packed chunk buffers of chunk_dims (elements
 * of esize bytes), for callers that cut an array into chunks for a batch and place the chunks
 * of a batch back: box k holds n[k x rank ..] elements per axis, at array_pos[k x rank ..] in
 * the array and chunk_pos[k x rank ..] in chunks[k]; gather copies the boxes from the array
 * into the chunks, scatter from the chunks into the array. Every box must lie inside both.
 * The rows are shared among the threads of the CPU path (H5ZGPU_THREADS). */
h5zgpu_status h5zgpu_gather_boxes(const void *array, unsigned rank, const uint64_t *dims,
                                  const uint64_t *chunk_dims, size_t esize, size_t count,
                                  const uint64_t *array_pos, const uint64_t *chunk_pos,
                                  const uint64_t *n, void *const *chunks);
h5zgpu_status h5zgpu_scatter_boxes(void *array, unsigned rank, const uint64_t *dims,
                                   const uint64_t *chunk_dims, size_t esize, size_t count,
                                   const uint64_t *array_pos, const uint64_t *chunk_pos,
                                   const uint64_t *n, const void *const *chunks);

/* Host memory for chunk buffers that the batch calls copy straight to and from the GPU
 * (page-locked when H5ZGPU_DEVICE resolves to a GPU, else ordinary), such as the chunks
 * h5zgpu_gather_boxes cuts for h5zgpu_compress_batch: without it each chunk passes through the
 * library's staging buffer. Allocating page-locked memory is slow (tens of ms for 64 MiB):
 * keep it. NULL when there is no memory; free with h5zgpu_free_host. */
void *h5zgpu_alloc_host(size_t n);
void h5zgpu_free_host(void *p);

/* Reads and validates a chunk header. */
h5zgpu_status h5zgpu_chunk_info(const void *in, size_t in_len, h5zgpu_info *info);

/* Checks parameters without compressing; on failure h5zgpu_last_error() says what is wrong. */
h5zgpu_status h5zgpu_params_check(const h5zgpu_params *p);

/* Checks an executor (NULL: the one H5ZGPU_DEVICE names) without running anything: a valid
 * kind and device, and, when it requires the GPU, a usable one. On failure h5zgpu_last_error()
 * says why. */
h5zgpu_status h5zgpu_exec_check(const h5zgpu_exec *exec);

/* 1 if a CUDA device can be used by this build, else 0. */
int h5zgpu_gpu_available(void);

const char *h5zgpu_status_string(h5zgpu_status s);
/* The message of this thread's last failure (never NULL). */
const char *h5zgpu_last_error(void);
const char *h5zgpu_version(void);

/* The parameters the HDF5 filter applies to each chunk of a dataset, from the n cd_values HDF5
 * stores for it (the user's values followed by set_local's; docs/FILTER.md), and the dataset's
 * byte order (*big_endian). A program writing finished chunks with H5Dwrite_chunk compresses
 * its chunks in native byte order with these parameters and gets the filter's bytes. */
h5zgpu_status h5zgpu_params_from_cd_values(size_t n, const unsigned *cd, h5zgpu_params *p,
                                           int *big_endian);

/* cd_values <-> error bound: the bound travels as the two 32-bit halves of its binary64
 * pattern, low word first (docs/FILTER.md). */
void h5zgpu_eb_to_words(double eb, unsigned *lo, unsigned *hi);
double h5zgpu_eb_from_words(unsigned lo, unsigned hi);

#ifdef __cplusplus
}
#endif
#endif
