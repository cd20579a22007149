/* h5zgpu_quality_compute: where the passes run, and the one place their sums become metrics. */
/* clock_gettime is POSIX, outside strict C11 */
#define _POSIX_C_SOURCE 200809L

#include "h5zgpu_quality.h"

#include "cpu.h"
#include "error.h"
#include "executor.h"
#include "spectrum.h"
#ifdef H5ZGPU_HAVE_CUDA_QUALITY
#include "gpu.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SSIM_K1 0.01
#define SSIM_K2 0.03

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One executor's passes: the CPU's, or the GPU's over device-resident arrays. */
typedef struct passes {
    int gpu;
    int (*point)(const hq_view *, uint64_t, hq_point_sums *);
    int (*spread)(const hq_view *, uint64_t, const hq_spread_in *, hq_spread_sums *);
    int (*stencil)(const hq_view *, const hq_shape *, hq_stencil_sums *);
    int (*ssim)(const hq_view *, const hq_ssim_in *, double *, uint64_t *);
} passes;

static int point_cpu(const hq_view *v, uint64_t n, hq_point_sums *s)
{
    hq_point_cpu(v, n, s);
    return 0;
}

static int spread_cpu(const hq_view *v, uint64_t n, const hq_spread_in *in, hq_spread_sums *s)
{
    hq_spread_cpu(v, n, in, s);
    return 0;
}

static int stencil_cpu(const hq_view *v, const hq_shape *g, hq_stencil_sums *s)
{
    hq_stencil_cpu(v, g, s);
    return 0;
}

static const passes cpu_passes = {0, point_cpu, spread_cpu, stencil_cpu, hq_ssim_cpu};
#ifdef H5ZGPU_HAVE_CUDA_QUALITY
static const passes gpu_passes = {1, hzq_gpu_point, hzq_gpu_spread, hzq_gpu_stencil, hzq_gpu_ssim};
#endif
/* The GPU's buffers and the transforms' workspaces serve one call at a time. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double psnr_of(double range, double sq, uint64_t count)
{
    double rmse = sqrt(sq / (double)count);
    return rmse > 0 ? 20 * log10(range / rmse) : INFINITY;
}

static void finish_point(const hq_point_sums *s, h5zgpu_quality *q)
{
    q->finite = s->finite;
    q->nonfinite_mismatch = s->mismatch;
    q->missing = s->missing;
    q->missing_mismatch = s->missing_mismatch;
    q->min = s->a_min;
    q->max = s->a_max;
    q->max_abs_error = s->max_abs;
    q->range = s->finite ? s->a_max - s->a_min : 0;
    q->rmse = s->finite ? sqrt(s->sq / (double)s->finite) : 0;
    q->nrmse = q->range > 0 ? q->rmse / q->range : (q->rmse > 0 ? INFINITY : 0);
    q->max_rel_error = q->range > 0 ? q->max_abs_error / q->range
                                    : (q->max_abs_error > 0 ? INFINITY : 0);
    q->psnr = q->rmse > 0 ? 20 * log10(q->range / q->rmse) : INFINITY;
    q->min_pw_rel = s->rel_n ? s->rel_min : NAN;
    q->max_pw_rel = s->rel_n ? s->rel_max : NAN;
    q->mean_pw_rel = s->rel_n ? s->rel_sum / (double)s->rel_n : NAN;
}

/* The statistics; with no point where both are finite, zeros. */
static int statistics(const passes *x, const hq_view *v, uint64_t n, const hq_point_sums *p,
                      h5zgpu_quality *q)
{
    if (!p->both) {
        q->mean_error = q->min_error = q->max_error = q->snr = q->pearson = 0;
        memset(q->autocorrelation, 0, sizeof q->autocorrelation);
        return 0;
    }
    double count = (double)p->both;
    hq_spread_in in = {p->sum_a / count, p->sum_b / count, p->sum_e / count, p->e_min,
                       (p->e_max - p->e_min) / HQ_BINS};
    hq_spread_sums s;
    if (x->spread(v, n, &in, &s) != 0)
        return -1;
    q->mean_error = in.mean_e;
    q->min_error = p->e_min;
    q->max_error = p->e_max;
    const hq_spread_acc *c = &s.acc;
    q->pearson = c->saa > 0 && c->sbb > 0 ? c->sab / sqrt(c->saa * c->sbb)
                                          : (c->saa == c->sbb ? 1 : 0);
    q->snr = c->see > 0 ? 10 * log10(c->saa / c->see) : INFINITY;
    for (int k = 0; k < HQ_LAGS; k++)
        q->autocorrelation[k] = c->lag_den > 0 ? c->lag_num[k] / c->lag_den : 0;
    memcpy(q->error_histogram, s.hist, sizeof s.hist);
    return 0;
}

