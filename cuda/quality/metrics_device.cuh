// What the quality passes' files share: the failure record and the partial-sums buffer
// (metrics.cu).
#ifndef H5ZGPU_METRICS_DEVICE_CUH
#define H5ZGPU_METRICS_DEVICE_CUH

#include <cuda_runtime.h>
#include <stddef.h>

// Records what failed and why; returns -1.
int hzq_gpu_fail(cudaError_t e, const char *what);

// A device buffer of at least `bytes` for the CTAs' partial sums, kept across calls; NULL when
// it cannot be had.
void *hzq_gpu_partials(size_t bytes);

#endif
