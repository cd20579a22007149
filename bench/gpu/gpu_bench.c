/* Throughput of the GPU codecs on device-resident data, through h5zgpu_compress_device /
 * h5zgpu_decompress_device (each call includes its statistics pass, codebook, checksum and size
 * round trip), beside the device's copy bandwidths measured in the same run.
 *
 * usage: gpu_bench [--repeat N] [--codecs 1,2,0] [--sweep 0|1] [--field-batch K]
 *                  FILE.f32 Z,Y,X [FILE.f32 Z,Y,X ...]
 * Prints markdown tables, one per codec (default 1, 2 and 0, in that order): whole fields at
 * REL 1e-2, 1e-3, 1e-4, then HDF5-sized sub-chunks of the first field (--sweep 0 leaves them
 * out, as a profiler run does; --field-batch K caps the sweep's device batch of the field's
 * distinct chunks, 512 by default). GB/s = input bytes /
 * median call time (cudaEvents). A row whose values miss the bound, or whose chunk was written
 * by another codec than the one asked for, says FAIL and makes the exit status 1. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime, setenv */
#include "h5zgpu.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 2
#define DEFAULT_REPEAT 10
#define COPY_BYTES ((size_t)1 << 30)
#define MAX_CODECS 3
#define MAX_FIELDS 64

static const double rel_bounds[] = {1e-2, 1e-3, 1e-4};

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "gpu_bench: %s: %s\n", #call, cudaGetErrorString(e_));           \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float median(float *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_float);
    return n % 2 ? t[n / 2] : 0.5f * (t[n / 2 - 1] + t[n / 2]);
}

/* Copies n bytes of host memory to the device and waits until they are there: cudaMemcpy from
 * pageable memory may return before its DMA lands, and the calls timed here run on a
 * non-blocking stream that does not wait for it (a 1 MiB chunk's first calls then code the
 * zeros of a fresh allocation). */
