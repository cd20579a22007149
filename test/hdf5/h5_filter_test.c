/* The filter through HDF5 (linked to the system libhdf5; the plugin comes from HDF5_PLUGIN_PATH).
 *   h5_filter_test roundtrip          chunked float datasets in every mode, values within bound
 *   h5_filter_test errors             bad types and cd_values fail at H5Dcreate with our message
 *   h5_filter_test corrupt FILE       a damaged stored chunk makes H5Dread fail (FILE is kept)
 *   h5_filter_test missing            a user missing value in cd_values: exact, others within ABS
 *   h5_filter_test make-input FILE    unfiltered float datasets for repack_test.sh
 *   h5_filter_test compare A B EB     every value of B within ABS EB of A; B unfiltered
 *   h5_filter_test eb-words EB        the two cd_values words of EB */
#include "../util.h"

#include "hdf5_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 3

typedef struct dset_case {
    const char *name;
    hid_t *file_type; /* address: the H5T_* globals are set only after H5open */
    unsigned rank;
    hsize_t dims[MAX_RANK], chunk[MAX_RANK];
    h5zgpu_mode mode;
    double eb;
    tu_pattern pattern;
    h5zgpu_codec codec;
} dset_case;

/* Writable copies of the predefined types, filled in main after H5open. */
static hid_t t_f32le, t_f32be, t_f64le, t_f64be;

#define FIXED H5ZGPU_CODEC_FIXED
#define HUFF H5ZGPU_CODEC_HUFFMAN
#define AUTO H5ZGPU_CODEC_AUTO

static const dset_case roundtrip_cases[] = {
    {"f32_1d_abs", &t_f32le, 1, {1000}, {300}, H5ZGPU_MODE_ABS, 1e-3, TU_SMOOTH, FIXED},
    {"f64_1d_pwrel", &t_f64le, 1, {1000}, {256}, H5ZGPU_MODE_PWREL, 1e-3, TU_SMOOTH, FIXED},
    {"f32_2d_rel", &t_f32le, 2, {50, 70}, {16, 32}, H5ZGPU_MODE_REL, 1e-3, TU_SMOOTH, FIXED},
    {"f64_2d_abs_special", &t_f64le, 2, {40, 33}, {16, 16}, H5ZGPU_MODE_ABS, 1e-4, TU_SPECIAL, FIXED},
    {"f32_3d_pwrel", &t_f32le, 3, {20, 30, 17}, {8, 8, 8}, H5ZGPU_MODE_PWREL, 1e-2, TU_SMOOTH, FIXED},
    {"f64_3d_rel", &t_f64le, 3, {20, 30, 17}, {8, 16, 8}, H5ZGPU_MODE_REL, 1e-4, TU_SMOOTH, FIXED},
    {"f32be_2d_abs", &t_f32be, 2, {50, 70}, {16, 32}, H5ZGPU_MODE_ABS, 1e-3, TU_SMOOTH, FIXED},
    {"f64be_3d_rel", &t_f64be, 3, {20, 30, 17}, {8, 8, 8}, H5ZGPU_MODE_REL, 1e-3, TU_SMOOTH, FIXED},
    {"f32_2d_lossless", &t_f32le, 2, {50, 70}, {16, 32}, H5ZGPU_MODE_ABS, 0, TU_SMOOTH, FIXED},
    {"huff_f32_1d_abs", &t_f32le, 1, {10000}, {3000}, H5ZGPU_MODE_ABS, 1e-3, TU_SMOOTH, HUFF},
    {"huff_f64_2d_pwrel", &t_f64le, 2, {150, 140}, {64, 128}, H5ZGPU_MODE_PWREL, 1e-3, TU_SMOOTH, HUFF},
    {"huff_f32_3d_rel", &t_f32le, 3, {20, 40, 36}, {16, 32, 32}, H5ZGPU_MODE_REL, 1e-3, TU_SMOOTH, HUFF},
    {"huff_f64_2d_abs_special", &t_f64le, 2, {40, 33}, {16, 16}, H5ZGPU_MODE_ABS, 1e-4, TU_SPECIAL, HUFF},
    {"huff_f64be_3d_rel", &t_f64be, 3, {20, 30, 17}, {8, 8, 8}, H5ZGPU_MODE_REL, 1e-3, TU_SMOOTH, HUFF},
    {"huff_f32_2d_lossless", &t_f32le, 2, {50, 70}, {16, 32}, H5ZGPU_MODE_ABS, 0, TU_SMOOTH, HUFF},
    {"auto_f32_3d_abs", &t_f32le, 3, {20, 30, 17}, {8, 16, 8}, H5ZGPU_MODE_ABS, 1e-3, TU_SMOOTH, AUTO},
    {"auto_f64_1d_rel_special", &t_f64le, 1, {5000}, {1000}, H5ZGPU_MODE_REL, 1e-4, TU_SPECIAL, AUTO},
};

