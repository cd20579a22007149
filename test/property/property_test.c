/* Property-based verification: adversarial arrays x codecs x modes x bounds x element types x
 * chunk shapes, every decoded value checked in double precision against the contract:
 *   ABS   |x' - x| <= eb
 *   REL   |x' - x| <= eb x (max - min) over the chunk's finite values
 *   PWREL |x' - x| <= eb x |x|, and a zero decodes to a zero
 *   eb = 0: finite values bit-exact; NaN and +-Inf always bit-exact.
 * Each case also checks the chunk header (h5zgpu_chunk_info, eb_abs as FORMAT.md defines it),
 * that the executor H5ZGPU_DEVICE picks writes and reads the same bytes as the CPU reference,
 * and, for codec 0 (auto), that the chunk is the smaller of the fixed-length and the Huffman
 * chunks (the fixed-length one on a tie).
 *
 * Usage: property_test [small|large] [--seed S] [--case K] [--stride N] [--first F]
 *   small (default) is the CI run; large is for the device (H5ZGPU_DEVICE=gpu). A case is fixed
 *   by (size, seed, case number): a failure prints the command that reruns it alone. --stride N
 *   runs every Nth case (valgrind's share; pick N prime to the axes' sizes, e.g. 37), from case
 *   F (default 0): N processes with F = 0..N-1 share the space. */
#include "contract.h"
#include "util.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 20240611u
/* Failing cases described in full; the violation count covers all of them. */
#define MAX_REPORTED 25
/* Repetitions of the whole space with other data: small fits CI's minute on 2 cores (about
 * 8 s here), large is sized for the device (about 430 s on an H100 host, most of it the CPU
 * reference's interpolation). */
#define SMALL_REPS 2
#define LARGE_REPS 1

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1p-53;
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return rng_next(s) % n;
}

/* ---- generators: each writes n values of type t (as doubles, rounded by store()) ---- */

typedef struct gen_ctx {
    h5zgpu_dtype t;
    unsigned rank;
    const uint64_t *dims;
    size_t n;
    uint64_t *rng;
    void *out;
} gen_ctx;

static void store(const gen_ctx *g, size_t i, double v)
{
    if (g->t == H5ZGPU_FLOAT32) {
        float f = (float)v;
        memcpy((char *)g->out + 4 * i, &f, 4);
    } else {
        memcpy((char *)g->out + 8 * i, &v, 8);
    }
}

static void store_bits(const gen_ctx *g, size_t i, uint64_t bits)
{
    if (g->t == H5ZGPU_FLOAT32) {
        uint32_t b = (uint32_t)bits;
        memcpy((char *)g->out + 4 * i, &b, 4);
    } else {
        memcpy((char *)g->out + 8 * i, &bits, 8);
    }
}

/* A NaN with a random payload and sign, or an infinity, in the element type's bits. */
static uint64_t special_bits(const gen_ctx *g)
{
    uint64_t r = rng_next(g->rng), sign = r & 1u;
    unsigned kind = (unsigned)((r >> 1) % 3u);
    if (g->t == H5ZGPU_FLOAT32) {
        uint64_t frac = kind == 2 ? 0 : ((r >> 8) & 0x7FFFFFu) | 1u;
        return (sign << 31) | (UINT64_C(0xFF) << 23) | frac;
    }
    uint64_t frac = kind == 2 ? 0 : ((r >> 8) & UINT64_C(0xFFFFFFFFFFFFF)) | 1u;
    return (sign << 63) | (UINT64_C(0x7FF) << 52) | frac;
}

/* Smallest positive subnormal and smallest normal of the element type. */
static double tiny_sub(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT32 ? 0x1p-149 : 0x1p-1074;
}

static double tiny_norm(h5zgpu_dtype t)
{
    return t == H5ZGPU_FLOAT32 ? (double)FLT_MIN : DBL_MIN;
}

