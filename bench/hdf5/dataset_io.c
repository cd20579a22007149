/* Whole-field writes and reads through HDF5, side by side in one run: uncompressed H5Dwrite,
 * H5Dwrite through the filter (HDF5's one-chunk-at-a-time pipeline), and the dataset library
 * (h5zgpu_dataset_write/read) from host memory and, with a GPU, from device memory. Each row
 * is the best of REPEATS; a write is timed from H5Dcreate to the file flushed, a read over the
 * whole dataset. Every read is checked against the field under the bound.
 *
 *   dataset_io FIELD.f32 N FILE [--chunk C] [--codec fixed|huffman|auto] [--mode abs|rel|pwrel]
 *              [--eb X]
 * FIELD.f32: N^3 float32 values (bench/gen_nyx_like.py); FILE: scratch (put it in /dev/shm to
 * leave the disk out). Needs HDF5_PLUGIN_PATH for the filter rows. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv */
#include "h5zgpu_dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef H5ZGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define REPEATS 3

typedef enum way { PLAIN, FILTER, LIB_HOST, LIB_DEVICE } way;
static const char *const way_names[] = {"HDF5 uncompressed", "HDF5 + filter",
                                        "library, host buffer", "library, device buffer"};

typedef struct run {
    const char *file;
    hsize_t n, chunk;
    unsigned cd[4];
    const float *field;
    float *back;
    void *d_field, *d_back;
} run;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static hid_t create(const run *R, hid_t file, way w)
{
    hsize_t dims[3] = {R->n, R->n, R->n}, chunk[3] = {R->chunk, R->chunk, R->chunk};
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    if (w != PLAIN)
        H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, R->cd);
    hid_t d = H5Dcreate2(file, "field", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return d;
}

/* Seconds of one write, and the stored bytes; negative on failure. */
static double write_once(const run *R, way w, hsize_t *stored)
{
    hid_t file = H5Fcreate(R->file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return -1;
    double t0 = now();
    hid_t d = create(R, file, w);
    int ok = d >= 0;
    if (ok && (w == PLAIN || w == FILTER))
        ok = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, R->field) >= 0;
    else if (ok)
        ok = h5zgpu_dataset_write(d, H5S_ALL, w == LIB_HOST ? (const void *)R->field : R->d_field,
                                  w == LIB_HOST ? H5ZGPU_MEMORY_HOST : H5ZGPU_MEMORY_DEVICE,
                                  NULL) == H5ZGPU_OK;
    ok = ok && H5Fflush(file, H5F_SCOPE_LOCAL) >= 0;
    double t = now() - t0;
    *stored = ok ? H5Dget_storage_size(d) : 0;
    if (!ok)
        fprintf(stderr, "dataset_io: %s write failed: %s\n", way_names[w], h5zgpu_last_error());
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(file);
    return ok ? t : -1;
}

/* Seconds of one read of the file write_once left; the values land in R->back. */
static double read_once(run *R, way w)
{
    hid_t file = H5Fopen(R->file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = file < 0 ? -1 : H5Dopen2(file, "field", H5P_DEFAULT);
    int ok = d >= 0;
    double t0 = now();
    if (ok && (w == PLAIN || w == FILTER))
        ok = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, R->back) >= 0;
    else if (ok)
        ok = h5zgpu_dataset_read(d, H5S_ALL, w == LIB_HOST ? (void *)R->back : R->d_back,
                                 w == LIB_HOST ? H5ZGPU_MEMORY_HOST : H5ZGPU_MEMORY_DEVICE,
                                 NULL) == H5ZGPU_OK;
    double t = now() - t0;
#ifdef H5ZGPU_HAVE_CUDA
    size_t bytes = (size_t)(R->n * R->n * R->n) * sizeof(float);
    if (ok && w == LIB_DEVICE)
        ok = cudaMemcpy(R->back, R->d_back, bytes, cudaMemcpyDeviceToHost) == cudaSuccess;
#endif
    if (!ok)
        fprintf(stderr, "dataset_io: %s read failed: %s\n", way_names[w], h5zgpu_last_error());
    if (d >= 0)
        H5Dclose(d);
    if (file >= 0)
        H5Fclose(file);
    return ok ? t : -1;
}

