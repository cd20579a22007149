// SSIM on the GPU. A CTA owns a tile of 32 x 8 window positions (x, y) and walks a slab of 32
// window positions along z: for each z plane it loads the tile's halo of both arrays into shared
// memory, sums the six window quantities along x (one row per item), then along y (one window
// per thread), and keeps each thread's last wz plane sums in a shared ring, the running z sum in
// registers, as the CPU reference keeps a ring of planes. Sums in double precision throughout;
// a point where either array is not finite (or A is missing) counts in the window's HQ_SBAD sum,
// and a window with one is left out, as is one whose SSIM overflows.
#include "gpu.h"
#include "metrics_device.cuh"

#include <math_constants.h>
#include <stdlib.h>

#define TX 32
#define TY 8
#define TZ 32
#define W HQ_SSIM_WINDOW
#define RY (TY + W - 1)
#define RX (TX + W - 1)
#define RING_BYTES (sizeof(double) * W * HQ_NSUMS * TX * TY)

struct ssim_partial {
    double sum;
    unsigned long long windows;
};

__global__ void __launch_bounds__(TX *TY)
    hq_ssim_kernel(hq_view v, hq_ssim_in in, unsigned tiles_x, unsigned tiles_y, unsigned slabs,
                   ssim_partial *out)
{
    __shared__ double ra[RY][RX], rb[RY][RX];
    __shared__ double xs[HQ_NSUMS][RY][TX];
    extern __shared__ double ring[];   // [W][HQ_NSUMS][TY * TX]
    const uint64_t ny = in.d[1], nx = in.d[2], wz = in.w[0], wy = in.w[1], wx = in.w[2];
    const uint64_t oz = in.d[0] - wz + 1, oy = ny - wy + 1, ox = nx - wx + 1;
    const unsigned tid = threadIdx.y * TX + threadIdx.x;
    const double count = (double)(wz * wy * wx);
    double sum = 0;
    unsigned long long windows = 0;
    for (unsigned sz = blockIdx.z; sz < slabs; sz += gridDim.z)
        for (unsigned ty = blockIdx.y; ty < tiles_y; ty += gridDim.y)
            for (unsigned tx = blockIdx.x; tx < tiles_x; tx += gridDim.x) {
                const uint64_t x0 = (uint64_t)tx * TX, y0 = (uint64_t)ty * TY;
                const uint64_t z0 = (uint64_t)sz * TZ, z1 = z0 + TZ < oz ? z0 + TZ : oz;
                const uint64_t x = x0 + threadIdx.x, y = y0 + threadIdx.y;
                double tot[HQ_NSUMS] = {0, 0, 0, 0, 0, 0};
                for (uint64_t z = z0; z < z1 + wz - 1; z++) {
                    for (unsigned k = tid; k < RY * RX; k += TX * TY) {
                        const unsigned r = k / RX, c = k % RX;
                        double a = 0, b = 0;
                        if (y0 + r < ny && x0 + c < nx) {
                            hq_load(&v, (z * ny + y0 + r) * nx + x0 + c, &a, &b);
                            if (!isfinite(a) || !isfinite(b))
                                a = b = CUDART_NAN;   // marks the point for HQ_SBAD
                        }
                        ra[r][c] = a;
                        rb[r][c] = b;
                    }
                    __syncthreads();
                    for (unsigned k = tid; k < RY * TX; k += TX * TY) {   // along x
                        const unsigned r = k / TX, c = k % TX;
                        double s[HQ_NSUMS] = {0, 0, 0, 0, 0, 0};
                        for (unsigned t = 0; t < wx; t++) {
                            const double a = ra[r][c + t], b = rb[r][c + t];
                            if (isnan(a)) {
                                s[HQ_SBAD] += 1;
                                continue;
                            }
                            s[HQ_SA] += a;
                            s[HQ_SB] += b;
                            s[HQ_SAA] += a * a;
                            s[HQ_SBB] += b * b;
                            s[HQ_SAB] += a * b;
                        }
                        for (int q = 0; q < HQ_NSUMS; q++)
                            xs[q][r][c] = s[q];
                    }
                    __syncthreads();
                    double *slot = ring + (size_t)((z - z0) % wz) * HQ_NSUMS * TX * TY;
                    for (int q = 0; q < HQ_NSUMS; q++) {   // along y, then the ring along z
                        double p = 0;
                        for (unsigned t = 0; t < wy; t++)
                            p += xs[q][threadIdx.y + t][threadIdx.x];
                        double *cell = slot + q * TX * TY + tid;
                        if (z >= z0 + wz)
                            tot[q] -= *cell;
                        *cell = p;
                        tot[q] += p;
                    }
                    if (z + 1 >= z0 + wz && y < oy && x < ox && tot[HQ_SBAD] < 0.5) {
                        const double w = hq_ssim_window(tot, count, in.c1, in.c2);
                        if (isfinite(w)) {   // not where squares of huge values overflow
                            sum += w;
                            windows++;
                        }
                    }
                    __syncthreads();   // the halo and xs are rewritten next plane
                }
            }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, o);
        windows += __shfl_down_sync(0xffffffffu, windows, o);
    }
    __shared__ ssim_partial warps[TY];
    if (threadIdx.x == 0)
        warps[threadIdx.y] = {sum, windows};
    __syncthreads();
    if (tid == 0) {
        ssim_partial p = {0, 0};
        for (int w = 0; w < TY; w++) {
            p.sum += warps[w].sum;
            p.windows += warps[w].windows;
        }
        out[blockIdx.x + gridDim.x * (blockIdx.y + (size_t)gridDim.y * blockIdx.z)] = p;
    }
}

