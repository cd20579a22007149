/* The fixed-ratio mode (3) on the CPU: each chunk lands near its target ratio where the field
 * allows it, its header records an ABS or REL bound that every value meets (fill and NaN exact),
 * the chunk is the same bytes each time, and targets out of range are refused. (The GPU writes
 * the same bytes: gpu_identity's fixed-ratio cases.) */
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ratio_case {
    const char *name;
    h5zgpu_dtype dtype;
    unsigned rank;
    uint64_t dims[3];
    tu_pattern pattern;
    int has_fill;
    /* |ratio / target - 1| each chunk keeps, with the fixed-length codec and with Huffman (and
     * auto); 0: at or above the target */
    double tol_fixed, tol_huffman;
} ratio_case;

/* The fixed-length codec's size moves smoothly with the bound. Huffman's jumps where its
 * predictor or form changes, and the smooth synthetic fields' hardly moves at all over decades
 * of bound, then, near the values' float32 spacing (the field's target 5: ABS 1e-6 to 3e-5),
 * jumps between ratios 1.2 and 10 from one bound to the next 8% above it: the search (eight
 * tries at most) ends at the closest try, 0.35 and 0.74 from the target at worst here, where
 * the Nyx-like fields' chunks land within 0.07 (docs/BENCHMARKS.md). */
static const ratio_case CASES[] = {
    {"field 48^3 f32", H5ZGPU_FLOAT32, 3, {48, 48, 48}, TU_FIELD, 0, 0.1, 0.4},
    {"spiky 40^3 f64", H5ZGPU_FLOAT64, 3, {40, 40, 40}, TU_SPIKY, 0, 0.1, 0.1},
    {"land 60x70 f32, fill declared", H5ZGPU_FLOAT32, 2, {60, 70}, TU_LAND, 1, 0.1, 0.1},
    {"nan-masked 30^3 f64", H5ZGPU_FLOAT64, 3, {30, 30, 30}, TU_NAN_MASKED, 0, 0.1, 0.8},
    {"noise 20000 f32", H5ZGPU_FLOAT32, 1, {20000}, TU_NOISE, 0, 0.1, 0.1},
    {"constant 32^3 f32 (exact at any bound)", H5ZGPU_FLOAT32, 3, {32, 32, 32}, TU_CONSTANT, 0, 0,
     0},
    /* chunks of the sizes HDF5 users pick (1-2 MiB) */
    {"field 64^3 f32", H5ZGPU_FLOAT32, 3, {64, 64, 64}, TU_FIELD, 0, 0.1, 0.3},
    {"land 512x512 f32, fill declared", H5ZGPU_FLOAT32, 2, {512, 512}, TU_LAND, 1, 0.1, 0.1},
    /* the fixed-length codec's eight tries end 0.14 above the target 5 here */
    {"nan-masked 64x64x80 f64", H5ZGPU_FLOAT64, 3, {64, 64, 80}, TU_NAN_MASKED, 0, 0.15, 0.8},
    {"noise 262144 f32", H5ZGPU_FLOAT32, 1, {262144}, TU_NOISE, 0, 0.1, 0.1},
};

static const double TARGETS[] = {5, 10, 20};

static void one(const ratio_case *c, h5zgpu_codec codec, double target, const void *in,
                size_t raw)
{
    h5zgpu_params p = {.codec = codec, .mode = H5ZGPU_MODE_RATIO, .eb = target,
                       .dtype = c->dtype, .rank = c->rank, .has_fill = c->has_fill,
                       .fill = c->dtype == H5ZGPU_FLOAT32 ? (double)(float)-1e34 : -1e34};
    memcpy(p.dims, c->dims, sizeof c->dims);
    const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    size_t cap = h5zgpu_compress_bound(&p), len = 0, len2 = 0, got = 0;
    uint8_t *chunk = malloc(cap), *again = malloc(cap);
    void *back = malloc(raw);
    h5zgpu_status st = h5zgpu_compress(&p, in, chunk, cap, &len, &cpu);
    tu_expect(st == H5ZGPU_OK, "%s, codec %d, target %g: %s", c->name, (int)codec, target,
              h5zgpu_last_error());
    h5zgpu_info info;
    if (st != H5ZGPU_OK || h5zgpu_chunk_info(chunk, len, &info) != H5ZGPU_OK)
        goto done;
    double ratio = (double)raw / (double)len;
    printf("%-40s codec %d target %4g: ratio %7.2f, %s eb %g\n", c->name, (int)codec, target,
           ratio, info.mode == H5ZGPU_MODE_ABS ? "ABS" : "REL", info.eb);
    tu_expect(info.mode == H5ZGPU_MODE_ABS || info.mode == H5ZGPU_MODE_REL,
              "%s: the header records mode %d, not the bound applied", c->name, (int)info.mode);
    const double tol = codec == H5ZGPU_CODEC_FIXED ? c->tol_fixed : c->tol_huffman;
    tu_expect(tol ? fabs(ratio / target - 1) <= tol : ratio >= target,
              "%s, codec %d, target %g: ratio %.3f", c->name, (int)codec, target, ratio);
    st = h5zgpu_decompress(chunk, len, back, raw, &got, NULL);
    tu_expect(st == H5ZGPU_OK && got == raw, "%s: decompress: %s", c->name, h5zgpu_last_error());
    char why[256];
    size_t misses = st == H5ZGPU_OK ? tu_check_bound(c->dtype, info.mode, info.eb, in, back,
                                                     raw / tu_esize(c->dtype), why, sizeof why)
                                    : 0;
    tu_expect(misses == 0, "%s, target %g: %zu values miss the recorded bound; first: %s",
              c->name, target, misses, why);
    st = h5zgpu_compress(&p, in, again, cap, &len2, &cpu);
    tu_expect(st == H5ZGPU_OK && len2 == len && memcmp(chunk, again, len) == 0,
              "%s: a second write differs", c->name);
done:
    free(chunk);
    free(again);
    free(back);
}

static void refusals(void)
{
    static const double bad[] = {1.0, 0.5, -10, 2e6, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        h5zgpu_params p = {.mode = H5ZGPU_MODE_RATIO, .eb = bad[i], .dtype = H5ZGPU_FLOAT32,
                           .rank = 1, .dims = {100}};
        tu_expect(h5zgpu_params_check(&p) == H5ZGPU_E_INVALID_ARG, "target %g accepted", bad[i]);
    }
    h5zgpu_params p = {.mode = (h5zgpu_mode)4, .eb = 10, .dtype = H5ZGPU_FLOAT32, .rank = 1,
                       .dims = {100}};
    tu_expect(h5zgpu_params_check(&p) == H5ZGPU_E_INVALID_ARG, "mode 4 accepted");
}

int main(void)
{
    static const h5zgpu_codec codecs[] = {H5ZGPU_CODEC_FIXED, H5ZGPU_CODEC_HUFFMAN,
                                          H5ZGPU_CODEC_AUTO};
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const ratio_case *c = &CASES[k];
        h5zgpu_params shape = {.dtype = c->dtype, .rank = c->rank};
        memcpy(shape.dims, c->dims, sizeof c->dims);
        size_t raw = (size_t)tu_count(&shape) * tu_esize(c->dtype);
        void *in = malloc(raw);
        tu_fill_shape(&shape, c->pattern, 500 + k, in);
        for (size_t i = 0; i < 3; i++)
            for (size_t t = 0; t < sizeof TARGETS / sizeof TARGETS[0]; t++)
                one(c, codecs[i], TARGETS[t], in, raw);
        free(in);
    }
    refusals();
    return tu_done("ratio");
}
