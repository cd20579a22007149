/* h5zgpu_dataset_write / h5zgpu_dataset_read against the filter path (linked to the system
 * libhdf5; the plugin comes from HDF5_PLUGIN_PATH). Two datasets of each kind take the same
 * writes, one through H5Dwrite and the filter, one through the library: after every write they
 * must hold the same bytes in every chunk (H5Dread_chunk), so a file written by the library is
 * one the filter could have written. The writes: the whole dataset, then hyperslabs that cover
 * chunks in part, edge chunks (the extent is no multiple of the chunk), a plane, a single
 * element; datasets with and without a fill value, float32 and float64, every codec, ABS, REL
 * and PWREL. Reads of hyperslabs through the library must equal H5Dread bit for bit, including
 * chunks never written (the fill value). Then what the library refuses, with its reason.
 *
 *   h5_dataset_test host     buffers in host memory (chunks compressed on the CPU)
 *   h5_dataset_test device   buffers in GPU memory (exit 77 without a usable GPU) */
#include "../util.h"

#include "hdf5_util.h"
#include "h5zgpu_dataset.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define NZ 40
#define NY 36
#define NX 50
#define C 16
#define N ((size_t)NZ * NY * NX)
#define FILL (-1e34)

typedef struct box {
    hsize_t at[3], len[3];
} box;

static const box writes[] = {
    {{0, 0, 0}, {NZ, NY, NX}},      /* everything */
    {{5, 3, 7}, {20, 20, 20}},      /* chunks in part */
    {{32, 32, 48}, {8, 4, 2}},      /* the far edge chunk */
    {{0, 17, 0}, {NZ, 1, NX}},      /* a plane */
    {{33, 2, 49}, {1, 1, 1}},       /* one element */
    {{16, 16, 16}, {16, 16, 16}},   /* exactly one chunk */
};
#define NWRITES (sizeof writes / sizeof writes[0])

static int on_device;

/* Stands in for cudaMalloc'd data when testing device buffers: the block goes to the GPU for
 * the call and (reads) comes back after it. */
static h5zgpu_status lib_io(int writing, hid_t dset, hid_t space, void *host, size_t bytes)
{
    if (!on_device)
        return writing ? h5zgpu_dataset_write(dset, space, host, H5ZGPU_MEMORY_HOST, NULL)
                       : h5zgpu_dataset_read(dset, space, host, H5ZGPU_MEMORY_HOST, NULL);
#ifdef H5ZGPU_HAVE_CUDA
    void *d = NULL;
    h5zgpu_status st = H5ZGPU_E_DEVICE;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess)
        return st;
    if (!writing || cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess)
        st = writing ? h5zgpu_dataset_write(dset, space, d, H5ZGPU_MEMORY_DEVICE, NULL)
                     : h5zgpu_dataset_read(dset, space, d, H5ZGPU_MEMORY_DEVICE, NULL);
    if (st == H5ZGPU_OK && !writing &&
        cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        st = H5ZGPU_E_DEVICE;
    cudaFree(d);
    return st;
#else
    (void)bytes;
    return H5ZGPU_E_UNSUPPORTED;
#endif
}

