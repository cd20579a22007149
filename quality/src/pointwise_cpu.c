/* The point-wise and stencil passes on the CPU: each thread folds its share of the points into
 * its own sums (sums.h, the functions the GPU's kernels call), then the threads' sums merge. */
#include "cpu.h"

#include <math.h>
#include <string.h>

void hq_point_cpu(const hq_view *v, uint64_t n, hq_point_sums *s)
{
    hq_point_init(s);
    HQ_OMP(omp parallel)
    {
        hq_point_sums mine;
        hq_point_init(&mine);
        HQ_OMP(omp for schedule(static))
        for (uint64_t i = 0; i < n; i++)
            hq_point_add(v, i, &mine);
        HQ_OMP(omp critical)
        hq_point_merge(s, &mine);
    }
}

void hq_spread_cpu(const hq_view *v, uint64_t n, const hq_spread_in *in, hq_spread_sums *s)
{
    memset(s, 0, sizeof *s);
    HQ_OMP(omp parallel)
    {
        hq_spread_acc mine = {0};
        uint64_t hist[HQ_BINS] = {0};
        HQ_OMP(omp for schedule(static))
        for (uint64_t i = 0; i < n; i++) {
            int bin = hq_spread_add(v, i, n, in, &mine);
            if (bin >= 0)
                hist[bin]++;
        }
        HQ_OMP(omp critical)
        {
            hq_spread_merge(&s->acc, &mine);
            for (int k = 0; k < HQ_BINS; k++)
                s->hist[k] += hist[k];
        }
    }
}

void hq_stencil_cpu(const hq_view *v, const hq_shape *g, hq_stencil_sums *s)
{
    uint64_t n = g->rank ? g->dims[0] * g->stride[0] : 0;
    hq_stencil_init(s);
    HQ_OMP(omp parallel)
    {
        hq_stencil_sums mine;
        hq_stencil_init(&mine);
        HQ_OMP(omp for schedule(static))
        for (uint64_t i = 0; i < n; i++)
            hq_stencil_add(v, i, g, &mine);
        HQ_OMP(omp critical)
        hq_stencil_merge(s, &mine);
    }
}
