/* The quality metrics of `h5zgpu check` beyond the error norms (cli.h, cli_quality): the signed
 * error's mean, extremes and histogram, SNR, Pearson's correlation, the error's autocorrelation,
 * SSIM, and the PSNR of derivatives and the Laplacian, in double precision over the points where
 * both arrays are finite. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SSIM_WINDOW 8
#define SSIM_K1 0.01
#define SSIM_K2 0.03

static double value(const void *p, uint64_t i, h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The error's autocorrelation at lags 1..CLI_LAGS in array order: for lag k, the sum over the
 * pairs (i, i+k) both finite of (e_i - mean)(e_{i+k} - mean), over the sum of (e_i - mean)^2. */
static void autocorrelation(const void *a, const void *b, uint64_t n, h5zgpu_dtype t,
                            double mean, double *r)
{
    double den = 0;
    CLI_OMP(omp parallel for reduction(+: den))
    for (uint64_t i = 0; i < n; i++) {
        double x = value(a, i, t), y = value(b, i, t);
        if (isfinite(x) && isfinite(y))
            den += (y - x - mean) * (y - x - mean);
    }
    for (int k = 1; k <= CLI_LAGS; k++) {
        double num = 0;
        CLI_OMP(omp parallel for reduction(+: num))
        for (uint64_t i = 0; i < n - (uint64_t)k; i++) {
            double x0 = value(a, i, t), y0 = value(b, i, t);
            double x1 = value(a, i + (uint64_t)k, t), y1 = value(b, i + (uint64_t)k, t);
            if (isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1))
                num += (y0 - x0 - mean) * (y1 - x1 - mean);
        }
        r[k - 1] = den > 0 ? num / den : 0;
    }
}

/* The six sums SSIM needs over one window (a, b, a^2, b^2, ab, and the count of points where
 * either is not finite). */
enum { S_A, S_B, S_AA, S_BB, S_AB, S_BAD, S_N };

/* Window sums of one z plane: over wy x wx windows, for the (ny-wy+1) x (nx-wx+1) windows. */
static void plane_sums(const void *a, const void *b, h5zgpu_dtype t, uint64_t base, size_t ny,
                       size_t nx, size_t wy, size_t wx, double *rows, double *out)
{
    size_t ox = nx - wx + 1, oy = ny - wy + 1;
    /* along x: rows[q][y][x0] */
    for (size_t y = 0; y < ny; y++) {
        double run[S_N] = {0};
        for (size_t x = 0; x < nx; x++) {
            for (int pass = 0; pass < 2; pass++) {   /* add x, then drop x - wx */
                if (pass == 1 && x < wx)
                    break;
                size_t xi = pass ? x - wx : x;
                double s = pass ? -1 : 1, va = value(a, base + y * nx + xi, t),
                       vb = value(b, base + y * nx + xi, t);
                if (!isfinite(va) || !isfinite(vb)) {
                    run[S_BAD] += s;
                    continue;
                }
                run[S_A] += s * va;
                run[S_B] += s * vb;
                run[S_AA] += s * va * va;
                run[S_BB] += s * vb * vb;
                run[S_AB] += s * va * vb;
            }
            if (x + 1 >= wx)
                for (int q = 0; q < S_N; q++)
                    rows[(q * ny + y) * ox + (x + 1 - wx)] = run[q];
        }
    }
    /* along y */
    for (int q = 0; q < S_N; q++)
        for (size_t x0 = 0; x0 < ox; x0++) {
            double run = 0;
            for (size_t y = 0; y < ny; y++) {
                run += rows[(q * ny + y) * ox + x0];
                if (y >= wy)
                    run -= rows[(q * ny + y - wy) * ox + x0];
                if (y + 1 >= wy)
                    out[(q * oy + (y + 1 - wy)) * ox + x0] = run;
            }
        }
}

/* The SSIM sums of the windows starting at z planes [z0, z1): planes z0 .. z1 + wz - 2 go
 * through a ring of wz plane sums. -1 when memory runs out. */