static hsize_t count_of(unsigned rank, const hsize_t *dims)
{
    hsize_t n = 1;
    for (unsigned i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

static hid_t make_dcpl(unsigned rank, const hsize_t *chunk, unsigned flags, size_t n,
                       const unsigned *cd)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, (int)rank, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, flags, n, cd);
    return dcpl;
}

/* REL bounds are per chunk: eb x the range of the chunk's finite values, where a partial edge
 * chunk also holds the fill value 0 that HDF5 pads it with. Returns each element's bound. */
static double *rel_bounds(const dset_case *c, const double *v, size_t n)
{
    size_t nchunks = 1, strides[MAX_RANK];
    for (unsigned d = c->rank; d-- > 0;) {
        strides[d] = nchunks;
        nchunks *= (size_t)((c->dims[d] + c->chunk[d] - 1) / c->chunk[d]);
    }
    double *lo = malloc(nchunks * sizeof *lo), *hi = malloc(nchunks * sizeof *hi);
    double *bound = malloc(n * sizeof *bound);
    size_t *id = malloc(n * sizeof *id);
    for (size_t k = 0; k < nchunks; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        size_t rest = i, k = 0;
        for (unsigned d = c->rank; d-- > 0;) {
            size_t coord = rest % (size_t)c->dims[d];
            rest /= (size_t)c->dims[d];
            k += coord / (size_t)c->chunk[d] * strides[d];
        }
        id[i] = k;
        if (isfinite(v[i]))
            lo[k] = fmin(lo[k], v[i]), hi[k] = fmax(hi[k], v[i]);
    }
    for (size_t k = 0; k < nchunks; k++) {
        int partial = 0;
        for (unsigned d = 0; d < c->rank; d++)
            partial |= (k / strides[d]) % ((c->dims[d] + c->chunk[d] - 1) / c->chunk[d]) ==
                               (c->dims[d] - 1) / c->chunk[d] &&
                       c->dims[d] % c->chunk[d] != 0;
        if (partial)
            lo[k] = fmin(lo[k], 0), hi[k] = fmax(hi[k], 0);
    }
    for (size_t i = 0; i < n; i++)
        bound[i] = hi[id[i]] >= lo[id[i]] ? c->eb * (hi[id[i]] - lo[id[i]]) : 0;
    free(lo);
    free(hi);
    free(id);
    return bound;
}

static void check_values(const dset_case *c, const double *want, const double *got, size_t n)
{
    double *rel = c->mode == H5ZGPU_MODE_REL ? rel_bounds(c, want, n) : NULL;
    size_t misses = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        int ok;
        if (!isfinite(want[i])) {
            ok = memcmp(&want[i], &got[i], sizeof want[i]) == 0;
        } else {
            double b = c->mode == H5ZGPU_MODE_ABS ? c->eb
                       : rel                      ? rel[i]
                                                  : c->eb * fabs(want[i]);
            ok = fabs(got[i] - want[i]) <= b;
        }
        if (!ok && misses++ == 0)
            first = i;
    }
    tu_expect(misses == 0, "%s: %zu values miss the bound; first: [%zu] %.17g read as %.17g",
              c->name, misses, first, want[first], got[first]);
    free(rel);
}

