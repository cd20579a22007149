/* Whole-dataset I/O with device buffers: each chunk is cut out of the block and padded on the
 * GPU (cudaMemcpy3D over the fill value or the stored chunk, decompressed there), compressed
 * there, and only its compressed bytes cross PCIe to H5Dwrite_chunk; reads go the other way.
 * Work is ordered on the legacy default stream, after what the caller queued there. */
#include "device_io.h"

#include "error.h"

#ifdef H5ZGPU_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct gpu {
    int device;
    void *d_chunk;    /* a chunk being cut or placed */
    void *d_fill;     /* a chunk of the fill value */
    void *d_blob;     /* compressed bytes */
    void *h_blob;     /* their pinned host copy */
    size_t h_cap;
} gpu;

static h5zgpu_status cuda_failed(cudaError_t e, const char *what)
{
    return hz_fail(H5ZGPU_E_DEVICE, "h5zgpu_dataset: %s failed: %s", what,
                   cudaGetErrorString(e));
}

static void gpu_free(gpu *g)
{
    cudaFree(g->d_chunk);
    cudaFree(g->d_fill);
    cudaFree(g->d_blob);
    cudaFreeHost(g->h_blob);
}

static h5zgpu_status gpu_open(const ds_plan *pl, const void *d_block, gpu *g)
{
    struct cudaPointerAttributes at;
    cudaError_t e;
    *g = (gpu){0};
    if (pl->rank > 3)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers of rank %u (at "
                       "most 3; use a host buffer)", pl->rank);
    if (cudaPointerGetAttributes(&at, d_block) != cudaSuccess ||
        (at.type != cudaMemoryTypeDevice && at.type != cudaMemoryTypeManaged)) {
        cudaGetLastError();
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the buffer is not CUDA device "
                       "memory (pass H5ZGPU_MEMORY_HOST for host memory)");
    }
    g->device = at.device;
    void *fill = malloc(pl->chunk_bytes);
    if (!fill)
        return hz_fail(H5ZGPU_E_NOMEM, "h5zgpu_dataset: out of memory");
    ds_fill_chunk(pl, fill);
    g->h_cap = pl->cap;
    if ((e = cudaSetDevice(g->device)) != cudaSuccess ||
        (e = cudaMalloc(&g->d_chunk, pl->chunk_bytes)) != cudaSuccess ||
        (e = cudaMalloc(&g->d_fill, pl->chunk_bytes)) != cudaSuccess ||
        (e = cudaMalloc(&g->d_blob, pl->cap)) != cudaSuccess ||
        (e = cudaMallocHost(&g->h_blob, g->h_cap)) != cudaSuccess ||
        (e = cudaMemcpy(g->d_fill, fill, pl->chunk_bytes, cudaMemcpyHostToDevice)) !=
            cudaSuccess) {
        free(fill);
        gpu_free(g);
        return cuda_failed(e, "setting up the device buffers");
    }
    free(fill);
    return H5ZGPU_OK;
}

/* Copies the overlap of a chunk between the block and a chunk buffer, both in device memory;
 * axes are padded to three in front. */
static cudaError_t copy_overlap(const ds_plan *pl, const ds_overlap *ov, int to_chunk,
                                void *block, void *chunk)
{
    size_t n[3], bs[3], bp[3], cs[3], cp[3];
    unsigned pad = 3 - pl->rank;
    for (unsigned d = 0; d < 3; d++) {
        int real = d >= pad;
        n[d] = real ? (size_t)ov->n[d - pad] : 1;
        bs[d] = real ? (size_t)pl->count[d - pad] : 1;
        bp[d] = real ? (size_t)ov->in_block[d - pad] : 0;
        cs[d] = real ? (size_t)pl->chunk[d - pad] : 1;
        cp[d] = real ? (size_t)ov->in_chunk[d - pad] : 0;
    }
    size_t e = pl->elem;
    struct cudaPitchedPtr bptr = {.ptr = block, .pitch = bs[2] * e, .xsize = bs[2] * e,
                                  .ysize = bs[1]};
    struct cudaPitchedPtr cptr = {.ptr = chunk, .pitch = cs[2] * e, .xsize = cs[2] * e,
                                  .ysize = cs[1]};
    struct cudaPos bpos = {.x = bp[2] * e, .y = bp[1], .z = bp[0]};
    struct cudaPos cpos = {.x = cp[2] * e, .y = cp[1], .z = cp[0]};
    struct cudaMemcpy3DParms m = {0};
    m.srcPtr = to_chunk ? bptr : cptr;
    m.srcPos = to_chunk ? bpos : cpos;
    m.dstPtr = to_chunk ? cptr : bptr;
    m.dstPos = to_chunk ? cpos : bpos;
    m.extent = (struct cudaExtent){.width = n[2] * e, .height = n[1], .depth = n[0]};
    m.kind = cudaMemcpyDeviceToDevice;
    return cudaMemcpy3DAsync(&m, 0);
}

