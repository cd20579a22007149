/* The GPU backend against the CPU reference: byte-identical chunks, cross-decoding to identical
 * bits, every value within its bound, the device-pointer API, and damaged payloads that must be
 * refused without a crash. Optional arguments `FILE.f32 Z,Y,X ...` repeat the identity check on
 * whole raw fields at REL 1e-2, 1e-3, 1e-4 and print the ratio. `--small` runs a quarter of the
 * cases of up to SMALL_MAX elements (for compute-sanitizer). Chunks with fill values (blobs of
 * -1e34, 0 among -0, all fill, fill corners, fill beside NaN and raw blocks) get the same checks.
 * Exits 77 (skip) without a GPU. */
#include "util.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP_CODE 77
#define SMALL_MAX 5000
#define SMALL_EVERY 4

static const h5zgpu_exec on_cpu = {H5ZGPU_EXEC_CPU, 0};
static const h5zgpu_exec on_gpu = {H5ZGPU_EXEC_GPU, 0};

/* Shapes chosen for the folding (unit dimensions, rank 4) and partial blocks and tiles: a tile
 * is 32 blocks, 2048 values. */
static const struct {
    unsigned rank;
    uint64_t dims[4];
} shapes[] = {
    {1, {1}},          {1, {7}},          {1, {64}},          {1, {65}},
    {1, {2049}},       {1, {70001}},      {2, {1, 1}},        {2, {3, 5}},
    {2, {8, 8}},       {2, {17, 33}},     {2, {100, 700}},    {2, {1, 300}},
    {3, {300, 1, 1}},  {3, {4, 4, 4}},    {3, {5, 6, 7}},     {3, {33, 17, 9}},
    {3, {64, 64, 64}}, {4, {1, 9, 1, 13}}, {4, {3, 5, 6, 7}}, {4, {2, 3, 17, 19}},
};

/* Patterns beyond util's: zeros of both signs (REL's range of a zero chunk), signalling NaNs
 * (raw blocks carry their bits unchanged), values past the quantiser's range. */
enum { PAT_ZEROS = 100, PAT_SNAN, PAT_WIDE };

static const int patterns[] = {TU_SMOOTH, TU_NOISE,  TU_SPECIAL, TU_HUGE,
                               TU_BITS,   TU_CONSTANT, PAT_ZEROS, PAT_SNAN, PAT_WIDE};

static const struct {
    h5zgpu_mode mode;
    double eb;
} bounds[] = {
    {H5ZGPU_MODE_ABS, 1e-3}, {H5ZGPU_MODE_ABS, 0},     {H5ZGPU_MODE_REL, 1e-2},
    {H5ZGPU_MODE_REL, 1e-5}, {H5ZGPU_MODE_PWREL, 1e-3}, {H5ZGPU_MODE_PWREL, 0.25},
};

static void fill(h5zgpu_dtype t, size_t n, int pat, uint64_t seed, void *a)
{
    if (pat < PAT_ZEROS) {
        tu_fill(t, n, (tu_pattern)pat, seed, a);
        return;
    }
    tu_fill(t, n, pat == PAT_ZEROS ? TU_CONSTANT : TU_SMOOTH, seed, a);
    for (size_t i = 0; i < n; i++) {
        double v = tu_get(t, a, i);
        if (pat == PAT_ZEROS)
            v = (i * 7 + seed) % 3 == 0 ? -0.0 : 0.0;
        else if (pat == PAT_WIDE)
            v = i % 5 == 0 ? v * 1e12 : v;
        if (t == H5ZGPU_FLOAT32) {
            float f = (float)v;
            memcpy((char *)a + 4 * i, &f, 4);
        } else {
            memcpy((char *)a + 8 * i, &v, 8);
        }
    }
    if (pat == PAT_SNAN) {
        const uint32_t s32 = 0x7F800001u;
        const uint64_t s64 = 0x7FF0000000000001u;
        for (size_t i = n / 3; i < n; i += 97)
            memcpy((char *)a + tu_esize(t) * i, t == H5ZGPU_FLOAT32 ? (const void *)&s32
                                                                   : (const void *)&s64,
                   tu_esize(t));
    }
}

static int first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (int)i;
    return -1;
}

/* Compress on both executors, compare, decode crosswise; returns the CPU chunk (caller frees)
 * for the corruption checks, or NULL. With `dev`, the device-pointer API too. */