/* The cd_values set_local stored: the user's four, then layout 2, type, order, fill value,
 * rank, chunk (docs/FILTER.md). The datasets here keep HDF5's default fill value, 0. */
static void check_stored_cd(hid_t dset, const dset_case *c, const unsigned *user)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    unsigned flags, cd[64], order = H5Tget_order(*c->file_type) == H5T_ORDER_BE;
    size_t n = 64;
    int ok = H5Pget_filter_by_id2(dcpl, H5ZGPU_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) >= 0 &&
             n == 11 + c->rank && memcmp(cd, user, 4 * sizeof *cd) == 0 && cd[4] == 2 &&
             cd[5] == (H5Tget_size(*c->file_type) == 4 ? 1u : 2u) && cd[6] == order &&
             cd[7] == 1 && cd[8] == 0 && cd[9] == 0 && cd[10] == c->rank;
    for (unsigned d = 0; ok && d < c->rank; d++)
        ok = cd[11 + d] == c->chunk[d];
    tu_expect(ok, "%s: stored cd_values are not the documented layout", c->name);
    H5Pclose(dcpl);
}

static void roundtrip_one(hid_t file, const dset_case *c)
{
    size_t n = (size_t)count_of(c->rank, c->dims);
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    unsigned cd[4];
    tu_fill(H5ZGPU_FLOAT64, n, c->pattern, n, want);
    /* the filter sees the file type: write doubles and let HDF5 convert (and byte-swap) */
    if (H5Tget_size(*c->file_type) == 4)
        for (size_t i = 0; i < n; i++)
            want[i] = (float)want[i];
    ht_user_cd(cd, c->codec, c->mode, c->eb);
    hid_t space = H5Screate_simple((int)c->rank, c->dims, NULL);
    hid_t dcpl = make_dcpl(c->rank, c->chunk, H5Z_FLAG_MANDATORY, 4, cd);
    hid_t dset = H5Dcreate2(file, c->name, *c->file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    tu_expect(dset >= 0, "%s: H5Dcreate failed", c->name);
    if (dset < 0)
        goto done;
    herr_t w = H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, want);
    tu_expect(w >= 0, "%s: H5Dwrite failed", c->name);
    H5Dclose(dset);
    dset = H5Dopen2(file, c->name, H5P_DEFAULT);
    herr_t r = H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    tu_expect(r >= 0, "%s: H5Dread failed", c->name);
    if (w >= 0 && r >= 0)
        check_values(c, want, got, n);
    check_stored_cd(dset, c, cd);
    if (c->pattern == TU_SMOOTH && c->eb > 0)
        tu_expect(H5Dget_storage_size(dset) < n * H5Tget_size(*c->file_type),
                  "%s: stored %llu bytes, not compressed", c->name,
                  (unsigned long long)H5Dget_storage_size(dset));
    H5Dclose(dset);
done:
    H5Pclose(dcpl);
    H5Sclose(space);
    free(want);
    free(got);
}

static int roundtrip(void)
{
    hid_t file = H5Fcreate("roundtrip.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (size_t i = 0; i < sizeof roundtrip_cases / sizeof roundtrip_cases[0]; i++) {
        roundtrip_one(file, &roundtrip_cases[i]);
        H5Fflush(file, H5F_SCOPE_GLOBAL);
    }
    H5Fclose(file);
    return tu_done("hdf5_roundtrip");
}