static int ssim_slab(const void *a, const void *b, h5zgpu_dtype t, const size_t *d,
                     const size_t *w, double c1, double c2, size_t z0, size_t z1, double *sum,
                     uint64_t *windows)
{
    size_t ny = d[1], nx = d[2], wz = w[0], wy = w[1], wx = w[2];
    size_t oy = ny - wy + 1, ox = nx - wx + 1, plane = (size_t)S_N * oy * ox;
    double *rows = malloc(sizeof(double) * S_N * ny * ox);
    double *ring = malloc(sizeof(double) * plane * wz), *tot = calloc(plane, sizeof(double));
    double cnt = (double)(wz * wy * wx);
    int rc = rows && ring && tot ? 0 : -1;
    for (size_t z = z0; rc == 0 && z < z1 + wz - 1; z++) {
        double *slot = ring + ((z - z0) % wz) * plane;
        if (z >= z0 + wz)   /* the plane leaving the window */
            for (size_t i = 0; i < plane; i++)
                tot[i] -= slot[i];
        plane_sums(a, b, t, (uint64_t)z * ny * nx, ny, nx, wy, wx, rows, slot);
        for (size_t i = 0; i < plane; i++)
            tot[i] += slot[i];
        if (z + 1 < z0 + wz)
            continue;
        for (size_t k = 0; k < oy * ox; k++) {
            const double *s = tot + k;
            if (s[(size_t)S_BAD * oy * ox] > 0.5)
                continue;
            double ma = s[(size_t)S_A * oy * ox] / cnt, mb = s[(size_t)S_B * oy * ox] / cnt;
            double va = s[(size_t)S_AA * oy * ox] / cnt - ma * ma;
            double vb = s[(size_t)S_BB * oy * ox] / cnt - mb * mb;
            double cov = s[(size_t)S_AB * oy * ox] / cnt - ma * mb;
            *sum += (2 * ma * mb + c1) * (2 * cov + c2) /
                    ((ma * ma + mb * mb + c1) * (va + vb + c2));
            (*windows)++;
        }
    }
    free(rows);
    free(ring);
    free(tot);
    return rc;
}

/* SSIM with a window of 8 along each axis (the axis's length where shorter), step 1, the mean
 * over the windows that hold only finite values of both arrays; C1 = (0.01 L)^2 and
 * C2 = (0.03 L)^2 with L the range of a. Arrays of rank above 3 are seen as 3-D, their slowest
 * axes folded into the first. The window positions along z are shared among the threads in
 * slabs. -1 when no window qualifies or memory runs out. */
double cli_ssim(const void *a, const void *b, h5zgpu_dtype t, unsigned rank, const uint64_t *dims,
                double range)
{
    size_t d[3] = {1, 1, 1}, w[3];
    for (unsigned i = 0; i < rank; i++)
        d[3 - (rank - i < 3 ? rank - i : 3)] *= (size_t)dims[i];
    for (int k = 0; k < 3; k++)
        w[k] = d[k] < SSIM_WINDOW ? d[k] : SSIM_WINDOW;
    double c1 = (SSIM_K1 * range) * (SSIM_K1 * range), c2 = (SSIM_K2 * range) * (SSIM_K2 * range);
    double sum = 0;
    uint64_t windows = 0;
    int failed = 0;
    const long oz = (long)(d[0] - w[0] + 1), slabs = oz < cli_threads() ? oz : cli_threads();
    CLI_OMP(omp parallel for reduction(+: sum, windows, failed) schedule(static, 1))
    for (long k = 0; k < slabs; k++)
        failed += ssim_slab(a, b, t, d, w, c1, c2, (size_t)(oz * k / slabs),
                            (size_t)(oz * (k + 1) / slabs), &sum, &windows) != 0;
    return windows && !failed ? sum / (double)windows : -1;
}

/* The PSNR of B's stencil values against A's over the points where the stencil (along every axis
 * for the Laplacian, along one for the others) touches only finite values of both: order 1 the
 * forward differences along each axis, 2 the central second differences along each axis, 3 the
 * Laplacian (their sum over the axes, at points inside along every axis). */
static double stencil_psnr(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                           const uint64_t *dims, int order)
{
    uint64_t n = 1, stride[H5ZGPU_MAX_RANK];
    for (unsigned d = rank; d-- > 0;) {
        stride[d] = n;
        n *= dims[d];
    }
    double lo = INFINITY, hi = -INFINITY, sq = 0;
    uint64_t count = 0;
    CLI_OMP(omp parallel for reduction(+: sq, count) reduction(min: lo) reduction(max: hi))
    for (uint64_t i = 0; i < n; i++) {
        double sa = 0, sb = 0;
        int ok = 1;
        for (unsigned d = 0; d < rank && ok; d++) {
            uint64_t c = i / stride[d] % dims[d];
            int first = order == 1;
            if (first ? c + 1 >= dims[d] : c == 0 || c + 1 >= dims[d]) {
                if (order == 3)
                    ok = 0;   /* the Laplacian needs every axis */
                continue;
            }
            double a0 = value(a, i, t), b0 = value(b, i, t);
            double a1 = value(a, i + stride[d], t), b1 = value(b, i + stride[d], t);
            double da, db;
            if (first) {
                da = a1 - a0;
                db = b1 - b0;
            } else {
                double am = value(a, i - stride[d], t), bm = value(b, i - stride[d], t);
                da = a1 - 2 * a0 + am;
                db = b1 - 2 * b0 + bm;
            }
            if (!isfinite(da) || !isfinite(db)) {
                ok = order != 3;   /* one axis's value is left out; the Laplacian is */
                continue;
            }
            if (order == 3) {
                sa += da;
                sb += db;
                continue;
            }
            lo = fmin(lo, da);
            hi = fmax(hi, da);
            sq += (db - da) * (db - da);
            count++;
        }
        if (order == 3 && ok && rank > 0) {
            lo = fmin(lo, sa);
            hi = fmax(hi, sa);
            sq += (sb - sa) * (sb - sa);
            count++;
        }
    }
    if (!count)
        return NAN;
    double rmse = sqrt(sq / (double)count);
    return rmse > 0 ? 20 * log10((hi - lo) / rmse) : INFINITY;
}

