/* The GPU backend against the CPU reference, for each codec: 1 (fixed-length), 2 (Huffman) and
 * 0 (auto). Byte-identical chunks, cross-decoding to identical bits, every value within its bound
 * (fill values exact), the device-pointer API, and damaged payloads that both executors must
 * refuse alike without a crash. The synthetic cases cover 1-D to 4-D shapes with partial blocks
 * and tiles of both codecs, tiny chunks (1 element, one Huffman sub-chunk + 1), float32 and
 * float64, ABS/REL/PWREL, NaN/Inf, fill layouts, and Huffman radii 2 to 1024; a tally then
 * requires that the Huffman chunks used interpolation and every Lorenzo order, all four forms
 * and every radius, and that auto chose each codec somewhere, so new inputs cannot quietly lose
 * that coverage.
 *
 * usage: gpu_identity [--small] [--codecs LIST] [FILE.f32 Z,Y,X]...
 *   --codecs 1,2,0   the codecs to check, in this order (default all three)
 *   FILE.f32 Z,Y,X   instead of the synthetic cases: whole raw float32 fields, one chunk each, at
 *                    REL 1e-2, 1e-3, 1e-4, printing the ratio
 *   --small          an eighth of the synthetic cases of up to SMALL_MAX elements, without the
 *                    coverage tally (for compute-sanitizer)
 * Exits 77 (skip) without a GPU. */
#include "gpu_identity.h"
#include "property/contract.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP_CODE 77
#define SMALL_MAX 5000
#define SMALL_EVERY 8
/* h5zgpu.h: radius 0 means this one */
#define DEFAULT_RADIUS 512u
/* docs/FORMAT.md, Huffman payload: form at byte 8, predictor at 9 (0 interpolation, else the
 * Lorenzo order), radius (u16) at 10; the
 * fixed part and the codebook's m end at byte 26 */
#define HUFF_FORM 8
#define HUFF_ORDER 9
#define HUFF_RADIUS 10
#define HUFF_FIXED_PART 26
#define DAMAGE_ROUNDS 64
#define CODEC_RAW 0u

const h5zgpu_exec on_cpu = {H5ZGPU_EXEC_CPU, 0};
const h5zgpu_exec on_gpu = {H5ZGPU_EXEC_GPU, 0};

h5zgpu_codec codecs[3] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN, H5ZGPU_CODEC_AUTO};
size_t ncodecs = 3;

/* Shapes chosen for the folding (unit dimensions, rank 4) and partial blocks and tiles. The
 * fixed-length codec's tile is 32 blocks, 2048 values; the Huffman codec's tiles are 16x32x32,
 * 128x128 and 16384 and its sub-chunks 4096 elements, which the shapes after the first 20 aim
 * at: one past a sub-chunk and past a 1-D tile, a lone element of rank 3, odd sizes with a
 * partial tile on every axis. */
static const struct {
    unsigned rank;
    uint64_t dims[4];
} shapes[] = {
    {1, {1}},          {1, {7}},          {1, {64}},          {1, {65}},
    {1, {2049}},       {1, {70001}},      {2, {1, 1}},        {2, {3, 5}},
    {2, {8, 8}},       {2, {17, 33}},     {2, {100, 700}},    {2, {1, 300}},
    {3, {300, 1, 1}},  {3, {4, 4, 4}},    {3, {5, 6, 7}},     {3, {33, 17, 9}},
    {3, {64, 64, 64}}, {4, {1, 9, 1, 13}}, {4, {3, 5, 6, 7}}, {4, {2, 3, 17, 19}},
    {1, {4097}},       {3, {1, 1, 4097}}, {1, {16385}},       {3, {1, 1, 1}},
    {2, {129, 257}},   {3, {17, 33, 65}},
};

/* Patterns beyond util's: zeros of both signs (REL's range of a zero chunk), signalling NaNs
 * (raw blocks carry their bits unchanged), values past the quantiser's range. */
enum { PAT_ZEROS = 100, PAT_SNAN, PAT_WIDE };

/* TU_FIELD makes the Lorenzo order of the shape's dimensionality win, TU_NOISE the first order;
 * TU_SPIKY gives Huffman outliers, TU_CONSTANT its run form. */