/* Sum of three sines over the element's coordinates, amplitude `amp` around `off`. */
static void fill_sines(const gen_ctx *g, double amp, double off)
{
    double f[3][H5ZGPU_MAX_RANK], ph[3];
    for (unsigned k = 0; k < 3; k++) {
        ph[k] = 6.283 * rng_unit(g->rng);
        for (unsigned d = 0; d < g->rank; d++)
            f[k][d] = 0.02 + 0.5 * rng_unit(g->rng) / (double)(k + 1);
    }
    for (size_t i = 0; i < g->n; i++) {
        size_t rest = i;
        double v = 0;
        uint64_t c[H5ZGPU_MAX_RANK];
        for (unsigned d = g->rank; d-- > 0;) {
            c[d] = rest % g->dims[d];
            rest /= g->dims[d];
        }
        for (unsigned k = 0; k < 3; k++) {
            double a = ph[k];
            for (unsigned d = 0; d < g->rank; d++)
                a += f[k][d] * (double)c[d];
            v += sin(a) / (double)(k + 1);
        }
        store(g, i, off + amp * v);
    }
}

static void gen_smooth(const gen_ctx *g)
{
    fill_sines(g, pow(10.0, (double)rng_below(g->rng, 9) - 4.0), 2.0 * rng_unit(g->rng) - 1.0);
}

/* |x| from 1e-30 to 1e30 along the array, signs in runs. */
static void gen_decades(const gen_ctx *g)
{
    double sign = 1;
    for (size_t i = 0; i < g->n; i++) {
        if (rng_below(g->rng, 16) == 0)
            sign = -sign;
        double e = g->n > 1 ? -30.0 + 60.0 * (double)i / (double)(g->n - 1) : 0.0;
        store(g, i, sign * pow(10.0, e));
    }
}

static void gen_huge_tiny(const gen_ctx *g)
{
    for (size_t i = 0; i < g->n; i++) {
        double m = 1.0 + rng_unit(g->rng), s = rng_below(g->rng, 2) ? -1.0 : 1.0;
        store(g, i, s * m * (i % 2 ? 1e-30 : 1e30));
    }
}

static void gen_nan_inf(const gen_ctx *g)
{
    fill_sines(g, 10.0, 0.0);
    for (size_t i = 0; i < g->n; i++)
        if (rng_below(g->rng, 8) == 0)
            store_bits(g, i, special_bits(g));
}

/* -0.0, +0.0, subnormals and the smallest normals, with a few ordinary values. */
static void gen_zeros_subnormals(const gen_ctx *g)
{
    for (size_t i = 0; i < g->n; i++) {
        double s = rng_below(g->rng, 2) ? -1.0 : 1.0;
        switch (rng_below(g->rng, 6)) {
        case 0: store(g, i, -0.0); break;
        case 1: store(g, i, 0.0); break;
        case 2: store(g, i, s * tiny_sub(g->t) * (double)(1 + rng_below(g->rng, 1000))); break;
        case 3: store(g, i, s * tiny_norm(g->t) * (1.0 - rng_unit(g->rng) * 0.5)); break;
        case 4: store(g, i, s * tiny_norm(g->t) * (1.0 + rng_unit(g->rng))); break;
        default: store(g, i, s * rng_unit(g->rng)); break;
        }
    }
}

/* Land masks: a smooth field with `fill` over a large fraction, in runs and scattered. */
static void gen_fill(const gen_ctx *g, double fill)
{
    fill_sines(g, 5.0, 15.0);
    double frac = 0.4 + 0.5 * rng_unit(g->rng);
    size_t i = 0;
    while (i < g->n) {
        size_t run = 1 + (size_t)rng_below(g->rng, 200);
        int is_fill = rng_unit(g->rng) < frac;
        for (size_t k = 0; k < run && i < g->n; k++, i++)
            if (is_fill || rng_below(g->rng, 50) == 0)
                store(g, i, fill);
    }
}

static void gen_fill_1e34(const gen_ctx *g)
{
    gen_fill(g, -1e34);
}

