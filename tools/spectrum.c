/* The power spectrum of `h5zgpu check` (cli.h, cli_spectrum): P(k) of A and of B over spherical
 * shells of the integer wavenumber, and their ratio, with FFTW's real-to-complex 3-D transform. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double cli_spectrum_deviation(const cli_spectrum_result *r, unsigned kmax)
{
    double worst = 0;
    for (size_t k = 1; k <= r->shells && (kmax == 0 || k <= kmax); k++)
        worst = fmax(worst, fabs(r->ratio[k - 1] - 1));
    return worst;
}

#ifdef H5ZGPU_HAVE_FFTW
#include <fftw3.h>

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

int cli_spectrum(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                 const uint64_t *dims, cli_spectrum_result *r)
{
    memset(r, 0, sizeof *r);
    if (rank != 3 || dims[0] != dims[1] || dims[1] != dims[2] || dims[0] < 4)
        return -1;
    size_t n = (size_t)dims[0], total = n * n * n;
    for (size_t i = 0; i < total; i++) {   /* a transform cannot leave points out */
        double x, y;
        if (t == H5ZGPU_FLOAT32) {
            x = ((const float *)a)[i];
            y = ((const float *)b)[i];
        } else {
            x = ((const double *)a)[i];
            y = ((const double *)b)[i];
        }
        if (!isfinite(x) || !isfinite(y))
            return -1;
    }
    double *pa = malloc(sizeof(double) * (n / 2 + 1) * 4), *wa = pa + n / 2 + 1;
    double *pb = wa + n / 2 + 1, *wb = pb + n / 2 + 1;
    r->ratio = malloc(sizeof(double) * (n / 2));
    if (!pa || !r->ratio || shells(a, t, n, pa, wa) || shells(b, t, n, pb, wb)) {
        free(pa);
        free(r->ratio);
        r->ratio = NULL;
        return -1;
    }
    r->shells = n / 2;   /* k = 1 .. n/2; k = 0 (the mean) left out */
    for (size_t s = 1; s <= n / 2; s++)
        r->ratio[s - 1] =
            pa[s] > 0 ? (pb[s] / wb[s]) / (pa[s] / wa[s]) : (pb[s] > 0 ? INFINITY : 1);
    free(pa);
    return 0;
}

#else

int cli_spectrum(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                 const uint64_t *dims, cli_spectrum_result *r)
{
    (void)a, (void)b, (void)t, (void)rank, (void)dims;
    memset(r, 0, sizeof *r);
    return -2;
}

#endif