const int patterns[] = {TU_SMOOTH, TU_NOISE,  TU_SPECIAL, TU_HUGE,  TU_BITS,
                        TU_CONSTANT, PAT_ZEROS, PAT_SNAN,  PAT_WIDE, TU_FIELD,
                        TU_SPIKY,  TU_MASKED};
const size_t npatterns = sizeof patterns / sizeof patterns[0];

static const struct {
    h5zgpu_mode mode;
    double eb;
} bounds[] = {
    {H5ZGPU_MODE_ABS, 1e-3}, {H5ZGPU_MODE_ABS, 0},     {H5ZGPU_MODE_REL, 1e-2},
    {H5ZGPU_MODE_REL, 1e-5}, {H5ZGPU_MODE_PWREL, 1e-3}, {H5ZGPU_MODE_PWREL, 0.25},
};

/* Huffman radii, taken in turn across the cases (0 is the default), and the radii a chunk can
 * carry */
static const unsigned radii[] = {0, 2, 16, 512, 1024};
#define NRADII (sizeof radii / sizeof radii[0])
static const unsigned written_radii[] = {2, 16, DEFAULT_RADIUS, 1024};
#define NWRITTEN_RADII (sizeof written_radii / sizeof written_radii[0])

/* What the checked chunks were written with: see coverage(). */
static struct {
    int order[4], form[4], radius[NWRITTEN_RADII], written[3], auto_chose[3];
} seen;

const char *codec_name(unsigned c)
{
    return c == H5ZGPU_CODEC_FIXED ? "fixed" : c == H5ZGPU_CODEC_HUFFMAN ? "huffman" : "auto";
}

