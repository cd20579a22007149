/* The CPU passes of the quality metrics (the reference the GPU's agree with): each fills the
 * sums of sums.h over its pattern, on OpenMP's threads where the build has it. */
#ifndef H5ZGPU_QUALITY_CPU_H
#define H5ZGPU_QUALITY_CPU_H

#include "sums.h"

#define HQ_STR(...) #__VA_ARGS__
#ifdef _OPENMP
#define HQ_OMP(...) _Pragma(HQ_STR(__VA_ARGS__))
#else
#define HQ_OMP(...)
#endif

void hq_point_cpu(const hq_view *v, uint64_t n, hq_point_sums *s);
void hq_spread_cpu(const hq_view *v, uint64_t n, const hq_spread_in *in, hq_spread_sums *s);
void hq_stencil_cpu(const hq_view *v, const hq_shape *g, hq_stencil_sums *s);

/* SSIM's sum over the windows holding only finite values, and their count; -1 when memory runs
 * out. */
int hq_ssim_cpu(const hq_view *v, const hq_ssim_in *in, double *sum, uint64_t *windows);

#endif
