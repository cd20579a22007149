// The point-wise and stencil passes of the quality metrics on the GPU, and the device buffers
// they read: each pass is one kernel, every thread folding its points into the sums of
// quality/src/sums.h with the functions the CPU passes call, a CTA merging its threads' sums
// into one partial, the host merging the partials in CTA order (so a result does not depend on
// scheduling). The histogram is counted in shared memory, then added to the global one.
#include "gpu.h"
#include "metrics_device.cuh"

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 256

// Host arrays reach the device in lanes: each of the host's threads copies its share of the
// array, slice by slice, into a pinned buffer of its own and sends it on a stream of its own
// (pageable cudaMemcpy, and one core's memcpy into pinned memory, run at a fraction of the
// link's speed).
#define LANES 16
#define LANE_BYTES (2u << 20)

static struct {
    void *a, *b;        // staged host arrays
    size_t cap;         // bytes of each
    void *partials;     // one partial sum per CTA
    size_t partials_cap;
    unsigned long long *hist;   // the spread pass's histogram
    void *pinned[LANES];   // each lane's slice
    cudaStream_t stream[LANES];
    char error[256];
} g;

int hzq_gpu_fail(cudaError_t e, const char *what)
{
    snprintf(g.error, sizeof g.error, "%s: %s", what, cudaGetErrorString(e));
    cudaGetLastError();   // clear a sticky launch error for the next call
    return -1;
}

const char *hzq_gpu_error(void)
{
    return g.error;
}

// A buffer of at least `bytes` for the CTAs' partial sums.
void *hzq_gpu_partials(size_t bytes)
{
    if (bytes > g.partials_cap) {
        cudaFree(g.partials);
        g.partials_cap = 0;
        if (cudaMalloc(&g.partials, bytes) != cudaSuccess) {
            g.partials = NULL;
            return NULL;
        }
        g.partials_cap = bytes;
    }
    return g.partials;
}

static int use(int device)
{
    cudaError_t e = cudaSetDevice(device);
    return e == cudaSuccess ? 0 : hzq_gpu_fail(e, "cudaSetDevice");
}

// The lanes' pinned slices and streams, made once.
static cudaError_t lanes(void)
{
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < LANES && e == cudaSuccess; k++) {
        if (g.pinned[k])
            continue;
        if ((e = cudaMallocHost(&g.pinned[k], LANE_BYTES)) != cudaSuccess) {
            g.pinned[k] = NULL;
        } else if ((e = cudaStreamCreateWithFlags(&g.stream[k], cudaStreamNonBlocking)) !=
                   cudaSuccess) {
            cudaFreeHost(g.pinned[k]);
            g.pinned[k] = NULL;
        }
    }
    return e;
}

// One array's copy to the device: lane t, a thread of its own, sends slices t, t + LANES, ...
struct stage_job {
    char *dst;
    const char *src;
    size_t bytes;
    int device;
};

struct stage_lane_arg {
    const stage_job *job;
    int lane;
    cudaError_t error;
};

static void *stage_lane(void *arg)
{
    stage_lane_arg *l = static_cast<stage_lane_arg *>(arg);
    const stage_job *j = l->job;
    const int t = l->lane;
    cudaError_t e = cudaSetDevice(j->device);   // a new thread starts on device 0
    for (size_t at = (size_t)t * LANE_BYTES; at < j->bytes && e == cudaSuccess;
         at += (size_t)LANES * LANE_BYTES) {
        const size_t len = j->bytes - at < LANE_BYTES ? j->bytes - at : LANE_BYTES;
        if ((e = cudaStreamSynchronize(g.stream[t])) != cudaSuccess)   // the slice is free
            break;
        memcpy(g.pinned[t], j->src + at, len);
        e = cudaMemcpyAsync(j->dst + at, g.pinned[t], len, cudaMemcpyHostToDevice, g.stream[t]);
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g.stream[t]);
    l->error = e;
    return NULL;
}