static void gen_fill_1e10(const gen_ctx *g)
{
    gen_fill(g, -1e10);
}

/* netCDF's other habit: NaN as the missing value (the default quiet NaN's bits). */
static void gen_fill_nan(const gen_ctx *g)
{
    gen_fill(g, NAN);
    for (size_t i = 0; i < g->n; i++) /* other NaNs and infinities, which are not fill */
        if (rng_below(g->rng, 64) == 0)
            store_bits(g, i, special_bits(g));
}

/* NaN as the missing value with nothing declared: the chunk makes a NaN its fill value. */
static void gen_nan_mask(const gen_ctx *g)
{
    gen_fill(g, NAN);
}

/* The same mask beside elements of a declared fill value that the NaN outnumber (HDF5's
 * default 0, a -999): those must still come back bit for bit. */
static void gen_nan_mask_beside(const gen_ctx *g, double declared)
{
    gen_fill(g, NAN);
    for (size_t i = 0; i < g->n; i++)
        if (rng_below(g->rng, 16) == 0)
            store(g, i, rng_below(g->rng, 4) ? declared : -declared);
}

static void gen_nan_mask_zeros(const gen_ctx *g)
{
    gen_nan_mask_beside(g, 0.0);
}

static void gen_nan_mask_999(const gen_ctx *g)
{
    gen_nan_mask_beside(g, -999.0);
}

static void gen_all_fill(const gen_ctx *g)
{
    for (size_t i = 0; i < g->n; i++)
        store(g, i, -1e34);
}

static void gen_noise(const gen_ctx *g)
{
    double scale = pow(10.0, (double)rng_below(g->rng, 11) - 5.0);
    for (size_t i = 0; i < g->n; i++)
        store(g, i, scale * (2.0 * rng_unit(g->rng) - 1.0));
}

static void gen_constant(const gen_ctx *g)
{
    static const double values[] = {0.0, -0.0, 1.0, -3.25, 1e-30, -1e30, 123456.789};
    double v = values[rng_below(g->rng, sizeof values / sizeof values[0])];
    for (size_t i = 0; i < g->n; i++)
        store(g, i, v);
}

static void gen_all_nan(const gen_ctx *g)
{
    for (size_t i = 0; i < g->n; i++)
        store_bits(g, i, special_bits(g));
}

/* Values a few ulps apart around 1: bounds near ulp(x) must be met or stored losslessly. */
static void gen_ulp_steps(const gen_ctx *g)
{
    double ulp = g->t == H5ZGPU_FLOAT32 ? 0x1p-23 : 0x1p-52;
    double v = 1.0;
    for (size_t i = 0; i < g->n; i++) {
        v += ulp * ((double)rng_below(g->rng, 7) - 3.0);
        store(g, i, v);
    }
}

/* A smooth field with spikes past the quantiser's range (outliers, never wrapped codes). */
static void gen_spikes(const gen_ctx *g)
{
    fill_sines(g, 1.0, 0.0);
    for (size_t i = 0; i < g->n; i++)
        if (rng_below(g->rng, 40) == 0)
            store(g, i, (rng_below(g->rng, 2) ? 1.0 : -1.0) * pow(10.0, 8.0 + 22.0 * rng_unit(g->rng)));
}

/* Any bit pattern at all, NaN and Inf included. */
static void gen_bits(const gen_ctx *g)
{
    for (size_t i = 0; i < g->n; i++)
        store_bits(g, i, rng_next(g->rng));
}

/* The whole finite range of the type: max - min overflows in REL for float64. */
static void gen_extremes(const gen_ctx *g)
{
    double big = g->t == H5ZGPU_FLOAT32 ? (double)FLT_MAX : DBL_MAX;
    for (size_t i = 0; i < g->n; i++) {
        double s = rng_below(g->rng, 2) ? -1.0 : 1.0;
        store(g, i, s * big * (rng_below(g->rng, 4) ? 1.0 - rng_unit(g->rng) * 1e-3 : 1e-300));
    }
}