/* Datasets H5Dcreate must refuse, and what the error stack must then say. */
static const struct {
    const char *what;
    int integer;      /* dataset of 4-byte integers instead of float32 */
    unsigned flags;   /* H5Z_FLAG_OPTIONAL as h5py sets it, or mandatory */
    size_t ncd;
    unsigned codec, mode;
    double eb;
    const char *says;
} refused[] = {
    {"int32 dataset", 1, H5Z_FLAG_MANDATORY, 4, 1, 0, 1e-3,
     "h5zgpu: dataset type is integer of 4 bytes; h5zgpu compresses only float32 and float64"},
    {"int32 dataset, optional filter", 1, H5Z_FLAG_OPTIONAL, 4, 1, 0, 1e-3,
     "dataset type is integer of 4 bytes"},
    {"no cd_values", 0, H5Z_FLAG_MANDATORY, 0, 1, 0, 1e-3,
     "h5zgpu: cd_values must be {codec (0 auto, 1 fixed, 2 huffman), mode (0 ABS, 1 REL, 2 "
     "PWREL, 3 fixed ratio), eb (mode 3: the target ratio) low word, high word}, optionally "
     "followed by {flags (bit 0: a missing value follows, bit 2: a Huffman radius follows), "
     "missing value low word, high word, radius}; got 0 values"},
    {"two cd_values", 0, H5Z_FLAG_OPTIONAL, 2, 1, 0, 1e-3, "got 2 values"},
    {"codec 7", 0, H5Z_FLAG_MANDATORY, 4, 7, 0, 1e-3, "cd_values[0]=7 is not a codec"},
    {"mode 5", 0, H5Z_FLAG_MANDATORY, 4, 1, 5, 1e-3, "cd_values[1]=5 is not an error mode"},
    {"negative bound", 0, H5Z_FLAG_MANDATORY, 4, 1, 0, -1e-3, "is not a finite number >= 0"},
    {"NaN bound", 0, H5Z_FLAG_OPTIONAL, 4, 1, 1, NAN, "is not a finite number >= 0"},
    {"infinite bound", 0, H5Z_FLAG_MANDATORY, 4, 1, 2, INFINITY, "is not a finite number >= 0"},
    {"PWREL bound 1", 0, H5Z_FLAG_MANDATORY, 4, 1, 2, 1.0, "must be below 1"},
    {"Huffman, negative bound", 0, H5Z_FLAG_MANDATORY, 4, 2, 0, -1e-3, "is not a finite number"},
    {"auto, mode 4", 0, H5Z_FLAG_OPTIONAL, 4, 0, 4, 1e-3, "cd_values[1]=4 is not an error mode"},
    {"fixed ratio, target 1e-3", 0, H5Z_FLAG_MANDATORY, 4, 0, 3, 1e-3,
     "target ratio 0.001 is not above 1"},
    {"fixed ratio, target 1", 0, H5Z_FLAG_OPTIONAL, 4, 2, 3, 1.0, "target ratio 1 is not above 1"},
};

