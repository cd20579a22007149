/* How the filter lives inside HDF5 (linked to the system libhdf5; the plugin comes from
 * HDF5_PLUGIN_PATH):
 *   h5_safety_test pipeline    a filter before h5zgpu is refused at H5Dcreate; filters after it
 *                              work
 *   h5_safety_test fill        REL edge chunks take their range from the dataset's own elements
 *                              under every fill time, fill value and missing value
 *   h5_safety_test direct      a chunk of another element type or shape written with
 *                              H5Dwrite_chunk is refused on read
 *   h5_safety_test executor    a bad H5ZGPU_DEVICE is refused at H5Dcreate, and a write the
 *                              filter cannot do fails instead of storing the chunk raw */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../util.h"

#include "hdf5_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Closes a dataset and opens it again, so that a read decodes the stored chunks instead of
 * finding the written ones in HDF5's chunk cache. */
static hid_t reopen(hid_t file, hid_t dset, const char *name)
{
    H5Dclose(dset);
    return H5Dopen2(file, name, H5P_DEFAULT);
}

/* ---- pipeline ------------------------------------------------------------------------------ */

enum { BEFORE, AFTER };
typedef enum { F_SHUFFLE, F_SCALEOFFSET, F_NBIT, F_DEFLATE, F_FLETCHER32, F_UNKNOWN } other;

static const struct {
    const char *name;
    other which;
    int where;
} pipelines[] = {
    {"shuffle before", F_SHUFFLE, BEFORE},
    {"scaleoffset before", F_SCALEOFFSET, BEFORE},
    {"nbit before", F_NBIT, BEFORE},
    {"deflate before", F_DEFLATE, BEFORE},
    {"fletcher32 before", F_FLETCHER32, BEFORE},
    {"an unknown optional filter before", F_UNKNOWN, BEFORE},
    {"fletcher32 after", F_FLETCHER32, AFTER},
    {"deflate after", F_DEFLATE, AFTER},
    {"shuffle after", F_SHUFFLE, AFTER},
};

static void add_other(hid_t dcpl, other which)
{
    switch (which) {
    case F_SHUFFLE: H5Pset_shuffle(dcpl); break;
    case F_SCALEOFFSET: H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 3); break;
    case F_NBIT: H5Pset_nbit(dcpl); break;
    case F_DEFLATE: H5Pset_deflate(dcpl, 1); break;
    case F_FLETCHER32: H5Pset_fletcher32(dcpl); break;
    case F_UNKNOWN: H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 0, NULL); break;
    }
}

static int pipeline(void)
{
    enum { N = 3000, CHUNK = 1000 };
    static float want[N], got[N];
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
    char stack[HT_STACK_LEN], why[256];
    unsigned cd[4];
    tu_fill(H5ZGPU_FLOAT32, N, TU_SMOOTH, 3, want);
    ht_user_cd(cd, H5ZGPU_CODEC_AUTO, H5ZGPU_MODE_ABS, 1e-3);
    hid_t file = H5Fcreate("pipeline.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, dims, NULL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < sizeof pipelines / sizeof pipelines[0]; i++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, 1, chunk);
        if (pipelines[i].where == BEFORE)
            add_other(dcpl, pipelines[i].which);
        H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_OPTIONAL, 4, cd);
        if (pipelines[i].where == AFTER)
            add_other(dcpl, pipelines[i].which);
        hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ht_error_stack(stack);
        if (pipelines[i].where == BEFORE) {
            tu_expect(dset < 0 && strstr(stack, "comes before h5zgpu in the dataset's pipeline"),
                      "%s: H5Dcreate %s; error stack: %s", pipelines[i].name,
                      dset < 0 ? "failed without our message" : "succeeded", stack);
        } else {
            herr_t st = dset < 0 ? -1
                                 : H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL,
                                            H5P_DEFAULT, want);
            if (st >= 0)
                dset = reopen(file, dset, "x");
            st = st < 0 || dset < 0
                     ? -1
                     : H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
            tu_expect(st >= 0 && tu_check_bound(H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, want, got,
                                                N, why, sizeof why) == 0,
                      "%s: write or read failed or missed the bound (%s)", pipelines[i].name,
                      st < 0 ? "HDF5 call failed" : why);
        }
        if (dset >= 0)
            H5Dclose(dset), H5Ldelete(file, "x", H5P_DEFAULT);
        H5Pclose(dcpl);
    }
    H5Sclose(space);
    H5Fclose(file);
    return tu_done("hdf5_pipeline");
}

