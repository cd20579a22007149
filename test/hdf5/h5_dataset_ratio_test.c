/* Fixed ratio through h5zgpu_dataset_write: the selection as a whole at its target. A 96^3
 * float32 dataset in 16^3 chunks whose lower half is all missing (the dataset's fill value) and
 * whose upper half is a smooth field with noise of about a thousandth of its range, written at
 * targets 5, 10 and 20 with each codec: every chunk must be an ABS chunk that records its bound
 * (H5Dread_chunk, h5zgpu_chunk_info), every value read back must lie within its chunk's bound
 * (missing ones bit for bit), and the dataset's ratio must lie within 5% of its target. The
 * filter path, where each chunk searches alone and the missing chunks stay as small as they are,
 * lands far above it: written beside it as the contrast. A write of a block that cuts chunks
 * (into a dataset written before) must keep every value of the dataset within its chunk's
 * bound too.
 *
 *   h5_dataset_ratio_test host     the buffer in host memory (chunks compressed on the CPU)
 *   h5_dataset_ratio_test device   the buffer in GPU memory (exit 77 without a usable GPU) */
#include "../util.h"

#include "hdf5_util.h"
#include "h5zgpu_dataset.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define S 96
#define C 16
#define N ((size_t)S * S * S)
#define FILL (-1e34f)

static int on_device;

/* Writes v (the block of the selection sel, n values) with h5zgpu_dataset_write. */
static h5zgpu_status lib_write(hid_t dset, hid_t sel, const float *v, size_t n)
{
    if (!on_device)
        return h5zgpu_dataset_write(dset, sel, v, H5ZGPU_MEMORY_HOST, NULL);
#ifdef H5ZGPU_HAVE_CUDA
    void *d = NULL;
    h5zgpu_status st = H5ZGPU_E_DEVICE;
    if (cudaMalloc(&d, n * sizeof *v) == cudaSuccess &&
        cudaMemcpy(d, v, n * sizeof *v, cudaMemcpyHostToDevice) == cudaSuccess)
        st = h5zgpu_dataset_write(dset, sel, d, H5ZGPU_MEMORY_DEVICE, NULL);
    cudaFree(d);
    return st;
#else
    (void)dset;
    (void)sel;
    (void)n;
    return H5ZGPU_E_UNSUPPORTED;
#endif
}

static hid_t make_dataset(hid_t file, const char *name, unsigned codec, double target)
{
    hsize_t dims[3] = {S, S, S}, chunk[3] = {C, C, C};
    unsigned cd[4];
    float fill = FILL;
    ht_user_cd(cd, codec, H5ZGPU_MODE_RATIO, target);
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill);
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

#define NC (S / C)

/* The dataset's ratio (its bytes over the stored ones) and each chunk's recorded bound into
 * eb[NC^3] (C order of the chunk grid; -1 where a chunk is missing, unreadable or not ABS). */
static double stored_ratio(hid_t dset, double *eb)
{
    size_t total = 0, k = 0;
    unsigned char *buf = malloc(2 * N * sizeof(float));
    for (hsize_t z = 0; z < S; z += C)
        for (hsize_t y = 0; y < S; y += C)
            for (hsize_t x = 0; x < S; x += C, k++) {
                hsize_t o[3] = {z, y, x}, size = 0;
                uint32_t mask = 0;
                h5zgpu_info info;
                eb[k] = -1;
                if (H5Dget_chunk_storage_size(dset, o, &size) < 0 || size > 2 * N * 4 ||
                    H5Dread_chunk(dset, H5P_DEFAULT, o, &mask, buf) < 0 ||
                    h5zgpu_chunk_info(buf, (size_t)size, &info) != H5ZGPU_OK)
                    continue;
                total += (size_t)size;
                if (info.mode == H5ZGPU_MODE_ABS && info.eb_abs > 0)
                    eb[k] = info.eb_abs;
            }
    free(buf);
    return total ? (double)(N * sizeof(float)) / (double)total : 0;
}

/* Values of dset that miss their chunk's bound eb[] (fill values: not bit for bit). */
static size_t misses_of(hid_t dset, const float *v, const double *eb)
{
    float *back = malloc(N * sizeof *back);
    size_t misses = N;
    if (H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0) {
        misses = 0;
        for (size_t i = 0; i < N; i++) {
            const size_t z = i / S / S, y = i / S % S, x = i % S;
            const double b = eb[(z / C * NC + y / C) * NC + x / C];
            misses += v[i] == FILL ? memcmp(&v[i], &back[i], sizeof *v) != 0
                                   : !(fabs((double)back[i] - (double)v[i]) <= b);
        }
    }
    free(back);
    return misses;
}

