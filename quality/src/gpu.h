/* The GPU passes of the quality metrics (cuda/quality/metrics.cu), behind a C ABI: the same sums
 * as the CPU passes of cpu.h, on arrays in device memory. Each returns 0, or -1 after recording
 * why (hzq_gpu_error). One caller at a time (quality.c holds a lock). */
#ifndef H5ZGPU_QUALITY_GPU_H
#define H5ZGPU_QUALITY_GPU_H

#include "sums.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes `device` current, its context created (a process's first call pays for it). */
int hzq_gpu_open(int device);

/* Makes `device` current and the arrays device-resident: host arrays (b may be NULL: a alone)
 * are copied into buffers kept for the next call (grown when too small); device arrays are used
 * in place. *da, *db are the device pointers the passes read. */
int hzq_gpu_stage(int device, const void *a, const void *b, size_t bytes, int device_pointers,
                  const void **da, const void **db);

int hzq_gpu_point(const hq_view *v, uint64_t n, hq_point_sums *s);
int hzq_gpu_spread(const hq_view *v, uint64_t n, const hq_spread_in *in, hq_spread_sums *s);
int hzq_gpu_stencil(const hq_view *v, const hq_shape *g, hq_stencil_sums *s);
int hzq_gpu_ssim(const hq_view *v, const hq_ssim_in *in, double *sum, uint64_t *windows);

/* What the last failing call met. */
const char *hzq_gpu_error(void);

/* Frees the staging buffers and partial sums. */
void hzq_gpu_release(void);

#ifdef __cplusplus
}
#endif
#endif
