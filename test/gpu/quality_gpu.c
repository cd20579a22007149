/* The quality metrics on the GPU against the CPU reference, on every pair of quality_pairs.c:
 * host arrays and device arrays, every pattern, counts and the error histogram exactly, every
 * other metric within 1e-6 relative (the passes sum in other orders). Skips (77) without a GPU. */
#include "h5zgpu_quality.h"
#include "quality_pairs.h"
#include "util.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Within 1e-6 relative, or within `floor` where both are near 0 (a sum of signed errors). */
static int agree(double x, double y, double floor)
{
    return (isnan(x) && isnan(y)) || x == y ||
           fabs(x - y) <= fmax(1e-6 * fmax(fabs(x), fabs(y)), floor);
}

static void expect_agree(const char *label, const h5zgpu_quality *g, const h5zgpu_quality *c)
{
    tu_expect(g->elements == c->elements && g->finite == c->finite &&
                  g->nonfinite_mismatch == c->nonfinite_mismatch && g->missing == c->missing &&
                  g->missing_mismatch == c->missing_mismatch,
              "%s: counts differ (finite %llu / %llu, missing %llu / %llu)", label,
              (unsigned long long)g->finite, (unsigned long long)c->finite,
              (unsigned long long)g->missing, (unsigned long long)c->missing);
    /* the mean error sums signed errors: near 0 its last digits are rounding */
    double floor = 1e-12 * fmax(1, c->max_abs_error);
    for (size_t k = 0; k < tq_metrics(); k++)
        tu_expect(agree(tq_metric(g, k), tq_metric(c, k), floor), "%s: %s GPU %.17g, CPU %.17g",
                  label, tq_metric_name(k), tq_metric(g, k), tq_metric(c, k));
    for (int k = 0; k < H5ZGPU_QUALITY_LAGS; k++)
        tu_expect(agree(g->autocorrelation[k], c->autocorrelation[k], 1e-9),
                  "%s: autocorrelation[%d] GPU %.17g, CPU %.17g", label, k, g->autocorrelation[k],
                  c->autocorrelation[k]);
    tu_expect(memcmp(g->error_histogram, c->error_histogram, sizeof g->error_histogram) == 0,
              "%s: the error histograms differ", label);
}

/* h5zgpu_power_spectrum of A on the GPU (host and device array) against the CPU's. */
static void spectra(const tq_pair *p)
{
    size_t n = (size_t)p->dims[0], bytes = n * n * n * tu_esize(p->dtype);
    double *pc = malloc(sizeof(double) * (n / 2 + 1) * 3), *pg = pc + n / 2 + 1,
           *pd = pg + n / 2 + 1;
    h5zgpu_quality_options cpu = {.exec = {H5ZGPU_EXEC_CPU, 0}}, gpu = cpu;
    gpu.exec.kind = H5ZGPU_EXEC_GPU;
    h5zgpu_status sc = h5zgpu_power_spectrum(p->a, p->dtype, 3, p->dims, &cpu, pc);
    h5zgpu_status sg = h5zgpu_power_spectrum(p->a, p->dtype, 3, p->dims, &gpu, pg);
    void *da = NULL;
    h5zgpu_status sd = H5ZGPU_E_DEVICE;
    if (cudaMalloc(&da, bytes) == cudaSuccess &&
        cudaMemcpy(da, p->a, bytes, cudaMemcpyHostToDevice) == cudaSuccess) {
        gpu.device_pointers = 1;
        sd = h5zgpu_power_spectrum(da, p->dtype, 3, p->dims, &gpu, pd);
    }
    cudaFree(da);
    tu_expect(sg == sc && sd == sc, "%s: spectrum statuses CPU %d, GPU %d, device array %d",
              p->name, (int)sc, (int)sg, (int)sd);
    double top = 0;   /* shells far below the strongest hold rounding of the transform */
    for (size_t k = 0; sc == H5ZGPU_OK && k <= n / 2; k++)
        top = fmax(top, pc[k]);
    for (size_t k = 0; sc == H5ZGPU_OK && sg == sc && sd == sc && k <= n / 2; k++)
        tu_expect(agree(pg[k], pc[k], 1e-12 * top) && agree(pd[k], pc[k], 1e-12 * top),
                  "%s: P(%zu) GPU %.17g, device array %.17g, CPU %.17g", p->name, k, pg[k], pd[k],
                  pc[k]);
    free(pc);
}

int main(void)
{
    if (!h5zgpu_gpu_available()) {
        printf("quality_gpu: skipped: no usable GPU (it runs on the GPU machine)\n");
        return 77;
    }
    for (int k = 0; k < tq_count(); k++) {
        tq_pair p;
        tu_expect(tq_make(k, &p) == 0, "pair %d: the codec failed", k);
        h5zgpu_quality_options cpu = {.exec = {H5ZGPU_EXEC_CPU, 0}, .has_missing = p.has_missing,
                                      .missing = -1e34};
        h5zgpu_quality_options gpu = cpu;
        gpu.exec.kind = H5ZGPU_EXEC_GPU;
        for (unsigned skip = 0; skip <= H5ZGPU_QUALITY_ALL; skip += H5ZGPU_QUALITY_ALL) {
            cpu.skip = gpu.skip = skip;
            h5zgpu_quality c, g, d;
            tu_expect(h5zgpu_quality_compute(p.a, p.b, p.dtype, p.rank, p.dims, &cpu, &c) ==
                              H5ZGPU_OK &&
                          h5zgpu_quality_compute(p.a, p.b, p.dtype, p.rank, p.dims, &gpu, &g) ==
                              H5ZGPU_OK,
                      "%s: %s", p.name, h5zgpu_last_error());
            tu_expect(g.executor == H5ZGPU_EXEC_GPU, "%s: not on the GPU", p.name);
            char label[200];
            snprintf(label, sizeof label, "%s, skip %u, host arrays", p.name, skip);
            expect_agree(label, &g, &c);

            size_t bytes = (size_t)c.elements * tu_esize(p.dtype);
            void *da = NULL, *db = NULL;
            int staged = cudaMalloc(&da, bytes ? bytes : 1) == cudaSuccess &&
                         cudaMalloc(&db, bytes ? bytes : 1) == cudaSuccess &&
                         cudaMemcpy(da, p.a, bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
                         cudaMemcpy(db, p.b, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
            tu_expect(staged, "%s: device arrays", p.name);
            h5zgpu_quality_options dev = gpu;
            dev.device_pointers = 1;
            tu_expect(staged && h5zgpu_quality_compute(da, db, p.dtype, p.rank, p.dims, &dev,
                                                       &d) == H5ZGPU_OK,
                      "%s: device arrays: %s", p.name, h5zgpu_last_error());
            snprintf(label, sizeof label, "%s, skip %u, device arrays", p.name, skip);
            if (staged)
                expect_agree(label, &d, &c);
            cudaFree(da);
            cudaFree(db);
            if (skip == 0)
                printf("%-50s PSNR %8.3f SSIM %.9f Pearson %.12f laplacian %8.3f\n", p.name,
                       g.psnr, g.ssim, g.pearson, g.laplacian_psnr);
        }
        if (p.rank == 3 && p.dims[0] == p.dims[1] && p.dims[1] == p.dims[2])
            spectra(&p);
        tq_free(&p);
    }
    h5zgpu_quality_release();
    return tu_done("quality_gpu");
}