/* has_fill: the case declares `fill` as the chunk's fill value (h5zgpu_params.fill). Fill-like
 * values also appear undeclared, as ordinary values. */
static const struct {
    const char *name;
    void (*fn)(const gen_ctx *g);
    int has_fill;
    double fill;
} generators[] = {
    {"smooth", gen_smooth, 0, 0},
    {"decades", gen_decades, 0, 0},
    {"huge-tiny", gen_huge_tiny, 0, 0},
    {"nan-inf", gen_nan_inf, 0, 0},
    {"zeros-subnormals", gen_zeros_subnormals, 0, 0},
    {"fill-1e34", gen_fill_1e34, 0, 0},
    {"fill-1e10", gen_fill_1e10, 0, 0},
    {"noise", gen_noise, 0, 0},
    {"constant", gen_constant, 0, 0},
    {"all-nan", gen_all_nan, 0, 0},
    {"ulp-steps", gen_ulp_steps, 0, 0},
    {"spikes", gen_spikes, 0, 0},
    {"bits", gen_bits, 0, 0},
    {"extremes", gen_extremes, 0, 0},
    {"fill-1e34-declared", gen_fill_1e34, 1, -1e34},
    {"fill-1e10-declared", gen_fill_1e10, 1, -1e10},
    {"fill-nan-declared", gen_fill_nan, 1, NAN},
    {"all-fill-declared", gen_all_fill, 1, -1e34},
    /* HDF5's default fill value is 0: +0.0 is fill, -0.0 is not */
    {"zeros-fill0-declared", gen_zeros_subnormals, 1, 0.0},
    /* declared but absent: the chunk must be the one written without a fill value */
    {"smooth-fill-absent", gen_smooth, 1, -9999.0},
    /* NaN makes the chunk's fill value where the declared one is absent or outnumbered */
    {"nan-mask", gen_nan_mask, 0, 0},
    {"nan-mask-fill0-declared", gen_nan_mask_zeros, 1, 0.0},
    {"nan-mask-fill999-declared", gen_nan_mask_999, 1, -999.0},
};

/* ---- the case space ---- */

typedef struct shape {
    unsigned rank;
    uint64_t dims[4];
} shape;

/* Odd sizes, partial blocks and tiles (a tile is 32 blocks of 64), unit dimensions, 1 element. */
static const shape small_shapes[] = {
    {1, {1}},           {3, {1, 1, 1}},     {1, {63}},         {1, {64}},
    {1, {65}},          {1, {2117}},        {2, {7, 9}},       {2, {8, 8}},
    {2, {17, 33}},      {2, {1, 97}},       {3, {3, 5, 7}},    {3, {4, 4, 4}},
    {3, {9, 13, 11}},   {3, {13, 17, 19}},  {4, {2, 3, 5, 7}}, {4, {3, 1, 9, 17}},
    {1, {4097}},        {2, {100, 70}},     {3, {33, 20, 10}}, {4, {1, 1, 1, 1}},
};

static const shape large_shapes[] = {
    {1, {1}},              {1, {200003}},          {2, {517, 389}},    {2, {1, 65537}},
    {3, {64, 64, 64}},     {3, {37, 101, 45}},     {3, {1, 257, 255}}, {4, {5, 17, 19, 23}},
    {4, {7, 1, 33, 129}},  {4, {2, 2, 2, 2}},
};

static const double bounds[] = {0, 1e-15, 1e-8, 1e-6, 1e-3, 1e-1};
/* fixed ratio takes a target in the bound's place */
static const double targets[] = {1.5, 2, 4, 8, 20, 100};
_Static_assert(sizeof targets == sizeof bounds, "a target for each bound");
static const h5zgpu_mode modes[] = {H5ZGPU_MODE_ABS, H5ZGPU_MODE_REL, H5ZGPU_MODE_PWREL,
                                    H5ZGPU_MODE_RATIO};
