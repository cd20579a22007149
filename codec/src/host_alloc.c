/* Host memory for a caller's chunk buffers that the GPU path copies straight to and from:
 * page-locked when the work runs on a GPU (H5ZGPU_DEVICE), so that a batch uploads chunks
 * from it and delivers chunks into it without a pass through its staging buffer. */
#include "executor.h"

#ifdef H5ZGPU_HAVE_CUDA
#include "backend_gpu.h"
#endif

#include <stdlib.h>

void *h5zgpu_alloc_host(size_t n)
{
#ifdef H5ZGPU_HAVE_CUDA
    hz_target t;
    if (hz_resolve(NULL, &t) == H5ZGPU_OK && t.gpu) {
        void *p = hzc_host_alloc(n);
        if (p)
            return p;
    }
#endif
    return malloc(n ? n : 1);
}

void h5zgpu_free_host(void *p)
{
    if (!p)
        return;
#ifdef H5ZGPU_HAVE_CUDA
    if (hzc_host_free(p))
        return;
#endif
    free(p);
}