static int errors(void)
{
    char stack[HT_STACK_LEN];
    hsize_t dims[1] = {100}, chunk[1] = {50};
    hid_t file = H5Fcreate("errors.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, dims, NULL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        unsigned cd[4];
        ht_user_cd(cd, refused[i].codec, refused[i].mode, refused[i].eb);
        hid_t dcpl = make_dcpl(1, chunk, refused[i].flags, refused[i].ncd, cd);
        hid_t type = refused[i].integer ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT;
        hid_t dset = H5Dcreate2(file, "x", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ht_error_stack(stack);
        tu_expect(dset < 0 && strstr(stack, refused[i].says) != NULL,
                  "%s: H5Dcreate %s; error stack: %s", refused[i].what,
                  dset < 0 ? "failed without the expected message" : "succeeded", stack);
        if (dset >= 0)
            H5Ldelete(file, "x", H5P_DEFAULT), H5Dclose(dset);
        H5Pclose(dcpl);
    }
    H5Sclose(space);
    H5Fclose(file);
    return tu_done("hdf5_errors");
}

static hid_t open_dataset(const char *path, hid_t *file)
{
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    return *file < 0 ? -1 : H5Dopen2(*file, "x", H5P_DEFAULT);
}

static int corrupt(const char *path)
{
    enum { N = 4000, CHUNK = 1000, BAD = 1 };
    static float want[N], got[N];
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK}, offset[1], size;
    haddr_t addr;
    unsigned cd[4], mask;
    char stack[HT_STACK_LEN];
    tu_fill(H5ZGPU_FLOAT32, N, TU_SMOOTH, 1, want);
    ht_user_cd(cd, H5ZGPU_CODEC_FIXED, H5ZGPU_MODE_ABS, 1e-3);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = make_dcpl(1, chunk, H5Z_FLAG_MANDATORY, 4, cd);
    hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, want);
    herr_t info = H5Dget_chunk_info(dset, space, BAD, offset, &mask, &addr, &size);
    tu_expect(info >= 0 && offset[0] == BAD * CHUNK && size > 0, "chunk %d has no storage info",
              BAD);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Fclose(file);
    if (info < 0)
        goto done;

    /* damage one byte in the middle of the stored chunk, behind HDF5's back */
    FILE *f = fopen(path, "r+b");
    int c = EOF;
    if (f && fseek(f, (long)(addr + size / 2), SEEK_SET) == 0 && (c = fgetc(f)) != EOF &&
        fseek(f, (long)(addr + size / 2), SEEK_SET) == 0)
        fputc(c ^ 0xFF, f);
    tu_expect(f && c != EOF && fclose(f) == 0, "cannot damage %s", path);

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    dset = open_dataset(path, &file);
    herr_t r = H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    ht_error_stack(stack);
    tu_expect(r < 0 && strstr(stack, "h5zgpu: cannot decompress a chunk (corrupt chunk)"),
              "reading the damaged chunk: H5Dread %s; error stack: %s",
              r < 0 ? "failed without our message" : "succeeded", stack);
    /* the undamaged chunks still read */
    hsize_t start[1] = {0}, count[1] = {CHUNK};
    hid_t mem = H5Screate_simple(1, count, NULL);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    r = H5Dread(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, got);
    char why[256];
    tu_expect(r >= 0 && tu_check_bound(H5ZGPU_FLOAT32, H5ZGPU_MODE_ABS, 1e-3, want, got, CHUNK,
                                       why, sizeof why) == 0,
              "chunk 0 next to the damaged one does not read back");
    H5Sclose(mem);
    H5Dclose(dset);
    H5Fclose(file);
done:
    H5Sclose(space);
    return tu_done("hdf5_corrupt_chunk");
}

/* Optional user values after the four: {flags, missing lo, missing hi} (docs/FILTER.md). */
#define MISS_N 3000
#define MISS_CHUNK 512 /* the last chunk is partial: HDF5 pads it with its fill value 0 */
#define MISS_EB 0.01

static const struct {
    const char *name;
    hid_t *file_type;
    double missing;
    unsigned percent; /* of the points that are missing */
    h5zgpu_codec codec;
    /* amplitude of the field: at 50 neighbours differ by up to about 1300 x the bound, which
     * the fixed-length codec codes in 11 bits and the Huffman codec only as outliers (8 bytes:
     * its chunks do not shrink); at 0.5, by up to 13 x, a field smooth at the bound's scale */
    double amplitude;
} missing_cases[] = {
    {"f32_missing_1e34", &t_f32le, -1e34f, 40, FIXED, 50},
    {"f32_missing_1e10", &t_f32le, -1e10f, 40, FIXED, 50},
    {"f64_missing_1e34", &t_f64le, -1e34, 40, FIXED, 50},
    {"f64be_missing_1e10", &t_f64be, -1e10, 60, FIXED, 50},
    {"huff_f32_missing_1e34", &t_f32le, -1e34f, 40, HUFF, 0.5},
    {"huff_f32_missing_1e10", &t_f32le, -1e10f, 40, HUFF, 0.5},
    {"huff_f64_missing_1e34", &t_f64le, -1e34, 40, HUFF, 0.5},
    {"huff_f64be_missing_1e10", &t_f64be, -1e10, 60, HUFF, 0.5},
    {"fixed_f32_missing_1e34_smooth", &t_f32le, -1e34f, 40, FIXED, 0.5},
    /* auto keeps the smaller codec per chunk: the fixed-length one on the rougher field */
    {"auto_f32_missing_1e34", &t_f32le, -1e34f, 40, AUTO, 50},
    {"auto_f64_missing_1e10_smooth", &t_f64le, -1e10, 40, AUTO, 0.5},
};

