#include "quality_pairs.h"

#include "util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct tq_case {
    const char *name;
    h5zgpu_dtype dtype;
    unsigned rank;
    uint64_t dims[4];
    tu_pattern pattern;
    h5zgpu_codec codec;   /* AUTO with eb 0: B is an exact copy */
    h5zgpu_mode mode;
    double eb;
    int has_missing;
} tq_case;

static const tq_case CASES[] = {
    {"field 37x45x53 f32 huffman", H5ZGPU_FLOAT32, 3, {37, 45, 53}, TU_FIELD,
     H5ZGPU_CODEC_HUFFMAN, H5ZGPU_MODE_REL, 1e-3, 0},
    {"field 70x66x80 f32 fixed", H5ZGPU_FLOAT32, 3, {70, 66, 80}, TU_FIELD, H5ZGPU_CODEC_FIXED,
     H5ZGPU_MODE_REL, 1e-2, 0},
    {"masked 40^3 f64 fixed, -1e34 missing", H5ZGPU_FLOAT64, 3, {40, 40, 40}, TU_MASKED,
     H5ZGPU_CODEC_FIXED, H5ZGPU_MODE_ABS, 1e-2, 1},
    {"masked 40^3 f32 huffman, -1e34 not declared", H5ZGPU_FLOAT32, 3, {40, 40, 40}, TU_MASKED,
     H5ZGPU_CODEC_HUFFMAN, H5ZGPU_MODE_REL, 1e-3, 0},
    {"nan-masked 300x517 f32", H5ZGPU_FLOAT32, 2, {300, 517}, TU_NAN_MASKED, H5ZGPU_CODEC_AUTO,
     H5ZGPU_MODE_REL, 1e-2, 0},
    {"spiky 100003 f64", H5ZGPU_FLOAT64, 1, {100003}, TU_SPIKY, H5ZGPU_CODEC_HUFFMAN,
     H5ZGPU_MODE_REL, 1e-4, 0},
    {"field 3x5x17x19 f32", H5ZGPU_FLOAT32, 4, {3, 5, 17, 19}, TU_FIELD, H5ZGPU_CODEC_FIXED,
     H5ZGPU_MODE_PWREL, 1e-2, 0},
    {"field 4x100x100 f32 (z shorter than the window)", H5ZGPU_FLOAT32, 3, {4, 100, 100},
     TU_FIELD, H5ZGPU_CODEC_HUFFMAN, H5ZGPU_MODE_ABS, 1e-3, 0},
    /* cubic, for the power spectrum; spiky, so that no shell's power is only rounding */
    {"spiky 48^3 f32 fixed", H5ZGPU_FLOAT32, 3, {48, 48, 48}, TU_SPIKY, H5ZGPU_CODEC_FIXED,
     H5ZGPU_MODE_REL, 1e-3, 0},
    {"field 20^3 f64 exact copy", H5ZGPU_FLOAT64, 3, {20, 20, 20}, TU_FIELD, H5ZGPU_CODEC_AUTO,
     H5ZGPU_MODE_ABS, 0, 0},
};

int tq_count(void)
{
    return (int)(sizeof CASES / sizeof CASES[0]);
}

int tq_make(int k, tq_pair *p)
{
    const tq_case *c = &CASES[k];
    h5zgpu_params prm = {.codec = c->codec, .mode = c->mode, .eb = c->eb, .dtype = c->dtype,
                         .rank = c->rank, .has_fill = c->has_missing, .fill = -1e34};
    memcpy(prm.dims, c->dims, sizeof c->dims);
    size_t raw = (size_t)tu_count(&prm) * tu_esize(c->dtype), len = 0;
    *p = (tq_pair){c->name, c->dtype, c->rank, {0}, c->has_missing, malloc(raw), malloc(raw)};
    memcpy(p->dims, c->dims, sizeof c->dims);
    tu_fill_shape(&prm, c->pattern, 1000 + (uint64_t)k, p->a);
    if (c->eb == 0) {
        memcpy(p->b, p->a, raw);
        return 0;
    }
    size_t cap = h5zgpu_compress_bound(&prm);
    void *chunk = malloc(cap);
    const h5zgpu_exec cpu = {H5ZGPU_EXEC_CPU, 0};
    int ok = h5zgpu_compress(&prm, p->a, chunk, cap, &len, &cpu) == H5ZGPU_OK &&
             h5zgpu_decompress(chunk, len, p->b, raw, &len, &cpu) == H5ZGPU_OK;
    free(chunk);
    return ok ? 0 : -1;
}

void tq_free(tq_pair *p)
{
    free(p->a);
    free(p->b);
}

#define METRIC(f) {#f, offsetof(h5zgpu_quality, f)}
static const struct {
    const char *name;
    size_t at;
} METRICS[] = {METRIC(min), METRIC(max), METRIC(range), METRIC(max_abs_error),
               METRIC(max_rel_error), METRIC(rmse), METRIC(nrmse), METRIC(psnr),
               METRIC(mean_error), METRIC(min_error), METRIC(max_error), METRIC(min_pw_rel),
               METRIC(max_pw_rel), METRIC(mean_pw_rel), METRIC(snr), METRIC(pearson),
               METRIC(derivative_psnr), METRIC(second_derivative_psnr), METRIC(laplacian_psnr),
               METRIC(ssim), METRIC(pk_max_deviation)};

size_t tq_metrics(void)
{
    return sizeof METRICS / sizeof METRICS[0];
}

double tq_metric(const h5zgpu_quality *q, size_t k)
{
    double v;
    memcpy(&v, (const char *)q + METRICS[k].at, sizeof v);
    return v;
}

const char *tq_metric_name(size_t k)
{
    return METRICS[k].name;
}