/* The error's histogram: CLI_BINS equal bins over [min_error, max_error] (the last closed). */
static void histogram(const void *a, const void *b, uint64_t n, h5zgpu_dtype t, cli_quality *q)
{
    double w = (q->max_error - q->min_error) / CLI_BINS, lo = q->min_error;
    uint64_t h[CLI_BINS] = {0};
    CLI_OMP(omp parallel for reduction(+: h[:CLI_BINS]))
    for (uint64_t i = 0; i < n; i++) {
        double x = value(a, i, t), y = value(b, i, t);
        if (!isfinite(x) || !isfinite(y))
            continue;
        long k = w > 0 ? (long)floor((y - x - lo) / w) : 0;
        h[k < 0 ? 0 : k >= CLI_BINS ? CLI_BINS - 1 : k]++;
    }
    memcpy(q->histogram, h, sizeof h);
}

void cli_quality_compute(const void *a, const void *b, h5zgpu_dtype t, unsigned rank,
                         const uint64_t *dims, const cli_metrics *m, cli_quality *q)
{
    uint64_t n = 1, count = 0;
    double sa = 0, sb = 0, se = 0;
    memset(q, 0, sizeof *q);
    for (unsigned i = 0; i < rank; i++)
        n *= dims[i];
    double srel = 0, rlo = INFINITY, rhi = -INFINITY, elo = INFINITY, ehi = -INFINITY;
    uint64_t nrel = 0;
    CLI_OMP(omp parallel for reduction(+: srel, nrel, sa, sb, se, count) reduction(min: rlo, elo)
            reduction(max: rhi, ehi))
    for (uint64_t i = 0; i < n; i++) {
        double x = value(a, i, t), y = value(b, i, t);
        if (!isfinite(x) || !isfinite(y))
            continue;
        if (x != 0) {
            double rel = fabs(y - x) / fabs(x);
            rlo = fmin(rlo, rel);
            rhi = fmax(rhi, rel);
            srel += rel;
            nrel++;
        }
        sa += x;
        sb += y;
        se += y - x;
        elo = fmin(elo, y - x);
        ehi = fmax(ehi, y - x);
        count++;
    }
    q->min_pw_rel = rlo;
    q->max_pw_rel = rhi;
    q->min_error = elo;
    q->max_error = ehi;
    q->mean_pw_rel = nrel ? srel / (double)nrel : NAN;
    if (!nrel)
        q->min_pw_rel = q->max_pw_rel = NAN;
    if (!count) {
        q->min_error = q->max_error = 0;
        q->ssim = -1;
        return;
    }
    double ma = sa / (double)count, mb = sb / (double)count, saa = 0, sbb = 0, sab = 0, see = 0;
    q->mean_error = se / (double)count;
    CLI_OMP(omp parallel for reduction(+: saa, sbb, sab, see))
    for (uint64_t i = 0; i < n; i++) {   /* second pass: deviations from the means */
        double x = value(a, i, t), y = value(b, i, t);
        if (!isfinite(x) || !isfinite(y))
            continue;
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
        sab += (x - ma) * (y - mb);
        see += (y - x) * (y - x);
    }
    q->pearson = saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : (saa == sbb ? 1 : 0);
    q->snr = see > 0 ? 10 * log10(saa / see) : INFINITY;
    autocorrelation(a, b, n, t, q->mean_error, q->autocorrelation);
    q->ssim = cli_ssim(a, b, t, rank, dims, m->range);
    histogram(a, b, n, t, q);
    for (int order = 1; order <= 3; order++)
        q->stencil_psnr[order - 1] = stencil_psnr(a, b, t, rank, dims, order);
}
