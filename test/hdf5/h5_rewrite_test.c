/* Chunks written in parts (linked to the system libhdf5; the plugin comes from
 * HDF5_PLUGIN_PATH). HDF5 writes part of a stored chunk by decompressing it, changing the part
 * and compressing the whole chunk again, so the values nobody rewrote go through the quantiser
 * once a write. For every codec, mode and element type, and with or without a fill value and a
 * partial first write, a dataset takes a series of hyperslab writes (slabs, boxes, planes,
 * edge chunks, the whole dataset read back and written again), is closed and reopened after
 * each, and every value must then be within its bound of what was last written to it:
 *   ABS    eb
 *   PWREL  eb x |value|
 *   REL    eb x the largest range (max - min of the finite values that are not fill) its chunk
 *          had at any write since the value was written
 * Fill values come back bit for bit, and writing back what was read changes nothing in ABS and
 * PWREL (a stored value never moves). docs/FORMAT.md, "Rewrites". */
#include "../util.h"

#include "hdf5_util.h"

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NZ 40
#define NY 36
#define NX 50
#define CZ 16 /* 3 x 3 x 4 chunks; the last along each axis is padded */
#define CY 16
#define CX 16
#define N ((size_t)NZ * NY * NX)
#define EB 1e-3
#define FILL (-1e34)
#define ROUNDS 12

typedef struct box {
    hsize_t at[3], len[3];
} box;

/* The writes after the first: slabs along each axis, a small box, a plane at a chunk's first
 * index, the edge chunks; the rest come from a generator. */
static const box fixed_boxes[] = {
    {{5, 0, 0}, {8, NY, NX}},
    {{18, 10, 30}, {4, 4, 4}},
    {{0, 0, 0}, {NZ, NY, 7}},
    {{0, 30, 0}, {NZ, 6, NX}},
    {{0, 0, 16}, {NZ, NY, 1}},
};
#define NFIXED (sizeof fixed_boxes / sizeof fixed_boxes[0])
#define WRITE_BACK (1 + NFIXED) /* the round that writes back what it read */

static const struct {
    const char *name;
    int fill_set;          /* the dataset has fill value FILL */
    H5D_fill_time_t when;  /* its fill time */
    int partial_first;     /* the first write covers z < NZ / 2 only */
} variants[] = {
    {"default fill value", 0, H5D_FILL_TIME_IFSET, 0},
    {"fill value -1e34, fill time ALLOC, partial first write", 1, H5D_FILL_TIME_ALLOC, 1},
    {"fill value -1e34, fill time NEVER, partial first write", 1, H5D_FILL_TIME_NEVER, 1},
};

typedef struct run {
    h5zgpu_dtype t;
    h5zgpu_mode mode;
    int fill_set;
    double want[N];   /* what was last written, as the element type holds it */
    double range[N];  /* REL: the largest range of the element's chunk since it was written */
    double got[N];    /* what the dataset holds */
    char label[160];
} run;

static size_t idx(hsize_t z, hsize_t y, hsize_t x)
{
    return ((size_t)z * NY + (size_t)y) * NX + (size_t)x;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    return h;
}

/* Round r's value at (z, y, x): a smooth field of both signs whose scale and offset change from
 * round to round, so that rewritten chunks change their range, plus a little noise. */
static double value_at(unsigned r, hsize_t z, hsize_t y, hsize_t x)
{
    static const double scale[] = {1.0, 3.0, 40.0, 0.5, 1.0, 2.0};
    static const double offset[] = {0.5, 0.0, 0.0, 0.2, -0.3, 1.0};
    const double s = scale[r % 6], o = offset[r % 6];
    const double noise =
        (double)(mix(((uint64_t)r << 48) ^ idx(z, y, x)) >> 11) * 0x1p-53 - 0.5;
    const double v = o + s * (sin(0.11 * (double)z + 0.3 * r) * cos(0.07 * (double)y) +
                              0.3 * sin(0.05 * (double)x) + 0.01 * noise);
    return v == 0.0 ? 1e-3 : v;   /* no value equals the default fill value, +0 */
}

static double as_type(h5zgpu_dtype t, double v)
{
    return t == H5ZGPU_FLOAT32 ? (double)(float)v : v;
}

static box next_box(uint64_t *seed)
{
    static const hsize_t n[3] = {NZ, NY, NX};
    box b;
    for (int a = 0; a < 3; a++) {
        *seed = mix(*seed + 0x9E3779B97F4A7C15u);
        b.len[a] = 1 + *seed % (n[a] / 2);
        b.at[a] = (*seed >> 20) % (n[a] - b.len[a] + 1);
    }
    return b;
}