// Lanes whose thread cannot be started run on the caller's.
static cudaError_t to_device(void *dst, const void *src, size_t bytes, int device)
{
    const stage_job j = {static_cast<char *>(dst), static_cast<const char *>(src), bytes, device};
    stage_lane_arg arg[LANES];
    pthread_t tid[LANES];
    int started[LANES];
    for (int t = 0; t < LANES; t++) {
        arg[t] = {&j, t, cudaSuccess};
        started[t] = pthread_create(&tid[t], NULL, stage_lane, &arg[t]) == 0;
    }
    for (int t = 0; t < LANES; t++)
        if (!started[t])
            stage_lane(&arg[t]);
    cudaError_t e = cudaSuccess;
    for (int t = 0; t < LANES; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        if (e == cudaSuccess)
            e = arg[t].error;
    }
    return e;
}

int hzq_gpu_open(int device)
{
    if (use(device) != 0)
        return -1;
    cudaError_t e = cudaFree(0);
    return e == cudaSuccess ? 0 : hzq_gpu_fail(e, "the GPU's context");
}

int hzq_gpu_stage(int device, const void *a, const void *b, size_t bytes, int device_pointers,
                  const void **da, const void **db)
{
    cudaError_t e;
    if (use(device) != 0)
        return -1;
    if (device_pointers) {
        *da = a;
        *db = b;
        return 0;
    }
    if (bytes > g.cap) {
        cudaFree(g.a);
        cudaFree(g.b);
        g.a = g.b = NULL;
        g.cap = 0;
        if ((e = cudaMalloc(&g.a, bytes)) != cudaSuccess ||
            (e = cudaMalloc(&g.b, bytes)) != cudaSuccess)
            return hzq_gpu_fail(e, "device memory for the two arrays");
        g.cap = bytes;
    }
    if ((e = lanes()) != cudaSuccess || (e = to_device(g.a, a, bytes, device)) != cudaSuccess ||
        (b && (e = to_device(g.b, b, bytes, device)) != cudaSuccess))
        return hzq_gpu_fail(e, "copying the arrays to the GPU");
    *da = g.a;
    *db = b ? g.b : NULL;
    return 0;
}

void hzq_gpu_release(void)
{
    cudaFree(g.a);
    cudaFree(g.b);
    cudaFree(g.partials);
    cudaFree(g.hist);
    for (int k = 0; k < LANES; k++)
        if (g.pinned[k]) {
            cudaFreeHost(g.pinned[k]);
            cudaStreamDestroy(g.stream[k]);
        }
    memset(&g, 0, sizeof g);
}

__device__ __forceinline__ void merge(hq_point_sums *s, const hq_point_sums *o)
{
    hq_point_merge(s, o);
}
__device__ __forceinline__ void merge(hq_spread_acc *s, const hq_spread_acc *o)
{
    hq_spread_merge(s, o);
}
__device__ __forceinline__ void merge(hq_stencil_sums *s, const hq_stencil_sums *o)
{
    hq_stencil_merge(s, o);
}

