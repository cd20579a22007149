/* Fixed ratio of a whole field through HDF5, side by side in one run: for each target, the
 * dataset library (h5zgpu_dataset_write: the selection's chunks together at the target, from
 * host memory and, with a GPU, from device memory), the same path at ABS with the geometric
 * mean of the bounds the chunks recorded (the error-bounded write it costs against) and the
 * filter's own fixed ratio through H5Dwrite (each chunk alone at the target). Prints a markdown
 * table: the whole dataset's ratio and how far off the target, seconds of each write (best of
 * REPEATS, from H5Dcreate to the file flushed), the chunks' bounds, and the PSNR over the
 * finite values. Every value read back is checked against its own chunk's recorded bound
 * (NaN read back as NaN); a miss fails the run.
 *
 *   dataset_ratio FIELD.f32 N FILE [--chunk C] [--codec fixed|huffman] [--targets 5,10,20,50]
 * FIELD.f32: N^3 float32 values (bench/gen_nyx_like.py; bench/mask_nan.py puts NaN over half of
 * a field); FILE: scratch (in /dev/shm to leave the disk out). Needs HDF5_PLUGIN_PATH. */
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

#define REPEATS 2
#define MAX_TARGETS 8

typedef enum way { LIB_HOST, LIB_DEVICE, FILTER } way;
static const char *const way_names[] = {"library, host buffer", "library, device buffer",
                                        "H5Dwrite + filter"};

typedef struct run {
    const char *file;
    hsize_t n, chunk;
    unsigned codec;
    const float *field;
    float *back;
    void *d_field;
    double *eb;    /* a chunk's recorded bound, C order of the chunk grid */
    size_t nchunks;
} run;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds of one write of the field at (mode, eb) along w, and the stored bytes; negative on
 * failure. The file stays for check() to read. */
static double write_once(const run *R, way w, h5zgpu_mode mode, double eb, hsize_t *stored)
{
    hsize_t dims[3] = {R->n, R->n, R->n}, chunk[3] = {R->chunk, R->chunk, R->chunk};
    unsigned cd[4] = {R->codec, (unsigned)mode};
    h5zgpu_eb_to_words(eb, &cd[2], &cd[3]);
    hid_t file = H5Fcreate(R->file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0)
        return -1;
    const double t0 = now();
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 3, chunk);
    H5Pset_filter(dcpl, H5ZGPU_FILTER_ID, H5Z_FLAG_MANDATORY, 4, cd);
    hid_t d = H5Dcreate2(file, "field", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    int ok = d >= 0;
    if (ok && w == FILTER)
        ok = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, R->field) >= 0;
    else if (ok)
        ok = h5zgpu_dataset_write(d, H5S_ALL, w == LIB_HOST ? (const void *)R->field : R->d_field,
                                  w == LIB_HOST ? H5ZGPU_MEMORY_HOST : H5ZGPU_MEMORY_DEVICE,
                                  NULL) == H5ZGPU_OK;
    ok = ok && H5Fflush(file, H5F_SCOPE_LOCAL) >= 0;
    const double t = now() - t0;
    *stored = ok ? H5Dget_storage_size(d) : 0;
    if (!ok)
        fprintf(stderr, "dataset_ratio: %s write failed: %s\n", way_names[w],
                h5zgpu_last_error());
    if (d >= 0)
        H5Dclose(d);
    H5Fclose(file);
    return ok ? t : -1;
}

/* The best of REPEATS writes (seconds; negative on failure). */
static double best_write(const run *R, way w, h5zgpu_mode mode, double eb, hsize_t *stored)
{
    double best = INFINITY;
    for (int k = 0; k < REPEATS; k++) {
        const double t = write_once(R, w, mode, eb, stored);
        if (t < 0)
            return t;
        best = t < best ? t : best;
    }
    return best;
}

/* Reads the file write_once left: each chunk's recorded bound into R->eb (-1 where not an ABS
 * chunk), the values into R->back; the values that miss their chunk's bound, the PSNR over the
 * finite ones, the bounds' geometric mean, least and largest. Negative misses on failure. */
