/* The power spectrum of `h5zgpu check` and `sweep` (cli.h, cli_spectrum): P(k) of A and of B
 * over spherical shells of the integer wavenumber, and their ratio, with a real-to-complex 3-D
 * transform: cuFFT's on the GPU where the build has it (cuda/quality/), else FFTW's. */
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

/* The transform's buffers, plan and shell of every frequency, kept from one field to the next
 * of the same size (a sweep transforms one per bound it tries): allocating and touching 2 GiB
 * and planning again cost as much as the transform. The process's one command thread uses it. */
static struct {
    size_t n;
    double *x;
    fftw_complex *f;
    fftw_plan plan;
    uint32_t *shell;   /* the shell of each frequency of the half spectrum; n: none (past n/2) */
} ws;

static void fftw_release(void)
{
    if (ws.n) {
        fftw_destroy_plan(ws.plan);
        fftw_free(ws.x);
        fftw_free(ws.f);
        free(ws.shell);
    }
    memset(&ws, 0, sizeof ws);
}

static int workspace(size_t n)
{
    size_t nh = n / 2 + 1, bins = n * n * nh;
    if (ws.n == n)
        return 0;
    fftw_release();
    ws.x = fftw_malloc(sizeof(double) * n * n * n);
    ws.f = fftw_malloc(sizeof(fftw_complex) * bins);
    ws.shell = malloc(sizeof(uint32_t) * bins);
    if (!ws.x || !ws.f || !ws.shell) {
        fftw_free(ws.x);
        fftw_free(ws.f);
        free(ws.shell);
        memset(&ws, 0, sizeof ws);
        return -1;
    }
#ifdef H5ZGPU_HAVE_FFTW_THREADS
    static int threads;
    if (!threads)
        threads = fftw_init_threads() ? 1 : -1;
    if (threads > 0)
        fftw_plan_with_nthreads((int)sysconf(_SC_NPROCESSORS_ONLN));
#endif
    ws.plan = fftw_plan_dft_r2c_3d((int)n, (int)n, (int)n, ws.x, ws.f, FFTW_ESTIMATE);
    for (size_t z = 0; z < n; z++)
        for (size_t y = 0; y < n; y++)
            for (size_t k = 0; k < nh; k++) {
                double fz = z <= n / 2 ? (double)z : (double)z - (double)n;
                double fy = y <= n / 2 ? (double)y : (double)y - (double)n;
                size_t sh = (size_t)floor(sqrt(fz * fz + fy * fy + (double)(k * k)) + 0.5);
                ws.shell[(z * n + y) * nh + k] = (uint32_t)(sh > n / 2 ? n : sh);
            }
    ws.n = n;
    return 0;
}

/* Shell sums of |F|^2 of one field (n^3 values of type t) into p[0..n/2], counts into w; -1
 * when a value is not finite (a transform cannot leave points out) or memory runs out. The half
 * spectrum stands for both halves: planes 0 < kx < n/2 count twice. */
static int shells_fftw(const void *in, h5zgpu_dtype t, size_t n, double *p, double *w)
{
    size_t nh = n / 2 + 1, total = n * n * n;
    if (workspace(n) != 0)
        return -1;
    for (size_t i = 0; i < total; i++) {
        ws.x[i] = t == H5ZGPU_FLOAT32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
        if (!isfinite(ws.x[i]))
            return -1;
    }
    fftw_execute(ws.plan);
    memset(p, 0, sizeof(double) * (n / 2 + 1));
    memset(w, 0, sizeof(double) * (n / 2 + 1));
    for (size_t row = 0; row < n * n; row++)
        for (size_t k = 0; k < nh; k++) {
            const size_t i = row * nh + k, sh = ws.shell[i];
            if (sh == n)
                continue;
            const double weight = k == 0 || 2 * k == n ? 1 : 2;
            p[sh] += weight * (ws.f[i][0] * ws.f[i][0] + ws.f[i][1] * ws.f[i][1]);
            w[sh] += weight;
        }
    return 0;
}

#endif
#ifdef H5ZGPU_HAVE_CUFFT
#include "spectrum_gpu.h"
#endif

void cli_spectrum_release(void)
{
#ifdef H5ZGPU_HAVE_FFTW
    fftw_release();
#endif
#ifdef H5ZGPU_HAVE_CUFFT
    hzq_spectrum_gpu_release();
#endif
}

/* Shell sums on the GPU where the build has cuFFT and H5ZGPU_DEVICE does not say cpu, else (or
 * when the GPU cannot) with FFTW: cli_spectrum's statuses. */
static int shells(const void *in, h5zgpu_dtype t, size_t n, double *p, double *w)
{
    int st = -2;
#ifdef H5ZGPU_HAVE_CUFFT
    const char *dev = getenv("H5ZGPU_DEVICE");
    if (!dev || strcmp(dev, "cpu") != 0)
        st = hzq_power_spectrum_gpu(in, t == H5ZGPU_FLOAT32, n, p, w);
    if (st != -2)
        return st;
#endif
#ifdef H5ZGPU_HAVE_FFTW
    st = shells_fftw(in, t, n, p, w);
#else
    (void)in, (void)t, (void)n, (void)p, (void)w;
#endif
    return st;
}

/* Whether a field has a shape the transform takes: cubic 3-D, at least 4 a side. */
static int transformable(unsigned rank, const uint64_t *dims)
{
    return rank == 3 && dims[0] == dims[1] && dims[1] == dims[2] && dims[0] >= 4;
}

int cli_power_spectrum(const void *a, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                       cli_power *pw)
{
    memset(pw, 0, sizeof *pw);
    if (!transformable(rank, dims))
        return -1;
    size_t n = (size_t)dims[0];
    double *p = malloc(sizeof(double) * (n / 2 + 1) * 2), *w = p ? p + n / 2 + 1 : NULL;
    int st = p ? shells(a, t, n, p, w) : -1;
    if (st != 0) {
        free(p);
        return st;
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
    int st = cli_power_spectrum(a, t, rank, dims, &pa);
    if (st != 0)
        return st;
    st = cli_power_spectrum(b, t, rank, dims, &pb);
    if (st == 0)
        st = cli_spectrum_ratio(&pa, &pb, r);
    free(pa.p);
    free(pb.p);
    return st;
}