/* Values outside the bound (REL: of each chunk's range). */
static size_t misses(const run *R, h5zgpu_mode mode, double eb, way w)
{
    size_t bad = 0, n = (size_t)R->n, c = (size_t)R->chunk;
    for (size_t z0 = 0; z0 < n; z0 += c)
        for (size_t y0 = 0; y0 < n; y0 += c)
            for (size_t x0 = 0; x0 < n; x0 += c) {
                double lo = INFINITY, hi = -INFINITY;
                for (size_t z = z0; z < z0 + c && z < n; z++)
                    for (size_t y = y0; y < y0 + c && y < n; y++)
                        for (size_t x = x0; x < x0 + c && x < n; x++) {
                            double v = R->field[(z * n + y) * n + x];
                            lo = v < lo ? v : lo;
                            hi = v > hi ? v : hi;
                        }
                for (size_t z = z0; z < z0 + c && z < n; z++)
                    for (size_t y = y0; y < y0 + c && y < n; y++)
                        for (size_t x = x0; x < x0 + c && x < n; x++) {
                            size_t i = (z * n + y) * n + x;
                            double v = R->field[i], err = fabs((double)R->back[i] - v);
                            double b = w == PLAIN               ? 0
                                       : mode == H5ZGPU_MODE_ABS ? eb
                                       : mode == H5ZGPU_MODE_REL ? eb * (hi - lo)
                                                                 : eb * fabs(v);
                            bad += !(err <= b);
                        }
            }
    return bad;
}

int main(int argc, char **argv)
{
    /* before any CUDA context: queues for 16 chunks in flight a batch (codec/src/batch.c) */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    if (argc < 4) {
        fprintf(stderr, "usage: %s FIELD.f32 N FILE [--chunk C] [--codec fixed|huffman|auto] "
                "[--mode abs|rel|pwrel] [--eb X]\n", argv[0]);
        return 2;
    }
    run R = {.file = argv[3], .n = strtoull(argv[2], NULL, 10), .chunk = 64};
    unsigned codec = 2;
    h5zgpu_mode mode = H5ZGPU_MODE_REL;
    double eb = 1e-3;
    for (int i = 4; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--chunk"))
            R.chunk = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--codec"))
            codec = !strcmp(v, "fixed") ? 1 : !strcmp(v, "auto") ? 0 : 2;
        else if (!strcmp(a, "--mode"))
            mode = !strcmp(v, "abs") ? H5ZGPU_MODE_ABS : !strcmp(v, "pwrel") ? H5ZGPU_MODE_PWREL
                                                                            : H5ZGPU_MODE_REL;
        else if (!strcmp(a, "--eb"))
            eb = strtod(v, NULL);
    }
    size_t count = (size_t)(R.n * R.n * R.n), bytes = count * sizeof(float);
    float *field = malloc(bytes);
    R.back = malloc(bytes);
    FILE *f = fopen(argv[1], "rb");
    if (!field || !R.back || !f || fread(field, 1, bytes, f) != bytes) {
        fprintf(stderr, "dataset_io: cannot read %zu bytes from %s\n", bytes, argv[1]);
        return 1;
    }
    fclose(f);
    R.field = field;
    R.cd[0] = codec;
    R.cd[1] = (unsigned)mode;
    h5zgpu_eb_to_words(eb, &R.cd[2], &R.cd[3]);
    int ways = LIB_HOST + 1;
#ifdef H5ZGPU_HAVE_CUDA
    if (h5zgpu_gpu_available() && cudaMalloc(&R.d_field, bytes) == cudaSuccess &&
        cudaMalloc(&R.d_back, bytes) == cudaSuccess &&
        cudaMemcpy(R.d_field, field, bytes, cudaMemcpyHostToDevice) == cudaSuccess)
        ways = LIB_DEVICE + 1;
#endif
    printf("dataset_io: %s, %llu^3 float32 (%.0f MiB), chunks %llu^3, codec %u, mode %d, eb %g, "
           "best of %d\n", argv[1], (unsigned long long)R.n, bytes / 1048576.0,
           (unsigned long long)R.chunk, codec, (int)mode, eb, REPEATS);
    printf("  %-24s %8s %12s %12s %8s\n", "path", "ratio", "write GB/s", "read GB/s", "misses");
    int failed = 0;
    for (int w = 0; w < ways; w++) {
        double wbest = INFINITY, rbest = INFINITY;
        hsize_t stored = 0;
        for (int k = 0; k < REPEATS; k++) {
            double t = write_once(&R, (way)w, &stored);
            if (t < 0)
                break;
            wbest = t < wbest ? t : wbest;
        }
        for (int k = 0; isfinite(wbest) && k < REPEATS; k++) {
            memset(R.back, 0xFF, bytes);   /* NaN: a value the read missed cannot pass */
            double t = read_once(&R, (way)w);
            if (t < 0)
                break;
            rbest = t < rbest ? t : rbest;
        }
        if (!isfinite(wbest) || !isfinite(rbest)) {
            failed = 1;
            continue;
        }
        size_t bad = misses(&R, mode, eb, (way)w);
        failed |= bad != 0;
        printf("  %-24s %8.2f %12.2f %12.2f %8zu\n", way_names[w],
               stored ? (double)bytes / (double)stored : 0, bytes / wbest / 1e9,
               bytes / rbest / 1e9, bad);
    }
    free(field);
    free(R.back);
#ifdef H5ZGPU_HAVE_CUDA
    cudaFree(R.d_field);
    cudaFree(R.d_back);
#endif
    return failed;
}