static hid_t make_dataset(hid_t file, const char *name, h5zgpu_dtype t, unsigned codec,
                          h5zgpu_mode mode, int fill_set)
{
    hsize_t dims[3] = {NZ, NY, NX}, chunk[3] = {C, C, C};
    unsigned cd[4];
    hid_t type = t == H5ZGPU_FLOAT32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    double fill = FILL;
    ht_user_cd(cd, codec, mode, 1e-3);
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    if (fill_set)
        H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    hid_t d = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

static hid_t select_box(hid_t dset, const box *b)
{
    hid_t s = H5Dget_space(dset);
    H5Sselect_hyperslab(s, H5S_SELECT_SET, b->at, NULL, b->len, NULL);
    return s;
}

static size_t box_size(const box *b)
{
    return (size_t)(b->len[0] * b->len[1] * b->len[2]);
}

/* The values of round r over box b (TU_MASKED for datasets with a fill value: -1e34 patches,
 * NaN, infinities; TU_FIELD otherwise), in the element type. */
static void box_values(h5zgpu_dtype t, int fill_set, unsigned r, const box *b, void *out)
{
    h5zgpu_params p = {.dtype = t, .rank = 3, .dims = {b->len[0], b->len[1], b->len[2]}};
    tu_fill_shape(&p, fill_set ? TU_MASKED : TU_FIELD, 100 + r, out);
}

/* 1 when every chunk of a and b holds the same stored bytes (both absent counts as equal). */
static int same_chunks(hid_t a, hid_t b, char *why, size_t whylen)
{
    for (hsize_t z = 0; z < NZ; z += C)
        for (hsize_t y = 0; y < NY; y += C)
            for (hsize_t x = 0; x < NX; x += C) {
                hsize_t o[3] = {z, y, x}, sa = 0, sb = 0;
                H5E_BEGIN_TRY {
                    H5Dget_chunk_storage_size(a, o, &sa);
                    H5Dget_chunk_storage_size(b, o, &sb);
                } H5E_END_TRY;
                if (sa != sb) {
                    snprintf(why, whylen, "chunk (%llu,%llu,%llu): %llu bytes vs %llu",
                             (unsigned long long)z, (unsigned long long)y,
                             (unsigned long long)x, (unsigned long long)sa,
                             (unsigned long long)sb);
                    return 0;
                }
                if (!sa)
                    continue;
                unsigned char *ba = malloc(sa), *bb = malloc(sb);
                uint32_t ma = 1, mb = 1;
                int same = ba && bb && H5Dread_chunk(a, H5P_DEFAULT, o, &ma, ba) >= 0 &&
                           H5Dread_chunk(b, H5P_DEFAULT, o, &mb, bb) >= 0 && ma == 0 &&
                           mb == 0 && memcmp(ba, bb, sa) == 0;
                free(ba);
                free(bb);
                if (!same) {
                    snprintf(why, whylen, "chunk (%llu,%llu,%llu) differs",
                             (unsigned long long)z, (unsigned long long)y,
                             (unsigned long long)x);
                    return 0;
                }
            }
    return 1;
}

/* The library's read of box b equals H5Dread's, bit for bit. */
static void expect_same_read(hid_t dset, h5zgpu_dtype t, const box *b, const char *label)
{
    size_t n = box_size(b), es = tu_esize(t);
    void *mine = malloc(n * es), *theirs = malloc(n * es);
    hid_t fs = select_box(dset, b), ms = H5Screate_simple(3, b->len, NULL);
    hid_t mt = t == H5ZGPU_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    h5zgpu_status st = lib_io(0, dset, fs, mine, n * es);
    tu_expect(st == H5ZGPU_OK, "%s: h5zgpu_dataset_read: %s", label, h5zgpu_last_error());
    tu_expect(H5Dread(dset, mt, ms, fs, H5P_DEFAULT, theirs) >= 0, "%s: H5Dread failed", label);
    if (st == H5ZGPU_OK)
        tu_expect(memcmp(mine, theirs, n * es) == 0, "%s: read differs from H5Dread", label);
    H5Sclose(fs);
    H5Sclose(ms);
    free(mine);
    free(theirs);
}

static void one_kind(hid_t file, h5zgpu_dtype t, unsigned codec, h5zgpu_mode mode, int fill_set)
{
    char label[128], name[160], why[256];
    snprintf(label, sizeof label, "%s codec %u mode %d%s", t == H5ZGPU_FLOAT32 ? "f32" : "f64",
             codec, (int)mode, fill_set ? " fill -1e34" : "");
    snprintf(name, sizeof name, "filter %s", label);
    hid_t viaf = make_dataset(file, name, t, codec, mode, fill_set);
    snprintf(name, sizeof name, "library %s", label);
    hid_t vial = make_dataset(file, name, t, codec, mode, fill_set);
    tu_expect(viaf >= 0 && vial >= 0, "%s: creating the datasets failed", label);
    if (viaf < 0 || vial < 0)
        return;
    hid_t mt = t == H5ZGPU_FLOAT32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    /* a part first: the chunks it leaves unwritten must read as the fill value */
    static const unsigned order[NWRITES] = {1, 0, 2, 3, 4, 5};
    for (unsigned r = 0; r < NWRITES; r++) {
        const box *b = &writes[order[r]];
        size_t n = box_size(b);
        void *v = malloc(n * tu_esize(t));
        box_values(t, fill_set, r, b, v);
        hid_t fs = select_box(viaf, b), ms = H5Screate_simple(3, b->len, NULL);
        tu_expect(H5Dwrite(viaf, mt, ms, fs, H5P_DEFAULT, v) >= 0, "%s round %u: H5Dwrite",
                  label, r);
        h5zgpu_status st = lib_io(1, vial, fs, v, n * tu_esize(t));
        tu_expect(st == H5ZGPU_OK, "%s round %u: h5zgpu_dataset_write: %s", label, r,
                  h5zgpu_last_error());
        tu_expect(same_chunks(viaf, vial, why, sizeof why), "%s round %u: %s", label, r, why);
        if (r == 0)
            expect_same_read(vial, t, &writes[0], label);
        H5Sclose(fs);
        H5Sclose(ms);
        free(v);
    }
    for (unsigned r = 1; r < NWRITES; r++)
        expect_same_read(vial, t, &writes[r], label);
    H5Dclose(viaf);
    H5Dclose(vial);
}

/* A 1-D chunked dataset of 4096 float32 with filter 33900 (ABS 1e-3), and deflate after it. */
static hid_t refusal_dataset(hid_t file, const char *name, int deflate)
{
    hsize_t dims[1] = {4096}, chunk[1] = {1024};
    unsigned cd[4];
    ht_user_cd(cd, 1, H5ZGPU_MODE_ABS, 1e-3);
    hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    if (deflate)
        H5Pset_deflate(dcpl, 1);
    hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

/* What the library refuses: another filter in the pipeline (a filter before ours is refused at
 * H5Dcreate already: hdf5_pipeline), a selection of two blocks, a buffer of the wrong kind. */
static void refusals(hid_t file)
{
    hsize_t at[1] = {0}, len[1] = {100}, at2[1] = {500};
    float v[4096] = {0};
    hid_t d = refusal_dataset(file, "deflated", 1);
    tu_expect(d >= 0, "creating a dataset with h5zgpu then deflate failed");
    tu_expect(h5zgpu_dataset_write(d, H5S_ALL, v, H5ZGPU_MEMORY_HOST, NULL) ==
                      H5ZGPU_E_INVALID_ARG &&
                  strstr(h5zgpu_last_error(), "2 filter(s)") != NULL,
              "a dataset with deflate after h5zgpu was not refused (%s)", h5zgpu_last_error());
    H5Dclose(d);
    d = refusal_dataset(file, "one", 0);
    hid_t sel = H5Dget_space(d);
    H5Sselect_hyperslab(sel, H5S_SELECT_SET, at, NULL, len, NULL);
    H5Sselect_hyperslab(sel, H5S_SELECT_OR, at2, NULL, len, NULL);
    tu_expect(h5zgpu_dataset_write(d, sel, v, H5ZGPU_MEMORY_HOST, NULL) ==
                      H5ZGPU_E_UNSUPPORTED &&
                  strstr(h5zgpu_last_error(), "not one block") != NULL,
              "a selection of two blocks was not refused (%s)", h5zgpu_last_error());
#ifndef H5ZGPU_HAVE_CUDA
    tu_expect(h5zgpu_dataset_write(d, H5S_ALL, v, H5ZGPU_MEMORY_DEVICE, NULL) ==
                  H5ZGPU_E_UNSUPPORTED,
              "a device buffer in a build without CUDA was not refused");
#else   /* with a GPU or without one */
    tu_expect(h5zgpu_dataset_write(d, H5S_ALL, v, H5ZGPU_MEMORY_DEVICE, NULL) ==
                      H5ZGPU_E_INVALID_ARG &&
                  strstr(h5zgpu_last_error(), "not CUDA device memory") != NULL,
              "a host buffer passed as device memory was not refused (%s)", h5zgpu_last_error());
#endif
    H5Sclose(sel);
    H5Dclose(d);
}

int main(int argc, char **argv)
{
    on_device = ht_on_device(argc, argv, "h5_dataset_test");
    hid_t file = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    tu_expect(file >= 0, "creating %s failed", argv[2]);
    if (file < 0)
        return tu_done("h5_dataset_test");
    static const h5zgpu_mode modes[] = {H5ZGPU_MODE_ABS, H5ZGPU_MODE_REL, H5ZGPU_MODE_PWREL};
    for (int t = 1; t <= 2; t++)
        for (unsigned codec = 0; codec <= 2; codec++)
            for (int m = 0; m < 3; m++)
                for (int f = 0; f < 2; f++)
                    one_kind(file, (h5zgpu_dtype)t, codec, modes[m], f);
    refusals(file);
    H5Fclose(file);
    return tu_done("h5_dataset_test");
}
