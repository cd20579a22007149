/* The native layout: each field its own N^3 dataset native_fields/<name>, one chunk a box.
 *   none    collective H5Dwrite of each box, no filter (the baseline)
 *   filter  the same through filter 33900 (HDF5 >= 1.10.2 runs filters in parallel writes)
 *   direct  every rank compresses its boxes field after field on a thread of its own (on its
 *           GPU: only compressed bytes leave it) while the ranks store the fields already
 *           compressed in turn with H5Dwrite_chunk on the file opened serially: parallel HDF5
 *           has no collective direct chunk write, and independent ones from several ranks
 *           would each allocate file space on their own. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "nyx_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define GROUP "native_fields"

/* Box i of the rank's share (i < count) or nothing (the rank takes part in a collective write
 * it has no box for), selected in a copy of dset's dataspace. */
static hid_t box_selection(const nw_opts *o, const nw_rank *r, hid_t dset, size_t i)
{
    hid_t fs = H5Dget_space(dset);
    if (i >= r->count) {
        H5Sselect_none(fs);
        return fs;
    }
    size_t origin[3];
    nw_box_origin(o, r->first + i, origin);
    hsize_t at[3] = {origin[0], origin[1], origin[2]}, len[3] = {o->box, o->box, o->box};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, at, NULL, len, NULL);
    return fs;
}

/* Collective writes of the rank's boxes of field f, from host copies. */
static int write_boxes(const nw_opts *o, const nw_rank *r, hid_t dset, int f, float *stage)
{
    hsize_t len[3] = {o->box, o->box, o->box};
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    int bad = 0;
    for (size_t i = 0; i < r->most; i++) {
        hid_t fs = box_selection(o, r, dset, i), ms = H5Screate_simple(3, len, NULL);
        if (i < r->count)
            bad |= nw_to_host(r, f, i * r->cells, r->cells, stage);
        else
            H5Sselect_none(ms);
        bad |= H5Dwrite(dset, H5T_NATIVE_FLOAT, ms, fs, dxpl, stage) < 0;
        H5Sclose(fs);
        H5Sclose(ms);
    }
    H5Pclose(dxpl);
    return bad ? -1 : 0;
}

/* Field f's compressed boxes of every rank, stored in turn: rank 0 first, each after the one
 * before it, and rank 0 after the last rank's field f - 1. A failure anywhere stops the ranks
 * after it; *token says so to the caller. */