static void one_target(hid_t file, const float *v, unsigned codec, double target)
{
    char name[64];
    snprintf(name, sizeof name, "library codec %u target %g", codec, target);
    hid_t lib = make_dataset(file, name, codec, target);
    snprintf(name, sizeof name, "filter codec %u target %g", codec, target);
    hid_t flt = make_dataset(file, name, codec, target);
    tu_expect(lib >= 0 && flt >= 0, "%s: creating the datasets failed", name);
    if (lib < 0 || flt < 0)
        return;
    h5zgpu_status st = lib_write(lib, H5S_ALL, v, N);
    tu_expect(st == H5ZGPU_OK, "%s: h5zgpu_dataset_write: %s", name, h5zgpu_last_error());
    tu_expect(H5Dwrite(flt, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0,
              "%s: H5Dwrite failed", name);
    double eb[NC * NC * NC], eb_filter[NC * NC * NC], lo = INFINITY, hi = 0;
    const double ratio = stored_ratio(lib, eb), filter = stored_ratio(flt, eb_filter);
    size_t bad = 0;
    for (size_t k = 0; k < NC * NC * NC; k++) {
        bad += !(eb[k] > 0);
        lo = fmin(lo, eb[k]);
        hi = fmax(hi, eb[k]);
    }
    tu_expect(bad == 0, "codec %u target %g: %zu chunks record no ABS bound", codec, target, bad);
    tu_expect(fabs(ratio / target - 1) <= 0.05,
              "codec %u target %g: the dataset's ratio %.3f is more than 5%% off", codec, target,
              ratio);
    /* the contrast: each chunk alone aims at the target, the missing half far below it */
    tu_expect(filter > 1.3 * target, "codec %u target %g: the filter path's ratio %.3f, expected "
              "far above the target", codec, target, filter);
    const size_t misses = bad ? N : misses_of(lib, v, eb);
    tu_expect(misses == 0, "codec %u target %g: %zu values miss their chunk's bound", codec,
              target, misses);
    printf("codec %u target %g: ratio %.3f (filter path %.3f), bounds %g to %g\n", codec, target,
           ratio, filter, lo, hi);
    H5Dclose(lib);
    H5Dclose(flt);
}

/* A block that cuts chunks (z 8..87, y 5..94, x 0..95) rewritten at target 10 into a dataset
 * first written whole: every value of the block within its chunk's new bound, and every value
 * outside it within that bound of what the dataset held before (a cut chunk is coded again
 * with what it held: fixed ratio keeps no first write's bound through rewrites). */
static void cut_block(hid_t file, const float *v, unsigned codec)
{
    char name[64];
    snprintf(name, sizeof name, "block codec %u", codec);
    hid_t d = make_dataset(file, name, codec, 10);
    tu_expect(d >= 0, "%s: creating the dataset failed", name);
    if (d < 0)
        return;
    hsize_t start[3] = {8, 5, 0}, count[3] = {80, 90, S};
    const size_t n = (size_t)count[0] * count[1] * count[2];
    float *block = malloc(n * sizeof *block), *want = malloc(N * sizeof *want);
    h5zgpu_status st = lib_write(d, H5S_ALL, v, N);
    tu_expect(st == H5ZGPU_OK, "%s: the first write: %s", name, h5zgpu_last_error());
    tu_expect(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, want) >= 0,
              "%s: H5Dread failed", name);
    for (size_t i = 0; i < n; i++) {   /* the block: the field moved by 0.5 */
        const size_t z = i / count[2] / count[1] + start[0], y = i / count[2] % count[1] + start[1];
        const size_t at = (z * S + y) * S + i % count[2];
        block[i] = v[at] == FILL ? FILL : v[at] + 0.5f;
        want[at] = block[i];
    }
    hid_t space = H5Dget_space(d);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    st = lib_write(d, space, block, n);
    tu_expect(st == H5ZGPU_OK, "%s: the block's write: %s", name, h5zgpu_last_error());
    double eb[NC * NC * NC];
    stored_ratio(d, eb);
    size_t bad = 0;
    for (size_t k = 0; k < NC * NC * NC; k++)
        bad += !(eb[k] > 0);
    tu_expect(bad == 0, "%s: %zu chunks record no ABS bound", name, bad);
    const size_t misses = bad ? N : misses_of(d, want, eb);
    tu_expect(misses == 0, "%s: %zu values miss their chunk's bound", name, misses);
    H5Sclose(space);
    H5Dclose(d);
    free(block);
    free(want);
}

int main(int argc, char **argv)
{
    on_device = ht_on_device(argc, argv, "h5_dataset_ratio_test");
    float *v = malloc(N * sizeof *v);
    h5zgpu_params p = {.dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {S, S, S}};
    tu_fill_shape(&p, TU_FIELD, 7, v);
    uint64_t state = 88172645463325252u;
    for (size_t i = 0; i < N; i++) {   /* z < S/2: missing; noise of 0.02 (range about 30) */
        const double u = (double)(tu_xorshift(&state) >> 11) * 0x1p-52 - 1;   /* [-1, 1) */
        v[i] = i < N / 2 ? FILL : v[i] + 0.02f * (float)u;
    }
    hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    tu_expect(file >= 0, "creating %s failed", argv[2]);
    static const double targets[] = {5, 10, 20};
    for (unsigned codec = 1; file >= 0 && codec <= 2; codec++) {
        for (unsigned t = 0; t < 3; t++)
            one_target(file, v, codec, targets[t]);
        cut_block(file, v, codec);
    }
    if (file >= 0)
        H5Fclose(file);
    free(v);
    return tu_done("h5_dataset_ratio_test");
}