static const h5zgpu_dtype dtypes[] = {H5ZGPU_FLOAT32, H5ZGPU_FLOAT64};
static const h5zgpu_codec codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                      H5ZGPU_CODEC_AUTO};

#define N_GEN (sizeof generators / sizeof generators[0])
#define N_BOUND (sizeof bounds / sizeof bounds[0])
#define N_MODE (sizeof modes / sizeof modes[0])
#define N_DTYPE (sizeof dtypes / sizeof dtypes[0])
#define N_CODEC (sizeof codecs / sizeof codecs[0])

static const char *mode_name(h5zgpu_mode m)
{
    return m == H5ZGPU_MODE_ABS     ? "ABS"
           : m == H5ZGPU_MODE_REL   ? "REL"
           : m == H5ZGPU_MODE_PWREL ? "PWREL"
                                    : "RATIO";
}

typedef struct run_stats {
    uint64_t cases, values, violations, reported, identity_checks, raw_chunks;
    uint64_t in_bytes, out_bytes;
} run_stats;

typedef struct run_cfg {
    const char *size;
    uint64_t seed;
    const shape *shapes;
    size_t nshapes;
    unsigned reps; /* each combination again with other data */
    int gpu_path; /* the environment's executor is not the CPU: compare it with the CPU's bytes */
} run_cfg;

static run_stats S;