void fill(const h5zgpu_params *p, int pat, uint64_t seed, void *a)
{
    h5zgpu_dtype t = p->dtype;
    size_t n = tu_count(p);
    if (pat == TU_FIELD || pat == TU_SPIKY || pat == TU_MASKED) {
        tu_fill_shape(p, (tu_pattern)pat, seed, a);
        return;
    }
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

/* The codec the header names must be the one asked for (or raw); a Huffman chunk must carry
 * the radius asked for. Tallies what was written. */
static void check_written(const char *name, const h5zgpu_params *p, const uint8_t *c, size_t len)
{
    h5zgpu_info info;
    h5zgpu_status s = h5zgpu_chunk_info(c, len, &info);
    tu_expect(s == H5ZGPU_OK, "%s: chunk_info %s", name, h5zgpu_status_string(s));
    if (s != H5ZGPU_OK)
        return;
    tu_expect(p->codec == H5ZGPU_CODEC_AUTO || info.codec == CODEC_RAW ||
                  info.codec == (unsigned)p->codec,
              "%s: asked for codec %u, the chunk says %u", name, (unsigned)p->codec, info.codec);
    if (info.codec <= H5ZGPU_CODEC_HUFFMAN) {
        seen.written[info.codec]++;
        seen.auto_chose[info.codec] += p->codec == H5ZGPU_CODEC_AUTO;
    }
    if (info.codec != H5ZGPU_CODEC_HUFFMAN || info.payload_len < HUFF_FIXED_PART)
        return;
    const uint8_t *pay = c + info.header_len;
    unsigned R = pay[HUFF_RADIUS] | (unsigned)pay[HUFF_RADIUS + 1] << 8;
    unsigned want = p->radius ? p->radius : DEFAULT_RADIUS;
    tu_expect(R == want, "%s: radius %u written, %u asked for", name, R, want);
    if (pay[HUFF_ORDER] <= 3)   /* 0: interpolation */
        seen.order[pay[HUFF_ORDER]]++;
    if (pay[HUFF_FORM] <= 3)
        seen.form[pay[HUFF_FORM]]++;
    for (size_t k = 0; k < NWRITTEN_RADII; k++)
        seen.radius[k] += R == written_radii[k];
}

/* Compress on both executors, compare, decode crosswise; returns the CPU chunk (caller frees)
 * for the corruption checks, or NULL. With `dev`, the device-pointer API too. */
static uint8_t *identity(const char *name, const h5zgpu_params *p, const void *in, int dev,
                         size_t *clen)
{
    size_t n = tu_count(p), raw = n * tu_esize(p->dtype), cap = h5zgpu_compress_bound(p);
    uint8_t *cc = malloc(cap), *cg = malloc(cap), *dd = NULL;
    void *d0 = malloc(raw), *d1 = malloc(raw);
    size_t lc = 0, lg = 0, l0, l1;
    int ok = cc && cg && d0 && d1;
    tu_expect(ok, "%s: out of host memory", name);
    if (!ok)
        goto done;
    h5zgpu_status sc = h5zgpu_compress(p, in, cc, cap, &lc, &on_cpu);
    h5zgpu_status sg = h5zgpu_compress(p, in, cg, cap, &lg, &on_gpu);
    tu_expect(sc == H5ZGPU_OK && sg == H5ZGPU_OK, "%s: compress cpu %s, gpu %s (%s)", name,
              h5zgpu_status_string(sc), h5zgpu_status_string(sg), h5zgpu_last_error());
    if (sc != H5ZGPU_OK || sg != H5ZGPU_OK)
        goto done;
    check_written(name, p, cc, lc);
    int same = lc == lg && first_diff(cc, cg, lc) < 0;
    tu_expect(same, "%s: chunks differ (cpu %zu bytes, gpu %zu bytes, first difference at byte %d)",
              name, lc, lg, lc == lg ? first_diff(cc, cg, lc) : -1);
    h5zgpu_status s0 = h5zgpu_decompress(cc, lc, d0, raw, &l0, &on_cpu);
    h5zgpu_status s1 = h5zgpu_decompress(cc, lc, d1, raw, &l1, &on_gpu);
    tu_expect(s0 == H5ZGPU_OK && s1 == H5ZGPU_OK, "%s: decompress cpu %s, gpu %s (%s)", name,
              h5zgpu_status_string(s0), h5zgpu_status_string(s1), h5zgpu_last_error());
    if (s0 != H5ZGPU_OK || s1 != H5ZGPU_OK)
        goto done;
    tu_expect(memcmp(d0, d1, raw) == 0, "%s: GPU decode of the CPU chunk differs at byte %d",
              name, first_diff(d0, d1, raw));
    /* identical chunks decode alike on the CPU: only a differing GPU chunk needs its own pass */
    if (!same) {
        h5zgpu_status s2 = h5zgpu_decompress(cg, lg, d1, raw, &l1, &on_cpu);
        tu_expect(s2 == H5ZGPU_OK && memcmp(d0, d1, raw) == 0,
                  "%s: CPU decode of the GPU chunk: %s, differs at byte %d", name,
                  h5zgpu_status_string(s2), s2 == H5ZGPU_OK ? first_diff(d0, d1, raw) : -1);
    }
    char why[256] = "";
    h5zgpu_params held = *p;   /* a fixed-ratio chunk is held to the bound its header records */
    h5zgpu_info info;
    if (p->mode == H5ZGPU_MODE_RATIO && h5zgpu_chunk_info(cc, lc, &info) == H5ZGPU_OK) {
        held.mode = info.mode;
        held.eb = info.eb;
    }
    hc_range r = hc_finite_range(&held, in, n);
    uint64_t miss = hc_check_values(&held, in, d0, n, &r, why, sizeof why);
    tu_expect(miss == 0, "%s: %llu values miss the bound; %s", name, (unsigned long long)miss,
              why);
    if (dev) {
        /* every other device input starts one element past cudaMalloc's alignment, as a
         * field's slice may: kernels that load 16 bytes at a time must fall back */
        static unsigned ndev;
        const size_t shift = ndev++ % 2 ? tu_esize(p->dtype) : 0;
        void *din = NULL, *dout = NULL, *dback = NULL;
        size_t ld = 0, lb = 0;
        ok = cudaMalloc(&din, cap + shift) == cudaSuccess &&
             cudaMalloc(&dout, cap) == cudaSuccess && cudaMalloc(&dback, raw) == cudaSuccess &&
             cudaMemcpy((char *)din + shift, in, raw, cudaMemcpyHostToDevice) == cudaSuccess;
        tu_expect(ok, "%s: device buffers", name);
        if (ok) {
            h5zgpu_status sd =
                h5zgpu_compress_device(p, (char *)din + shift, dout, cap, &ld, 0, NULL);
            ok = sd == H5ZGPU_OK && ld == lc &&
                 cudaMemcpy(cg, dout, ld, cudaMemcpyDeviceToHost) == cudaSuccess &&
                 memcmp(cg, cc, lc) == 0;
            tu_expect(ok, "%s: compress_device %s, %zu bytes (cpu %zu)%s", name,
                      h5zgpu_status_string(sd), ld, lc,
                      sd == H5ZGPU_OK && ld == lc ? ", bytes differ" : "");
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
    return dd;
}

/* One damaged copy of the chunk (byte `at` XOR mask) with a repaired checksum reaches the
 * payload checks: both executors must give the same status and, when they accept the bytes,
 * the same values; with the old checksum the GPU must refuse it. */
static void damage(const char *name, const uint8_t *chunk, size_t len, size_t raw, size_t at,
                   uint8_t mask, uint8_t *c, void *a, void *b)
{
    size_t la, lb;
    memcpy(c, chunk, len);
    c[at] ^= mask;
    tu_fix_checksum(c, len);
    h5zgpu_status sa = h5zgpu_decompress(c, len, a, raw, &la, &on_cpu);
    h5zgpu_status sb = h5zgpu_decompress(c, len, b, raw, &lb, &on_gpu);
    tu_expect(sa == sb && (sa == H5ZGPU_OK || sa == H5ZGPU_E_CORRUPT),
              "%s: byte %zu ^ 0x%02x: cpu %s, gpu %s", name, at, mask, h5zgpu_status_string(sa),
              h5zgpu_status_string(sb));
    if (sa == H5ZGPU_OK && sb == H5ZGPU_OK)
        tu_expect(memcmp(a, b, raw) == 0, "%s: byte %zu ^ 0x%02x: decoders disagree", name, at,
                  mask);
    memcpy(c + 12, chunk + 12, 4);
    sb = h5zgpu_decompress(c, len, b, raw, &lb, &on_gpu);
    tu_expect(sb == H5ZGPU_E_CORRUPT, "%s: byte %zu ^ 0x%02x, checksum kept: gpu %s", name, at,
              mask, h5zgpu_status_string(sb));
}

/* Damaged payloads: random bits anywhere, and for Huffman every byte of the fixed part (form,
 * order, radius, run token, reserved, counts, m), which the structural checks must catch alike;
 * then truncated payloads. Raw chunks have no payload structure to damage. */
static void corrupt(const char *name, const uint8_t *chunk, size_t len, size_t raw, int seed)
{
    uint8_t *c = malloc(len);
    void *a = malloc(raw), *b = malloc(raw);
    h5zgpu_info info;
    if (!c || !a || !b || h5zgpu_chunk_info(chunk, len, &info) != H5ZGPU_OK ||
        info.codec == CODEC_RAW || len <= info.header_len)
        goto done;
    size_t hlen = (size_t)info.header_len, la, lb;
    uint64_t s = (uint64_t)seed * 2654435761u + 1;
    for (int k = 0; k < DAMAGE_ROUNDS; k++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        size_t at = hlen + (size_t)((s >> 33) % (len - hlen));
        /* one bit, or on odd rounds several; never none */
        damage(name, chunk, len, raw, at,
               (k & 1) ? (uint8_t)((s >> 40) | 1u) : (uint8_t)(1u << ((s >> 20) & 7)), c, a, b);
    }
    if (info.codec == H5ZGPU_CODEC_HUFFMAN)
        for (size_t k = HUFF_FORM; k < HUFF_FIXED_PART && hlen + k < len; k++)
            damage(name, chunk, len, raw, hlen + k, (uint8_t)(1u << (k % 8)), c, a, b);
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

/* Fill layouts (docs/FORMAT.md): what each pattern puts where, over a smooth or special field. */
enum {
    FP_ZERO_MIX,   /* fill +0.0 among -0.0 and smooth values */
    FP_BLOBS,      /* fill -1e34 over about 40% of the points, in runs of varying length */
    FP_ALL,        /* every element fill */
    FP_CORNERS,    /* fill at every element whose folded coordinates are multiples of 4, and
                      scattered: block corners that are fill, next to fill neighbours */
    FP_SPECIAL,    /* blobs of -1e10 among NaN, Inf and values past the quantiser's range */
    FP_NAN_FILL,   /* the fill value is a NaN; other NaNs and Infs are not fill */
    FP_ABSENT,     /* a fill value that no element holds: written as without one */
    FP_NAN_MASK,   /* blobs of NaN beside fewer elements of the declared fill value (+0.0 and
                      -0.0 on one element in eight): a NaN becomes the chunk's fill value */
    FP_NAN_OTHER   /* blobs of a NaN whose bits differ from the declared NaN's, among specials */
};

/* The declared fill value, and what the blobs hold (NaN: -NaN, x86's default NaN's bits). */
static const struct {
    int pat;
    double fill, blob;
} fill_pats[] = {
    {FP_ZERO_MIX, 0.0, 0.0},     {FP_BLOBS, -1e34, -1e34},
    {FP_ALL, -1e34, -1e34},      {FP_CORNERS, 9.969209968386869e36, 9.969209968386869e36},
    {FP_SPECIAL, -1e10, -1e10},  {FP_NAN_FILL, NAN, NAN},
    {FP_ABSENT, -1e34, -1e34},   {FP_NAN_MASK, 0.0, NAN},
    {FP_NAN_OTHER, NAN, -NAN},
};

static const uint64_t fill_seeds[] = {3, 17};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15u;
    return x ^ (x >> 29);
}

static void fill_layout(const h5zgpu_params *p, int pat, double blob, uint64_t seed, void *a)
{
    size_t n = tu_count(p);
    uint64_t nx = p->dims[p->rank - 1], ny = p->rank > 1 ? p->dims[p->rank - 2] : 1;
    tu_fill(p->dtype, n,
            pat == FP_SPECIAL || pat == FP_NAN_FILL || pat == FP_NAN_OTHER ? TU_SPECIAL
                                                                           : TU_SMOOTH,
            seed, a);
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
        case FP_CORNERS:
            is_fill = (x % 4 == 0 && y % 4 == 0 && z % 4 == 0) || mix(i) % 7 == 0;
            break;
        case FP_SPECIAL:
            is_fill = in_blob;
            if (!in_blob && i % 11 == 0)
                tu_put(p->dtype, a, i, tu_get(p->dtype, a, i) * 1e15);
            break;
        case FP_NAN_FILL: is_fill = in_blob; break;
        case FP_NAN_OTHER: is_fill = in_blob; break;
        case FP_NAN_MASK:
            is_fill = in_blob;
            if (!in_blob && mix(i + seed) % 8 == 0)
                tu_put(p->dtype, a, i, i % 2 ? -0.0 : 0.0);
            break;
        default: break;
        }
        if (is_fill)
            tu_put(p->dtype, a, i, blob);
    }
}

/* One input through identity(), and the damage checks when asked. A fill case's input is a
 * fill layout, the others a pattern. Returns the chunk's fill flag. */
static int run_case(const char *name, const h5zgpu_params *p, int pat, double blob,
                    int is_fill_case, uint64_t seed, int dev, int damage_seed)
{
    size_t raw = tu_count(p) * tu_esize(p->dtype), clen = 0;
    void *in = malloc(raw);
    if (!in) {
        tu_expect(0, "%s: out of host memory", name);
        return 0;
    }
    int flag = 0;
    if (is_fill_case)
        fill_layout(p, pat, blob, seed, in);
    else
        fill(p, pat, seed, in);
    const hc_range r = hc_finite_range(p, in, tu_count(p));
    uint64_t want_bits, got_bits = 0;
    const int want = hc_chunk_fill(p, &r, &want_bits);
    tu_expect(!is_fill_case || pat != FP_ABSENT || r.nfill == 0,
              "%s: the absent fill value is in the input", name);
    uint8_t *c = identity(name, p, in, dev, &clen);
    if (c) {
        /* only a chunk holding fill elements carries the fill flag, with its fill value: the
         * declared one, or a NaN that outnumbers it */
        flag = c[9] & 1u;
        if (flag)
            memcpy(&got_bits, c + 40 + 4 * p->rank, 8);
        tu_expect(flag == want && got_bits == want_bits,
                  "%s: fill flag %d, value bits %llx; expected %d, %llx", name, flag,
                  (unsigned long long)got_bits, want, (unsigned long long)want_bits);
        if (damage_seed >= 0)
            corrupt(name, c, clen, raw, damage_seed);
    }
    free(c);
    free(in);
    return flag;
}

/* The Huffman radius of a case: the radii in turn over the case's indices (the fixed-length
 * codec ignores it; it stays 0 there so its chunks are written as before). */
static unsigned radius_for(h5zgpu_codec codec, size_t k)
{
    return codec == H5ZGPU_CODEC_FIXED ? 0 : radii[k % NRADII];
}

static void synthetic(int small)
{
    int ncase = 0, nrun = 0;
    for (size_t ci = 0; ci < ncodecs; ci++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t pi = 0; pi < npatterns; pi++)
                for (int ti = 0; ti < 2; ti++)
                    for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
                        h5zgpu_params p = {.codec = codecs[ci],
                                           .mode = bounds[bi].mode,
                                           .eb = bounds[bi].eb,
                                           .dtype = ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                           .rank = shapes[si].rank,
                                           .radius = radius_for(codecs[ci], si + pi + bi + ti)};
                        memcpy(p.dims, shapes[si].dims, sizeof(uint64_t) * p.rank);
                        if (small && (tu_count(&p) > SMALL_MAX || ncase++ % SMALL_EVERY != 0))
                            continue;
                        char name[160];
                        snprintf(name, sizeof name,
                                 "%s: shape %zu, pattern %d, %s, mode %d eb %g, radius %u",
                                 codec_name(p.codec), si, patterns[pi], ti ? "f64" : "f32",
                                 (int)p.mode, p.eb, p.radius);
                        run_case(name, &p, patterns[pi], 0.0, 0, si * 31 + bi, nrun % 3 == 0,
                                 nrun % 5 == 0 ? nrun : -1);
                        nrun++;
                    }
    printf("gpu_identity: %d synthetic cases\n", nrun);
}

