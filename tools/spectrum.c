/* The power spectrum of `h5zgpu check` and `sweep` (cli.h, cli_spectrum): P(k) of A and of B
 * over spherical shells of the integer wavenumber, and their ratio, with FFTW's real-to-complex
 * 3-D transform. */
/* sysconf is POSIX, outside strict C11 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_spectrum_ratio(const cli_power *a, const cli_power *b, cli_spectrum_result *r)
{
    size_t n = a->n;
    memset(r, 0, sizeof *r);
    if (!(r->ratio = malloc(sizeof(double) * (n / 2 ? n / 2 : 1))))
        return -1;
    r->shells = n / 2;   /* k = 1 .. n/2; k = 0 (the mean) left out */
    for (size_t s = 1; s <= n / 2; s++)
        r->ratio[s - 1] = a->p[s] > 0 ? b->p[s] / a->p[s] : (b->p[s] > 0 ? INFINITY : 1);
    return 0;
}

double cli_spectrum_deviation(const cli_spectrum_result *r, unsigned kmax)
{
    double worst = 0;
    for (size_t k = 1; k <= r->shells && (kmax == 0 || k <= kmax); k++)
        worst = fmax(worst, fabs(r->ratio[k - 1] - 1));
    return worst;
}

#ifdef H5ZGPU_HAVE_FFTW
#include <fftw3.h>
#include <unistd.h>

/* Shell sums of |F|^2 of one field (n^3 values of type t) into p[0..n/2], counts into w. The
 * half spectrum stands for both halves: planes 0 < kx < n/2 count twice. */
static int shells(const void *in, h5zgpu_dtype t, size_t n, double *p, double *w)
{
    size_t nh = n / 2 + 1, total = n * n * n;
    double *x = fftw_malloc(sizeof(double) * total);
    fftw_complex *f = fftw_malloc(sizeof(fftw_complex) * n * n * nh);
    if (!x || !f) {
        fftw_free(x);
        fftw_free(f);
        return -1;
    }
    for (size_t i = 0; i < total; i++)
        x[i] = t == H5ZGPU_FLOAT32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
#ifdef H5ZGPU_HAVE_FFTW_THREADS
    static int threads;   /* the process's one command thread plans */
    if (!threads)
        threads = fftw_init_threads() ? 1 : -1;
    if (threads > 0)
        fftw_plan_with_nthreads((int)sysconf(_SC_NPROCESSORS_ONLN));
#endif
    fftw_plan plan = fftw_plan_dft_r2c_3d((int)n, (int)n, (int)n, x, f, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
    memset(p, 0, sizeof(double) * (n / 2 + 1));
    memset(w, 0, sizeof(double) * (n / 2 + 1));
    for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++)
            for (size_t k = 0; k < nh; k++) {
                double fz = z <= n / 2 ? (double)z : (double)z - (double)n;
                double fy = y <= n / 2 ? (double)y : (double)y - (double)n;
                size_t s = (size_t)floor(sqrt(fz * fz + fy * fy + (double)(k * k)) + 0.5);
                if (s > n / 2)
                    continue;
                const double *c = f[(z * n + y) * nh + k];
                double weight = k == 0 || 2 * k == n ? 1 : 2;
                p[s] += weight * (c[0] * c[0] + c[1] * c[1]);
                w[s] += weight;
            }
    fftw_free(x);
    fftw_free(f);
    return 0;
}

/* Whether a field can be transformed: cubic 3-D, at least 4 a side, every value finite (a
 * transform cannot leave points out). */
static int transformable(const void *a, h5zgpu_dtype t, unsigned rank, const uint64_t *dims)
{
    if (rank != 3 || dims[0] != dims[1] || dims[1] != dims[2] || dims[0] < 4)
        return 0;
    size_t total = (size_t)(dims[0] * dims[1] * dims[2]);
    for (size_t i = 0; i < total; i++) {
        double x = t == H5ZGPU_FLOAT32 ? ((const float *)a)[i] : ((const double *)a)[i];
        if (!isfinite(x))
            return 0;
    }
    return 1;
}

int cli_power_spectrum(const void *a, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                       cli_power *pw)
{
    memset(pw, 0, sizeof *pw);
    if (!transformable(a, t, rank, dims))
        return -1;
    size_t n = (size_t)dims[0];
    double *p = malloc(sizeof(double) * (n / 2 + 1) * 2), *w = p ? p + n / 2 + 1 : NULL;
    if (!p || shells(a, t, n, p, w)) {
        free(p);
        return -1;
    }
    for (size_t s = 0; s <= n / 2; s++)   /* shell means, in the space of the shell sums */
        p[s] = w[s] > 0 ? p[s] / w[s] : 0;
    pw->n = n;
    pw->p = p;
    return 0;
}

int cli_spectrum(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                 const uint64_t *dims, cli_spectrum_result *r)
{
    cli_power pa, pb;
    memset(r, 0, sizeof *r);
    if (!transformable(b, t, rank, dims) || cli_power_spectrum(a, t, rank, dims, &pa) != 0)
        return -1;
    int st = cli_power_spectrum(b, t, rank, dims, &pb) == 0 ? cli_spectrum_ratio(&pa, &pb, r) : -1;
    free(pa.p);
    free(pb.p);
    return st;
}

#else

int cli_spectrum(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                 const uint64_t *dims, cli_spectrum_result *r)
{
    (void)a, (void)b, (void)t, (void)rank, (void)dims;
    memset(r, 0, sizeof *r);
    return -2;
}

int cli_power_spectrum(const void *a, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                       cli_power *pw)
{
    (void)a, (void)t, (void)rank, (void)dims;
    memset(pw, 0, sizeof *pw);
    return -2;
}

#endif