/* The stored chunk at origin decompressed into g->d_chunk; *found 0 when there is none. */
static h5zgpu_status stored_to_device(const ds_plan *pl, gpu *g, const hsize_t *origin,
                                      int *found)
{
    void *blob;
    size_t len, got = 0;
    h5zgpu_status st = ds_stored(pl, origin, &blob, &len);
    *found = blob != NULL;
    if (st != H5ZGPU_OK || !blob)
        return st;
    if (len > pl->cap) {
        free(blob);
        return hz_fail(H5ZGPU_E_CORRUPT, "h5zgpu_dataset: a stored chunk is larger than any "
                       "chunk of these parameters");
    }
    cudaError_t e = cudaMemcpy(g->d_blob, blob, len, cudaMemcpyHostToDevice);
    free(blob);
    if (e != cudaSuccess)
        return cuda_failed(e, "copying a stored chunk to the GPU");
    st = h5zgpu_decompress_device(g->d_blob, len, g->d_chunk, pl->chunk_bytes, &got, g->device,
                                  NULL);
    if (st == H5ZGPU_OK && got != pl->chunk_bytes)
        st = hz_fail(H5ZGPU_E_CORRUPT, "the chunk decompressed to the wrong size");
    if (st != H5ZGPU_OK) {
        char where[256], msg[512];
        snprintf(msg, sizeof msg, "%s", h5zgpu_last_error());
        return hz_fail(st, "h5zgpu_dataset: the stored chunk at %s: %s",
                       ds_origin_text(pl, origin, where, sizeof where), msg);
    }
    return H5ZGPU_OK;
}

static h5zgpu_status write_chunk(const ds_plan *pl, gpu *g, size_t k, const void *d_block)
{
    ds_overlap ov;
    char where[256];
    cudaError_t e = cudaSuccess;
    int found = 0, in_place = 1;
    ds_overlap_of(pl, k, &ov);
    for (unsigned d = 0; d < pl->rank; d++)   /* the block is this very chunk */
        in_place = in_place && ov.whole && pl->count[d] == pl->chunk[d];
    const void *src = in_place ? d_block : g->d_chunk;
    if (!in_place) {
        h5zgpu_status st = ov.whole ? H5ZGPU_OK : stored_to_device(pl, g, ov.origin, &found);
        if (st != H5ZGPU_OK)
            return st;
        if ((!ov.whole && !found &&
             (e = cudaMemcpyAsync(g->d_chunk, g->d_fill, pl->chunk_bytes,
                                  cudaMemcpyDeviceToDevice, 0)) != cudaSuccess) ||
            (e = copy_overlap(pl, &ov, 1, (void *)d_block, g->d_chunk)) != cudaSuccess)
            return cuda_failed(e, "cutting a chunk on the GPU");
    }
    size_t len = 0;
    h5zgpu_status st = h5zgpu_compress_device(&pl->p, src, g->d_blob, pl->cap, &len, g->device,
                                              NULL);
    if (st != H5ZGPU_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", h5zgpu_last_error());
        return hz_fail(st, "h5zgpu_dataset: compressing the chunk at %s: %s",
                       ds_origin_text(pl, ov.origin, where, sizeof where), msg);
    }
    if ((e = cudaMemcpy(g->h_blob, g->d_blob, len, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return cuda_failed(e, "copying a compressed chunk to the host");
    if (H5Dwrite_chunk(pl->dset, H5P_DEFAULT, 0, ov.origin, len, g->h_blob) < 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: H5Dwrite_chunk of the chunk at %s "
                       "failed", ds_origin_text(pl, ov.origin, where, sizeof where));
    return H5ZGPU_OK;
}

static h5zgpu_status read_chunk(const ds_plan *pl, gpu *g, size_t k, void *d_block)
{
    ds_overlap ov;
    int found;
    ds_overlap_of(pl, k, &ov);
    h5zgpu_status st = stored_to_device(pl, g, ov.origin, &found);
    if (st != H5ZGPU_OK)
        return st;
    cudaError_t e = copy_overlap(pl, &ov, 0, d_block, found ? g->d_chunk : g->d_fill);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(0);
    return e == cudaSuccess ? H5ZGPU_OK : cuda_failed(e, "placing a chunk on the GPU");
}

h5zgpu_status ds_write_device(const ds_plan *pl, const void *d_block)
{
    gpu g;
    h5zgpu_status st = gpu_open(pl, d_block, &g);
    for (size_t k = 0; st == H5ZGPU_OK && k < pl->nchunks; k++)
        st = write_chunk(pl, &g, k, d_block);
    gpu_free(&g);
    return st;
}

h5zgpu_status ds_read_device(const ds_plan *pl, void *d_block)
{
    gpu g;
    h5zgpu_status st = gpu_open(pl, d_block, &g);
    for (size_t k = 0; st == H5ZGPU_OK && k < pl->nchunks; k++)
        st = read_chunk(pl, &g, k, d_block);
    gpu_free(&g);
    return st;
}

#else

h5zgpu_status ds_write_device(const ds_plan *pl, const void *d_block)
{
    (void)pl;
    (void)d_block;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers need a build with the "
                   "CUDA backend");
}

h5zgpu_status ds_read_device(const ds_plan *pl, void *d_block)
{
    (void)pl;
    (void)d_block;
    return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: device buffers need a build with the "
                   "CUDA backend");
}

#endif
