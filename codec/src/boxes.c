/* Copies of boxes between a C-order host array and packed chunk buffers: the cut of an array
 * into the chunks a whole-dataset write compresses, and the placing of decompressed chunks into
 * the array a read fills. The slabs of the boxes (a box's planes along its first axis) are
 * shared among the library's CPU threads, so that a batch of a few large chunks still uses
 * every core and a caller in another language makes one call a batch, not one a chunk. */
#include "error.h"
#include "parallel.h"

#include "h5zgpu.h"

#include <string.h>

typedef struct box_job {
    unsigned char *array;      /* the array, or the chunks' source (scatter) */
    unsigned rank;
    size_t esize;
    uint64_t astride[H5ZGPU_MAX_RANK], cstride[H5ZGPU_MAX_RANK];   /* in elements */
    const uint64_t *array_pos, *chunk_pos, *n;
    void *const *chunks;
    uint64_t slabs;            /* slabs a box takes at most: items per box */
    int to_chunks;
} box_job;

/* Slab s of box k: its rows, the odometer over the axes between the first and the last. */
static void slab_task(void *ctx, uint64_t i)
{
    const box_job *J = ctx;
    const uint64_t k = i / J->slabs, s = i % J->slabs;
    const unsigned r = J->rank;
    const uint64_t *ap = J->array_pos + k * r, *cp = J->chunk_pos + k * r, *n = J->n + k * r;
    if (r > 1 && s >= n[0])
        return;
    uint64_t rows = 1;
    for (unsigned d = 1; d + 1 < r; d++)
        rows *= n[d];
    const size_t row = (size_t)n[r - 1] * J->esize;
    uint64_t idx[H5ZGPU_MAX_RANK] = {0};
    idx[0] = r > 1 ? s : 0;
    unsigned char *chunk = (unsigned char *)J->chunks[k];
    for (uint64_t q = 0; q < rows && row; q++) {
        uint64_t a = 0, c = 0;
        for (unsigned d = 0; d < r; d++) {
            const uint64_t at = d + 1 == r ? 0 : idx[d];
            a += (ap[d] + at) * J->astride[d];
            c += (cp[d] + at) * J->cstride[d];
        }
        if (J->to_chunks)
            memcpy(chunk + c * J->esize, J->array + a * J->esize, row);
        else
            memcpy(J->array + a * J->esize, chunk + c * J->esize, row);
        for (unsigned d = r - 1; d-- > 1;) {   /* the next row within the slab */
            if (++idx[d] < n[d])
                break;
            idx[d] = 0;
        }
    }
}

/* Checks the boxes against the array and the chunks and runs the copies. */
static h5zgpu_status copy_boxes(int to_chunks, unsigned char *array, unsigned rank,
                                const uint64_t *dims, const uint64_t *chunk_dims, size_t esize,
                                size_t count, const uint64_t *array_pos,
                                const uint64_t *chunk_pos, const uint64_t *n,
                                void *const *chunks)
{
    if (rank < 1 || rank > H5ZGPU_MAX_RANK || !esize || !dims || !chunk_dims ||
        (count && (!array || !array_pos || !chunk_pos || !n || !chunks)))
        return hz_fail(H5ZGPU_E_INVALID_ARG, "copying boxes: a rank of 1 to %d, an element "
                       "size and every array are needed", H5ZGPU_MAX_RANK);
    box_job J = {.array = array, .rank = rank, .esize = esize, .array_pos = array_pos,
                 .chunk_pos = chunk_pos, .n = n, .chunks = chunks, .slabs = 1,
                 .to_chunks = to_chunks};
    J.astride[rank - 1] = J.cstride[rank - 1] = 1;
    for (unsigned d = rank - 1; d-- > 0;) {
        J.astride[d] = J.astride[d + 1] * dims[d + 1];
        J.cstride[d] = J.cstride[d + 1] * chunk_dims[d + 1];
    }
    for (size_t k = 0; k < count; k++) {
        if (!chunks[k])
            return hz_fail(H5ZGPU_E_INVALID_ARG, "copying boxes: box %zu has no chunk", k);
        for (unsigned d = 0; d < rank; d++) {
            const uint64_t a = array_pos[k * rank + d], c = chunk_pos[k * rank + d];
            const uint64_t m = n[k * rank + d];
            if (a > dims[d] || m > dims[d] - a || c > chunk_dims[d] || m > chunk_dims[d] - c)
                return hz_fail(H5ZGPU_E_INVALID_ARG, "copying boxes: box %zu leaves the array "
                               "or its chunk on axis %u", k, d);
        }
        if (rank > 1 && n[k * rank] > J.slabs)
            J.slabs = n[k * rank];
    }
    if (count)
        hz_parallel_for(count * J.slabs, slab_task, &J);
    return H5ZGPU_OK;
}

h5zgpu_status h5zgpu_gather_boxes(const void *array, unsigned rank, const uint64_t *dims,
                                  const uint64_t *chunk_dims, size_t esize, size_t count,
                                  const uint64_t *array_pos, const uint64_t *chunk_pos,
                                  const uint64_t *n, void *const *chunks)
{
    /* read only: the job's array pointer serves both directions */
    return copy_boxes(1, (unsigned char *)(uintptr_t)array, rank, dims, chunk_dims, esize,
                      count, array_pos, chunk_pos, n, chunks);
}

h5zgpu_status h5zgpu_scatter_boxes(void *array, unsigned rank, const uint64_t *dims,
                                   const uint64_t *chunk_dims, size_t esize, size_t count,
                                   const uint64_t *array_pos, const uint64_t *chunk_pos,
                                   const uint64_t *n, const void *const *chunks)
{
    /* read only: the job's chunk pointers serve both directions */
    return copy_boxes(0, array, rank, dims, chunk_dims, esize, count, array_pos, chunk_pos, n,
                      (void *const *)(uintptr_t)chunks);
}