/* Land points of a climate field: runs of missing values and scattered ones, `percent` in all. */
static int is_missing(size_t i, unsigned percent)
{
    uint32_t h = (uint32_t)(i / 37) * 2654435761u;
    return (h >> 16) % 100 < percent;
}

static void missing_one(hid_t file, size_t k)
{
    const char *name = missing_cases[k].name;
    hid_t type = *missing_cases[k].file_type;
    double miss = missing_cases[k].missing;
    static double want[MISS_N], got[MISS_N];
    hsize_t dims[1] = {MISS_N}, chunk[1] = {MISS_CHUNK};
    unsigned cd[7];
    size_t nmiss = 0;
    tu_fill(H5ZGPU_FLOAT64, MISS_N, TU_SMOOTH, k, want);
    for (size_t i = 0; i < MISS_N; i++) {
        double v = want[i] * missing_cases[k].amplitude;
        want[i] = H5Tget_size(type) == 4 ? (float)v : v;
        if (is_missing(i, missing_cases[k].percent))
            want[i] = miss, nmiss++;
    }
    ht_user_cd(cd, missing_cases[k].codec, H5ZGPU_MODE_ABS, MISS_EB);
    cd[4] = 1;
    h5zgpu_eb_to_words(miss, &cd[5], &cd[6]);
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = make_dcpl(1, chunk, H5Z_FLAG_MANDATORY, 7, cd);
    hid_t dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t st = dset < 0 ? -1 : H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, want);
    if (dset >= 0)
        H5Dclose(dset);
    dset = st < 0 ? -1 : H5Dopen2(file, name, H5P_DEFAULT);
    st = dset < 0 ? -1 : H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got);
    tu_expect(st >= 0, "%s: create, write or read failed", name);
    if (st >= 0) {
        size_t bad_missing = 0, bad_value = 0;
        for (size_t i = 0; i < MISS_N; i++) {
            if (want[i] == miss)
                bad_missing += memcmp(&want[i], &got[i], sizeof got[i]) != 0;
            else
                bad_value += !(fabs(got[i] - want[i]) <= MISS_EB);
        }
        tu_expect(bad_missing == 0 && bad_value == 0,
                  "%s: %zu missing values not exact, %zu values outside ABS %g", name,
                  bad_missing, bad_value, MISS_EB);
        hsize_t stored = H5Dget_storage_size(dset);
        double raw = (double)MISS_N * (double)H5Tget_size(type);
        tu_expect(stored > 0 && stored < raw, "%s: stored %llu bytes of %.0f", name,
                  (unsigned long long)stored, raw);
        printf("%-29s missing %g on %4.1f%% of %d points, ABS %g: ratio %.2f\n", name, miss,
               100.0 * (double)nmiss / MISS_N, MISS_N, MISS_EB, raw / (double)stored);
        /* the codec took the missing value as its fill value: chunk 0 holds some */
        static uint8_t raw_chunk[MISS_CHUNK * 8 + 4096];
        hsize_t origin[1] = {0}, csize = 0;
        uint32_t mask = 0;
        h5zgpu_info info;
        int fill_ok = H5Dget_chunk_storage_size(dset, origin, &csize) >= 0 &&
                      csize <= sizeof raw_chunk &&
                      H5Dread_chunk(dset, H5P_DEFAULT, origin, &mask, raw_chunk) >= 0 &&
                      h5zgpu_chunk_info(raw_chunk, (size_t)csize, &info) == H5ZGPU_OK &&
                      info.has_fill && info.fill == miss;
        tu_expect(fill_ok, "%s: chunk 0's header does not carry the missing value as fill", name);
        /* the user's three values stay, set_local's layout follows them */
        hid_t plist = H5Dget_create_plist(dset);
        unsigned flags, stored_cd[32];
        size_t n = 32;
        int ok = H5Pget_filter_by_id2(plist, H5ZGPU_FILTER_ID, &flags, &n, stored_cd, 0, NULL,
                                      NULL) >= 0 &&
                 n == 15 && memcmp(stored_cd, cd, sizeof cd) == 0 && stored_cd[7] == 2 &&
                 stored_cd[10] == 1 && stored_cd[11] == cd[5] && stored_cd[12] == cd[6];
        tu_expect(ok, "%s: stored cd_values are not the documented layout", name);
        H5Pclose(plist);
    }
    if (dset >= 0)
        H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
}

