/* What nyx_writer's layouts share: boxes, copies off the GPU, compression of a box, the bound
 * check and the dataset creation properties. */
#include "nyx_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAX_CD 64

void nw_box_origin(const nw_opts *o, size_t k, size_t origin[3])
{
    size_t per = o->n / o->box;
    origin[2] = k % per * o->box;
    origin[1] = k / per % per * o->box;
    origin[0] = k / per / per * o->box;
}

int nw_to_host(const nw_rank *r, int f, size_t at, size_t n, float *dst)
{
#ifdef H5ZGPU_HAVE_CUDA
    if (r->device >= 0)
        return cudaMemcpy(dst, (const float *)r->dev[f] + at, n * sizeof *dst,
                          cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
#endif
    memcpy(dst, r->host[f] + at, n * sizeof *dst);
    return 0;
}

static void *host_alloc(const nw_rank *r, size_t bytes)
{
#ifdef H5ZGPU_HAVE_CUDA
    void *p = NULL;
    if (r->device >= 0)   /* pinned: copies off the GPU at full speed */
        return cudaMallocHost(&p, bytes) == cudaSuccess ? p : NULL;
#endif
    (void)r;
    return malloc(bytes);
}

static void host_free(const nw_rank *r, void *p)
{
#ifdef H5ZGPU_HAVE_CUDA
    if (r->device >= 0) {
        cudaFreeHost(p);
        return;
    }
#endif
    (void)r;
    free(p);
}

float *nw_stage_alloc(const nw_rank *r, size_t n)
{
    return host_alloc(r, n * sizeof(float));
}

void nw_stage_free(const nw_rank *r, float *p)
{
    host_free(r, p);
}

/* At least need bytes of host memory at *p (*cap of them), what it held lost when it grows. */
static int host_room(const nw_rank *r, unsigned char **p, size_t *cap, size_t need)
{
    if (*p && *cap >= need)
        return 0;
    host_free(r, *p);
    need += need / 4;   /* room for the next write's sizes to vary */
    *p = host_alloc(r, need ? need : 1);
    *cap = *p ? need : 0;
    return *p ? 0 : -1;
}

void nw_direct_free(const nw_rank *r)
{
    nw_direct *d = r->direct;
    if (!d)
        return;
#ifdef H5ZGPU_HAVE_CUDA
    if (d->scratch)
        cudaFree(d->scratch);
#endif
    for (int f = 0; f < NS_FIELDS; f++)
        if (d->blobs[f])
            host_free(r, d->blobs[f]);
    free(d);
}

int nw_dataset_params(hid_t dset, h5zgpu_params *p)
{
    unsigned flags, cd[MAX_CD], conf;
    size_t ncd = MAX_CD;
    char name[64];
    int big = 0;
    hid_t dcpl = H5Dget_create_plist(dset);
    herr_t got = H5Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &ncd, cd, sizeof name,
                                      name, &conf);
    H5Pclose(dcpl);
    return got < 0 || h5zgpu_params_from_cd_values(ncd, cd, p, &big) != H5ZGPU_OK || big ? -1
                                                                                          : 0;
}