static int is_fill(const run *R, double v)
{
    return R->fill_set && v == as_type(R->t, FILL);
}

/* REL: each chunk the write touches is compressed again with the range of its values after the
 * write; the elements it writes start their range there, the others keep the largest (as do
 * values written back, which keep what they were meant to be). */
static void track_ranges(run *R, const box *b, const double *after, int back)
{
    for (hsize_t cz = 0; cz < NZ; cz += CZ)
        for (hsize_t cy = 0; cy < NY; cy += CY)
            for (hsize_t cx = 0; cx < NX; cx += CX) {
                const hsize_t c0[3] = {cz, cy, cx}, cn[3] = {CZ, CY, CX};
                int touched = 1;
                for (int a = 0; a < 3; a++)
                    touched &= b->at[a] < c0[a] + cn[a] && c0[a] < b->at[a] + b->len[a];
                if (!touched)
                    continue;
                double lo = INFINITY, hi = -INFINITY;
                for (hsize_t z = cz; z < cz + CZ && z < NZ; z++)
                    for (hsize_t y = cy; y < cy + CY && y < NY; y++)
                        for (hsize_t x = cx; x < cx + CX && x < NX; x++) {
                            const double v = after[idx(z, y, x)];
                            if (!is_fill(R, v)) {
                                lo = fmin(lo, v);
                                hi = fmax(hi, v);
                            }
                        }
                const double range = hi > lo ? hi - lo : 0.0;
                for (hsize_t z = cz; z < cz + CZ && z < NZ; z++)
                    for (hsize_t y = cy; y < cy + CY && y < NY; y++)
                        for (hsize_t x = cx; x < cx + CX && x < NX; x++) {
                            const size_t i = idx(z, y, x);
                            const int written = !back && z >= b->at[0] && z < b->at[0] + b->len[0] &&
                                                y >= b->at[1] && y < b->at[1] + b->len[1] &&
                                                x >= b->at[2] && x < b->at[2] + b->len[2];
                            R->range[i] = written ? range : fmax(R->range[i], range);
                        }
            }
}

/* Writes round r's values (or, with back, what the dataset holds) into box b. */
static herr_t write_box(hid_t dset, run *R, const box *b, unsigned r, int back)
{
    const size_t n = (size_t)(b->len[0] * b->len[1] * b->len[2]);
    double *buf = malloc(n * sizeof *buf), *after = malloc(N * sizeof *after);
    memcpy(after, R->got, N * sizeof *after);
    size_t k = 0;
    for (hsize_t z = b->at[0]; z < b->at[0] + b->len[0]; z++)
        for (hsize_t y = b->at[1]; y < b->at[1] + b->len[1]; y++)
            for (hsize_t x = b->at[2]; x < b->at[2] + b->len[2]; x++, k++) {
                const size_t i = idx(z, y, x);
                buf[k] = back ? R->got[i] : as_type(R->t, value_at(r, z, y, x));
                after[i] = buf[k];
            }
    if (R->mode == H5ZGPU_MODE_REL)
        track_ranges(R, b, after, back);
    k = 0;
    for (hsize_t z = b->at[0]; z < b->at[0] + b->len[0]; z++)
        for (hsize_t y = b->at[1]; y < b->at[1] + b->len[1]; y++)
            for (hsize_t x = b->at[2]; x < b->at[2] + b->len[2]; x++, k++) {
                const size_t i = idx(z, y, x);
                /* a value written back keeps what it was meant to be, and its range */
                if (!back)
                    R->want[i] = buf[k];
            }
    hid_t fspace = H5Dget_space(dset), mspace = H5Screate_simple(3, b->len, NULL);
    herr_t st = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, b->at, NULL, b->len, NULL);
    if (st >= 0)
        st = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, buf);
    H5Sclose(mspace);
    H5Sclose(fspace);
    free(buf);
    free(after);
    return st;
}

/* Every value against what was last written to it; returns the misses. */
static size_t check(const run *R, const char *when)
{
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        const double w = R->want[i], g = R->got[i];
        double lim;
        if (is_fill(R, w)) {
            lim = 0.0;
        } else if (R->mode == H5ZGPU_MODE_ABS) {
            lim = EB;
        } else if (R->mode == H5ZGPU_MODE_PWREL) {
            lim = EB * fabs(w);
        } else {
            lim = EB * R->range[i];
        }
        const int ok = is_fill(R, w) ? memcmp(&w, &g, sizeof w) == 0 : fabs(g - w) <= lim;
        if (!ok && bad++ == 0)
            tu_expect(0, "%s, %s: element %zu holds %.17g, last written %.17g, bound %.3g",
                      R->label, when, i, g, w, lim);
    }
    if (bad > 1)
        tu_expect(0, "%s, %s: %zu values out of bound in all", R->label, when, bad);
    return bad;
}

