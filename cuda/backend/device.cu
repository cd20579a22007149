/* The backend's calls that are no codec's: how many devices there are, page-locked host memory
 * for callers, and checksums and copies of device memory. */
#include "workspace.h"

#include <pthread.h>
#include <string.h>

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int count_cached;

static void count_init(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        n = 0;
        cudaGetLastError();
    }
    count_cached = n;
}

int hzc_device_count(void)
{
    pthread_once(&count_once, count_init);
    return count_cached;
}

void *hzc_host_alloc(size_t n)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, n ? n : 1, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

int hzc_host_free(void *p)
{
    if (!hzc_host_pinned(p))
        return 0;
    cudaFreeHost(p);
    return 1;
}

h5zgpu_status hzc_sum(const void *p_dev, uint64_t n, uint32_t *sum, int device,
                                 void *stream)
{
    hzc_call c;
    h5zgpu_status st = hzc_call_begin(&c, device, stream);
    if (st != H5ZGPU_OK)
        goto done;
    CK(cudaMemsetAsync(c.ws->sc, 0, sizeof(hzc_scalars), c.s), "reset of the counters");
    CK(hzc_launch_checksum((const uint8_t *)p_dev, n, 0, 0, c.ws->sc, c.ws->sms, c.s),
       "launch of the checksum kernel");
    if ((st = hzc_sync_scalars(&c)) != H5ZGPU_OK)
        goto done;
    *sum = c.ws->hsc->sum;
done:
    hzc_call_end(&c, st);
    return st;
}

h5zgpu_status hzc_copy(void *dst, int dst_dev, const void *src, int src_dev, uint64_t n,
                                  int device, void *stream)
{
    hzc_call c;
    h5zgpu_status st;
    (void)dst_dev, (void)src_dev;   /* unified addressing tells the kinds apart */
    if (n == 0)
        return H5ZGPU_OK;
    if ((st = hzc_call_begin(&c, device, stream)) != H5ZGPU_OK)
        goto done;
    CK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, c.s), "copy");
    CK(hzc_wait(&c), "copy");
done:
    hzc_call_end(&c, st);
    return st;
}

/* Item i's len[i] bytes from src[i] to dst[i], a CTA an item: the headers of a batch, a few
 * hundred bytes each (CUB's batched copy would need temporary storage for as little). */
__global__ void hzc_copy_many_kernel(const uint8_t *const *src, uint8_t *const *dst,
                                     const uint32_t *len)
{
    const unsigned i = blockIdx.x;
    for (unsigned k = threadIdx.x; k < len[i]; k += blockDim.x)
        dst[i][k] = src[i][k];
}

/* Up to stride bytes an item between the host (one after another, stride apart) and the
 * device (at dev[i]): put (host to device) or get. */
static h5zgpu_status move_many(int put, unsigned count, uint8_t *host, uint64_t stride,
                               const size_t *len, const void *const *dev, int device)
{
    hzc_call c;
    const uint64_t pb = 8ull * count, lb = (4ull * count + 7) & ~7ull;
    const uint64_t total = 2 * pb + lb + count * stride;
    h5zgpu_status st;
    if (count == 0)
        return H5ZGPU_OK;
    if ((st = hzc_call_begin(&c, device, NULL)) != H5ZGPU_OK)
        goto done;
    hzc_ws *w;
    w = c.ws;
    if ((st = hzc_buf_need(&w->jobs, total, 0)) != H5ZGPU_OK ||
        (st = hzc_buf_need(&w->hjobs, total, 1)) != H5ZGPU_OK)
        goto done;
    {
        /* the staging rows' and the items' places, the lengths, the rows */
        uint8_t *h = (uint8_t *)w->hjobs.p, *d = (uint8_t *)w->jobs.p;
        const uint8_t **rows = (const uint8_t **)h, *row0 = d + 2 * pb + lb;
        for (unsigned i = 0; i < count; i++) {
            rows[i] = row0 + i * stride;
            ((uint32_t *)(h + 2 * pb))[i] = (uint32_t)len[i];
        }
        memcpy(h + pb, dev, pb);
        if (put)
            memcpy(h + 2 * pb + lb, host, count * stride);
        CK(cudaMemcpyAsync(d, h, put ? total : 2 * pb + lb, cudaMemcpyHostToDevice, c.s),
           "upload of the places");
        const uint8_t *const *from = (const uint8_t *const *)(put ? d : d + pb);
        uint8_t *const *to = (uint8_t *const *)(put ? d + pb : d);
        hzc_copy_many_kernel<<<count, 128, 0, c.s>>>(from, to, (const uint32_t *)(d + 2 * pb));
        CK(cudaGetLastError(), "launch of the batch's copies");
        if (!put)
            CK(cudaMemcpyAsync(h + 2 * pb + lb, row0, count * stride, cudaMemcpyDeviceToHost, c.s),
               "download of the batch's copies");
        CK(hzc_wait(&c), "the batch's copies");
        if (!put)
            memcpy(host, h + 2 * pb + lb, count * stride);
    }
done:
    hzc_call_end(&c, st);
    return st;
}

h5zgpu_status hzc_put_many(unsigned count, const uint8_t *src, uint64_t stride,
                           const size_t *len, uint8_t *const *dst, int device)
{
    return move_many(1, count, (uint8_t *)src, stride, len, (const void *const *)dst, device);
}

h5zgpu_status hzc_get_many(unsigned count, const void *const *src, const size_t *len,
                           uint8_t *dst, uint64_t stride, int device)
{
    return move_many(0, count, dst, stride, len, src, device);
}