static cudaError_t upload(void *d, const void *h, size_t n)
{
    cudaError_t e = cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

/* Median milliseconds of one copy of n bytes. */
static float time_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, int repeat,
                       cudaStream_t s)
{
    cudaEvent_t a, b;
    float *t = malloc(sizeof(float) * (size_t)repeat);
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = -WARMUP; i < repeat; i++) {
        CK(cudaEventRecord(a, s));
        CK(cudaMemcpyAsync(dst, src, n, kind, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        if (i >= 0)
            CK(cudaEventElapsedTime(&t[i], a, b));
    }
    float m = median(t, repeat);
    free(t);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return m;
}

/* Prints the copy table; returns the device-to-device GB/s copied. */
static double copy_limits(int repeat, cudaStream_t s)
{
    void *d0, *d1, *h;
    CK(cudaMalloc(&d0, COPY_BYTES));
    CK(cudaMalloc(&d1, COPY_BYTES));
    CK(cudaMallocHost(&h, COPY_BYTES));
    CK(cudaMemset(d0, 1, COPY_BYTES));
    memset(h, 1, COPY_BYTES);
    double gb = (double)COPY_BYTES / 1e9;
    float dd = time_copy(d1, d0, COPY_BYTES, cudaMemcpyDeviceToDevice, repeat, s);
    float hd = time_copy(d0, h, COPY_BYTES, cudaMemcpyHostToDevice, repeat, s);
    float dh = time_copy(h, d0, COPY_BYTES, cudaMemcpyDeviceToHost, repeat, s);
    printf("| copy, 1 GiB | GB/s copied |\n|---|---|\n");
    printf("| device to device | %.0f (%.0f read+write) |\n", gb / (dd * 1e-3),
           2 * gb / (dd * 1e-3));
    printf("| pinned host to device | %.1f |\n", gb / (hd * 1e-3));
    printf("| device to pinned host | %.1f |\n\n", gb / (dh * 1e-3));
    cudaFree(d0);
    cudaFree(d1);
    cudaFreeHost(h);
    return gb / (dd * 1e-3);
}

static const char *codec_name(h5zgpu_codec c)
{
    return c == H5ZGPU_CODEC_FIXED ? "fixed" : c == H5ZGPU_CODEC_HUFFMAN ? "huffman" : "auto";
}

typedef struct result {
    float comp_ms, decomp_ms;
    size_t clen;
    double max_err, eb_abs;
    unsigned written;   /* codec the chunk's header names */
} result;

static int bench_one(const h5zgpu_params *p, const float *host, void *d_in, void *d_out,
                     size_t cap, void *d_back, int repeat, cudaStream_t s, result *r)
{
    size_t n = (size_t)p->dims[0] * p->dims[1] * p->dims[2], raw = n * 4, len = 0, back = 0;
    float *t = malloc(sizeof(float) * (size_t)repeat);
    cudaEvent_t a, b;
    h5zgpu_status st = H5ZGPU_OK;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = -WARMUP; i < repeat && st == H5ZGPU_OK; i++) {
        CK(cudaEventRecord(a, s));
        st = h5zgpu_compress_device(p, d_in, d_out, cap, &len, 0, s);
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        if (i >= 0)
            CK(cudaEventElapsedTime(&t[i], a, b));
    }
    if (st != H5ZGPU_OK)
        goto fail;
    r->comp_ms = median(t, repeat);
    r->clen = len;
    for (int i = -WARMUP; i < repeat && st == H5ZGPU_OK; i++) {
        CK(cudaEventRecord(a, s));
        st = h5zgpu_decompress_device(d_out, len, d_back, raw, &back, 0, s);
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        if (i >= 0)
            CK(cudaEventElapsedTime(&t[i], a, b));
    }
    if (st != H5ZGPU_OK)
        goto fail;
    r->decomp_ms = median(t, repeat);

    /* the bound, checked in double precision, so a fast wrong codec cannot pass */
    float *got = malloc(raw);
    uint8_t *chunk = malloc(len);
    h5zgpu_info info = {0};
    CK(cudaMemcpy(got, d_back, raw, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(chunk, d_out, len, cudaMemcpyDeviceToHost));
    if (h5zgpu_chunk_info(chunk, len, &info) != H5ZGPU_OK)
        fprintf(stderr, "gpu_bench: chunk header: %s\n", h5zgpu_last_error());
    free(chunk);
    r->eb_abs = info.eb_abs;
    r->written = info.codec;
    r->max_err = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = host[i], y = got[i];
        /* equal values (infinities included) and NaN for NaN are exact; a NaN error (a finite
         * value back as NaN) becomes the maximum, and fails the check below */
        const double e = x == y || (x != x && y != y) ? 0.0 : fabs(y - x);
        if (!(e <= r->max_err))
            r->max_err = e;
    }
    free(got);
    free(t);
    /* a codec asked for by name must have written the chunk (raw: it did not shrink) */
    const int ok = r->max_err <= r->eb_abs && (p->codec == H5ZGPU_CODEC_AUTO || r->written == 0 ||
                                               r->written == (unsigned)p->codec);
    if (!ok)
        fprintf(stderr, "gpu_bench: %zu elements in %zu bytes written by codec %u: max error %g "
                        "against the bound %g\n", n, len, r->written, r->max_err, r->eb_abs);
    return ok;
fail:
    fprintf(stderr, "gpu_bench: %s: %s\n", h5zgpu_status_string(st), h5zgpu_last_error());
    free(t);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* HDF5-sized chunks (64 x Y x X corners of the first field) at REL 1e-3: the device API, the
 * host API on the GPU (what the filter calls: upload, compress, download), the batches of
 * BATCH_CHUNKS copies of such a chunk in one call, host and device buffers, and a device batch
 * of the field's distinct chunks of that shape (at most field_batch of them, and at most
 * FIELD_BATCH_BYTES of values), as a writer of a whole field hands them over. One table per
 * codec, printed after the whole-field tables. */
#define BATCH_CHUNKS 32
#define FIELD_BATCH_BYTES (2ull << 30)
static size_t field_batch = 512;
static const uint64_t sweep_yx[] = {64, 128, 256, 512};
static char sweep_table[MAX_CODECS * 4096];
static size_t sweep_used;