static int stencils(const passes *x, const hq_view *v, unsigned rank, const uint64_t *dims,
                    h5zgpu_quality *q)
{
    hq_shape g = {.rank = rank};
    uint64_t stride = 1;
    for (unsigned d = rank; d-- > 0;) {
        g.dims[d] = dims[d];
        g.stride[d] = stride;
        stride *= dims[d];
    }
    hq_stencil_sums s;
    if (x->stencil(v, &g, &s) != 0)
        return -1;
    double *out[3] = {&q->derivative_psnr, &q->second_derivative_psnr, &q->laplacian_psnr};
    for (int o = 0; o < 3; o++)
        *out[o] = s.count[o] ? psnr_of(s.hi[o] - s.lo[o], s.sq[o], s.count[o]) : NAN;
    return 0;
}

/* Ranks above 3 are seen as 3-D, their slowest axes folded into the first. */
static int ssim(const passes *x, const hq_view *v, unsigned rank, const uint64_t *dims,
                double range, h5zgpu_quality *q)
{
    hq_ssim_in in = {.d = {1, 1, 1}};
    for (unsigned i = 0; i < rank; i++)
        in.d[3 - (rank - i < 3 ? rank - i : 3)] *= dims[i];
    for (int k = 0; k < 3; k++)
        in.w[k] = in.d[k] < HQ_SSIM_WINDOW ? in.d[k] : HQ_SSIM_WINDOW;
    in.c1 = (SSIM_K1 * range) * (SSIM_K1 * range);
    in.c2 = (SSIM_K2 * range) * (SSIM_K2 * range);
    double sum = 0;
    uint64_t windows = 0;
    if (in.d[0] * in.d[1] * in.d[2] > 0 && x->ssim(v, &in, &sum, &windows) != 0)
        return -1;
    q->ssim = windows ? sum / (double)windows : -1;
    return 0;
}

/* P(k) of both arrays on the executor's side (the GPU's over its device arrays; the CPU's over
 * the host arrays, `host`, when the GPU has no transform), then their ratio. */
static int spectrum(const passes *x, const hq_view *v, const hq_view *host, unsigned rank,
                    const uint64_t *dims, const h5zgpu_quality_options *o, h5zgpu_quality *q)
{
    if (!hq_transformable(rank, dims) || q->missing) {
        q->pk_status = H5ZGPU_PK_NOT_APPLICABLE;
        return 0;
    }
    size_t n = (size_t)dims[0], shells = n / 2;
    double *pa = malloc(sizeof(double) * (shells + 1) * 2), *pb = pa + shells + 1;
    if (!pa)
        return -1;
    int st = HQ_PK_NO_TRANSFORM;
    if (x->gpu) {
        st = hq_power(v->a, 1, 1, v->f32, n, pa);
        if (st == HQ_PK_OK)
            st = hq_power(v->b, 1, 1, v->f32, n, pb);
    }
    if (st == HQ_PK_NO_TRANSFORM && host) {
        st = hq_power(host->a, 0, 0, v->f32, n, pa);
        if (st == HQ_PK_OK)
            st = hq_power(host->b, 0, 0, v->f32, n, pb);
    }
    q->pk_status = st == HQ_PK_OK             ? H5ZGPU_PK_DONE
                   : st == HQ_PK_NO_TRANSFORM ? H5ZGPU_PK_NO_TRANSFORM
                                              : H5ZGPU_PK_NOT_APPLICABLE;
    if (st == HQ_PK_OK) {
        q->pk_shells = shells;
        q->pk_max_deviation = 0;
        for (size_t k = 1; k <= shells; k++) {   /* k = 0 (the mean) left out */
            double r = pa[k] > 0 ? pb[k] / pa[k] : (pb[k] > 0 ? INFINITY : 1);
            if (o->pk_ratio && k <= o->pk_capacity)
                o->pk_ratio[k - 1] = r;
            if (!o->pk_kmax || k <= o->pk_kmax)
                q->pk_max_deviation = fmax(q->pk_max_deviation, fabs(r - 1));
        }
    }
    free(pa);
    return 0;
}

/* Every pattern asked for, on one executor (host: the host arrays, NULL for device arrays); -1
 * when a pass fails. */
