/* The power spectrum (spectrum.h): P(k) of a cubic 3-D field over spherical shells of the
 * integer wavenumber, with a real-to-complex 3-D transform: cuFFT's on the GPU where the build
 * has it (cuda/quality/spectrum.cu), else FFTW's. */
/* sysconf is POSIX, outside strict C11 */
#define _POSIX_C_SOURCE 200809L

#include "spectrum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef H5ZGPU_HAVE_FFTW
#include <fftw3.h>
#include <unistd.h>

/* The transform's buffers, plan and shell of every frequency, kept from one field to the next
 * of the same size (a sweep transforms one per bound it tries): allocating and touching 2 GiB
 * and planning again cost as much as the transform. One caller at a time (quality.c's lock). */
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
static int shells_fftw(const void *in, int f32, size_t n, double *p, double *w)
{
    size_t nh = n / 2 + 1, total = n * n * n;
    if (workspace(n) != 0)
        return -1;
    for (size_t i = 0; i < total; i++) {
        ws.x[i] = f32 ? (double)((const float *)in)[i] : ((const double *)in)[i];
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

void hq_spectrum_release(void)
{
#ifdef H5ZGPU_HAVE_FFTW
    fftw_release();
#endif
#ifdef H5ZGPU_HAVE_CUFFT
    hzq_spectrum_gpu_release();
#endif
}

int hq_transformable(unsigned rank, const uint64_t *dims)
{
    return rank == 3 && dims[0] == dims[1] && dims[1] == dims[2] && dims[0] >= 4 &&
           dims[0] <= UINT32_MAX;
}

int hq_power(const void *in, int on_gpu, int in_device, int f32, size_t n, double *p)
{
    double *w = malloc(sizeof(double) * (n / 2 + 1));
    if (!w)
        return HQ_PK_FAILED;
    int st = HQ_PK_NO_TRANSFORM;
#ifdef H5ZGPU_HAVE_CUFFT
    if (on_gpu)
        st = hzq_power_spectrum_gpu(in, in_device, f32, n, p, w);
#endif
#ifdef H5ZGPU_HAVE_FFTW
    if (st == HQ_PK_NO_TRANSFORM && !in_device)
        st = shells_fftw(in, f32, n, p, w);
#endif
    (void)in, (void)on_gpu, (void)in_device, (void)f32;
    for (size_t s = 0; st == HQ_PK_OK && s <= n / 2; s++)   /* shell means */
        p[s] = w[s] > 0 ? p[s] / w[s] : 0;
    free(w);
    return st;
}
