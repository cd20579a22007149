/* SSIM on the CPU: window sums by running sums along x, then y, then z (a ring of the last wz
 * planes' sums), the window positions along z shared among the threads in slabs. */
#include "cpu.h"

#include <math.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Window sums of one z plane into out[q][y0][x0], for the (ny-wy+1) x (nx-wx+1) windows. */
static void plane_sums(const hq_view *v, uint64_t base, size_t ny, size_t nx, size_t wy,
                       size_t wx, double *rows, double *out)
{
    size_t ox = nx - wx + 1, oy = ny - wy + 1;
    for (size_t y = 0; y < ny; y++) {   /* along x: rows[q][y][x0] */
        double run[HQ_NSUMS] = {0};
        for (size_t x = 0; x < nx; x++) {
            for (int pass = 0; pass < 2; pass++) {   /* add x, then drop x - wx */
                if (pass == 1 && x < wx)
                    break;
                size_t xi = pass ? x - wx : x;
                double s = pass ? -1 : 1, va, vb;
                hq_load(v, base + y * nx + xi, &va, &vb);
                if (!isfinite(va) || !isfinite(vb)) {
                    run[HQ_SBAD] += s;
                    continue;
                }
                run[HQ_SA] += s * va;
                run[HQ_SB] += s * vb;
                run[HQ_SAA] += s * va * va;
                run[HQ_SBB] += s * vb * vb;
                run[HQ_SAB] += s * va * vb;
            }
            if (x + 1 >= wx)
                for (int q = 0; q < HQ_NSUMS; q++)
                    rows[(q * ny + y) * ox + (x + 1 - wx)] = run[q];
        }
    }
    for (int q = 0; q < HQ_NSUMS; q++)   /* along y */
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

/* The windows starting at z planes [z0, z1): planes z0 .. z1 + wz - 2 go through a ring of wz
 * plane sums. -1 when memory runs out. */
static int ssim_slab(const hq_view *v, const hq_ssim_in *in, size_t z0, size_t z1, double *sum,
                     uint64_t *windows)
{
    size_t ny = in->d[1], nx = in->d[2], wz = in->w[0], wy = in->w[1], wx = in->w[2];
    size_t oy = ny - wy + 1, ox = nx - wx + 1, plane = (size_t)HQ_NSUMS * oy * ox;
    double *rows = malloc(sizeof(double) * HQ_NSUMS * ny * ox);
    double *ring = malloc(sizeof(double) * plane * wz), *tot = calloc(plane, sizeof(double));
    double count = (double)(wz * wy * wx);
    int rc = rows && ring && tot ? 0 : -1;
    for (size_t z = z0; rc == 0 && z < z1 + wz - 1; z++) {
        double *slot = ring + ((z - z0) % wz) * plane;
        if (z >= z0 + wz)   /* the plane leaving the window */
            for (size_t i = 0; i < plane; i++)
                tot[i] -= slot[i];
        plane_sums(v, (uint64_t)z * ny * nx, ny, nx, wy, wx, rows, slot);
        for (size_t i = 0; i < plane; i++)
            tot[i] += slot[i];
        if (z + 1 < z0 + wz)
            continue;
        for (size_t k = 0; k < oy * ox; k++) {
            double s[HQ_NSUMS];
            for (int q = 0; q < HQ_NSUMS; q++)
                s[q] = tot[(size_t)q * oy * ox + k];
            if (s[HQ_SBAD] > 0.5)
                continue;
            double w = hq_ssim_window(s, count, in->c1, in->c2);
            if (isfinite(w)) {   /* not where squares of huge values overflow */
                *sum += w;
                (*windows)++;
            }
        }
    }
    free(rows);
    free(ring);
    free(tot);
    return rc;
}

int hq_ssim_cpu(const hq_view *v, const hq_ssim_in *in, double *sum, uint64_t *windows)
{
    long threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    const long oz = (long)(in->d[0] - in->w[0] + 1), slabs = oz < threads ? oz : threads;
    double total = 0;
    uint64_t count = 0;
    int failed = 0;
    HQ_OMP(omp parallel for reduction(+: total, count, failed) schedule(static, 1))
    for (long k = 0; k < slabs; k++)
        failed += ssim_slab(v, in, (size_t)(oz * k / slabs), (size_t)(oz * (k + 1) / slabs),
                            &total, &count) != 0;
    *sum = total;
    *windows = count;
    return failed ? -1 : 0;
}