static uint8_t *identity(const char *name, const h5zgpu_params *p, const void *in, int dev,
                         size_t *clen)
{
    size_t n = tu_count(p), raw = n * tu_esize(p->dtype), cap = h5zgpu_compress_bound(p);
    uint8_t *cc = malloc(cap), *cg = malloc(cap), *dd = NULL;
    void *d0 = malloc(raw), *d1 = malloc(raw), *d2 = malloc(raw);
    size_t lc = 0, lg = 0, l0, l1, l2;
    int ok = cc && cg && d0 && d1 && d2;
    tu_expect(ok, "%s: out of host memory", name);
    if (!ok)
        goto done;
    h5zgpu_status sc = h5zgpu_compress(p, in, cc, cap, &lc, &on_cpu);
    h5zgpu_status sg = h5zgpu_compress(p, in, cg, cap, &lg, &on_gpu);
    tu_expect(sc == H5ZGPU_OK && sg == H5ZGPU_OK, "%s: compress cpu %s, gpu %s (%s)", name,
              h5zgpu_status_string(sc), h5zgpu_status_string(sg), h5zgpu_last_error());
    if (sc != H5ZGPU_OK || sg != H5ZGPU_OK)
        goto done;
    tu_expect(lc == lg && first_diff(cc, cg, lc) < 0,
              "%s: chunks differ (cpu %zu bytes, gpu %zu bytes, first difference at byte %d)",
              name, lc, lg, lc == lg ? first_diff(cc, cg, lc) : -1);
    h5zgpu_status s0 = h5zgpu_decompress(cc, lc, d0, raw, &l0, &on_cpu);
    h5zgpu_status s1 = h5zgpu_decompress(cc, lc, d1, raw, &l1, &on_gpu);
    h5zgpu_status s2 = h5zgpu_decompress(cg, lg, d2, raw, &l2, &on_cpu);
    tu_expect(s0 == H5ZGPU_OK && s1 == H5ZGPU_OK && s2 == H5ZGPU_OK,
              "%s: decompress cpu %s, gpu %s, cpu of gpu chunk %s (%s)", name,
              h5zgpu_status_string(s0), h5zgpu_status_string(s1), h5zgpu_status_string(s2),
              h5zgpu_last_error());
    if (s0 != H5ZGPU_OK || s1 != H5ZGPU_OK || s2 != H5ZGPU_OK)
        goto done;
    tu_expect(memcmp(d0, d1, raw) == 0, "%s: GPU decode of the CPU chunk differs at byte %d",
              name, first_diff(d0, d1, raw));
    tu_expect(memcmp(d0, d2, raw) == 0, "%s: CPU decode of the GPU chunk differs at byte %d",
              name, first_diff(d0, d2, raw));
    char why[256] = "";
    size_t miss = tu_check_bound(p->dtype, p->mode, p->eb, in, d0, n, why, sizeof why);
    tu_expect(miss == 0, "%s: %zu values miss the bound; %s", name, miss, why);
    if (dev) {
        void *din = NULL, *dout = NULL, *dback = NULL;
        size_t ld = 0, lb = 0;
        ok = cudaMalloc(&din, cap) == cudaSuccess && cudaMalloc(&dout, cap) == cudaSuccess &&
             cudaMalloc(&dback, raw) == cudaSuccess &&
             cudaMemcpy(din, in, raw, cudaMemcpyHostToDevice) == cudaSuccess;
        tu_expect(ok, "%s: device buffers", name);
        if (ok) {
            h5zgpu_status sd = h5zgpu_compress_device(p, din, dout, cap, &ld, 0, NULL);
            ok = sd == H5ZGPU_OK && ld == lc &&
                 cudaMemcpy(cg, dout, ld, cudaMemcpyDeviceToHost) == cudaSuccess &&
                 memcmp(cg, cc, lc) == 0;
            tu_expect(ok, "%s: compress_device %s, %zu bytes (cpu %zu)", name,
                      h5zgpu_status_string(sd), ld, lc);
            ok = cudaMemcpy(din, cc, lc, cudaMemcpyHostToDevice) == cudaSuccess;
            sd = h5zgpu_decompress_device(din, lc, dback, raw, &lb, 0, NULL);
            ok = ok && sd == H5ZGPU_OK && lb == raw &&
                 cudaMemcpy(d1, dback, raw, cudaMemcpyDeviceToHost) == cudaSuccess &&
                 memcmp(d1, d0, raw) == 0;
            tu_expect(ok, "%s: decompress_device %s (%s)", name, h5zgpu_status_string(sd),
                      h5zgpu_last_error());
        }
        cudaFree(din);
        cudaFree(dout);
        cudaFree(dback);
    }
    dd = cc;
    cc = NULL;
    *clen = lc;
done:
    free(cc);
    free(cg);
    free(d0);
    free(d1);
    free(d2);
    return dd;
}