/* Values in a chunk of the sizes HDF5 users pick (1 MiB of float32) */
#define HDF5_SIZED 262144u

/* Fixed ratio: the bound each chunk chooses rests on payload sizes, so both executors choose
 * alike; every third shape and the HDF5-sized ones, the patterns that make the sizes jump
 * among them. */
static void ratio_cases(int small)
{
    static const int ratio_patterns[] = {TU_FIELD, TU_SPIKY, TU_MASKED, TU_NOISE, TU_CONSTANT};
    static const double targets[] = {5, 20};
    int nrun = 0;
    for (size_t ci = 0; ci < ncodecs; ci++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t pi = 0; pi < sizeof ratio_patterns / sizeof ratio_patterns[0]; pi++)
                for (size_t k = 0; k < 2; k++) {
                    h5zgpu_params p = {.codec = codecs[ci], .mode = H5ZGPU_MODE_RATIO,
                                       .eb = targets[k],
                                       .dtype = k ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                       .rank = shapes[si].rank,
                                       .has_fill = ratio_patterns[pi] == TU_MASKED,
                                       .fill = k ? -1e34 : (double)(float)-1e34};
                    memcpy(p.dims, shapes[si].dims, sizeof(uint64_t) * p.rank);
                    if (si % (small ? 6 : 3) != 0 && tu_count(&p) < HDF5_SIZED)
                        continue;
                    char name[160];
                    snprintf(name, sizeof name, "%s: ratio %g, shape %zu, pattern %d, %s",
                             codec_name(p.codec), p.eb, si, ratio_patterns[pi],
                             k ? "f64" : "f32");
                    run_case(name, &p, ratio_patterns[pi], 0.0, 0, si * 7 + pi, nrun % 2 == 0,
                             -1);
                    nrun++;
                }
    printf("gpu_identity: %d fixed-ratio cases\n", nrun);
}