/* A device batch of the first distinct chunks of p's shape in the field (z, then y, then x),
 * each checked against one host-API call of it (bytes, then values): the best of repeat
 * seconds compressing and decompressing in *tc and *td; returns the chunks, 0 on a failure. */
static size_t field_device_batch(const float *field, const h5zgpu_params *whole,
                                 const h5zgpu_params *p, int repeat, double *tc, double *td)
{
    const uint64_t cz = whole->dims[0] / p->dims[0], cy = whole->dims[1] / p->dims[1];
    const uint64_t cx = whole->dims[2] / p->dims[2];
    const size_t n = (size_t)p->dims[0] * p->dims[1] * p->dims[2], raw = n * 4;
    const size_t cap = h5zgpu_compress_bound(p);
    size_t k = (size_t)(cz * cy * cx);
    k = k < field_batch ? k : field_batch;
    k = k < FIELD_BATCH_BYTES / raw ? k : (size_t)(FIELD_BATCH_BYTES / raw);
    const h5zgpu_exec gpu = {H5ZGPU_EXEC_GPU, 0};
    float *sub = malloc(raw), *dec = malloc(raw), *back = malloc(raw);
    uint8_t *ref = malloc(k * cap), *got = malloc(cap), *d_in = NULL, *d_out = NULL;
    uint8_t *d_dec = NULL;
    void **din = malloc(k * sizeof *din), **dout = malloc(k * sizeof *dout);
    void **ddec = malloc(k * sizeof *ddec);
    size_t *caps = malloc(k * sizeof *caps), *lens = malloc(k * sizeof *lens);
    size_t *raws = malloc(k * sizeof *raws), *backs = malloc(k * sizeof *backs);
    size_t *rlen = malloc(k * sizeof *rlen);
    int ok = sub && dec && back && ref && got && din && dout && ddec && caps && lens && raws &&
             backs && rlen && cudaMalloc((void **)&d_in, k * raw) == cudaSuccess &&
             cudaMalloc((void **)&d_out, k * cap) == cudaSuccess &&
             cudaMalloc((void **)&d_dec, k * raw) == cudaSuccess;
    for (size_t b = 0; ok && b < k; b++) {
        const uint64_t z0 = b / (cy * cx) * p->dims[0], y0 = b / cx % cy * p->dims[1];
        const uint64_t x0 = b % cx * p->dims[2];
        for (uint64_t z = 0; z < p->dims[0]; z++)
            for (uint64_t y = 0; y < p->dims[1]; y++)
                memcpy(sub + (z * p->dims[1] + y) * p->dims[2],
                       field + ((z0 + z) * whole->dims[1] + y0 + y) * whole->dims[2] + x0,
                       p->dims[2] * 4);
        ok = h5zgpu_compress(p, sub, ref + b * cap, cap, &rlen[b], &gpu) == H5ZGPU_OK &&
             upload(d_in + b * raw, sub, raw) == cudaSuccess;
        din[b] = d_in + b * raw;
        dout[b] = d_out + b * cap;
        ddec[b] = d_dec + b * raw;
        caps[b] = cap;
        raws[b] = raw;
    }
    *tc = *td = 1e30;
    for (int i = -WARMUP; ok && i < repeat; i++) {
        double t0 = now_s();
        ok = h5zgpu_compress_device_batch(p, k, (const void *const *)din, dout, caps, lens, 0,
                                          NULL) == H5ZGPU_OK;
        double t1 = now_s();
        ok = ok && h5zgpu_decompress_device_batch(k, (const void *const *)dout, lens, ddec, raws,
                                                  backs, 0, NULL) == H5ZGPU_OK;
        double t2 = now_s();
        if (i >= 0) {
            *tc = t1 - t0 < *tc ? t1 - t0 : *tc;
            *td = t2 - t1 < *td ? t2 - t1 : *td;
        }
    }
    for (size_t b = 0; ok && b < k; b++)   /* one call's bytes, and its values */
        ok = lens[b] == rlen[b] &&
             cudaMemcpy(got, dout[b], lens[b], cudaMemcpyDeviceToHost) == cudaSuccess &&
             memcmp(got, ref + b * cap, lens[b]) == 0 &&
             h5zgpu_decompress(ref + b * cap, rlen[b], dec, raw, &backs[b], &gpu) == H5ZGPU_OK &&
             cudaMemcpy(back, ddec[b], raw, cudaMemcpyDeviceToHost) == cudaSuccess &&
             memcmp(back, dec, raw) == 0;
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_dec);
    free(sub);
    free(dec);
    free(back);
    free(ref);
    free(got);
    free(din);
    free(dout);
    free(ddec);
    free(caps);
    free(lens);
    free(raws);
    free(backs);
    free(rlen);
    return ok ? k : 0;
}

