/* The quality library's contract on the CPU: a declared missing value is left out exactly as
 * NaN would be, skipped patterns leave their metrics NaN and the others unchanged, an exact copy
 * scores as exact, arguments out of range are refused. (Each metric's value against an
 * independent NumPy computation: python_tests/test_check_metrics.py; the GPU against this CPU:
 * test/gpu/quality_gpu.c.) */
#include "h5zgpu_quality.h"
#include "quality_pairs.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const h5zgpu_quality_options CPU = {.exec = {H5ZGPU_EXEC_CPU, 0}};

static int close_to(double x, double y, double rel)
{
    return (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= rel * fmax(fabs(x), fabs(y));
}

/* Every metric of got equal to want's within rel (NaN to NaN). */
static void expect_same(const char *label, const h5zgpu_quality *got, const h5zgpu_quality *want,
                        double rel)
{
    for (size_t k = 0; k < tq_metrics(); k++)
        tu_expect(close_to(tq_metric(got, k), tq_metric(want, k), rel), "%s: %s %.17g, want %.17g",
                  label, tq_metric_name(k), tq_metric(got, k), tq_metric(want, k));
    for (int k = 0; k < H5ZGPU_QUALITY_LAGS; k++)
        tu_expect(close_to(got->autocorrelation[k], want->autocorrelation[k], rel),
                  "%s: autocorrelation[%d] %.17g, want %.17g", label, k, got->autocorrelation[k],
                  want->autocorrelation[k]);
    tu_expect(memcmp(got->error_histogram, want->error_histogram, sizeof got->error_histogram) ==
                  0,
              "%s: the error histograms differ", label);
}

/* The missing value declared against the same points turned NaN in both arrays. */
static void missing_as_nan(const tq_pair *p, const h5zgpu_quality *declared)
{
    uint64_t n = 1;
    for (unsigned d = 0; d < p->rank; d++)
        n *= p->dims[d];
    size_t es = tu_esize(p->dtype);
    void *a = malloc(n * es), *b = malloc(n * es);
    memcpy(a, p->a, n * es);
    memcpy(b, p->b, n * es);
    uint64_t masked = 0;
    for (uint64_t i = 0; i < n; i++)
        if (tu_get(p->dtype, a, i) == -1e34 || (p->dtype == H5ZGPU_FLOAT32 &&
                                                tu_get(p->dtype, a, i) == (double)-1e34f)) {
            tu_put(p->dtype, a, i, NAN);
            tu_put(p->dtype, b, i, NAN);
            masked++;
        }
    h5zgpu_quality q;
    tu_expect(h5zgpu_quality_compute(a, b, p->dtype, p->rank, p->dims, &CPU, &q) == H5ZGPU_OK,
              "%s: masked copy", p->name);
    tu_expect(masked > 0 && declared->missing == masked && q.missing == 0 &&
                  declared->finite == q.finite,
              "%s: %llu missing declared, %llu masked, finite %llu / %llu", p->name,
              (unsigned long long)declared->missing, (unsigned long long)masked,
              (unsigned long long)declared->finite, (unsigned long long)q.finite);
    expect_same(p->name, declared, &q, 1e-12);
    free(a);
    free(b);
}

/* Each pattern skipped alone: its metrics NaN, the rest as in the full run. */
static void skips(const tq_pair *p, const h5zgpu_quality_options *opt, const h5zgpu_quality *all)
{
    static const unsigned flags[] = {H5ZGPU_QUALITY_STATISTICS, H5ZGPU_QUALITY_STENCILS,
                                     H5ZGPU_QUALITY_SSIM, H5ZGPU_QUALITY_SPECTRUM,
                                     H5ZGPU_QUALITY_ALL};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        h5zgpu_quality_options o = *opt;
        o.skip = flags[f];
        h5zgpu_quality q, want = *all;
        tu_expect(h5zgpu_quality_compute(p->a, p->b, p->dtype, p->rank, p->dims, &o, &q) ==
                      H5ZGPU_OK,
                  "%s: skip %u", p->name, flags[f]);
        if (flags[f] & H5ZGPU_QUALITY_STATISTICS) {
            want.mean_error = want.min_error = want.max_error = want.snr = want.pearson = NAN;
            for (int k = 0; k < H5ZGPU_QUALITY_LAGS; k++)
                want.autocorrelation[k] = NAN;
            memset(want.error_histogram, 0, sizeof want.error_histogram);
        }
        if (flags[f] & H5ZGPU_QUALITY_STENCILS)
            want.derivative_psnr = want.second_derivative_psnr = want.laplacian_psnr = NAN;
        if (flags[f] & H5ZGPU_QUALITY_SSIM)
            want.ssim = NAN;
        if (flags[f] & H5ZGPU_QUALITY_SPECTRUM) {
            want.pk_max_deviation = NAN;
            tu_expect(q.pk_status == H5ZGPU_PK_SKIPPED, "%s: the spectrum not skipped", p->name);
        }
        char label[160];
        snprintf(label, sizeof label, "%s, skip %u", p->name, flags[f]);
        expect_same(label, &q, &want, 1e-12);
    }
}