static void fill_cases(int small)
{
    static const size_t shape_ids[] = {1, 3, 5, 9, 10, 14, 15, 16, 18, 20, 25};
    static const struct {
        h5zgpu_mode mode;
        double eb;
    } fb[] = {{H5ZGPU_MODE_ABS, 0.01}, {H5ZGPU_MODE_ABS, 0}, {H5ZGPU_MODE_REL, 1e-3},
              {H5ZGPU_MODE_PWREL, 1e-2}};
    int ncase = 0, nrun = 0, nfill = 0;
    for (size_t ci = 0; ci < ncodecs; ci++)
        for (size_t s = 0; s < sizeof shape_ids / sizeof shape_ids[0]; s++)
            for (size_t f = 0; f < sizeof fill_pats / sizeof fill_pats[0]; f++)
                for (int ti = 0; ti < 2; ti++)
                    for (size_t bi = 0; bi < sizeof fb / sizeof fb[0]; bi++) {
                        size_t si = shape_ids[s];
                        h5zgpu_params p = {.codec = codecs[ci], .mode = fb[bi].mode,
                                           .eb = fb[bi].eb,
                                           .dtype = ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                           .rank = shapes[si].rank, .has_fill = 1,
                                           .fill = ti ? fill_pats[f].fill
                                                      : (double)(float)fill_pats[f].fill,
                                           .radius = radius_for(codecs[ci], s + f + bi)};
                        memcpy(p.dims, shapes[si].dims, sizeof(uint64_t) * p.rank);
                        if (small && (tu_count(&p) > SMALL_MAX || ncase++ % SMALL_EVERY != 0))
                            continue;
                        char name[160];
                        snprintf(name, sizeof name,
                                 "%s fill: shape %zu, layout %d, %s, mode %d eb %g, radius %u",
                                 codec_name(p.codec), si, fill_pats[f].pat, ti ? "f64" : "f32",
                                 (int)p.mode, p.eb, p.radius);
                        nfill += run_case(name, &p, fill_pats[f].pat, fill_pats[f].blob, 1,
                                          fill_seeds[(s + bi) % 2], nrun % 2 == 0,
                                          nrun % 5 == 0 ? nrun : -1);
                        nrun++;
                    }
    printf("gpu_identity: %d fill cases (%d chunks with fill elements)\n", nrun, nfill);
}