/* ---- fill time and padding ----------------------------------------------------------------- */

#define FILL_NZ 20
#define FILL_NY 45
#define FILL_CZ 8
#define FILL_CY 16 /* 45 = 2 x 16 + 13: the last chunk along y is padded */
#define FILL_EB 1e-3

static const struct {
    const char *name;
    H5D_fill_time_t when;
    int fill_set;   /* 0 HDF5's default (0), 1 fill value -1e34, 2 undefined */
    int missing;    /* a missing value -1e34 in cd_values */
    int refused;    /* the fill value differs from the missing value: H5Dcreate must fail */
} fills[] = {
    {"fill time NEVER, fill value -1e34", H5D_FILL_TIME_NEVER, 1, 0, 0},
    {"fill time ALLOC, fill value -1e34", H5D_FILL_TIME_ALLOC, 1, 0, 0},
    {"fill time IFSET, fill value -1e34", H5D_FILL_TIME_IFSET, 1, 0, 0},
    {"fill time NEVER, default fill value", H5D_FILL_TIME_NEVER, 0, 0, 0},
    {"fill time NEVER, undefined fill value", H5D_FILL_TIME_NEVER, 2, 0, 0},
    {"fill time NEVER, missing value -1e34", H5D_FILL_TIME_NEVER, 0, 1, 0},
    {"fill time NEVER, missing value -1e34 = fill value", H5D_FILL_TIME_NEVER, 1, 1, 0},
    {"fill value 0 set, missing value -1e34", H5D_FILL_TIME_IFSET, 3, 1, 1},
};

/* A field around 1000 that varies by about 1 (REL's range: 1): zeros or other padding in its
 * range would widen the bound a thousandfold. */
static double fill_field(size_t z, size_t y)
{
    return 1000.0 + 0.5 * sin(0.3 * (double)z + 0.2 * (double)y);
}

static void fill_one(hid_t file, size_t k)
{
    static float want[FILL_NZ * FILL_NY], got[FILL_NZ * FILL_NY];
    hsize_t dims[2] = {FILL_NZ, FILL_NY}, chunk[2] = {FILL_CZ, FILL_CY};
    unsigned cd[7];
    float fv = (float)-1e34, zero = 0;
    char stack[HT_STACK_LEN];
    for (size_t z = 0; z < FILL_NZ; z++)
        for (size_t y = 0; y < FILL_NY; y++)
            want[z * FILL_NY + y] = (float)fill_field(z, y);
    ht_user_cd(cd, H5ZGPU_CODEC_AUTO, H5ZGPU_MODE_REL, FILL_EB);
    cd[4] = 1;
    h5zgpu_eb_to_words((double)fv, &cd[5], &cd[6]);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_fill_time(dcpl, fills[k].when);
    if (fills[k].fill_set == 1)
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fv);
    else if (fills[k].fill_set == 2)
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, NULL);
    else if (fills[k].fill_set == 3)
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &zero);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, fills[k].missing ? 7 : 4, cd);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, fills[k].name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
    ht_error_stack(stack);
    if (fills[k].refused) {
        tu_expect(dset < 0 && strstr(stack, "differs from the dataset's fill value"),
                  "%s: H5Dcreate %s; error stack: %s", fills[k].name,
                  dset < 0 ? "failed without our message" : "succeeded", stack);
        goto done;
    }
    herr_t st = dset < 0 ? -1
                         : H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, want);
    if (st >= 0)
        dset = reopen(file, dset, fills[k].name);
    st = st < 0 || dset < 0
             ? -1
             : H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    tu_expect(st >= 0, "%s: create, write or read failed: %s", fills[k].name, stack);
    if (st < 0)
        goto done;
    /* each chunk's bound from its own elements inside the dataset */
    size_t misses = 0;
    double worst = 0;
    for (size_t cz = 0; cz < FILL_NZ; cz += FILL_CZ)
        for (size_t cy = 0; cy < FILL_NY; cy += FILL_CY) {
            double lo = INFINITY, hi = -INFINITY;
            for (size_t z = cz; z < cz + FILL_CZ && z < FILL_NZ; z++)
                for (size_t y = cy; y < cy + FILL_CY && y < FILL_NY; y++)
                    lo = fmin(lo, want[z * FILL_NY + y]), hi = fmax(hi, want[z * FILL_NY + y]);
            double bound = FILL_EB * (hi - lo);
            for (size_t z = cz; z < cz + FILL_CZ && z < FILL_NZ; z++)
                for (size_t y = cy; y < cy + FILL_CY && y < FILL_NY; y++) {
                    double e = fabs((double)got[z * FILL_NY + y] - want[z * FILL_NY + y]);
                    misses += !(e <= bound);
                    worst = fmax(worst, e / bound);
                }
        }
    tu_expect(misses == 0, "%s: %zu values miss their chunk's REL bound, worst %.3g x the bound",
              fills[k].name, misses, worst);
