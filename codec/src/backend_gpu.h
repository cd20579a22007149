/* The CUDA backend's C ABI, implemented in cuda/ and linked when the build has CUDA
 * (H5ZGPU_HAVE_CUDA). Pointers flagged *_dev are device memory, the others host memory.
 * Every function returns a status and never aborts; a failure leaves the device usable. Device
 * memory held by the workspaces stays within H5ZGPU_GPU_MEMORY_LIMIT (docs/USAGE.md): a call
 * that needs more fails with H5ZGPU_E_DEVICE before allocating. */
#ifndef H5ZGPU_BACKEND_GPU_H
#define H5ZGPU_BACKEND_GPU_H

#include "chunk.h"
#include "fixed_common.h"
#include "h5zgpu.h"
#include "huff_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hf_trace;

/* Number of usable CUDA devices; 0 when there is no driver, no device or initialisation fails. */
int hzc_device_count(void);

/* Page-locked host memory (h5zgpu_alloc_host), NULL when CUDA gives none; hzc_host_free frees
 * it and returns 1, or returns 0 for memory CUDA did not lock (the caller's to free). */
void *hzc_host_alloc(size_t n);
int hzc_host_free(void *p);

/* Whether the calling thread's waits for the GPU sleep (on) or wait as CUDA does by default,
 * spinning where the cores allow: a batch's threads (codec/src/batch.c) set it. */
void hzc_set_sleeping_waits(int on);

/* One encoding: the chunk's parameters as the codec applies them, where its values are and
 * where its payload goes. Pointers flagged *_dev are device memory, the others host memory. */
typedef struct hzc_encode_args {
    h5zgpu_mode mode;
    double eb;
    int is_f32;
    int keep;             /* the dataset may hold interpolated values (qz_quant) */
    unsigned radius;      /* Huffman: 2..HF_RADIUS_MAX */
    int has_fill;         /* with fill_bits: the declared fill value (qz_choose_fill) */
    uint64_t fill_bits;
    const void *in;
    int in_dev;
    uint8_t *out;
    int out_dev;
    uint64_t fill_shift;  /* the payload starts this far past out when the chunk holds fill */
    uint64_t cap;         /* payload bytes out may take */
    int device;
    void *stream;
    /* tests (gpu_stages), else NULL: the quantiser the statistics set up, and the Huffman
     * encoder's stages (huff.h) */
    qz_quant *quant;
    struct hf_trace *trace;
} hzc_encode_args;

typedef struct hzc_encode_result {
    uint64_t len;         /* payload bytes */
    double eb_abs;        /* the bound applied */
    uint32_t sum;         /* checksum sum of the payload (hz_sum) */
    int held_fill;        /* some element is fill: the payload starts fill_shift past out */
    uint64_t fill_bits;   /* then the chunk's fill value (qz_choose_fill) */
} hzc_encode_result;

/* One decoding: the chunk's header and where its payload (h->payload_len bytes) and values
 * are. */
typedef struct hzc_decode_args {
    const hz_header *h;
    const uint8_t *in;
    int in_dev;
    void *out;
    int out_dev;
    int device;
    void *stream;
} hzc_decode_args;

/* Fixed-length payload, statistics, quantiser and encoding all on the device. The chunk is
 * coded with the fill layout only when it holds fill elements (r->held_fill and fill_bits, set
 * even when the payload does not fit). H5ZGPU_E_OUTPUT_TOO_SMALL when the payload needs more
 * than a->cap. */
h5zgpu_status hzc_fixed_encode(const fl_geom *g, const hzc_encode_args *a, hzc_encode_result *r);

/* The fixed-length payloads of count chunks of the geometry g in one pass of launches: chunk i's
 * values at in[i], its payload to out[i] (a->fill_shift further when it holds fill); a->in,
 * a->out, a->quant and a->trace are not used. each[i] is H5ZGPU_OK or H5ZGPU_E_OUTPUT_TOO_SMALL
 * (chunk i's payload needs more than a->cap; r[i].held_fill and fill_bits are set either way);
 * any other status fails the whole batch. */