/* Fill elements among codes at the quantiser's limit (tu_fill_code_limit): tiles that must
 * leave out the predictors under which a block would need more than 32 planes. */
static void limit_cases(void)
{
    uint64_t state = 0x9E3779B97F4A7C15u;
    int nrun = 0, fixed = 0;
    for (size_t ci = 0; ci < ncodecs; ci++)
        fixed |= codecs[ci] == H5ZGPU_CODEC_FIXED;
    for (int ti = 0; ti < 2 && fixed; ti++)
        for (unsigned side = 4; side <= 16; side *= 4)
            for (unsigned trial = 0; trial < (side == 4 ? 42u : 12u); trial++) {
                h5zgpu_params p;
                void *in = malloc((size_t)side * side * side * 8);
                size_t clen = 0;
                char name[96];
                tu_fill_code_limit(&p, ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32, side, trial, &state,
                                   in);
                snprintf(name, sizeof name, "fill at the code limit: %s %u^3 trial %u",
                         ti ? "f64" : "f32", side, trial);
                free(identity(name, &p, in, nrun % 2, &clen));
                free(in);
                nrun++;
            }
    printf("gpu_identity: %d chunks of fill among codes at the quantiser's limit\n", nrun);
}

/* Chunks of 66 Huffman tiles, more than HF_SAMPLE_ALL: the predictor is chosen from a sample
 * of the tiles, and each executor must sample the same ones. Fill elements fall in sampled
 * and unsampled tiles alike. */
