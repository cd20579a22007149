/* Dataset parameters, the selected block and the chunks it touches; host copies between them. */
#include "plan.h"

#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CD 64
#define BATCH_MAX 64
#define BATCH_BYTES ((size_t)64 << 20)

h5zgpu_status h5zgpu_dataset_params(hid_t dset, h5zgpu_params *p)
{
    hid_t dcpl = H5Dget_create_plist(dset), type = H5Dget_type(dset);
    h5zgpu_status st = H5ZGPU_E_INVALID_ARG;
    if (dcpl < 0 || type < 0) {
        hz_fail(st, "h5zgpu_dataset: not a dataset");
        goto done;
    }
    if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
        hz_fail(st, "h5zgpu_dataset: the dataset is not chunked");
        goto done;
    }
    int nf = H5Pget_nfilters(dcpl);
    unsigned flags, cd[MAX_CD], conf;
    size_t ncd = MAX_CD;
    char name[64];
    H5Z_filter_t id = nf == 1 ? H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, sizeof name, name,
                                               &conf)
                              : -1;
    if (id != H5ZGPU_FILTER_ID) {
        hz_fail(st, "h5zgpu_dataset: the dataset has %d filter(s)%s; direct chunk I/O needs "
                "filter %d alone (write through H5Dwrite otherwise)",
                nf, nf == 1 ? ", not 33900" : "", H5ZGPU_FILTER_ID);
        goto done;
    }
    int big = 0;
    st = h5zgpu_params_from_cd_values(ncd, cd, p, &big);
    if (st != H5ZGPU_OK)
        goto done;
    if (big || H5Tget_class(type) != H5T_FLOAT ||
        H5Tget_size(type) != (p->dtype == H5ZGPU_FLOAT32 ? 4u : 8u)) {
        st = hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: the dataset is not little-endian "
                     "float32 or float64 as its cd_values say");
        goto done;
    }
done:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (type >= 0)
        H5Tclose(type);
    return st;
}

/* The block file_space selects, as start and count per axis. */
static h5zgpu_status selected_block(const ds_plan *pl, hid_t file_space, hsize_t *start,
                                    hsize_t *count)
{
    if (file_space == H5S_ALL) {
        for (unsigned d = 0; d < pl->rank; d++) {
            start[d] = 0;
            count[d] = pl->extent[d];
        }
        return H5ZGPU_OK;
    }
    hsize_t lo[H5ZGPU_MAX_RANK], hi[H5ZGPU_MAX_RANK], cells = 1;
    if (H5Sget_simple_extent_ndims(file_space) != (int)pl->rank)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the selection's rank is not the "
                       "dataset's");
    hssize_t npoints = H5Sget_select_npoints(file_space);
    if (npoints == 0) {
        memset(count, 0, pl->rank * sizeof *count);
        memset(start, 0, pl->rank * sizeof *start);
        return H5ZGPU_OK;
    }
    if (npoints < 0 || H5Sget_select_bounds(file_space, lo, hi) < 0)
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the selection has no bounds");
    for (unsigned d = 0; d < pl->rank; d++) {
        if (hi[d] >= pl->extent[d])
            return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the selection reaches past "
                           "the dataset's extent on axis %u", d);
        start[d] = lo[d];
        count[d] = hi[d] - lo[d] + 1;
        cells *= count[d];
    }
    if (cells != (hsize_t)npoints)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: the selection is not one block "
                       "(%llu points in a bounding box of %llu)", (unsigned long long)npoints,
                       (unsigned long long)cells);
    return H5ZGPU_OK;
}

h5zgpu_status ds_plan_make(hid_t dset, hid_t file_space, ds_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->dset = dset;
    h5zgpu_status st = h5zgpu_dataset_params(dset, &pl->p);
    if (st != H5ZGPU_OK)
        return st;
    hid_t space = H5Dget_space(dset);
    int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    if (rank != (int)pl->p.rank || H5Sget_simple_extent_dims(space, pl->extent, NULL) < 0) {
        if (space >= 0)
            H5Sclose(space);
        return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: the dataset's rank is not its "
                       "cd_values' rank");
    }
    H5Sclose(space);
    pl->rank = (unsigned)rank;
    pl->elem = pl->p.dtype == H5ZGPU_FLOAT32 ? 4 : 8;
    pl->chunk_bytes = pl->elem;
    for (unsigned d = 0; d < pl->rank; d++) {
        pl->chunk[d] = pl->p.dims[d];
        pl->chunk_bytes *= (size_t)pl->chunk[d];
    }
    pl->cap = h5zgpu_compress_bound(&pl->p);
    st = selected_block(pl, file_space, pl->start, pl->count);
    if (st != H5ZGPU_OK)
        return st;
    pl->nchunks = 1;
    pl->stride = 1;
    for (unsigned d = 0; d < pl->rank; d++) {
        if (pl->count[d] == 0) {
            pl->nchunks = 0;
            break;
        }
        pl->first[d] = pl->start[d] / pl->chunk[d];
        pl->grid[d] = (pl->start[d] + pl->count[d] - 1) / pl->chunk[d] - pl->first[d] + 1;
        pl->nchunks *= (size_t)pl->grid[d];
    }
    return H5ZGPU_OK;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        const size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A stride prime to n near its golden section (1 when n < 3). */