h5zgpu_status hzc_fixed_encode_batch(const fl_geom *g, const hzc_encode_args *a, unsigned count,
                                     const void *const *in, uint8_t *const *out,
                                     hzc_encode_result *r, h5zgpu_status *each);

/* The fixed-length payloads of count chunks of the geometry g (headers h[i], one element type)
 * at pay[i] decoded into out[i], all in device memory (dev) or all in host memory, in one
 * pass of launches. each[i]: H5ZGPU_OK with sum[i] the checksum sum of its payload, or
 * H5ZGPU_E_CORRUPT; any other status fails the whole batch. */
h5zgpu_status hzc_fixed_decode_batch(const fl_geom *g, unsigned count, const hz_header *h,
                                     const void *const *pay, int dev, void *const *out,
                                     int device, uint32_t *sum, h5zgpu_status *each);

/* Huffman payload, the same bytes as hf_encode_cpu, with the same contract; on
 * H5ZGPU_E_OUTPUT_TOO_SMALL nothing is written to a->out. */
h5zgpu_status hzc_huff_encode(const hf_geom *g, const hzc_encode_args *a, hzc_encode_result *r);

/* The Huffman payloads of count chunks of the geometry g in one pass of launches a coded shape
 * (the axis orders may permute a chunk), the same bytes as hzc_huff_encode: chunk i's values at
 * in[i] and its payload to out[i] (a->fill_shift further when it holds fill), all in device
 * memory, out[i] and a->fill_shift multiples of 4; a->in, a->out, a->quant and a->trace are not
 * used. each[i] is H5ZGPU_OK or H5ZGPU_E_OUTPUT_TOO_SMALL (chunk i's payload needs more than
 * a->cap, and nothing was written; r[i].held_fill and fill_bits are set either way); any other
 * status fails the whole batch. */
h5zgpu_status hzc_huff_encode_batch(const hf_geom *g, const hzc_encode_args *a, unsigned count,
                                    const void *const *in, uint8_t *const *out,
                                    hzc_encode_result *r, h5zgpu_status *each);

/* The Huffman payloads of count chunks of the geometry g (headers h[i], one element type) at
 * pay[i] decoded into out[i], all in device memory: those whose payloads start 4-aligned in
 * passes of launches, one for each coded shape, predictor, radius, stream kernel, mode and
 * format grid, the others a call each.
 * each[i]: H5ZGPU_OK with sum[i] the checksum sum of its payload, or H5ZGPU_E_CORRUPT (or what
 * the head's parsing found); any other status fails the whole batch. */
h5zgpu_status hzc_huff_decode_batch(const hf_geom *g, unsigned count, const hz_header *h,
                                    const void *const *pay, void *const *out, int device,
                                    uint32_t *sum, h5zgpu_status *each);

/* Decodes the payload into the chunk's elements; H5ZGPU_E_CORRUPT on any invalid length, code or
 * offset (what the CPU decoders reject). *sum is the checksum sum of the payload, for the caller
 * to check. */
h5zgpu_status hzc_fixed_decode(const fl_geom *g, const hzc_decode_args *a, uint32_t *sum);
h5zgpu_status hzc_huff_decode(const hf_geom *g, const hzc_decode_args *a, uint32_t *sum);

/* Checksum sum (hz_sum) of n bytes of device memory. */
h5zgpu_status hzc_sum(const void *p_dev, uint64_t n, uint32_t *sum, int device, void *stream);

/* Item i's len[i] bytes (at most stride) from host memory src + i * stride to device memory
 * dst[i], for count items in one launch; returns after it is done. */
h5zgpu_status hzc_put_many(unsigned count, const uint8_t *src, uint64_t stride,
                           const size_t *len, uint8_t *const *dst, int device);

/* The reverse: len[i] bytes (at most stride) from device memory src[i] to host memory
 * dst + i * stride. */
h5zgpu_status hzc_get_many(unsigned count, const void *const *src, const size_t *len,
                           uint8_t *dst, uint64_t stride, int device);

/* Stream-ordered copy between any two of host and device memory; returns after it is done. */
h5zgpu_status hzc_copy(void *dst, int dst_dev, const void *src, int src_dev, uint64_t n,
                       int device, void *stream);

#ifdef __cplusplus
}
#endif
#endif