static int store_field(const nw_opts *o, const nw_rank *r, int f, void **blob, const size_t *len,
                       int *token)
{
    const int from = r->rank > 0 ? r->rank - 1 : r->size - 1;
    if (r->rank > 0 || (f > 0 && r->size > 1))
        MPI_Recv(token, 1, MPI_INT, from, f, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int bad = 0;
    if (!*token && r->count) {
        char name[128];
        snprintf(name, sizeof name, GROUP "/%s", ns_field_names[f]);
        hid_t file = H5Fopen(o->out, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t dset = file < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
        bad = dset < 0;
        for (size_t i = 0; !bad && i < r->count; i++) {
            size_t origin[3];
            nw_box_origin(o, r->first + i, origin);
            hsize_t at[3] = {origin[0], origin[1], origin[2]};
            bad = H5Dwrite_chunk(dset, H5P_DEFAULT, 0, at, len[i], blob[i]) < 0;
        }
        bad |= dset >= 0 && H5Dclose(dset) < 0;
        bad |= file < 0 || H5Fclose(file) < 0;
    }
    *token = *token || bad;
    const int to = r->rank + 1 < r->size ? r->rank + 1 : 0;
    if (r->rank + 1 < r->size || (f + 1 < NS_FIELDS && r->size > 1))
        MPI_Send(token, 1, MPI_INT, to, to == 0 ? f + 1 : f, MPI_COMM_WORLD);
    return bad ? -1 : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The compressing thread's work and what it tells the storing one: the fields done so far
 * (each with its status) and when the last was. It calls no MPI nor HDF5. */
typedef struct compressing {
    const nw_rank *r;
    const h5zgpu_params *p;   /* per field */
    void **blob;
    size_t *len;
    pthread_mutex_t lock;
    pthread_cond_t more;
    int done, bad[NS_FIELDS];
    double end;
} compressing;

static void *compress_fields(void *arg)
{
    compressing *c = arg;
#ifdef H5ZGPU_HAVE_CUDA
    if (c->r->device >= 0)
        cudaSetDevice(c->r->device);   /* a thread's own current device */
#endif
    for (int f = 0; f < NS_FIELDS; f++) {
        const size_t k = (size_t)f * c->r->count;
        const int bad = nw_compress_boxes(c->r, &c->p[f], f, &c->blob[k], &c->len[k]) != 0;
        pthread_mutex_lock(&c->lock);
        c->bad[f] = bad;
        c->done = f + 1;
        c->end = now_s();
        pthread_cond_signal(&c->more);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL;
}

/* The direct path after the datasets' creation: each field stored as soon as every rank has
 * compressed it (the ranks agree on failures field by field), while the next ones compress.
 * *made_s: the seconds from t0 to the rank's last compression. */
static int direct_write(const nw_opts *o, const nw_rank *r, const h5zgpu_params *p, double t0,
                        double *made_s)
{
    void **blob = calloc(NS_FIELDS * (r->count + 1), sizeof *blob);
    size_t *len = calloc(NS_FIELDS * (r->count + 1), sizeof *len);
    compressing c = {.r = r, .p = p, .blob = blob, .len = len};
    pthread_t tid;
    const int bad = !blob || !len;
    int started = 0, failed = bad;
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.more, NULL);
    if (!bad && o->threads)
        started = pthread_create(&tid, NULL, compress_fields, &c) == 0;
    if (!bad && !started)
        compress_fields(&c);   /* every field first, then the storing */
    int token = 0;   /* every rank stores or passes each field, even after a failure */
    for (int f = 0; f < NS_FIELDS; f++) {
        int mine = bad;
        if (!bad) {
            pthread_mutex_lock(&c.lock);
            while (c.done <= f)
                pthread_cond_wait(&c.more, &c.lock);
            mine = c.bad[f];
            pthread_mutex_unlock(&c.lock);
        }
        int any = 0;
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        token = token || any;
        const size_t k = (size_t)f * r->count;   /* token is set when blob and len are not */
        failed |= store_field(o, r, f, bad ? NULL : blob + k, bad ? NULL : len + k, &token) != 0;
    }
    if (started)
        pthread_join(tid, NULL);
    *made_s = bad ? 0 : c.end - t0;
    pthread_mutex_destroy(&c.lock);
    pthread_cond_destroy(&c.more);
    free(blob);
    free(len);
    return failed || token ? -1 : 0;
}

int nw_native_write(const nw_opts *o, const nw_rank *r, hid_t fapl, double *made_s)
{
    double t0 = now_s();
    hsize_t dims[3] = {o->n, o->n, o->n}, chunk[3] = {o->box, o->box, o->box};
    hid_t file = H5Fcreate(o->out, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t group = file < 0 ? -1 : H5Gcreate2(file, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(3, dims, NULL);
    int direct = o->path == NW_DIRECT, bad = group < 0;
    float *stage = direct ? NULL : nw_stage_alloc(r, r->cells);
    h5zgpu_params p[NS_FIELDS];
    bad |= !direct && !stage;
    for (int f = 0; !bad && f < NS_FIELDS; f++) {
        hid_t dcpl = nw_dcpl(o, o->path, &o->bound[f], 3, chunk);
        hid_t dset = H5Dcreate2(group, ns_field_names[f], H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        if (dset < 0)
            bad = 1;
        else if (direct)   /* written once the file is closed */
            bad = nw_dataset_params(dset, &p[f]) != 0;
        else
            bad = write_boxes(o, r, dset, f, stage) != 0;
        if (dset >= 0)
            H5Dclose(dset);
    }
    H5Sclose(space);
    if (group >= 0)
        H5Gclose(group);
    if (file >= 0)
        bad |= H5Fclose(file) < 0;
    *made_s = now_s() - t0;
    if (direct) {
        int any_bad = 0;
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        bad = any_bad || direct_write(o, r, p, t0, made_s) != 0;
    }
    if (stage)
        nw_stage_free(r, stage);
    return bad ? -1 : 0;
}

/* Under RATIO, the bounds the rank's boxes of each field record (box i of field f at
 * recorded[f * count + i]), read before the file is opened in parallel; else nothing. */
static int read_recorded(const nw_opts *o, const nw_rank *r, nw_bound **recorded)
{
    int ratio = 0, bad = 0;
    for (int f = 0; f < NS_FIELDS; f++)
        ratio |= o->bound[f].mode == H5ZGPU_MODE_RATIO;
    *recorded = NULL;
    if (!o->verify || o->path == NW_NONE || !ratio || !r->count)
        return 0;
    hsize_t *at = malloc(3 * r->count * sizeof *at);
    *recorded = malloc(NS_FIELDS * r->count * sizeof **recorded);
    bad = !at || !*recorded;
    for (size_t i = 0; !bad && i < r->count; i++) {
        size_t origin[3];
        nw_box_origin(o, r->first + i, origin);
        for (int k = 0; k < 3; k++)
            at[3 * i + k] = origin[k];
    }
    for (int f = 0; !bad && f < NS_FIELDS; f++) {
        char name[128];
        snprintf(name, sizeof name, GROUP "/%s", ns_field_names[f]);
        bad = o->bound[f].mode == H5ZGPU_MODE_RATIO &&
              nw_recorded_bounds(o->out, name, 3, at, r->count, *recorded + f * r->count);
    }
    free(at);
    return bad ? -1 : 0;
}

int nw_native_inspect(const nw_opts *o, const nw_rank *r, hid_t fapl, nw_result *res)
{
    hsize_t len[3] = {o->box, o->box, o->box};
    nw_bound *recorded;
    int bad = read_recorded(o, r, &recorded) != 0;
    hid_t file = H5Fopen(o->out, H5F_ACC_RDONLY, fapl);   /* collective: every rank opens */
    float *got = malloc(r->cells * sizeof *got);
    bad |= file < 0 || !got;
    for (int f = 0; !bad && f < NS_FIELDS; f++) {
        char name[128];
        snprintf(name, sizeof name, GROUP "/%s", ns_field_names[f]);
        hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
        if (dset < 0) {
            bad = 1;
            break;
        }
        hsize_t stored = H5Dget_storage_size(dset);
        res->ratio[f] = stored ? (double)(o->n * o->n * o->n * sizeof(float)) / (double)stored
                               : 0;
        for (size_t i = 0; o->verify && !bad && i < r->count; i++) {
            hid_t fs = box_selection(o, r, dset, i), ms = H5Screate_simple(3, len, NULL);
            bad = H5Dread(dset, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, got) < 0;
            if (!bad)   /* one chunk a box: REL ranges are the box's */
                nw_check(&o->bound[f], recorded ? recorded + f * r->count + i : NULL,
                         o->path == NW_NONE, r->host[f] + i * r->cells, got, r->cells,
                         r->cells, &res->worst[f], &res->misses[f]);
            H5Sclose(fs);
            H5Sclose(ms);
        }
        H5Dclose(dset);
    }
    if (file >= 0)
        H5Fclose(file);
    free(got);
    free(recorded);
    return bad ? -1 : 0;
}