int nw_compress_boxes(const nw_rank *r, const h5zgpu_params *p, int f, void **blob,
                      size_t *len)
{
    nw_direct *d = r->direct;
    size_t cap = h5zgpu_compress_bound(p), n = r->count, done = 0;
    if (n == 0)
        return 0;
    const void **in = malloc(n * sizeof *in);
    void **out = malloc(n * sizeof *out);
    size_t *caps = malloc(n * sizeof *caps);
    int bad = !in || !out || !caps;
    for (size_t i = 0; i < n; i++)
        caps[i] = cap;
#ifdef H5ZGPU_HAVE_CUDA
    if (!bad && r->device >= 0) {   /* on the GPU: only the compressed bytes come back */
        if (d->scratch_cap < n * cap) {
            if (d->scratch)
                cudaFree(d->scratch);
            d->scratch = NULL;
            d->scratch_cap = cudaMalloc(&d->scratch, n * cap) == cudaSuccess ? n * cap : 0;
        }
        bad = !d->scratch_cap;
        for (size_t i = 0; !bad && i < n; i++) {
            in[i] = (const float *)r->dev[f] + i * r->cells;
            out[i] = (unsigned char *)d->scratch + i * cap;
        }
        bad = bad || h5zgpu_compress_device_batch(p, n, in, out, caps, len, r->device, &done) !=
                         H5ZGPU_OK;
        size_t total = 0;
        for (size_t i = 0; !bad && i < n; i++)
            total += len[i];
        bad = bad || host_room(r, &d->blobs[f], &d->blobs_cap[f], total) != 0;
        for (size_t i = 0, at = 0; !bad && i < n; at += len[i], i++) {   /* back to back */
            blob[i] = d->blobs[f] + at;
            bad = cudaMemcpyAsync(blob[i], out[i], len[i], cudaMemcpyDeviceToHost, 0) !=
                  cudaSuccess;
        }
        bad = bad || cudaStreamSynchronize(0) != cudaSuccess;
    } else
#endif
    {
        bad = bad || host_room(r, &d->blobs[f], &d->blobs_cap[f], n * cap) != 0;
        for (size_t i = 0; !bad && i < n; i++) {
            in[i] = r->host[f] + i * r->cells;
            out[i] = blob[i] = d->blobs[f] + i * cap;
        }
        bad = bad || h5zgpu_compress_batch(p, n, in, out, caps, len, NULL, &done) != H5ZGPU_OK;
    }
    if (bad)
        fprintf(stderr, "nyx_writer rank %d: compressing %s: %s\n", r->rank, ns_field_names[f],
                h5zgpu_last_error());
    free(in);
    free(out);
    free(caps);
    return bad ? -1 : 0;
}

int nw_recorded_bounds(const char *path, const char *name, int rank, const hsize_t *offsets,
                       size_t count, nw_bound *out)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dset = file < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
    void *buf = NULL;
    int bad = dset < 0;
    for (size_t i = 0; !bad && i < count; i++) {
        hsize_t size = 0;
        uint32_t filters = 0;
        h5zgpu_info info;
        void *grown = NULL;
        bad = H5Dget_chunk_storage_size(dset, offsets + i * rank, &size) < 0 || !size ||
              !(grown = realloc(buf, size));
        buf = grown ? grown : buf;
        bad = bad || H5Dread_chunk(dset, H5P_DEFAULT, offsets + i * rank, &filters, buf) < 0 ||
              h5zgpu_chunk_info(buf, size, &info) != H5ZGPU_OK;
        out[i] = (nw_bound){H5ZGPU_MODE_ABS, bad ? 0 : info.eb_abs};
    }
    free(buf);
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
    return bad ? -1 : 0;
}

void nw_check(const nw_bound *b, const nw_bound *recorded, int exact, const float *want,
              const float *got, size_t n, size_t group, double *worst, size_t *misses)
{
    for (size_t g0 = 0; g0 < n; g0 += group) {
        size_t g1 = g0 + group < n ? g0 + group : n;
        const nw_bound *gb = b->mode == H5ZGPU_MODE_RATIO ? &recorded[g0 / group] : b;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = g0; i < g1; i++)
            if (isfinite(want[i])) {
                lo = want[i] < lo ? want[i] : lo;
                hi = want[i] > hi ? want[i] : hi;
            }
        for (size_t i = g0; i < g1; i++) {
            double w = want[i], err = fabs((double)got[i] - w), bound;
            if (exact || !isfinite(w)) {
                int same = memcmp(&want[i], &got[i], sizeof *got) == 0;
                *misses += !same;
                if (exact && !same && !(err <= *worst))
                    *worst = isnan(err) ? INFINITY : err;
                continue;
            }
            bound = gb->mode == H5ZGPU_MODE_ABS ? gb->eb
                    : gb->mode == H5ZGPU_MODE_REL ? gb->eb * (hi - lo)
                                                  : gb->eb * fabs(w);
            *misses += !(err <= bound);
            double ratio = bound > 0 ? err / bound : err > 0 ? INFINITY : 0;
            if (!(ratio <= *worst))
                *worst = ratio;
        }
    }
}

hid_t nw_dcpl(const nw_opts *o, nw_path p, const nw_bound *b, int rank, const hsize_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, chunk);
    /* space for a chunk when it is written (parallel HDF5 would allocate, and for a filtered
     * dataset compress, every chunk at create otherwise) */
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR);
    if (o->amrex)
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    if (p != NW_NONE) {
        unsigned cd[4] = {(unsigned)o->codec, (unsigned)b->mode};
        h5zgpu_eb_to_words(b->eb, &cd[2], &cd[3]);
        H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    }
    return dcpl;
}