/* Optional values H5Dcreate must refuse. */
static const struct {
    const char *what;
    hid_t *file_type;
    size_t ncd;
    unsigned flags;
    double missing;
    unsigned radius;
    const char *says;
} missing_refused[] = {
    {"unknown flag bits", &t_f32le, 5, 8, 0, 0, "cd_values[4]=8 has unknown flag bits"},
    {"flag without value", &t_f32le, 5, 1, 0, 0,
     "cd_values[4]=1 announces 2 more values but only 0 follow"},
    {"missing value not float32", &t_f32le, 7, 1, 0.1, 0, "is not a float32 value"},
    {"radius without value", &t_f32le, 7, 5, -1e34, 0,
     "cd_values[4]=5 announces 3 more values but only 2 follow"},
    {"radius 1", &t_f32le, 6, 4, 0, 1, "radius 1 is outside 2..1024"},
    {"radius 1025 after a missing value", &t_f64le, 8, 5, -1e34, 1025,
     "radius 1025 is outside 2..1024"},
};

static int missing(void)
{
    char stack[HT_STACK_LEN];
    hid_t file = H5Fcreate("missing.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    for (size_t k = 0; k < sizeof missing_cases / sizeof missing_cases[0]; k++)
        missing_one(file, k);
    hsize_t dims[1] = {100}, chunk[1] = {50};
    hid_t space = H5Screate_simple(1, dims, NULL);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    for (size_t i = 0; i < sizeof missing_refused / sizeof missing_refused[0]; i++) {
        unsigned cd[8], at = 5;
        ht_user_cd(cd, H5ZGPU_CODEC_HUFFMAN, H5ZGPU_MODE_ABS, MISS_EB);
        cd[4] = missing_refused[i].flags;
        if (cd[4] & 1u) {
            h5zgpu_eb_to_words(missing_refused[i].missing, &cd[5], &cd[6]);
            at = 7;
        }
        cd[at] = missing_refused[i].radius;
        hid_t dcpl = make_dcpl(1, chunk, H5Z_FLAG_OPTIONAL, missing_refused[i].ncd, cd);
        hid_t dset = H5Dcreate2(file, "refused", *missing_refused[i].file_type, space,
                                H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ht_error_stack(stack);
        tu_expect(dset < 0 && strstr(stack, missing_refused[i].says) != NULL,
                  "%s: H5Dcreate %s; error stack: %s", missing_refused[i].what,
                  dset < 0 ? "failed without the expected message" : "succeeded", stack);
        if (dset >= 0)
            H5Ldelete(file, "refused", H5P_DEFAULT), H5Dclose(dset);
        H5Pclose(dcpl);
    }
    H5Sclose(space);
    H5Fclose(file);
    return tu_done("hdf5_missing_value");
}

/* Unfiltered inputs for h5repack (which names the codec: .codec is unused); both datasets
 * have partial edge chunks. */
static const dset_case repack_inputs[] = {
    {"f32_3d", &t_f32le, 3, {20, 30, 40}, {10, 16, 16}, H5ZGPU_MODE_ABS, 0, TU_SMOOTH, AUTO},
    {"f64_2d", &t_f64le, 2, {100, 70}, {32, 32}, H5ZGPU_MODE_ABS, 0, TU_SMOOTH, AUTO},
};

static int make_input(const char *path)
{
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    herr_t st = file < 0 ? -1 : 0;
    for (size_t i = 0; st >= 0 && i < sizeof repack_inputs / sizeof repack_inputs[0]; i++) {
        const dset_case *c = &repack_inputs[i];
        size_t n = (size_t)count_of(c->rank, c->dims);
        double *v = malloc(n * sizeof *v);
        tu_fill(H5ZGPU_FLOAT64, n, c->pattern, i, v);
        hid_t space = H5Screate_simple((int)c->rank, c->dims, NULL);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, (int)c->rank, c->chunk);
        hid_t d = H5Dcreate2(file, c->name, *c->file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        st = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
        H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(space);
        free(v);
    }
    if (file >= 0)
        H5Fclose(file);
    return st < 0;
}

static int compare(const char *a_path, const char *b_path, double eb)
{
    hid_t fa = H5Fopen(a_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t fb = H5Fopen(b_path, H5F_ACC_RDONLY, H5P_DEFAULT);
    tu_expect(fa >= 0 && fb >= 0, "cannot open %s and %s", a_path, b_path);
    for (size_t i = 0; fa >= 0 && fb >= 0 && i < sizeof repack_inputs / sizeof repack_inputs[0];
         i++) {
        dset_case c = repack_inputs[i];
        c.eb = eb;
        size_t n = (size_t)count_of(c.rank, c.dims);
        double *va = malloc(n * sizeof *va), *vb = malloc(n * sizeof *vb);
        hid_t da = H5Dopen2(fa, c.name, H5P_DEFAULT), db = H5Dopen2(fb, c.name, H5P_DEFAULT);
        hid_t dcpl = H5Dget_create_plist(db);
        tu_expect(H5Pget_nfilters(dcpl) == 0, "%s: %s still has a filter", c.name, b_path);
        herr_t r = H5Dread(da, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, va);
        r = r < 0 ? r : H5Dread(db, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vb);
        tu_expect(r >= 0, "%s: cannot read", c.name);
        if (r >= 0)
            check_values(&c, va, vb, n);
        H5Pclose(dcpl);
        H5Dclose(da);
        H5Dclose(db);
        free(va);
        free(vb);
    }
    if (fa >= 0)
        H5Fclose(fa);
    if (fb >= 0)
        H5Fclose(fb);
    return tu_done("hdf5_compare");
}

int main(int argc, char **argv)
{
    H5open();
    t_f32le = H5T_IEEE_F32LE;
    t_f32be = H5T_IEEE_F32BE;
    t_f64le = H5T_IEEE_F64LE;
    t_f64be = H5T_IEEE_F64BE;
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "roundtrip") == 0 && argc == 2)
        return roundtrip();
    if (strcmp(cmd, "errors") == 0 && argc == 2)
        return errors();
    if (strcmp(cmd, "corrupt") == 0 && argc == 3)
        return corrupt(argv[2]);
    if (strcmp(cmd, "missing") == 0 && argc == 2)
        return missing();
    if (strcmp(cmd, "make-input") == 0 && argc == 3)
        return make_input(argv[2]);
    if (strcmp(cmd, "compare") == 0 && argc == 5)
        return compare(argv[2], argv[3], atof(argv[4]));
    if (strcmp(cmd, "eb-words") == 0 && argc == 3) {
        unsigned lo, hi;
        h5zgpu_eb_to_words(atof(argv[2]), &lo, &hi);
        printf("%u %u\n", lo, hi);
        return 0;
    }
    fprintf(stderr, "usage: h5_filter_test roundtrip | errors | corrupt FILE | missing | make-input FILE |"
                    " compare A B EB | eb-words EB\n");
    return 2;
}