done:
    if (dset >= 0)
        H5Dclose(dset);
    H5Sclose(space);
    H5Pclose(dcpl);
}

static int fill(void)
{
    hid_t file = H5Fcreate("fill.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t k = 0; k < sizeof fills / sizeof fills[0]; k++)
        fill_one(file, k);
    H5Fclose(file);
    return tu_done("hdf5_fill_time");
}

/* ---- chunks written directly --------------------------------------------------------------- */

/* A valid chunk of p's type and shape from the codec API, written with H5Dwrite_chunk into a
 * float32 dataset of 8 x 32 chunks; reading it must fail with what is wrong. */
static void direct_one(hid_t file, const char *name, h5zgpu_dtype dtype, unsigned rank,
                       const uint64_t *cdims, const char *says)
{
    enum { CZ = 8, CY = 32 };
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_ABS, .eb = 1e-3,
                       .dtype = dtype, .rank = rank};
    memcpy(p.dims, cdims, rank * sizeof *cdims);
    size_t n = (size_t)tu_count(&p), cap = h5zgpu_compress_bound(&p), len = 0;
    void *in = malloc(n * tu_esize(dtype)), *chunk = malloc(cap);
    static float got[CZ * CY];
    char stack[HT_STACK_LEN];
    tu_fill_shape(&p, TU_FIELD, 5, in);
    h5zgpu_status cs = h5zgpu_compress(&p, in, chunk, cap, &len, NULL);
    hsize_t dims[2] = {CZ, CY}, cch[2] = {CZ, CY}, off[2] = {0, 0};
    unsigned cd[4];
    ht_user_cd(cd, H5ZGPU_CODEC_FIXED, H5ZGPU_MODE_ABS, 1e-3);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cch);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t w = cs == H5ZGPU_OK && dset >= 0 ? H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, len, chunk)
                                            : -1;
    herr_t r = w < 0 ? 0 : H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    ht_error_stack(stack);
    tu_expect(w >= 0 && r < 0 && strstr(stack, says),
              "%s: H5Dwrite_chunk %s, H5Dread %s; error stack: %s", name,
              w >= 0 ? "ok" : "failed", r < 0 ? "failed" : "returned values", stack);
    if (dset >= 0)
        H5Dclose(dset);
    H5Sclose(space);
    H5Pclose(dcpl);
    free(in);
    free(chunk);
}