int hzq_gpu_ssim(const hq_view *v, const hq_ssim_in *in, double *sum, uint64_t *windows)
{
    const uint64_t oz = in->d[0] - in->w[0] + 1, oy = in->d[1] - in->w[1] + 1,
                   ox = in->d[2] - in->w[2] + 1;
    const uint64_t tx = (ox + TX - 1) / TX, ty = (oy + TY - 1) / TY, tz = (oz + TZ - 1) / TZ;
    if (tx > 0xFFFFFFFFu || ty > 0xFFFFFFFFu || tz > 0xFFFFFFFFu)
        return hzq_gpu_fail(cudaErrorInvalidValue, "SSIM: the array's axes are too long");
    // at most 65536 CTAs in all, each looping over the tiles of its stride
    const unsigned gx = (unsigned)(tx < 4096 ? tx : 4096);
    const unsigned gy = (unsigned)(ty < 65536 / gx ? ty : 65536 / gx);
    const unsigned gz = (unsigned)(tz < 65536 / (gx * gy) ? tz : 65536 / (gx * gy));
    const size_t ctas = (size_t)gx * gy * gz;
    ssim_partial *d = static_cast<ssim_partial *>(hzq_gpu_partials(sizeof(ssim_partial) * ctas));
    if (!d)
        return hzq_gpu_fail(cudaErrorMemoryAllocation, "SSIM's partial sums");
    cudaError_t e = cudaFuncSetAttribute(hq_ssim_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)RING_BYTES);
    if (e != cudaSuccess)
        return hzq_gpu_fail(e, "SSIM's shared memory");
    hq_ssim_kernel<<<dim3(gx, gy, gz), dim3(TX, TY), RING_BYTES>>>(*v, *in, (unsigned)tx,
                                                                   (unsigned)ty, (unsigned)tz, d);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return hzq_gpu_fail(e, "the SSIM pass");
    ssim_partial *h = static_cast<ssim_partial *>(malloc(sizeof(ssim_partial) * ctas));
    if (!h)
        return hzq_gpu_fail(cudaErrorMemoryAllocation, "SSIM's partial sums");
    e = cudaMemcpy(h, d, sizeof(ssim_partial) * ctas, cudaMemcpyDeviceToHost);
    *sum = 0;
    *windows = 0;
    for (size_t k = 0; e == cudaSuccess && k < ctas; k++) {
        *sum += h[k].sum;
        *windows += h[k].windows;
    }
    free(h);
    return e == cudaSuccess ? 0 : hzq_gpu_fail(e, "the SSIM pass");
}