static long check(run *R, double *psnr, double *mean, double *lo, double *hi)
{
    hid_t file = H5Fopen(R->file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = file < 0 ? -1 : H5Dopen2(file, "field", H5P_DEFAULT);
    const size_t n = (size_t)R->n, c = (size_t)R->chunk, g = (n + c - 1) / c;
    const size_t cap = c * c * c * sizeof(float) * 2 + 4096;
    unsigned char *buf = malloc(cap);
    long bad = d >= 0 && buf ? 0 : -1;
    double logs = 0, bounded = 0;
    *lo = INFINITY;
    *hi = 0;
    for (size_t k = 0; bad >= 0 && k < R->nchunks; k++) {
        hsize_t o[3] = {k / g / g * c, k / g % g * c, k % g * c}, size = 0;
        uint32_t mask = 0;
        h5zgpu_info info;
        R->eb[k] = -1;
        if (H5Dget_chunk_storage_size(d, o, &size) < 0 || size > cap ||
            H5Dread_chunk(d, H5P_DEFAULT, o, &mask, buf) < 0 ||
            h5zgpu_chunk_info(buf, (size_t)size, &info) != H5ZGPU_OK)
            bad = -1;
        else if (info.mode == H5ZGPU_MODE_ABS || info.mode == H5ZGPU_MODE_REL)
            R->eb[k] = info.eb_abs;
        if (R->eb[k] > 0) {   /* 0: a chunk exact at any bound (constant, all missing) */
            logs += log(R->eb[k]);
            bounded++;
            *lo = fmin(*lo, R->eb[k]);
            *hi = fmax(*hi, R->eb[k]);
        }
    }
    *mean = bounded ? exp(logs / bounded) : 0;
    if (bad >= 0 && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, R->back) < 0)
        bad = -1;
    double vlo = INFINITY, vhi = -INFINITY, se = 0;
    size_t finite = 0;
    for (size_t i = 0; bad >= 0 && i < n * n * n; i++) {
        const double v = R->field[i], b = R->back[i];
        const size_t z = i / n / n, y = i / n % n, x = i % n;
        const double e = R->eb[(z / c * g + y / c) * g + x / c];
        if (isnan(v)) {
            bad += !isnan(b);
            continue;
        }
        bad += !(fabs(b - v) <= e);
        vlo = fmin(vlo, v);
        vhi = fmax(vhi, v);
        se += (b - v) * (b - v);
        finite++;
    }
    *psnr = se > 0 ? 20 * log10((vhi - vlo) / sqrt(se / (double)finite)) : INFINITY;
    free(buf);
    if (d >= 0)
        H5Dclose(d);
    if (file >= 0)
        H5Fclose(file);
    return bad;
}

int main(int argc, char **argv)
{
    /* before any CUDA context: queues for 16 chunks in flight a batch (codec/src/batch.c) */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    if (argc < 4) {
        fprintf(stderr, "usage: %s FIELD.f32 N FILE [--chunk C] [--codec fixed|huffman] "
                "[--targets 5,10,20,50]\n", argv[0]);
        return 2;
    }
    run R = {.file = argv[3], .n = strtoull(argv[2], NULL, 10), .chunk = 64, .codec = 2};
    double targets[MAX_TARGETS] = {5, 10, 20, 50};
    int ntargets = 4;
    for (int i = 4; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--chunk"))
            R.chunk = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--codec"))
            R.codec = !strcmp(v, "fixed") ? 1 : 2;
        else if (!strcmp(a, "--targets"))
            for (ntargets = 0; ntargets < MAX_TARGETS && *v; ntargets++) {
                char *end;
                targets[ntargets] = strtod(v, &end);
                v = *end == ',' ? end + 1 : end;
            }
    }
    const size_t count = (size_t)(R.n * R.n * R.n), bytes = count * sizeof(float);
    const size_t g = (size_t)((R.n + R.chunk - 1) / R.chunk);
    R.nchunks = g * g * g;
    float *field = malloc(bytes);
    R.back = malloc(bytes);
    R.eb = malloc(R.nchunks * sizeof *R.eb);
    FILE *f = fopen(argv[1], "rb");
    if (!field || !R.back || !R.eb || !f || fread(field, 1, bytes, f) != bytes) {
        fprintf(stderr, "dataset_ratio: cannot read %zu bytes from %s\n", bytes, argv[1]);
        return 1;
    }
    fclose(f);
    R.field = field;
    int device = 0;
#ifdef H5ZGPU_HAVE_CUDA
    device = h5zgpu_gpu_available() && cudaMalloc(&R.d_field, bytes) == cudaSuccess &&
             cudaMemcpy(R.d_field, field, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
#endif
    printf("dataset_ratio: %s, %llu^3 float32, chunks %llu^3, codec %u, best of %d writes\n\n",
           argv[1], (unsigned long long)R.n, (unsigned long long)R.chunk, R.codec, REPEATS);
    printf("| path | target | ratio | off | seconds | ABS at the chunks' mean bound: ratio, "
           "seconds | time / ABS | bounds (least, geometric mean, largest) | PSNR dB |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    int failed = 0;
    const way ways[2] = {device ? LIB_DEVICE : LIB_HOST, FILTER};
    for (int t = 0; t < ntargets; t++)
        for (int k = 0; k < 2; k++) {
            const way w = ways[k];
            hsize_t stored = 0, abs_stored = 0;
            const double sec = best_write(&R, w, H5ZGPU_MODE_RATIO, targets[t], &stored);
            double psnr = 0, mean = 0, lo = 0, hi = 0;
            const long bad = sec < 0 ? -1 : check(&R, &psnr, &mean, &lo, &hi);
            const double abs_sec =
                bad < 0 ? -1 : best_write(&R, w, H5ZGPU_MODE_ABS, mean, &abs_stored);
            if (bad != 0 || abs_sec < 0) {
                fprintf(stderr, "dataset_ratio: %s at target %g: %ld values miss their chunk's "
                        "bound (-1: failed)\n", way_names[w], targets[t], bad);
                failed = 1;
                continue;
            }
            const double ratio = (double)bytes / (double)stored;
            printf("| %s | %g | %.2f | %+.1f%% | %.3f | %.2f, %.3f | %.2f | %.3g, %.3g, %.3g | "
                   "%.2f |\n", way_names[w], targets[t], ratio, 100 * (ratio / targets[t] - 1),
                   sec, (double)bytes / (double)abs_stored, abs_sec, sec / abs_sec, lo, mean, hi,
                   psnr);
        }
    free(field);
    free(R.back);
    free(R.eb);
#ifdef H5ZGPU_HAVE_CUDA
    cudaFree(R.d_field);
#endif
    return failed;
}