static herr_t read_all(hid_t dset, run *R)
{
    return H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, R->got);
}

static void one(hid_t file, run *R, unsigned codec, size_t v)
{
    static const hsize_t dims[3] = {NZ, NY, NX}, chunk[3] = {CZ, CY, CX};
    const char *name = "d";
    unsigned cd[4];
    ht_user_cd(cd, codec, R->mode, EB);
    hid_t ftype = R->t == H5ZGPU_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    if (variants[v].fill_set) {
        const double fill = FILL;
        H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    }
    H5Pset_fill_time(dcpl, variants[v].when);
    hid_t dset = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    tu_expect(dset >= 0, "%s: H5Dcreate failed", R->label);
    if (dset < 0)
        return;
    R->fill_set = variants[v].fill_set;
    for (size_t i = 0; i < N; i++) {
        R->want[i] = R->got[i] = R->fill_set ? as_type(R->t, FILL) : 0.0;
        R->range[i] = 0.0;
    }
    uint64_t seed = codec * 1000u + (unsigned)R->mode * 100u + (unsigned)R->t * 10u + v;
    size_t misses = 0;
    for (unsigned r = 0; r < ROUNDS && dset >= 0 && misses == 0; r++) {
        box b = {{0, 0, 0}, {NZ, NY, NX}};
        if (r == 0 && variants[v].partial_first)
            b.len[0] = NZ / 2;
        else if (r >= 1 && r <= NFIXED)
            b = fixed_boxes[r - 1];
        else if (r > WRITE_BACK)
            b = next_box(&seed);
        const int back = r == WRITE_BACK;
        double *before = back ? malloc(N * sizeof *before) : NULL;
        if (before)
            memcpy(before, R->got, N * sizeof *before);
        char when[96];
        snprintf(when, sizeof when, "after write %u (%llu x %llu x %llu at %llu, %llu, %llu%s)",
                 r, (unsigned long long)b.len[0], (unsigned long long)b.len[1],
                 (unsigned long long)b.len[2], (unsigned long long)b.at[0],
                 (unsigned long long)b.at[1], (unsigned long long)b.at[2],
                 back ? ", the values read back" : "");
        herr_t st = write_box(dset, R, &b, r, back);
        H5Dclose(dset);   /* so that the read decodes the stored chunks, not HDF5's cache */
        dset = H5Dopen2(file, name, H5P_DEFAULT);
        st = st < 0 || dset < 0 ? -1 : read_all(dset, R);
        tu_expect(st >= 0, "%s, %s: HDF5 call failed", R->label, when);
        if (st < 0) {
            free(before);
            break;
        }
        misses = check(R, when);
        if (before && R->mode != H5ZGPU_MODE_REL) {
            size_t moved = 0;
            for (size_t i = 0; i < N; i++)
                moved += memcmp(&before[i], &R->got[i], sizeof(double)) != 0;
            tu_expect(moved == 0, "%s, %s: %zu values moved", R->label, when, moved);
        }
        free(before);
    }
    if (dset >= 0)
        H5Dclose(dset);
    H5Ldelete(file, name, H5P_DEFAULT);
}

int main(void)
{
    static const unsigned codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN, H5ZGPU_CODEC_AUTO};
    static const char *codec_names[] = {"auto", "fixed-length", "Huffman"};
    static const h5zgpu_mode modes[] = {H5ZGPU_MODE_ABS, H5ZGPU_MODE_REL, H5ZGPU_MODE_PWREL};
    static const char *mode_names[] = {"ABS", "REL", "PWREL"};
    static run R;
    H5open();
    hid_t file = H5Fcreate("rewrite.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    tu_expect(file >= 0, "cannot create rewrite.h5");
    unsigned cases = 0;
    for (size_t c = 0; file >= 0 && c < 3; c++)
        for (size_t m = 0; m < 3; m++)
            for (int f32 = 1; f32 >= 0; f32--)
                for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
                    R.t = f32 ? H5ZGPU_FLOAT32 : H5ZGPU_FLOAT64;
                    R.mode = modes[m];
                    snprintf(R.label, sizeof R.label, "%s %s %s eb %g, %s",
                             codec_names[codecs[c]], mode_names[m], f32 ? "float32" : "float64",
                             EB, variants[v].name);
                    one(file, &R, codecs[c], v);
                    cases++;
                }
    if (file >= 0)
        H5Fclose(file);
    printf("hdf5_rewrite: %u datasets, %d writes each\n", cases, ROUNDS);
    return tu_done("hdf5_rewrite");
}
