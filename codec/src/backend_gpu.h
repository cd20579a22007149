/* The CUDA backend's C ABI, implemented in cuda/ and linked when the build has CUDA
 * (H5ZGPU_HAVE_CUDA). Pointers flagged *_dev are device memory, the others host memory.
 * Every function returns a status and never aborts; a failure leaves the device usable. Device
 * memory held by the workspaces stays within H5ZGPU_GPU_MEMORY_LIMIT (docs/USAGE.md): a call
 * that needs more fails with H5ZGPU_E_DEVICE before allocating. */
#ifndef H5ZGPU_BACKEND_GPU_H
#define H5ZGPU_BACKEND_GPU_H

#include "fixed_common.h"
#include "h5zgpu.h"
#include "huff_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices; 0 when there is no driver, no device or initialisation fails. */
int hzc_device_count(void);

/* Fixed-length payload (the bytes after the chunk header), statistics, quantiser and encoding
 * all on the device. With has_fill, elements whose bits equal fill_bits are fill; the chunk is
 * coded with the fill layout only when it holds some (*held_fill = 1), and its payload then
 * starts fill_shift bytes past out (the header's fill value lies between). Writes at most cap
 * payload bytes; H5ZGPU_E_OUTPUT_TOO_SMALL when the payload needs more (*held_fill is set even
 * then). keep: the dataset may hold interpolated values (qz_quant). On success *len is the
 * payload size, *eb_abs the bound applied and *sum the checksum sum of the payload (hz_sum). */
h5zgpu_status hzc_fixed_encode(const fl_geom *g, h5zgpu_mode mode, double eb, int is_f32,
                               int keep, int has_fill, uint64_t fill_bits, const void *in,
                               int in_dev, uint8_t *out, int out_dev, uint64_t fill_shift,
                               uint64_t cap,
                               uint64_t *len, double *eb_abs, uint32_t *sum, int *held_fill,
                               int device, void *stream);

/* Decodes a payload of len bytes into the chunk's elements (version, mode, eb_abs: the chunk
 * header's; has_fill its fill flag, fill_bits its value); H5ZGPU_E_CORRUPT on any invalid length, code or offset. *sum is
 * the checksum sum of the payload, for the caller to check. */
h5zgpu_status hzc_fixed_decode(const fl_geom *g, unsigned version, h5zgpu_mode mode,
                               double eb_abs, int is_f32, int has_fill, uint64_t fill_bits,
                               const uint8_t *in, int in_dev, uint64_t len, void *out,
                               int out_dev, uint32_t *sum, int device, void *stream);

/* Huffman payload (codec 2) with radius 2..HF_RADIUS_MAX, all on the device, the same bytes as
 * hf_encode_cpu; fill, cap and the results as hzc_fixed_encode. On H5ZGPU_E_OUTPUT_TOO_SMALL
 * nothing is written to out. */
h5zgpu_status hzc_huff_encode(const hf_geom *g, h5zgpu_mode mode, double eb, int is_f32,
                              int keep, unsigned radius, int has_fill, uint64_t fill_bits,
                              const void *in, int in_dev, uint8_t *out, int out_dev,
                              uint64_t fill_shift, uint64_t cap, uint64_t *len, double *eb_abs,
                              uint32_t *sum, int *held_fill, int device, void *stream);

/* Decodes a Huffman payload of len bytes as hf_decode_cpu does, rejecting what it rejects
 * (H5ZGPU_E_CORRUPT); arguments as hzc_fixed_decode. */
h5zgpu_status hzc_huff_decode(const hf_geom *g, unsigned version, h5zgpu_mode mode,
                              double eb_abs, int is_f32, int has_fill, uint64_t fill_bits,
                              const uint8_t *in, int in_dev, uint64_t len, void *out, int out_dev,
                              uint32_t *sum, int device, void *stream);

/* Checksum sum (hz_sum) of n bytes of device memory. */
h5zgpu_status hzc_sum(const void *p_dev, uint64_t n, uint32_t *sum, int device, void *stream);

/* Stream-ordered copy between any two of host and device memory; returns after it is done. */
h5zgpu_status hzc_copy(void *dst, int dst_dev, const void *src, int src_dev, uint64_t n,
                       int device, void *stream);

#ifdef __cplusplus
}
#endif
#endif
