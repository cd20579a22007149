/* AMReX's plotfile layout, as WriteMultiLevelPlotfileHDF5 writes a level: one 1-D dataset
 * level_0/data:datatype=0 holding every box's components back to back (box-major), in 1-D
 * chunks of HDF5_CHUNK_SIZE elements, fill time NEVER, space allocated as chunks are written,
 * one collective H5Dwrite from host copies of the GPU boxes; level_0/data:offsets=0 gives
 * where each box starts. The rank's boxes are one contiguous range of the dataset. */
#include "nyx_writer.h"

#include <stdint.h>
#include <stdlib.h>

#define DATA "level_0/data:datatype=0"

/* The rank's range of the dataset, in elements. */
static void rank_range(const nw_rank *r, hsize_t *at, hsize_t *len)
{
    *at = (hsize_t)r->first * NS_FIELDS * r->cells;
    *len = (hsize_t)r->count * NS_FIELDS * r->cells;
}

static hid_t range_selection(const nw_rank *r, hid_t dset)
{
    hsize_t at, len;
    rank_range(r, &at, &len);
    hid_t fs = H5Dget_space(dset);
    if (len)
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &len, NULL);
    else
        H5Sselect_none(fs);
    return fs;
}

/* The rank's range as AMReX lays it out: box by box, each box's six fields in turn. */
static int gather_range(const nw_rank *r, float *range)
{
    for (size_t i = 0; i < r->count; i++)
        for (int f = 0; f < NS_FIELDS; f++)
            if (nw_to_host(r, f, i * r->cells, r->cells,
                           range + (i * NS_FIELDS + (size_t)f) * r->cells))
                return -1;
    return 0;
}

static int write_offsets(const nw_rank *r, hid_t group)
{
    hsize_t n = r->boxes_total + 1;
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t dset = H5Dcreate2(group, "data:offsets=0", H5T_STD_I64LE, space, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT);
    int bad = dset < 0;
    if (!bad && r->rank == 0) {   /* a small contiguous dataset: rank 0 writes it alone */
        int64_t *off = malloc(n * sizeof *off);
        bad = !off;
        for (hsize_t k = 0; off && k < n; k++)
            off[k] = (int64_t)(k * NS_FIELDS * r->cells);
        bad = bad || H5Dwrite(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, off) < 0;
        free(off);
    }
    if (dset >= 0)
        H5Dclose(dset);
    H5Sclose(space);
    return bad ? -1 : 0;
}

int nw_amrex_write(const nw_opts *o, const nw_rank *r, hid_t fapl)
{
    hsize_t total = (hsize_t)r->boxes_total * NS_FIELDS * r->cells, chunk = o->chunk, at, len;
    rank_range(r, &at, &len);
    hid_t file = H5Fcreate(o->out, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t group = file < 0 ? -1
                           : H5Gcreate2(file, "level_0", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, &total, NULL), dcpl = nw_dcpl(o, o->path, &o->bound[0], 1,
                                                                   &chunk);
    hid_t dset = group < 0 ? -1
                           : H5Dcreate2(group, "data:datatype=0", H5T_IEEE_F32LE, space,
                                        H5P_DEFAULT, dcpl, H5P_DEFAULT);
    float *range = nw_stage_alloc(r, len ? (size_t)len : 1);
    /* every object made before the big write: HDF5 1.10.8 ranks that look up a group after a
     * collective write of ~65,000 chunks or more broadcast object headers of different sizes
     * (MPI_ERR_TRUNCATE, then a hang) */
    int bad = dset < 0 || write_offsets(r, group) != 0 || !range || gather_range(r, range);
    if (!bad) {
        hid_t fs = range_selection(r, dset), ms = H5Screate_simple(1, &len, NULL);
        hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
        if (!len)
            H5Sselect_none(ms);
        bad = H5Dwrite(dset, H5T_NATIVE_FLOAT, ms, fs, dxpl, range) < 0;
        H5Pclose(dxpl);
        H5Sclose(fs);
        H5Sclose(ms);
    }
    if (range)
        nw_stage_free(r, range);
    if (dset >= 0)
        H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    if (group >= 0)
        H5Gclose(group);
    if (file >= 0)
        bad |= H5Fclose(file) < 0;
    return bad ? -1 : 0;
}

/* Under RATIO, the bounds the chunks of the rank's range record, read before the file is
 * opened in parallel; else nothing. */
static int read_recorded(const nw_opts *o, hsize_t at, hsize_t len, nw_bound **recorded)
{
    const size_t count = (size_t)(len / o->chunk);
    *recorded = NULL;
    if (!o->verify || o->path == NW_NONE || o->bound[0].mode != H5ZGPU_MODE_RATIO || !count)
        return 0;
    hsize_t *offsets = malloc(count * sizeof *offsets);
    *recorded = malloc(count * sizeof **recorded);
    int bad = !offsets || !*recorded;
    for (size_t k = 0; !bad && k < count; k++)
        offsets[k] = at + k * o->chunk;
    bad = bad || nw_recorded_bounds(o->out, DATA, 1, offsets, count, *recorded);
    free(offsets);
    return bad ? -1 : 0;
}

int nw_amrex_inspect(const nw_opts *o, const nw_rank *r, hid_t fapl, nw_result *res)
{
    hsize_t at, len;
    rank_range(r, &at, &len);
    nw_bound *recorded;
    int bad = read_recorded(o, at, len, &recorded) != 0;
    hid_t file = H5Fopen(o->out, H5F_ACC_RDONLY, fapl);   /* collective: every rank opens */
    hid_t dset = file < 0 ? -1 : H5Dopen2(file, DATA, H5P_DEFAULT);
    bad |= dset < 0;
    if (!bad) {
        hsize_t stored = H5Dget_storage_size(dset);
        res->ratio[0] = stored ? (double)(r->boxes_total * NS_FIELDS * r->cells * sizeof(float)) /
                                     (double)stored
                               : 0;
    }
    if (!bad && o->verify && len) {
        float *want = malloc((size_t)len * sizeof *want), *got = malloc((size_t)len * sizeof *got);
        nw_rank host = *r;
        host.device = -1;   /* the truth: what was generated, on the host */
        bad = !want || !got || gather_range(&host, want);
        hid_t fs = range_selection(r, dset), ms = H5Screate_simple(1, &len, NULL);
        bad = bad || H5Dread(dset, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, got) < 0;
        /* REL ranges are the chunks': the range starts on a chunk boundary (checked at start) */
        if (!bad)
            nw_check(&o->bound[0], recorded, o->path == NW_NONE, want, got, (size_t)len,
                     o->chunk, &res->worst[0], &res->misses[0]);
        H5Sclose(fs);
        H5Sclose(ms);
        free(want);
        free(got);
    }
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
    free(recorded);
    return bad ? -1 : 0;
}