static int run(const passes *x, const hq_view *v, const hq_view *host, unsigned rank,
               const uint64_t *dims, const h5zgpu_quality_options *o, h5zgpu_quality *q)
{
    unsigned patterns = H5ZGPU_QUALITY_ALL & ~o->skip;
    uint64_t n = 1;
    for (unsigned d = 0; d < rank; d++)
        n *= dims[d];
    hq_point_sums p;
    double t0 = now();
    if (x->point(v, n, &p) != 0)
        return -1;
    finish_point(&p, q);
    if ((patterns & H5ZGPU_QUALITY_STATISTICS) && statistics(x, v, n, &p, q) != 0)
        return -1;
    double t1 = now();
    if ((patterns & H5ZGPU_QUALITY_STENCILS) && stencils(x, v, rank, dims, q) != 0)
        return -1;
    double t2 = now();
    if ((patterns & H5ZGPU_QUALITY_SSIM) && ssim(x, v, rank, dims, q->range, q) != 0)
        return -1;
    double t3 = now();
    if ((patterns & H5ZGPU_QUALITY_SPECTRUM) && spectrum(x, v, host, rank, dims, o, q) != 0)
        return -1;
    q->seconds_pointwise = t1 - t0;
    q->seconds_stencils = t2 - t1;
    q->seconds_ssim = t3 - t2;
    q->seconds_spectrum = now() - t3;
    return 0;
}

/* Every metric NaN (those not asked for stay so), the counts 0. */
static void clear(h5zgpu_quality *q, uint64_t n)
{
    double *nan_fields[] = {&q->min, &q->max, &q->range, &q->max_abs_error, &q->max_rel_error,
                            &q->rmse, &q->nrmse, &q->psnr, &q->mean_error, &q->min_error,
                            &q->max_error, &q->min_pw_rel, &q->max_pw_rel, &q->mean_pw_rel,
                            &q->snr, &q->pearson, &q->derivative_psnr,
                            &q->second_derivative_psnr, &q->laplacian_psnr, &q->ssim,
                            &q->pk_max_deviation};
    memset(q, 0, sizeof *q);
    q->elements = n;
    for (size_t i = 0; i < sizeof nan_fields / sizeof nan_fields[0]; i++)
        *nan_fields[i] = NAN;
    for (int k = 0; k < HQ_LAGS; k++)
        q->autocorrelation[k] = NAN;
}