/* Damaged payloads with a repaired checksum reach the payload checks: both executors must give
 * the same status and, when they accept the bytes, the same values. */
static void corrupt(const char *name, const uint8_t *chunk, size_t len, size_t raw, int seed)
{
    uint8_t *c = malloc(len);
    void *a = malloc(raw), *b = malloc(raw);
    size_t hlen = 40 + 4 * (size_t)chunk[8] + ((chunk[9] & 1u) ? 8 : 0), la, lb;
    if (!c || !a || !b || chunk[5] != H5ZGPU_CODEC_FIXED || len <= hlen)
        goto done;
    uint64_t s = (uint64_t)seed * 2654435761u + 1;
    for (int k = 0; k < 64; k++) {
        memcpy(c, chunk, len);
        s = s * 6364136223846793005u + 1442695040888963407u;
        size_t at = hlen + (size_t)((s >> 33) % (len - hlen));
        /* one bit, or on odd rounds several; never none */
        c[at] ^= (k & 1) ? (uint8_t)((s >> 40) | 1u) : (uint8_t)(1u << ((s >> 20) & 7));
        tu_fix_checksum(c, len);
        h5zgpu_status sa = h5zgpu_decompress(c, len, a, raw, &la, &on_cpu);
        h5zgpu_status sb = h5zgpu_decompress(c, len, b, raw, &lb, &on_gpu);
        tu_expect(sa == sb && (sa == H5ZGPU_OK || sa == H5ZGPU_E_CORRUPT),
                  "%s: byte %zu damaged: cpu %s, gpu %s", name, at, h5zgpu_status_string(sa),
                  h5zgpu_status_string(sb));
        if (sa == H5ZGPU_OK && sb == H5ZGPU_OK)
            tu_expect(memcmp(a, b, raw) == 0, "%s: byte %zu damaged: decoders disagree", name, at);
        /* the checksum alone must catch the same damage */
        memcpy(c + 12, chunk + 12, 4);
        sb = h5zgpu_decompress(c, len, b, raw, &lb, &on_gpu);
        tu_expect(sb == H5ZGPU_E_CORRUPT, "%s: byte %zu damaged, checksum kept: gpu %s", name, at,
                  h5zgpu_status_string(sb));
    }
    /* truncated payloads, the header's length and checksum made to agree */
    for (size_t cut = 1; cut <= 9 && cut < len - hlen; cut += 4) {
        size_t l = len - cut;
        memcpy(c, chunk, l);
        uint64_t pl = l - hlen;
        for (unsigned i = 0; i < 8; i++)
            c[32 + i] = (uint8_t)(pl >> (8 * i));
        tu_fix_checksum(c, l);
        h5zgpu_status sa = h5zgpu_decompress(c, l, a, raw, &la, &on_cpu);
        h5zgpu_status sb = h5zgpu_decompress(c, l, b, raw, &lb, &on_gpu);
        tu_expect(sa == H5ZGPU_E_CORRUPT && sb == H5ZGPU_E_CORRUPT,
                  "%s: %zu bytes cut: cpu %s, gpu %s", name, cut, h5zgpu_status_string(sa),
                  h5zgpu_status_string(sb));
    }
done:
    free(c);
    free(a);
    free(b);
}

static void synthetic(int small)
{
    int ncase = 0, nrun = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; pi++)
            for (int ti = 0; ti < 2; ti++)
                for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
                    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED,
                                       .mode = bounds[bi].mode,
                                       .eb = bounds[bi].eb,
                                       .dtype = ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                       .rank = shapes[si].rank};
                    memcpy(p.dims, shapes[si].dims, sizeof(uint64_t) * p.rank);
                    size_t n = tu_count(&p), raw = n * tu_esize(p.dtype), clen = 0;
                    if (small && (n > SMALL_MAX || ncase++ % SMALL_EVERY != 0))
                        continue;
                    char name[160];
                    snprintf(name, sizeof name, "shape %zu, pattern %d, %s, mode %d eb %g", si,
                             patterns[pi], ti ? "f64" : "f32", (int)p.mode, p.eb);
                    void *in = malloc(raw);
                    if (!in) {
                        tu_expect(0, "%s: out of host memory", name);
                        continue;
                    }
                    fill(p.dtype, n, patterns[pi], si * 31 + bi, in);
                    uint8_t *c = identity(name, &p, in, nrun % 3 == 0, &clen);
                    if (c && nrun % 5 == 0)
                        corrupt(name, c, clen, raw, nrun);
                    free(c);
                    free(in);
                    nrun++;
                }
    printf("gpu_identity: %d synthetic cases\n", nrun);
}