// The CTA's threads' sums merged into out[blockIdx.x] (a tree over shared memory).
template <typename T> __device__ void cta_merge(const T &mine, T *out)
{
    extern __shared__ unsigned char raw[];
    T *sh = reinterpret_cast<T *>(raw);
    sh[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            merge(&sh[threadIdx.x], &sh[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = sh[0];
}

__global__ void __launch_bounds__(THREADS) hq_point_kernel(hq_view v, uint64_t n, hq_point_sums *out)
{
    hq_point_sums mine;
    hq_point_init(&mine);
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        hq_point_add(&v, i, &mine);
    cta_merge(mine, out);
}

__global__ void __launch_bounds__(THREADS)
    hq_spread_kernel(hq_view v, uint64_t n, hq_spread_in in, hq_spread_acc *out,
                     unsigned long long *hist)
{
    __shared__ unsigned long long bins[HQ_BINS];
    for (int k = threadIdx.x; k < HQ_BINS; k += blockDim.x)
        bins[k] = 0;
    __syncthreads();
    hq_spread_acc mine = {};
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        int bin = hq_spread_add(&v, i, n, &in, &mine);
        if (bin >= 0)
            atomicAdd(&bins[bin], 1ull);
    }
    cta_merge(mine, out);   // synchronises the CTA before and after
    for (int k = threadIdx.x; k < HQ_BINS; k += blockDim.x)
        if (bins[k])
            atomicAdd(&hist[k], bins[k]);
}

__global__ void __launch_bounds__(THREADS)
    hq_stencil_kernel(hq_view v, uint64_t n, hq_shape shape, hq_stencil_sums *out)
{
    hq_stencil_sums mine;
    hq_stencil_init(&mine);
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        hq_stencil_add(&v, i, &shape, &mine);
    cta_merge(mine, out);
}

// Enough CTAs to fill the card several times over, no more than the points need.
static unsigned ctas_for(uint64_t n)
{
    int dev = 0, sms = 132;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    uint64_t need = (n + THREADS - 1) / THREADS, most = 8ull * (unsigned)sms;
    return (unsigned)(need < 1 ? 1 : need < most ? need : most);
}

// Runs `launch` with a partials buffer of `ctas` T's, then merges them on the host in order.
template <typename T, typename Launch, typename Merge>
static int reduce(unsigned ctas, const char *what, Launch launch, Merge host_merge, T *result)
{
    T *d = static_cast<T *>(hzq_gpu_partials(sizeof(T) * ctas));
    if (!d)
        return hzq_gpu_fail(cudaErrorMemoryAllocation, what);
    launch(d);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return hzq_gpu_fail(e, what);
    T *h = static_cast<T *>(malloc(sizeof(T) * ctas));
    if (!h)
        return hzq_gpu_fail(cudaErrorMemoryAllocation, what);
    e = cudaMemcpy(h, d, sizeof(T) * ctas, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        for (unsigned k = 0; k < ctas; k++)
            host_merge(result, &h[k]);
    free(h);
    return e == cudaSuccess ? 0 : hzq_gpu_fail(e, what);
}

int hzq_gpu_point(const hq_view *v, uint64_t n, hq_point_sums *s)
{
    unsigned ctas = ctas_for(n);
    hq_point_init(s);
    hq_view view = *v;
    return reduce(
        ctas, "the point-wise pass",
        [&](hq_point_sums *d) {
            hq_point_kernel<<<ctas, THREADS, THREADS * sizeof(hq_point_sums)>>>(view, n, d);
        },
        [](hq_point_sums *a, const hq_point_sums *b) { hq_point_merge(a, b); }, s);
}

int hzq_gpu_spread(const hq_view *v, uint64_t n, const hq_spread_in *in, hq_spread_sums *s)
{
    unsigned ctas = ctas_for(n);
    memset(s, 0, sizeof *s);
    cudaError_t e;
    if (!g.hist && (e = cudaMalloc(&g.hist, sizeof s->hist)) != cudaSuccess) {
        g.hist = NULL;
        return hzq_gpu_fail(e, "the histogram");
    }
    if ((e = cudaMemset(g.hist, 0, sizeof s->hist)) != cudaSuccess)
        return hzq_gpu_fail(e, "the histogram");
    unsigned long long *hist = g.hist;
    hq_view view = *v;
    hq_spread_in args = *in;
    int rc = reduce(
        ctas, "the spread pass",
        [&](hq_spread_acc *d) {
            hq_spread_kernel<<<ctas, THREADS, THREADS * sizeof(hq_spread_acc)>>>(view, n, args,
                                                                                  d, hist);
        },
        [](hq_spread_acc *a, const hq_spread_acc *b) { hq_spread_merge(a, b); }, &s->acc);
    if (rc == 0 && (e = cudaMemcpy(s->hist, hist, sizeof s->hist, cudaMemcpyDeviceToHost)) !=
                       cudaSuccess)
        rc = hzq_gpu_fail(e, "the histogram");
    return rc;
}

int hzq_gpu_stencil(const hq_view *v, const hq_shape *g, hq_stencil_sums *s)
{
    uint64_t n = g->rank ? g->dims[0] * g->stride[0] : 0;
    unsigned ctas = ctas_for(n);
    hq_stencil_init(s);
    hq_view view = *v;
    hq_shape shape = *g;
    return reduce(
        ctas, "the stencil pass",
        [&](hq_stencil_sums *d) {
            hq_stencil_kernel<<<ctas, THREADS, THREADS * sizeof(hq_stencil_sums)>>>(view, n,
                                                                                     shape, d);
        },
        [](hq_stencil_sums *a, const hq_stencil_sums *b) { hq_stencil_merge(a, b); }, s);
}