static h5zgpu_status check_args(const void *a, const void *b, h5zgpu_dtype dtype, unsigned rank,
                                const uint64_t *dims, const h5zgpu_quality_options *o,
                                h5zgpu_quality *q)
{
    if (!a || !b || !dims || !q)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "quality: a, b, dims and the result are required");
    if (dtype != H5ZGPU_FLOAT32 && dtype != H5ZGPU_FLOAT64)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "quality: element type %d is not float32 or float64",
                       (int)dtype);
    if (rank < 1 || rank > H5ZGPU_MAX_RANK)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "quality: rank %u is not 1..%d", rank,
                       H5ZGPU_MAX_RANK);
    if (o->skip & ~H5ZGPU_QUALITY_ALL)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "quality: skip 0x%x has unknown flags", o->skip);
    uint64_t n = 1;
    for (unsigned d = 0; d < rank; d++) {
        if (dims[d] && n > UINT64_MAX / 8 / dims[d])
            return hz_fail(H5ZGPU_E_INVALID_ARG, "quality: the shape overflows 64 bits");
        n *= dims[d];
    }
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_quality_compute(const void *a, const void *b, h5zgpu_dtype dtype,
                                     unsigned rank, const uint64_t *dims,
                                     const h5zgpu_quality_options *opt, h5zgpu_quality *q)
{
    h5zgpu_quality_options o = {0};
    if (opt)
        o = *opt;
    h5zgpu_status st = check_args(a, b, dtype, rank, dims, &o, q);
    if (st != H5ZGPU_OK)
        return st;
    hq_view v = {a, b, dtype == H5ZGPU_FLOAT32, o.has_missing, 0};
    if (v.f32) {
        float m = (float)o.missing;
        uint32_t u;
        memcpy(&u, &m, 4);
        v.missing_bits = u;
    } else {
        memcpy(&v.missing_bits, &o.missing, 8);
    }
    uint64_t n = 1;
    for (unsigned d = 0; d < rank; d++)
        n *= dims[d];
    clear(q, n);

    hz_target t;
    st = hz_resolve(o.exec.kind == H5ZGPU_EXEC_AUTO ? NULL : &o.exec, &t);
    if (st != H5ZGPU_OK)
        return st;
    if (o.device_pointers && !t.gpu)
        return hz_fail(H5ZGPU_E_DEVICE, "quality: device arrays need a usable GPU");
#ifdef H5ZGPU_HAVE_CUDA_QUALITY
    if (t.gpu) {
        pthread_mutex_lock(&lock);
        hq_view dv = v;
        double t0 = now();
        int rc = hzq_gpu_open(t.device);
        double t1 = now();
        if (rc == 0)
            rc = hzq_gpu_stage(t.device, a, b, (size_t)n * (v.f32 ? 4 : 8), o.device_pointers,
                               &dv.a, &dv.b);
        double t2 = now();
        if (rc == 0)
            rc = run(&gpu_passes, &dv, o.device_pointers ? NULL : &v, rank, dims, &o, q);
        pthread_mutex_unlock(&lock);
        if (rc == 0) {
            q->executor = H5ZGPU_EXEC_GPU;
            q->seconds_setup = t1 - t0;
            q->seconds_staging = t2 - t1;
            return H5ZGPU_OK;
        }
        if (t.required || o.device_pointers)
            return hz_fail(H5ZGPU_E_DEVICE, "quality on the GPU: %s", hzq_gpu_error());
        hz_note_once(1, "quality on the GPU failed (%s): computing on the CPU", hzq_gpu_error());
        clear(q, n);
    }
#else
    if (o.device_pointers)
        return hz_fail(H5ZGPU_E_DEVICE, "quality: this build has no GPU metrics");
#endif
    q->executor = H5ZGPU_EXEC_CPU;
    pthread_mutex_lock(&lock);
    int rc = run(&cpu_passes, &v, &v, rank, dims, &o, q);
    pthread_mutex_unlock(&lock);
    if (rc != 0)
        return hz_fail(H5ZGPU_E_NOMEM, "quality: no memory for SSIM's or the spectrum's sums");
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_power_spectrum(const void *x, h5zgpu_dtype dtype, unsigned rank,
                                    const uint64_t *dims, const h5zgpu_quality_options *opt,
                                    double *p)
{
    h5zgpu_quality_options o = {0};
    if (opt)
        o = *opt;
    h5zgpu_quality q;
    if (!p)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "power spectrum: p is required");
    h5zgpu_status st = check_args(x, x, dtype, rank, dims, &o, &q);
    if (st != H5ZGPU_OK)
        return st;
    if (!hq_transformable(rank, dims))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "power spectrum: the field is not cubic 3-D");
    if (o.has_missing) {   /* a transform cannot leave a missing point out */
        o.skip = H5ZGPU_QUALITY_ALL;
        st = h5zgpu_quality_compute(x, x, dtype, rank, dims, &o, &q);
        if (st != H5ZGPU_OK)
            return st;
        if (q.missing)
            return hz_fail(H5ZGPU_E_INVALID_ARG, "power spectrum: %llu points are missing",
                           (unsigned long long)q.missing);
    }
    hz_target t;
    if ((st = hz_resolve(o.exec.kind == H5ZGPU_EXEC_AUTO ? NULL : &o.exec, &t)) != H5ZGPU_OK)
        return st;
    if (o.device_pointers && !t.gpu)
        return hz_fail(H5ZGPU_E_DEVICE, "power spectrum: device arrays need a usable GPU");
    size_t n = (size_t)dims[0];
    int f32 = dtype == H5ZGPU_FLOAT32, rc = HQ_PK_NO_TRANSFORM;
    pthread_mutex_lock(&lock);
#ifdef H5ZGPU_HAVE_CUDA_QUALITY
    const void *dx, *none;   /* through the staging slices, as the metrics' arrays go */
    if (t.gpu && hzq_gpu_stage(t.device, x, NULL, n * n * n * (f32 ? 4 : 8), o.device_pointers,
                               &dx, &none) == 0)
        rc = hq_power(dx, 1, 1, f32, n, p);
#endif
    if (rc == HQ_PK_NO_TRANSFORM && !o.device_pointers)
        rc = hq_power(x, 0, 0, f32, n, p);
    pthread_mutex_unlock(&lock);
    if (rc == HQ_PK_NO_TRANSFORM)
        return hz_fail(t.gpu ? H5ZGPU_E_DEVICE : H5ZGPU_E_UNSUPPORTED,
                       "power spectrum: no transform at hand (a build without FFTW3%s)",
                       o.device_pointers ? " for device arrays, or the GPU failed" : "");
    if (rc != HQ_PK_OK)
        return hz_fail(H5ZGPU_E_INVALID_ARG,
                       "power spectrum: a value is not finite (or memory ran out)");
    return H5ZGPU_OK;
}

void h5zgpu_quality_release(void)
{
    pthread_mutex_lock(&lock);
#ifdef H5ZGPU_HAVE_CUDA_QUALITY
    hzq_gpu_release();
#endif
    hq_spectrum_release();
    pthread_mutex_unlock(&lock);
}