static size_t golden_stride(size_t n)
{
    if (n < 3)
        return 1;
    size_t step = (size_t)((double)n * 0.6180339887498949);
    while (gcd(step, n) != 1)
        step++;
    return step;
}

void ds_plan_scatter(ds_plan *pl)
{
    pl->stride = (uint64_t)pl->nchunks >> 32 ? 1 : golden_stride(pl->nchunks);
}

void ds_overlap_of(const ds_plan *pl, size_t k, ds_overlap *ov)
{
    if (pl->stride > 1)   /* both under 2^32: no overflow */
        k = (size_t)((uint64_t)k * pl->stride % pl->nchunks);
    ov->whole = 1;
    for (unsigned d = pl->rank; d-- > 0;) {
        hsize_t c = pl->first[d] + (hsize_t)k % pl->grid[d];
        k /= (size_t)pl->grid[d];
        hsize_t o = c * pl->chunk[d], end = o + pl->chunk[d];
        hsize_t lo = pl->start[d] > o ? pl->start[d] : o;
        hsize_t hi = pl->start[d] + pl->count[d] < end ? pl->start[d] + pl->count[d] : end;
        ov->origin[d] = o;
        ov->in_chunk[d] = lo - o;
        ov->in_block[d] = lo - pl->start[d];
        ov->n[d] = hi - lo;
        ov->whole = ov->whole && ov->n[d] == pl->chunk[d];
    }
}

void ds_fill_chunk(const ds_plan *pl, void *chunk)
{
    size_t n = pl->chunk_bytes / pl->elem;
    double fill = pl->p.has_fill ? pl->p.fill : 0.0;
    if (pl->p.dtype == H5ZGPU_FLOAT32) {
        float v = (float)fill, *c = chunk;
        for (size_t i = 0; i < n; i++)
            c[i] = v;
    } else {
        double *c = chunk;
        for (size_t i = 0; i < n; i++)
            c[i] = fill;
    }
}

h5zgpu_status ds_stored(const ds_plan *pl, const hsize_t *origin, void *buf, size_t *len)
{
    char where[256];
    hsize_t size = 0;
    uint32_t mask = 0;
    herr_t got;
    *len = 0;
    H5E_BEGIN_TRY { got = H5Dget_chunk_storage_size(pl->dset, origin, &size); } H5E_END_TRY;
    if (got < 0 || size == 0)
        return H5ZGPU_OK;   /* never written: HDF5 fails or says 0, by version */
    if (size > pl->cap)
        return hz_fail(H5ZGPU_E_CORRUPT, "h5zgpu_dataset: the chunk at %s is stored in %llu "
                       "bytes, more than any chunk of these parameters takes (%zu)",
                       ds_origin_text(pl, origin, where, sizeof where),
                       (unsigned long long)size, pl->cap);
    if (H5Dread_chunk(pl->dset, H5P_DEFAULT, origin, &mask, buf) < 0)
        return hz_fail(H5ZGPU_E_CORRUPT, "h5zgpu_dataset: H5Dread_chunk of the chunk at %s "
                       "failed", ds_origin_text(pl, origin, where, sizeof where));
    if (mask != 0)
        return hz_fail(H5ZGPU_E_UNSUPPORTED, "h5zgpu_dataset: the chunk at %s was stored with "
                       "the filter skipped (filter mask %u)",
                       ds_origin_text(pl, origin, where, sizeof where), (unsigned)mask);
    *len = (size_t)size;
    return H5ZGPU_OK;
}

h5zgpu_status ds_fetch(const ds_plan *pl, size_t first, size_t count, unsigned char *blobs,
                       size_t *len)
{
    h5zgpu_status st = H5ZGPU_OK;
    for (size_t i = 0; st == H5ZGPU_OK && i < count; i++) {
        ds_overlap ov;
        ds_overlap_of(pl, first + i, &ov);
        st = ds_stored(pl, ov.origin, blobs + i * pl->cap, &len[i]);
    }
    return st;
}

h5zgpu_status ds_store(const ds_plan *pl, size_t first, size_t count, const unsigned char *blobs,
                       const size_t *len)
{
    for (size_t i = 0; i < count; i++) {
        ds_overlap ov;
        char where[256];
        ds_overlap_of(pl, first + i, &ov);
        if (H5Dwrite_chunk(pl->dset, H5P_DEFAULT, 0, ov.origin, len[i], blobs + i * pl->cap) < 0)
            return hz_fail(H5ZGPU_E_INVALID_ARG, "h5zgpu_dataset: H5Dwrite_chunk of the chunk "
                           "at %s failed", ds_origin_text(pl, ov.origin, where, sizeof where));
    }
    return H5ZGPU_OK;
}

size_t ds_batch_chunks(const ds_plan *pl)
{
    size_t n = BATCH_BYTES / (pl->chunk_bytes + pl->cap);
    return n < 1 ? 1 : n > BATCH_MAX ? BATCH_MAX : n;
}

const char *ds_origin_text(const ds_plan *pl, const hsize_t *origin, char *buf, size_t size)
{
    size_t used = 0;
    used += (size_t)snprintf(buf, size, "(");
    for (unsigned d = 0; d < pl->rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%llu", d ? ", " : "",
                                 (unsigned long long)origin[d]);
    if (used < size)
        snprintf(buf + used, size - used, ")");
    return buf;
}