static int chunk_sweep(const float *field, const h5zgpu_params *whole, int repeat,
                       cudaStream_t s)
{
    int bad = 0;
    sweep_used += (size_t)snprintf(sweep_table + sweep_used, sizeof sweep_table - sweep_used,
                             "\n| chunk (%s, REL 1e-3, first field) | device compress GB/s | "
                             "device decompress GB/s | host API compress GB/s | host API "
                             "decompress GB/s | host batch compress GB/s | host batch "
                             "decompress GB/s | device batch compress GB/s | device batch "
                             "decompress GB/s | field's chunks, device batch compress / "
                             "decompress GB/s | ratio | max err / eb_abs |\n"
                             "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                             codec_name(whole->codec));
    const h5zgpu_exec gpu = {H5ZGPU_EXEC_GPU, 0};
    for (size_t k = 0; k < sizeof sweep_yx / sizeof sweep_yx[0]; k++) {
        h5zgpu_params p = *whole;
        p.eb = 1e-3;
        p.dims[0] = 64 < whole->dims[0] ? 64 : whole->dims[0];
        p.dims[1] = sweep_yx[k] < whole->dims[1] ? sweep_yx[k] : whole->dims[1];
        p.dims[2] = sweep_yx[k] < whole->dims[2] ? sweep_yx[k] : whole->dims[2];
        size_t n = (size_t)p.dims[0] * p.dims[1] * p.dims[2], raw = n * 4;
        size_t cap = h5zgpu_compress_bound(&p), len = 0, back = 0;
        float *sub = malloc(raw), *dec = malloc(raw);
        uint8_t *chunk = malloc(cap);
        for (uint64_t z = 0; z < p.dims[0]; z++)
            for (uint64_t y = 0; y < p.dims[1]; y++)
                memcpy(sub + (z * p.dims[1] + y) * p.dims[2],
                       field + (z * whole->dims[1] + y) * whole->dims[2], p.dims[2] * 4);
        void *d_in, *d_out, *d_back;
        CK(cudaMalloc(&d_in, raw));
        CK(cudaMalloc(&d_out, cap));
        CK(cudaMalloc(&d_back, raw));
        CK(upload(d_in, sub, raw));
        result r = {0};
        int ok = bench_one(&p, sub, d_in, d_out, cap, d_back, repeat, s, &r);
        double *t = malloc(sizeof(double) * 2 * (size_t)repeat);
        h5zgpu_status st = H5ZGPU_OK;
        for (int i = -WARMUP; i < repeat && st == H5ZGPU_OK; i++) {
            double t0 = now_s();
            st = h5zgpu_compress(&p, sub, chunk, cap, &len, &gpu);
            double t1 = now_s();
            if (st == H5ZGPU_OK)
                st = h5zgpu_decompress(chunk, len, dec, raw, &back, &gpu);
            double t2 = now_s();
            if (i >= 0) {
                t[i] = t1 - t0;
                t[repeat + i] = t2 - t1;
            }
        }
        /* the batch: BATCH_CHUNKS copies of the chunk, each in its own buffers */
        void *bin[BATCH_CHUNKS], *bout[BATCH_CHUNKS], *bdec[BATCH_CHUNKS];
        size_t bcap[BATCH_CHUNKS], blen[BATCH_CHUNKS], braw[BATCH_CHUNKS], bback[BATCH_CHUNKS];
        for (int b = 0; b < BATCH_CHUNKS; b++) {
            bin[b] = sub;
            bout[b] = malloc(cap);
            bdec[b] = malloc(raw);
            bcap[b] = cap;
            braw[b] = raw;
        }
        double bt_c = 1e30, bt_d = 1e30;   /* the fastest of the repeats */
        for (int i = -WARMUP; i < repeat && st == H5ZGPU_OK; i++) {
            double t0 = now_s();
            st = h5zgpu_compress_batch(&p, BATCH_CHUNKS, (const void *const *)bin, bout, bcap,
                                       blen, &gpu, NULL);
            double t1 = now_s();
            if (st == H5ZGPU_OK)
                st = h5zgpu_decompress_batch(BATCH_CHUNKS, (const void *const *)bout, blen, bdec,
                                             braw, bback, &gpu, NULL);
            double t2 = now_s();
            if (i >= 0) {
                bt_c = t1 - t0 < bt_c ? t1 - t0 : bt_c;
                bt_d = t2 - t1 < bt_d ? t2 - t1 : bt_d;
            }
        }
        for (int b = 0; b < BATCH_CHUNKS && st == H5ZGPU_OK; b++)
            if (blen[b] != len || memcmp(bout[b], chunk, len) != 0)
                st = H5ZGPU_E_CORRUPT;   /* a batch's bytes differ from one call's */
        /* the device batch: the same chunks in device memory */
        uint8_t *d_bout = NULL, *d_bdec = NULL;
        void *dbout[BATCH_CHUNKS], *dbdec[BATCH_CHUNKS];
        const void *dbin[BATCH_CHUNKS];
        double dt_c = 1e30, dt_d = 1e30;
        if (st == H5ZGPU_OK && (cudaMalloc((void **)&d_bout, BATCH_CHUNKS * cap) != cudaSuccess ||
                                cudaMalloc((void **)&d_bdec, BATCH_CHUNKS * raw) != cudaSuccess))
            st = H5ZGPU_E_NOMEM;
        for (int b = 0; b < BATCH_CHUNKS; b++) {
            dbin[b] = d_in;
            dbout[b] = d_bout + b * cap;
            dbdec[b] = d_bdec + b * raw;
        }
        for (int i = -WARMUP; i < repeat && st == H5ZGPU_OK; i++) {
            double t0 = now_s();
            st = h5zgpu_compress_device_batch(&p, BATCH_CHUNKS, dbin, dbout, bcap, blen, 0, NULL);
            double t1 = now_s();
            if (st == H5ZGPU_OK)
                st = h5zgpu_decompress_device_batch(BATCH_CHUNKS, (const void *const *)dbout,
                                                    blen, dbdec, braw, bback, 0, NULL);
            double t2 = now_s();
            if (i >= 0) {
                dt_c = t1 - t0 < dt_c ? t1 - t0 : dt_c;
                dt_d = t2 - t1 < dt_d ? t2 - t1 : dt_d;
            }
        }
        for (int b = 0; b < BATCH_CHUNKS && st == H5ZGPU_OK; b++)
            if (blen[b] != len || cudaMemcpy(bout[b], dbout[b], len, cudaMemcpyDeviceToHost) !=
                                      cudaSuccess ||
                memcmp(bout[b], chunk, len) != 0 ||
                cudaMemcpy(bdec[b], dbdec[b], raw, cudaMemcpyDeviceToHost) != cudaSuccess ||
                memcmp(bdec[b], dec, raw) != 0)
                st = H5ZGPU_E_CORRUPT;   /* unlike one host call's bytes or values */
        cudaFree(d_bout);
        cudaFree(d_bdec);
        for (int b = 0; b < BATCH_CHUNKS; b++) {
            free(bout[b]);
            free(bdec[b]);
        }
        float tc[64], td[64];
        int m = repeat < 64 ? repeat : 64;
        for (int i = 0; i < m; i++) {
            tc[i] = (float)t[i];
            td[i] = (float)t[repeat + i];
        }
        double ft_c = 1e30, ft_d = 1e30;
        const size_t fk = field_device_batch(field, whole, &p, repeat, &ft_c, &ft_d);
        double gb = (double)raw / 1e9;
        bad |= !ok || st != H5ZGPU_OK || !fk;
        sweep_used += (size_t)snprintf(sweep_table + sweep_used, sizeof sweep_table - sweep_used,
                                 "| %" PRIu64 "x%" PRIu64 "x%" PRIu64 " (%.0f MiB) | %.1f | %.1f | "
                                 "%.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %zu: %.1f / %.1f | "
                                 "%.2f | %.4f%s%s%s |\n",
                                 p.dims[0], p.dims[1], p.dims[2], raw / 1048576.0,
                                 gb / (r.comp_ms * 1e-3), gb / (r.decomp_ms * 1e-3),
                                 gb / median(tc, m), gb / median(td, m),
                                 BATCH_CHUNKS * gb / bt_c, BATCH_CHUNKS * gb / bt_d,
                                 BATCH_CHUNKS * gb / dt_c, BATCH_CHUNKS * gb / dt_d, fk,
                                 fk * gb / ft_c, fk * gb / ft_d,
                                 (double)raw / r.clen, r.eb_abs > 0 ? r.max_err / r.eb_abs : 0.0,
                                 ok ? "" : " FAIL (device API)",
                                 st == H5ZGPU_OK ? "" : " FAIL (host API)",
                                 fk ? "" : " FAIL (field's device batch)");
        free(t);
        free(sub);
        free(dec);
        free(chunk);
        cudaFree(d_in);
        cudaFree(d_out);
        cudaFree(d_back);
    }
    return bad;
}

/* "1,2,0" into codecs[]; returns how many, 0 if malformed. */
static size_t parse_codecs(const char *s, h5zgpu_codec *codecs)
{
    size_t n = 0;
    for (;;) {
        char *end;
        unsigned long c = strtoul(s, &end, 10);
        if (end == s || c > H5ZGPU_CODEC_HUFFMAN || n == MAX_CODECS)
            return 0;
        codecs[n++] = (h5zgpu_codec)c;
        if (*end == 0)
            return n;
        if (*end != ',')
            return 0;
        s = end + 1;
    }
}

/* Reads a Z,Y,X float32 field; NULL (with a message) on failure. */
static float *read_field(const char *path, h5zgpu_params *p)
{
    size_t raw = (size_t)p->dims[0] * p->dims[1] * p->dims[2] * 4;
    float *host = malloc(raw);
    FILE *fp = fopen(path, "rb");
    if (!host || !fp || fread(host, 1, raw, fp) != raw) {
        fprintf(stderr, "gpu_bench: cannot read %zu bytes from %s\n", raw, path);
        free(host);
        host = NULL;
    }
    if (fp)
        fclose(fp);
    return host;
}

int main(int argc, char **argv)
{
    /* before any CUDA context: queues for 16 chunks in flight a batch (codec/src/batch.c) */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    int repeat = DEFAULT_REPEAT, first = 1, bad = 0, sweep = 1;
    h5zgpu_codec codecs[MAX_CODECS] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                       H5ZGPU_CODEC_AUTO};
    size_t ncodecs = MAX_CODECS;
    for (; first + 1 < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (strcmp(argv[first], "--repeat") == 0)
            repeat = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--codecs") == 0)
            ncodecs = parse_codecs(argv[first + 1], codecs);
        else if (strcmp(argv[first], "--sweep") == 0)
            sweep = atoi(argv[first + 1]) != 0;
        else if (strcmp(argv[first], "--field-batch") == 0)
            field_batch = (size_t)atol(argv[first + 1]);
        else
            break; /* unknown option: the usage below */
    }
    if (repeat < 1 || ncodecs == 0 || field_batch < 1 || first >= argc || (argc - first) % 2 != 0 ||
        (argc - first) / 2 > MAX_FIELDS || argv[first][0] == '-') {
        fprintf(stderr, "usage: %s [--repeat N] [--codecs 1,2,0] [--sweep 0|1] [--field-batch K] "
                        "FILE.f32 Z,Y,X [FILE.f32 Z,Y,X ...]\n", argv[0]);
        return 2;
    }
    h5zgpu_params fields[MAX_FIELDS];
    int nfields = 0;
    for (int f = first; f + 1 < argc; f += 2, nfields++) {
        h5zgpu_params *p = &fields[nfields];
        *p = (h5zgpu_params){.mode = H5ZGPU_MODE_REL, .dtype = H5ZGPU_FLOAT32, .rank = 3};
        if (sscanf(argv[f + 1], "%" SCNu64 ",%" SCNu64 ",%" SCNu64, &p->dims[0], &p->dims[1],
                   &p->dims[2]) != 3) {
            fprintf(stderr, "gpu_bench: dims '%s' are not Z,Y,X\n", argv[f + 1]);
            return 2;
        }
    }
    if (!h5zgpu_gpu_available()) {
        fprintf(stderr, "gpu_bench: no usable CUDA device\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    printf("device: %s, %d SMs, driver API %d, runtime %d; %s; CUDA_DEVICE_MAX_CONNECTIONS %s; "
           "median of %d after %d warm-up\n\n", prop.name, prop.multiProcessorCount, drv, rt,
           h5zgpu_version(), getenv("CUDA_DEVICE_MAX_CONNECTIONS"), repeat, WARMUP);
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    double d2d = copy_limits(repeat, s);

    for (size_t ci = 0; ci < ncodecs; ci++) {
        h5zgpu_codec codec = codecs[ci];
        /* the fixed-length table keeps the columns of earlier runs (docs/BENCHMARKS.md) */
        if (codec == H5ZGPU_CODEC_FIXED) {
            printf("| field | bound | compress GB/s | decompress GB/s | ratio | max err / eb_abs |\n");
            printf("|---|---|---|---|---|---|\n");
        } else {
            printf("\n%s codec (device-to-device copy in this run: %.0f GB/s)\n\n",
                   codec == H5ZGPU_CODEC_HUFFMAN ? "Huffman" : "Auto", d2d);
            printf("| field | bound | compress GB/s | decompress GB/s | ratio | max err / eb_abs "
                   "| written by codec |\n");
            printf("|---|---|---|---|---|---|---|\n");
        }
        for (int k = 0; k < nfields; k++) {
            const char *path = argv[first + 2 * k];
            h5zgpu_params p = fields[k];
            p.codec = codec;
            size_t n = (size_t)p.dims[0] * p.dims[1] * p.dims[2], raw = n * 4;
            size_t cap = h5zgpu_compress_bound(&p);
            float *host = read_field(path, &p);
            if (!host)
                return 1;
            void *d_in, *d_out, *d_back;
            CK(cudaMalloc(&d_in, raw));
            CK(cudaMalloc(&d_out, cap));
            CK(cudaMalloc(&d_back, raw));
            CK(upload(d_in, host, raw));
            const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            for (size_t b = 0; b < sizeof rel_bounds / sizeof rel_bounds[0]; b++) {
                result r = {0};
                p.eb = rel_bounds[b];
                int ok = bench_one(&p, host, d_in, d_out, cap, d_back, repeat, s, &r);
                bad |= !ok;
                double gb = (double)raw / 1e9;
                printf("| %s | REL %g | %.0f | %.0f | %.2f | %.4f", name, p.eb,
                       gb / (r.comp_ms * 1e-3), gb / (r.decomp_ms * 1e-3), (double)raw / r.clen,
                       r.eb_abs > 0 ? r.max_err / r.eb_abs : 0.0);
                if (codec != H5ZGPU_CODEC_FIXED)
                    printf(" | %u", r.written);
                printf("%s |\n", ok ? "" : " FAIL");
                fflush(stdout);
            }
            cudaFree(d_in);
            cudaFree(d_out);
            cudaFree(d_back);
            if (k == 0 && sweep)
                bad |= chunk_sweep(host, &p, repeat, s);
            free(host);
        }
    }
    printf("%s", sweep_table);
    cudaStreamDestroy(s);
    return bad;
}