static void refusals(const tq_pair *p)
{
    h5zgpu_quality q;
    h5zgpu_quality_options bad = CPU;
    bad.skip = 16;
    tu_expect(h5zgpu_quality_compute(p->a, p->b, p->dtype, 0, p->dims, &CPU, &q) ==
                  H5ZGPU_E_INVALID_ARG,
              "rank 0 accepted");
    tu_expect(h5zgpu_quality_compute(p->a, p->b, (h5zgpu_dtype)3, p->rank, p->dims, &CPU, &q) ==
                  H5ZGPU_E_UNSUPPORTED,
              "element type 3 accepted");
    tu_expect(h5zgpu_quality_compute(p->a, p->b, p->dtype, p->rank, p->dims, &bad, &q) ==
                  H5ZGPU_E_INVALID_ARG,
              "an unknown skip flag accepted");
    tu_expect(h5zgpu_quality_compute(NULL, p->b, p->dtype, p->rank, p->dims, &CPU, &q) ==
                  H5ZGPU_E_INVALID_ARG,
              "a NULL array accepted");
    h5zgpu_quality_options dev = CPU;
    dev.device_pointers = 1;
    tu_expect(h5zgpu_quality_compute(p->a, p->b, p->dtype, p->rank, p->dims, &dev, &q) ==
                  H5ZGPU_E_DEVICE,
              "device pointers accepted on the CPU");
    double pk[64];
    tu_expect(h5zgpu_power_spectrum(p->a, p->dtype, p->rank, p->dims, &CPU, pk) ==
                  H5ZGPU_E_INVALID_ARG,
              "the spectrum of a field that is not cubic");
    if (!h5zgpu_gpu_available()) {
        h5zgpu_quality_options gpu = {.exec = {H5ZGPU_EXEC_GPU, 0}};
        tu_expect(h5zgpu_quality_compute(p->a, p->b, p->dtype, p->rank, p->dims, &gpu, &q) ==
                      H5ZGPU_E_DEVICE,
                  "the GPU required without one: not refused");
    }
}

int main(void)
{
    for (int k = 0; k < tq_count(); k++) {
        tq_pair p;
        tu_expect(tq_make(k, &p) == 0, "pair %d: the codec failed", k);
        h5zgpu_quality_options opt = CPU;
        opt.has_missing = p.has_missing;
        opt.missing = -1e34;
        h5zgpu_quality q;
        tu_expect(h5zgpu_quality_compute(p.a, p.b, p.dtype, p.rank, p.dims, &opt, &q) ==
                      H5ZGPU_OK,
                  "%s: %s", p.name, h5zgpu_last_error());
        tu_expect(q.executor == H5ZGPU_EXEC_CPU, "%s: not on the CPU", p.name);
        if (p.has_missing)
            missing_as_nan(&p, &q);
        skips(&p, &opt, &q);
        if (memcmp(p.a, p.b, (size_t)q.elements * tu_esize(p.dtype)) == 0)   /* exact copy */
            tu_expect(q.max_abs_error == 0 && isinf(q.psnr) && q.pearson == 1 &&
                          fabs(q.ssim - 1) < 1e-12 && q.error_histogram[0] == q.finite &&
                          isinf(q.derivative_psnr) && isinf(q.laplacian_psnr),
                      "%s: not exact (PSNR %g, Pearson %.17g, SSIM %.17g)", p.name, q.psnr,
                      q.pearson, q.ssim);
        else
            /* -1: every window meets a NaN, an Inf or the largest finite value (TU_MASKED) */
            tu_expect(q.max_abs_error >= 0 && q.psnr > 20 &&
                          ((q.ssim > 0.5 && q.ssim <= 1) || q.ssim == -1),
                      "%s: PSNR %g, SSIM %.17g", p.name, q.psnr, q.ssim);
        if (k == 0)
            refusals(&p);
        tq_free(&p);
    }
    return tu_done("quality_api");
}