/* Fill layouts (docs/FORMAT.md): what each pattern puts where, over a smooth or special field. */
enum {
    FP_ZERO_MIX,   /* fill +0.0 among -0.0 and smooth values */
    FP_BLOBS,      /* fill -1e34 over about 40% of the points, in runs of varying length */
    FP_ALL,        /* every element fill */
    FP_CORNERS,    /* fill at every element whose folded coordinates are multiples of 4, and
                      scattered: block corners that are fill, next to fill neighbours */
    FP_SPECIAL,    /* blobs of -1e10 among NaN, Inf and values past the quantiser's range */
    FP_NAN_FILL,   /* the fill value is a NaN; other NaNs and Infs are not fill */
    FP_ABSENT      /* a fill value that no element holds: written as without one */
};

static const struct {
    int pat;
    double fill;
} fill_pats[] = {
    {FP_ZERO_MIX, 0.0}, {FP_BLOBS, -1e34}, {FP_ALL, -1e34},   {FP_CORNERS, 9.969209968386869e36},
    {FP_SPECIAL, -1e10}, {FP_NAN_FILL, NAN}, {FP_ABSENT, -1e34},
};

static const uint64_t fill_seeds[] = {3, 17};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15u;
    return x ^ (x >> 29);
}

static void fill_layout(const h5zgpu_params *p, int pat, double fv, uint64_t seed, void *a)
{
    size_t n = tu_count(p);
    uint64_t nx = p->dims[p->rank - 1], ny = p->rank > 1 ? p->dims[p->rank - 2] : 1;
    tu_fill(p->dtype, n, pat == FP_SPECIAL || pat == FP_NAN_FILL ? TU_SPECIAL : TU_SMOOTH, seed,
            a);
    size_t run_end = 0;
    int in_blob = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == run_end) { /* runs of 1..400 elements, 40% of them fill */
            uint64_t h = mix(i * 1315423911u + seed);
            in_blob = h % 5 < 2;
            run_end = i + 1 + (size_t)(h >> 40) % 400;
        }
        uint64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
        int is_fill = 0;
        switch (pat) {
        case FP_ZERO_MIX:
            if (i % 3 == 0)
                tu_put(p->dtype, a, i, (i / 3) % 2 ? -0.0 : 0.0);
            is_fill = mix(i + seed) % 4 == 0;
            break;
        case FP_BLOBS: is_fill = in_blob; break;
        case FP_ALL: is_fill = 1; break;
        case FP_CORNERS: is_fill = (x % 4 == 0 && y % 4 == 0 && z % 4 == 0) || mix(i) % 7 == 0; break;
        case FP_SPECIAL:
            is_fill = in_blob;
            if (!in_blob && i % 11 == 0)
                tu_put(p->dtype, a, i, tu_get(p->dtype, a, i) * 1e15);
            break;
        case FP_NAN_FILL: is_fill = in_blob; break;
        default: break;
        }
        if (is_fill)
            tu_put(p->dtype, a, i, fv);
    }
}

/* Whether some element's bits are the fill value's (small shapes may draw no fill blob). */
static int holds_fill(const h5zgpu_params *p, const void *a)
{
    size_t n = tu_count(p), es = tu_esize(p->dtype);
    uint8_t fv[8];
    tu_put(p->dtype, fv, 0, p->fill);
    for (size_t i = 0; i < n; i++)
        if (memcmp((const uint8_t *)a + es * i, fv, es) == 0)
            return 1;
    return 0;
}