static void sampled_cases(void)
{
    static const uint64_t dims[3] = {20, 70, 330};
    static const int pats[] = {TU_FIELD, TU_NOISE, TU_MASKED};
    static const double rel[] = {1e-2, 1e-4};
    int nrun = 0;
    for (size_t ci = 0; ci < ncodecs; ci++)
        for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++)
            for (size_t b = 0; b < sizeof rel / sizeof rel[0]; b++)
                for (int ti = 0; ti < 2; ti++) {
                    const int masked = pats[k] == TU_MASKED;
                    h5zgpu_params p = {.codec = codecs[ci], .mode = H5ZGPU_MODE_REL,
                                       .eb = rel[b],
                                       .dtype = ti ? H5ZGPU_FLOAT64 : H5ZGPU_FLOAT32,
                                       .rank = 3, .has_fill = masked,
                                       .fill = !masked ? 0 : ti ? -1e34 : (double)(float)-1e34,
                                       .radius = radius_for(codecs[ci], k + b + ti)};
                    memcpy(p.dims, dims, sizeof dims);
                    char name[160];
                    snprintf(name, sizeof name, "%s sampled: pattern %d, %s, REL %g, radius %u",
                             codec_name(p.codec), pats[k], ti ? "f64" : "f32", p.eb, p.radius);
                    run_case(name, &p, pats[k], 0.0, 0, 11 + k, nrun % 3 == 0,
                             nrun % 4 == 0 ? nrun : -1);
                    nrun++;
                }
    printf("gpu_identity: %d cases of 66 tiles\n", nrun);
}

/* After the full synthetic and fill runs: what the chunks were written with. A Huffman chunk
 * must have used each Lorenzo order, each form and each radius, and auto each codec (when
 * those codecs are among the ones checked). */
