/* The power spectrum on the GPU (spectrum_gpu.h): the field widened to double, cuFFT's
 * real-to-complex 3-D transform, and the shell sums, each CTA summing into shared memory
 * before one atomic per shell. */
#include "spectrum_gpu.h"

#include <cuda_runtime.h>
#include <cufft.h>
#include <stdlib.h>

#define SPEC_THREADS 256
#define SPEC_SHARED_MAX (48 * 1024)

static struct {
    size_t n;
    double *x;            /* the field as doubles */
    cufftDoubleComplex *f;  /* its half spectrum; first the field as it came */
    double *sums;         /* p[0..n/2], then w[0..n/2] */
    unsigned *bad;        /* a value was not finite */
    cufftHandle plan;
} ws;

template <typename T>
__global__ void widen(const T *in, double *x, size_t total, unsigned *bad)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        const double v = (double)in[i];
        if (!isfinite(v))
            *bad = 1;
        x[i] = v;
    }
}

/* quality/src/spectrum.c's shells(): shell round(|k|), the half spectrum's planes 0 < kx < n/2
 * counted twice. */
__global__ void shell_sums(const cufftDoubleComplex *f, size_t n, double *sums)
{
    extern __shared__ double s[];
    const size_t nh = n / 2 + 1, bins = n * n * nh;
    for (size_t i = threadIdx.x; i < 2 * nh; i += blockDim.x)
        s[i] = 0;
    __syncthreads();
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bins;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t k = i % nh, row = i / nh, y = row % n, z = row / n;
        const double fz = z <= n / 2 ? (double)z : (double)z - (double)n;
        const double fy = y <= n / 2 ? (double)y : (double)y - (double)n;
        const size_t sh = (size_t)floor(sqrt(fz * fz + fy * fy + (double)(k * k)) + 0.5);
        if (sh > n / 2)
            continue;
        const double weight = k == 0 || 2 * k == n ? 1 : 2;
        atomicAdd(&s[sh], weight * (f[i].x * f[i].x + f[i].y * f[i].y));
        atomicAdd(&s[nh + sh], weight);
    }
    __syncthreads();
    for (size_t i = threadIdx.x; i < 2 * nh; i += blockDim.x)
        if (s[i] != 0)
            atomicAdd(&sums[i], s[i]);
}

void hzq_spectrum_gpu_release(void)
{
    if (ws.n)
        cufftDestroy(ws.plan);
    cudaFree(ws.x);
    cudaFree(ws.f);
    cudaFree(ws.sums);
    cudaFree(ws.bad);
    ws = {};
}

static int workspace(size_t n)
{
    if (ws.n == n)
        return 0;
    hzq_spectrum_gpu_release();
    const size_t nh = n / 2 + 1;
    if (cudaMalloc(&ws.x, sizeof(double) * n * n * n) != cudaSuccess ||
        cudaMalloc(&ws.f, sizeof(cufftDoubleComplex) * n * n * nh) != cudaSuccess ||
        cudaMalloc(&ws.sums, sizeof(double) * 2 * nh) != cudaSuccess ||
        cudaMalloc(&ws.bad, sizeof(unsigned)) != cudaSuccess ||
        cufftPlan3d(&ws.plan, (int)n, (int)n, (int)n, CUFFT_D2Z) != CUFFT_SUCCESS) {
        ws.n = 0;   /* no plan to destroy */
        hzq_spectrum_gpu_release();
        cudaGetLastError();
        return -1;
    }
    ws.n = n;
    return 0;
}

int hzq_power_spectrum_gpu(const void *in, int in_device, int is_f32, size_t n, double *p,
                           double *w)
{
    const size_t nh = n / 2 + 1, total = n * n * n, shared = sizeof(double) * 2 * nh;
    int device_count = 0;
    unsigned bad = 0;
    if (shared > SPEC_SHARED_MAX || cudaGetDeviceCount(&device_count) != cudaSuccess ||
        device_count == 0 || workspace(n) != 0) {
        cudaGetLastError();
        return -2;
    }
    /* a host field goes through the spectrum's buffer, which is at least as large */
    const size_t blocks = (total + SPEC_THREADS - 1) / SPEC_THREADS;
    const unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
    int ok = (in_device || cudaMemcpy(ws.f, in, total * (is_f32 ? 4 : 8),
                                      cudaMemcpyHostToDevice) == cudaSuccess) &&
             cudaMemset(ws.bad, 0, sizeof(unsigned)) == cudaSuccess &&
             cudaMemset(ws.sums, 0, shared) == cudaSuccess;
    const void *field = in_device ? in : (const void *)ws.f;
    if (ok && is_f32)
        widen<float><<<grid, SPEC_THREADS>>>((const float *)field, ws.x, total, ws.bad);
    else if (ok)
        widen<double><<<grid, SPEC_THREADS>>>((const double *)field, ws.x, total, ws.bad);
    ok = ok && cudaGetLastError() == cudaSuccess &&
         cufftExecD2Z(ws.plan, ws.x, ws.f) == CUFFT_SUCCESS;
    if (ok)
        shell_sums<<<grid, SPEC_THREADS, shared>>>(ws.f, n, ws.sums);
    double *host = ok ? (double *)malloc(shared) : NULL;
    ok = host && cudaGetLastError() == cudaSuccess &&
         cudaMemcpy(host, ws.sums, shared, cudaMemcpyDeviceToHost) == cudaSuccess &&
         cudaMemcpy(&bad, ws.bad, sizeof bad, cudaMemcpyDeviceToHost) == cudaSuccess;
    if (ok)
        for (size_t s = 0; s < nh; s++) {
            p[s] = host[s];
            w[s] = host[nh + s];
        }
    free(host);
    if (!ok) {
        cudaGetLastError();
        hzq_spectrum_gpu_release();
        return -2;
    }
    return bad ? -1 : 0;
}