static void fill_cases(int small)
{
    static const size_t shape_ids[] = {1, 3, 5, 9, 10, 14, 15, 16, 18};
    static const struct {
        h5zgpu_mode mode;
        double eb;
    } fb[] = {{H5ZGPU_MODE_ABS, 0.01}, {H5ZGPU_MODE_ABS, 0}, {H5ZGPU_MODE_REL, 1e-3},
              {H5ZGPU_MODE_PWREL, 1e-2}};
    int ncase = 0, nrun = 0, nfill = 0;
    for (size_t s = 0; s < sizeof shape_ids / sizeof shape_ids[0]; s++)
        for (size_t f = 0; f < sizeof fill_pats / sizeof fill_pats[0]; f++)
            for (int ti = 0; ti < 2; ti++)
                for (size_t bi = 0; bi < sizeof fb / sizeof fb[0]; bi++) {
                    size_t si = shape_ids[s];
                    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = fb[bi].mode,
                                       .eb = fb[bi].eb,
                                       .dtype = ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                       .rank = shapes[si].rank, .has_fill = 1,
                                       .fill = ti ? fill_pats[f].fill
                                                  : (double)(float)fill_pats[f].fill};
                    memcpy(p.dims, shapes[si].dims, sizeof(uint64_t) * p.rank);
                    size_t n = tu_count(&p), raw = n * tu_esize(p.dtype), clen = 0;
                    if (small && (n > SMALL_MAX || ncase++ % SMALL_EVERY != 0))
                        continue;
                    char name[160];
                    snprintf(name, sizeof name, "fill: shape %zu, layout %d, %s, mode %d eb %g",
                             si, fill_pats[f].pat, ti ? "f64" : "f32", (int)p.mode, p.eb);
                    void *in = malloc(raw);
                    if (!in) {
                        tu_expect(0, "%s: out of host memory", name);
                        continue;
                    }
                    fill_layout(&p, fill_pats[f].pat, p.fill, fill_seeds[(s + bi) % 2], in);
                    int want = holds_fill(&p, in);
                    tu_expect(fill_pats[f].pat != FP_ABSENT || !want,
                              "%s: the absent fill value is in the input", name);
                    uint8_t *c = identity(name, &p, in, nrun % 2 == 0, &clen);
                    if (c) {
                        /* only a chunk holding fill elements carries the fill flag */
                        tu_expect((int)(c[9] & 1u) == want, "%s: fill flag %d, expected %d", name,
                                  c[9] & 1u, want);
                        nfill += c[9] & 1u;
                        if (nrun % 5 == 0)
                            corrupt(name, c, clen, raw, nrun);
                    }
                    free(c);
                    free(in);
                    nrun++;
                }
    printf("gpu_identity: %d fill cases (%d chunks with fill elements)\n", nrun, nfill);
}

/* FILE.f32 Z,Y,X: the whole field as one chunk. */
static void field(const char *path, const char *dims)
{
    static const double rel[] = {1e-2, 1e-3, 1e-4};
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_REL,
                       .dtype = H5ZGPU_FLOAT32};
    const char *s = dims;
    char *end;
    while (p.rank < 4) {
        p.dims[p.rank++] = strtoull(s, &end, 10);
        if (*end != ',')
            break;
        s = end + 1;
    }
    size_t n = tu_count(&p), raw = n * 4, clen;
    void *in = malloc(raw);
    FILE *f = fopen(path, "rb");
    int ok = in && f && fread(in, 1, raw, f) == raw;
    tu_expect(ok, "%s: cannot read %zu bytes of shape %s", path, raw, dims);
    if (f)
        fclose(f);
    for (size_t i = 0; ok && i < sizeof rel / sizeof rel[0]; i++) {
        char name[512];
        p.eb = rel[i];
        snprintf(name, sizeof name, "%s REL %g", path, rel[i]);
        uint8_t *c = identity(name, &p, in, 1, &clen);
        if (c)
            printf("| %s | REL %g | ratio %.2f |\n", path, rel[i], (double)raw / (double)clen);
        free(c);
    }
    free(in);
}

int main(int argc, char **argv)
{
    if (!h5zgpu_gpu_available()) {
        int count = 0;
        cudaError_t e = cudaGetDeviceCount(&count);
        printf("gpu_identity: skipped: no usable CUDA device (%s, %d devices)\n",
               e == cudaSuccess ? "driver answered" : cudaGetErrorString(e), count);
        return SKIP_CODE;
    }
    int small = argc > 1 && strcmp(argv[1], "--small") == 0, first = 1 + small;
    if ((argc - first) % 2 != 0) {
        fprintf(stderr, "usage: %s [--small] | [FILE.f32 Z,Y,X]...\n", argv[0]);
        return 2;
    }
    if (argc == first) {
        synthetic(small);
        fill_cases(small);
    }
    for (int i = first; i + 1 < argc; i += 2)
        field(argv[i], argv[i + 1]);
    return tu_done("gpu_identity");
}