static int direct(void)
{
    hid_t file = H5Fcreate("direct.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* the same bytes as the dataset's float32 8 x 32 chunks, decoded, in each case */
    direct_one(file, "float64 8 x 16", H5ZGPU_FLOAT64, 2, (const uint64_t[]){8, 16},
               "its header describes float64 [8 x 16], the dataset's chunks are float32 [8 x 32]");
    direct_one(file, "float32 16 x 16", H5ZGPU_FLOAT32, 2, (const uint64_t[]){16, 16},
               "its header describes float32 [16 x 16]");
    direct_one(file, "float32 256, rank 1", H5ZGPU_FLOAT32, 1, (const uint64_t[]){256},
               "its header describes float32 [256]");
    H5Fclose(file);
    return tu_done("hdf5_direct_chunk");
}

/* ---- where the work runs ------------------------------------------------------------------- */

static int executor(void)
{
    enum { N = 2000, CHUNK = 500 };
    static float want[N];
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
    char stack[HT_STACK_LEN];
    unsigned cd[4];
    tu_fill(H5ZGPU_FLOAT32, N, TU_SMOOTH, 9, want);
    ht_user_cd(cd, H5ZGPU_CODEC_AUTO, H5ZGPU_MODE_ABS, 1e-3);
    hid_t file = H5Fcreate("executor.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    /* optional, as h5py sets it: set_local makes it mandatory */
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_OPTIONAL, 4, cd);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    setenv("H5ZGPU_DEVICE", "bogus", 1);
    hid_t dset = H5Dcreate2(file, "bogus", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ht_error_stack(stack);
    tu_expect(dset < 0 && strstr(stack, "H5ZGPU_DEVICE='bogus' is not auto, cpu, gpu or gpu:N"),
              "H5ZGPU_DEVICE=bogus: H5Dcreate %s; error stack: %s",
              dset < 0 ? "failed without our message" : "succeeded", stack);
    if (dset >= 0)
        H5Dclose(dset);

    if (!h5zgpu_gpu_available()) {
        setenv("H5ZGPU_DEVICE", "gpu", 1);
        dset = H5Dcreate2(file, "gpu", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ht_error_stack(stack);
        tu_expect(dset < 0 && strstr(stack, "the GPU was required (H5ZGPU_DEVICE=gpu)"),
                  "H5ZGPU_DEVICE=gpu without a GPU: H5Dcreate %s; error stack: %s",
                  dset < 0 ? "failed without our message" : "succeeded", stack);
        if (dset >= 0)
            H5Dclose(dset);
    }

    /* created under a valid setting, written under a bad one: the write must fail */
    unsetenv("H5ZGPU_DEVICE");
    dset = H5Dcreate2(file, "late", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    setenv("H5ZGPU_DEVICE", "bogus", 1);
    herr_t w = dset < 0 ? 0 : H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, want);
    if (w >= 0 && dset >= 0) /* a write held in the chunk cache fails when it is flushed */
        w = H5Dflush(dset);
    ht_error_stack(stack);
    tu_expect(dset >= 0 && w < 0 && strstr(stack, "h5zgpu: compression failed"),
              "a write under H5ZGPU_DEVICE=bogus %s; error stack: %s",
              w < 0 ? "failed without our message" : "stored the data", stack);
    unsetenv("H5ZGPU_DEVICE");
    unsigned flags, stored[64];
    size_t n = 64;
    hid_t plist = dset < 0 ? -1 : H5Dget_create_plist(dset);
    tu_expect(plist >= 0 &&
                  H5Pget_filter_by_id2(plist, H5ZGPU_FILTER_ID, &flags, &n, stored, 0, NULL,
                                       NULL) >= 0 &&
                  !(flags & H5Z_FLAG_OPTIONAL),
              "the stored filter is still optional: HDF5 would store a failed chunk raw");
    if (plist >= 0)
        H5Pclose(plist);
    if (dset >= 0)
        H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
    return tu_done("hdf5_executor");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "pipeline") == 0)
        return pipeline();
    if (argc == 2 && strcmp(argv[1], "fill") == 0)
        return fill();
    if (argc == 2 && strcmp(argv[1], "direct") == 0)
        return direct();
    if (argc == 2 && strcmp(argv[1], "executor") == 0)
        return executor();
    fprintf(stderr, "usage: %s pipeline|fill|direct|executor\n", argv[0]);
    return 2;
}
