/* The native layout: each field its own N^3 dataset native_fields/<name>, one chunk a box.
 *   none    collective H5Dwrite of each box, no filter (the baseline)
 *   filter  the same through filter 33900 (HDF5 >= 1.10.2 runs filters in parallel writes)
 *   direct  every rank compresses its boxes (on its GPU: only compressed bytes leave it), then
 *           the ranks store them in turn with H5Dwrite_chunk on the file opened serially:
 *           parallel HDF5 has no collective direct chunk write, and independent ones from
 *           several ranks would each allocate file space on their own. */
#include "nyx_writer.h"

#include <stdio.h>
#include <stdlib.h>

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

/* The rank's compressed boxes, stored in turn: rank 0 first, each after the one before it. */
static int store_in_turn(const nw_opts *o, const nw_rank *r, void **blob, const size_t *len)
{
    int bad = 0, token = 0;
    if (r->rank > 0)
        MPI_Recv(&token, 1, MPI_INT, r->rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    hid_t file = token ? -1 : H5Fopen(o->out, H5F_ACC_RDWR, H5P_DEFAULT);
    bad = file < 0;
    for (int f = 0; !bad && f < NS_FIELDS; f++) {
        char name[128];
        snprintf(name, sizeof name, GROUP "/%s", ns_field_names[f]);
        hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
        for (size_t i = 0; dset >= 0 && !bad && i < r->count; i++) {
            size_t origin[3];
            nw_box_origin(o, r->first + i, origin);
            hsize_t at[3] = {origin[0], origin[1], origin[2]};
            bad = H5Dwrite_chunk(dset, H5P_DEFAULT, 0, at, len[f * r->count + i],
                                 blob[f * r->count + i]) < 0;
        }
        bad |= dset < 0 || H5Dclose(dset) < 0;
    }
    if (file >= 0)
        bad |= H5Fclose(file) < 0;
    token = token || bad;   /* a failure stops the ranks after this one from writing */
    if (r->rank + 1 < r->size)
        MPI_Send(&token, 1, MPI_INT, r->rank + 1, 0, MPI_COMM_WORLD);
    return bad || token ? -1 : 0;
}

int nw_native_write(const nw_opts *o, const nw_rank *r, hid_t fapl, double *made_s)
{
    double t0 = MPI_Wtime();
    hsize_t dims[3] = {o->n, o->n, o->n}, chunk[3] = {o->box, o->box, o->box};
    hid_t file = H5Fcreate(o->out, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t group = file < 0 ? -1 : H5Gcreate2(file, GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(3, dims, NULL);
    int direct = o->path == NW_DIRECT, bad = group < 0;
    float *stage = direct ? NULL : nw_stage_alloc(r, r->cells);
    void **blob = direct ? calloc(NS_FIELDS * (r->count + 1), sizeof *blob) : NULL;
    size_t *len = direct ? calloc(NS_FIELDS * (r->count + 1), sizeof *len) : NULL;
    bad |= direct ? !blob || !len : !stage;
    for (int f = 0; !bad && f < NS_FIELDS; f++) {
        hid_t dcpl = nw_dcpl(o, o->path, &o->bound[f], 3, chunk);
        hid_t dset = H5Dcreate2(group, ns_field_names[f], H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        h5zgpu_params p;
        if (dset < 0) {
            bad = 1;
        } else if (!direct) {
            bad = write_boxes(o, r, dset, f, stage) != 0;
        } else {
            bad = nw_dataset_params(dset, &p) != 0 ||
                  nw_compress_boxes(r, &p, f, &blob[f * r->count], &len[f * r->count]) != 0;
        }
        if (dset >= 0)
            H5Dclose(dset);
    }
    H5Sclose(space);
    if (group >= 0)
        H5Gclose(group);
    if (file >= 0)
        bad |= H5Fclose(file) < 0;
    *made_s = MPI_Wtime() - t0;
    if (direct) {
        int any_bad = 0;
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        bad = any_bad || store_in_turn(o, r, blob, len) != 0;
    }
    free(blob);
    free(len);
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