static void violation(const run_cfg *c, uint64_t k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void violation(const run_cfg *c, uint64_t k, const char *fmt, ...)
{
    S.violations++;
    if (S.reported++ < MAX_REPORTED) {
        va_list ap;
        va_start(ap, fmt);
        printf("VIOLATION case %" PRIu64 ": ", k);
        vprintf(fmt, ap);
        printf("\n  rerun: property_test %s --seed %" PRIu64 " --case %" PRIu64 "\n", c->size,
               c->seed, k);
        va_end(ap);
    }
}

/* Auto's chunk is the Huffman codec's when that is strictly shorter than its fixed-length
 * one, else the fixed-length one. (Auto's fixed-length payload is the one a dataset that may
 * also hold interpolated values gets, not codec 1's: qz_quant.keep.) */
static void check_auto(const run_cfg *c, uint64_t k, const char *label, const h5zgpu_params *p,
                       const void *in, const uint8_t *chunk, size_t len)
{
    static const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    h5zgpu_params one = *p;
    size_t cap = h5zgpu_compress_bound(p), lh = 0;
    uint8_t *huff = malloc(cap);
    h5zgpu_info info = {0};
    one.codec = H5ZGPU_CODEC_HUFFMAN;
    h5zgpu_status sh = h5zgpu_compress(&one, in, huff, cap, &lh, &cpu);
    int ok = sh == H5ZGPU_OK && h5zgpu_chunk_info(chunk, len, &info) == H5ZGPU_OK &&
             (info.codec == H5ZGPU_CODEC_HUFFMAN ? len == lh && memcmp(chunk, huff, len) == 0
                                                 : len <= lh || info.codec == 0);
    if (!ok)
        violation(c, k, "%s: auto wrote %zu bytes (codec %u), Huffman %zu (%s): not the smaller "
                  "one", label, len, info.codec, lh, h5zgpu_status_string(sh));
    free(huff);
}

/* A second write of what the chunk decoded to, as HDF5 makes when it rewrites a chunk: every
 * value stays within the bound of what the user wrote (REL: the larger of the two chunks'
 * ranges), and in ABS and PWREL a value the first write coded comes back bit for bit. */
static void check_rewrite(const run_cfg *c, uint64_t k, const char *label,
                          const h5zgpu_params *p, const void *in, const void *out, size_t n,
                          const hc_range *r1)
{
    size_t es = tu_esize(p->dtype), cap = h5zgpu_compress_bound(p), len = 0, got = 0;
    uint8_t *chunk = malloc(cap);
    void *out2 = malloc(n * es);
    hc_range r2 = hc_finite_range(p, out, n), wide = *r1;
    wide.range = r2.range > r1->range ? r2.range : r1->range;
    char why[256];
    h5zgpu_status st = h5zgpu_compress(p, out, chunk, cap, &len, NULL);
    if (st == H5ZGPU_OK)
        st = h5zgpu_decompress(chunk, len, out2, n * es, &got, NULL);
    if (st != H5ZGPU_OK) {
        violation(c, k, "%s: second write -> %s (%s)", label, h5zgpu_status_string(st),
                  h5zgpu_last_error());
        goto done;
    }
    uint64_t bad = hc_check_values(p, in, out2, n, &wide, why, sizeof why), moved = 0;
    for (size_t i = 0; p->mode != H5ZGPU_MODE_REL && i < n; i++)
        moved += memcmp((const char *)out + es * i, (const char *)in + es * i, es) != 0 &&
                 memcmp((const char *)out2 + es * i, (const char *)out + es * i, es) != 0;
    if (bad || moved)
        violation(c, k, "%s: written again, %" PRIu64 " values break the bound (first: %s) and %"
                  PRIu64 " coded values moved", label, bad, bad ? why : "-", moved);
done:
    free(chunk);
    free(out2);
}

static void run_case(const run_cfg *c, uint64_t k)
{
    uint64_t idx = k;
    size_t gi = idx % N_GEN;
    idx /= N_GEN;
    size_t bi = idx % N_BOUND;
    idx /= N_BOUND;
    size_t mi = idx % N_MODE;
    idx /= N_MODE;
    size_t ti = idx % N_DTYPE;
    idx /= N_DTYPE;
    size_t ci = idx % N_CODEC;
    idx /= N_CODEC;
    const shape *sh = &c->shapes[idx % c->nshapes]; /* what is left of idx is the repetition */

    h5zgpu_params p = {.codec = codecs[ci], .mode = modes[mi],
                       .eb = modes[mi] == H5ZGPU_MODE_RATIO ? targets[bi] : bounds[bi],
                       .dtype = dtypes[ti], .rank = sh->rank,
                       .has_fill = generators[gi].has_fill};
    /* the fill value as the element type holds it */
    p.fill = p.dtype == H5ZGPU_FLOAT32 ? (double)(float)generators[gi].fill : generators[gi].fill;
    memcpy(p.dims, sh->dims, sizeof sh->dims);

    size_t n = (size_t)tu_count(&p), raw = n * tu_esize(p.dtype);
    size_t cap = h5zgpu_compress_bound(&p), len = 0, len_cpu = 0, got = 0;
    uint8_t *chunk = malloc(cap), *chunk_cpu = malloc(cap);
    void *in = malloc(raw), *out = malloc(raw), *out_cpu = malloc(raw);
    uint64_t rng = c->seed ^ (k * 0xD1B54A32D192ED03u);
    char label[160], why[256];
    const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    h5zgpu_info info;

    gen_ctx g = {p.dtype, p.rank, p.dims, n, &rng, in};
    generators[gi].fn(&g);
    snprintf(label, sizeof label, "%s %s eb=%g %s codec %u shape %" PRIu64 "x%" PRIu64
             "x%" PRIu64 "x%" PRIu64 " (rank %u)",
             generators[gi].name, mode_name(p.mode), p.eb,
             p.dtype == H5ZGPU_FLOAT32 ? "f32" : "f64", (unsigned)p.codec, sh->dims[0],
             sh->rank > 1 ? sh->dims[1] : 1, sh->rank > 2 ? sh->dims[2] : 1,
             sh->rank > 3 ? sh->dims[3] : 1, sh->rank);
    S.cases++;

    hc_range range = hc_finite_range(&p, in, n);

    h5zgpu_status st = h5zgpu_compress(&p, in, chunk, cap, &len, NULL);
    if (st != H5ZGPU_OK || len > cap) {
        violation(c, k, "%s: compress -> %s (%s)", label, h5zgpu_status_string(st),
                  h5zgpu_last_error());
        goto done;
    }
    S.in_bytes += raw;
    S.out_bytes += len;

    st = h5zgpu_chunk_info(chunk, len, &info);
    if (st != H5ZGPU_OK) {
        violation(c, k, "%s: chunk_info -> %s (%s)", label, h5zgpu_status_string(st),
                  h5zgpu_last_error());
        goto done;
    }
    S.raw_chunks += info.codec == 0;
    /* a fixed-ratio chunk is an ABS or REL chunk of the bound it chose: held to that one */
    const int ratio = p.mode == H5ZGPU_MODE_RATIO;
    h5zgpu_params held = p;
    if (ratio) {
        if (info.mode != H5ZGPU_MODE_ABS && info.mode != H5ZGPU_MODE_REL)
            violation(c, k, "%s: a fixed-ratio chunk records mode %u", label,
                      (unsigned)info.mode);
        held.mode = info.mode;
        held.eb = info.eb;
    }
    double want_eb_abs = hc_expected_eb_abs(&held, info.codec, &range);
    /* FORMAT.md: the fill flag and the 8 bytes of the fill value only when fill elements occur
     * (the declared fill value's, or NaN's) */
    uint64_t want_bits, got_bits = 0;
    int want_fill = hc_chunk_fill(&p, &range, &want_bits);
    if (info.has_fill)   /* the header's field itself: a float32 NaN's bits survive no double */
        for (unsigned b = 0; b < 8; b++)
            got_bits |= (uint64_t)chunk[40u + 4u * p.rank + b] << (8 * b);
    unsigned want_version = hc_expected_version(info.codec);
    if (info.format_version != want_version || info.dtype != p.dtype ||
        info.mode != held.mode || info.rank != p.rank ||
        memcmp(info.dims, p.dims, sizeof(uint64_t) * p.rank) != 0 || info.eb != held.eb ||
        info.eb_abs != want_eb_abs || !info.has_fill != !want_fill ||
        (want_fill && got_bits != want_bits) ||
        info.header_len != 40u + 4u * p.rank + (want_fill ? 8u : 0u) ||
        info.header_len + info.payload_len != len || info.raw_len != raw ||
        (info.codec != 0 && p.codec != H5ZGPU_CODEC_AUTO && info.codec != (unsigned)p.codec) ||
        info.codec > H5ZGPU_CODEC_HUFFMAN)
        violation(c, k,
                  "%s: header says version %u codec %u dtype %u mode %u rank %u eb %.17g "
                  "eb_abs %.17g (want %.17g) header %" PRIu64 " payload %" PRIu64 " raw %" PRIu64
                  " of a %zu-byte chunk",
                  label, info.format_version, info.codec, (unsigned)info.dtype,
                  (unsigned)info.mode, info.rank, info.eb, info.eb_abs, want_eb_abs,
                  info.header_len, info.payload_len, info.raw_len, len);

    st = h5zgpu_decompress(chunk, len, out, raw, &got, NULL);
    if (st != H5ZGPU_OK || got != raw) {
        violation(c, k, "%s: decompress -> %s (%s), %zu of %zu bytes", label,
                  h5zgpu_status_string(st), h5zgpu_last_error(), got, raw);
        goto done;
    }
    S.values += n;
    uint64_t bad = hc_check_values(&held, in, out, n, &range, why, sizeof why);
    if (bad) {
        violation(c, k, "%s: %" PRIu64 " values break the bound; first: %s", label, bad, why);
        S.violations += bad - 1; /* violation() counted one */
    }

    /* The CPU reference must write and read the same bytes as the executor the environment
     * chose (on the CPU this checks that compression is deterministic). */
    st = h5zgpu_compress(&p, in, chunk_cpu, cap, &len_cpu, &cpu);
    if (st != H5ZGPU_OK || len_cpu != len || memcmp(chunk, chunk_cpu, len) != 0)
        violation(c, k, "%s: the CPU writes %zu bytes (%s), the %s executor %zu: not identical",
                  label, len_cpu, h5zgpu_status_string(st), c->gpu_path ? "GPU" : "same", len);
    st = h5zgpu_decompress(chunk, len, out_cpu, raw, &got, &cpu);
    if (st != H5ZGPU_OK || memcmp(out, out_cpu, raw) != 0)
        violation(c, k, "%s: the CPU decodes the chunk to other values (%s) than the %s executor",
                  label, h5zgpu_status_string(st), c->gpu_path ? "GPU" : "same");
    S.identity_checks++;

    /* auto's and a rewrite's rules are of a bound the user gave; fixed ratio chooses anew */
    if (p.codec == H5ZGPU_CODEC_AUTO && !ratio)
        check_auto(c, k, label, &p, in, chunk, len);
    if (!ratio)
        check_rewrite(c, k, label, &p, in, out, n, &range);

    if (p.has_fill && range.nfill == 0) {   /* NaN may still make a fill value */
        h5zgpu_params nofill = p;
        nofill.has_fill = 0;
        st = h5zgpu_compress(&nofill, in, chunk_cpu, cap, &len_cpu, NULL);
        if (st != H5ZGPU_OK || len_cpu != len || memcmp(chunk, chunk_cpu, len) != 0)
            violation(c, k, "%s: no element is fill, yet the chunk differs from the one written "
                      "without a fill value (%zu and %zu bytes)", label, len, len_cpu);
    }
done:
    free(chunk);
    free(chunk_cpu);
    free(in);
    free(out);
    free(out_cpu);
}

static int usage(void)
{
    fprintf(stderr, "usage: property_test [small|large] [--seed S] [--case K] [--stride N] "
                    "[--first F]\n");
    return 2;
}

int main(int argc, char **argv)
{
    run_cfg c = {"small", DEFAULT_SEED, small_shapes,
                 sizeof small_shapes / sizeof small_shapes[0], SMALL_REPS, 0};
    int64_t only = -1;
    uint64_t stride = 1, first = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "small") == 0) {
            c.size = "small";
            c.shapes = small_shapes;
            c.nshapes = sizeof small_shapes / sizeof small_shapes[0];
            c.reps = SMALL_REPS;
        } else if (strcmp(argv[i], "large") == 0) {
            c.size = "large";
            c.shapes = large_shapes;
            c.nshapes = sizeof large_shapes / sizeof large_shapes[0];
            c.reps = LARGE_REPS;
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            c.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            only = strtoll(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = strtoull(argv[++i], NULL, 0);
            if (stride == 0)
                return usage();
        } else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc) {
            first = strtoull(argv[++i], NULL, 0);
        } else {
            return usage();
        }
    }
    const char *dev = getenv("H5ZGPU_DEVICE");
    c.gpu_path = h5zgpu_gpu_available() && !(dev && strcmp(dev, "cpu") == 0);
    uint64_t total = (uint64_t)N_GEN * N_BOUND * N_MODE * N_DTYPE * N_CODEC * c.nshapes * c.reps;
    printf("property_test: %s run, seed %" PRIu64 ", %" PRIu64 " cases in the space, executor %s "
           "(H5ZGPU_DEVICE=%s)\n",
           c.size, c.seed, total, c.gpu_path ? "GPU" : "CPU", dev ? dev : "unset");
    if (only >= 0) {
        if ((uint64_t)only >= total)
            return usage();
        run_case(&c, (uint64_t)only);
    } else {
        for (uint64_t k = first; k < total; k += stride)
            run_case(&c, k);
    }
    printf("property_test: %" PRIu64 " cases, %" PRIu64 " values checked, %" PRIu64
           " violations; %" PRIu64 " chunks stored raw, %" PRIu64 " %s identity checks, "
           "ratio %.3f\n",
           S.cases, S.values, S.violations, S.raw_chunks, S.identity_checks,
           c.gpu_path ? "GPU/CPU" : "CPU/CPU", S.out_bytes ? (double)S.in_bytes / S.out_bytes : 0);
    return S.violations || S.cases == 0 ? 1 : 0;
}