static void coverage(void)
{
    int huff = 0, autoc = 0;
    for (size_t ci = 0; ci < ncodecs; ci++) {
        huff |= codecs[ci] != H5ZGPU_CODEC_FIXED;
        autoc |= codecs[ci] == H5ZGPU_CODEC_AUTO;
    }
    printf("gpu_identity: chunks written raw %d, fixed %d, Huffman %d; Huffman by predictor "
           "interpolation/Lorenzo 1/2/3: %d/%d/%d/%d, by form 0/1/2/3: %d/%d/%d/%d, by radius",
           seen.written[0], seen.written[1], seen.written[2], seen.order[0], seen.order[1],
           seen.order[2], seen.order[3], seen.form[0], seen.form[1], seen.form[2], seen.form[3]);
    for (size_t k = 0; k < NWRITTEN_RADII; k++)
        printf(" %u: %d", written_radii[k], seen.radius[k]);
    printf("; auto chose raw %d, fixed %d, Huffman %d\n", seen.auto_chose[0], seen.auto_chose[1],
           seen.auto_chose[2]);
    if (!huff)
        return;
    for (unsigned o = 0; o <= 3; o++)
        tu_expect(seen.order[o] > 0, "coverage: no Huffman chunk used predictor %u "
                  "(0 interpolation, else a Lorenzo order)", o);
    for (unsigned f = 0; f <= 3; f++)
        tu_expect(seen.form[f] > 0, "coverage: no Huffman chunk used form %u", f);
    for (size_t k = 0; k < NWRITTEN_RADII; k++)
        tu_expect(seen.radius[k] > 0, "coverage: no Huffman chunk used radius %u",
                  written_radii[k]);
    tu_expect(!autoc || seen.auto_chose[H5ZGPU_CODEC_FIXED] > 0,
              "coverage: auto never chose the fixed-length codec");
    tu_expect(!autoc || seen.auto_chose[H5ZGPU_CODEC_HUFFMAN] > 0,
              "coverage: auto never chose the Huffman codec");
}

/* FILE.f32 Z,Y,X: the whole field as one chunk, with each codec. */
static void field(const char *path, const char *dims)
{
    static const double rel[] = {1e-2, 1e-3, 1e-4};
    h5zgpu_params p = {.mode = H5ZGPU_MODE_REL, .dtype = H5ZGPU_FLOAT32};
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
    for (size_t ci = 0; ok && ci < ncodecs; ci++)
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char name[512];
            p.codec = codecs[ci];
            p.eb = rel[i];
            snprintf(name, sizeof name, "%s %s REL %g", path, codec_name(p.codec), rel[i]);
            uint8_t *c = identity(name, &p, in, 1, &clen);
            if (c)
                printf("| %s | %s | REL %g | ratio %.2f | written by codec %u |\n", path,
                       codec_name(p.codec), rel[i], (double)raw / (double)clen, c[5]);
            fflush(stdout);
            free(c);
        }
    free(in);
}

/* "1,2,0" into codecs[]. */
static int parse_codecs(const char *s)
{
    ncodecs = 0;
    for (;;) {
        char *end;
        unsigned long c = strtoul(s, &end, 10);
        if (end == s || c > H5ZGPU_CODEC_HUFFMAN || ncodecs == sizeof codecs / sizeof codecs[0])
            return 0;
        codecs[ncodecs++] = (h5zgpu_codec)c;
        if (*end == 0)
            return 1;
        if (*end != ',')
            return 0;
        s = end + 1;
    }
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
    int small = 0, first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--small") == 0) {
            small = 1;
        } else if (strcmp(argv[first], "--codecs") == 0 && first + 1 < argc &&
                   parse_codecs(argv[first + 1])) {
            first++;
        } else {
            first = argc + 1;
            break;
        }
    }
    if (first > argc || (argc - first) % 2 != 0) {
        fprintf(stderr, "usage: %s [--small] [--codecs 1,2,0] [FILE.f32 Z,Y,X]...\n", argv[0]);
        return 2;
    }
    if (argc == first) {
        synthetic(small);
        ratio_cases(small);
        fill_cases(small);
        limit_cases();
        device_batch();
        mixed_batch();
        if (!small) {
            sampled_cases();
            coverage();
        }
    }
    for (int i = first; i + 1 < argc; i += 2)
        field(argv[i], argv[i + 1]);
    return tu_done("gpu_identity");
}
