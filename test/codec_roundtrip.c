/* Round trips through the public API: every shape x type x (mode, bound) x pattern, every value
 * checked against its bound in double precision, non-finite values bit for bit. The executor is
 * whatever H5ZGPU_DEVICE says, so the same table runs on the CPU here and on the GPU on the device. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    unsigned rank;
    uint64_t dims[4];
} shapes[] = {
    {1, {1}},          {1, {63}},        {1, {64}},          {1, {65}},
    {1, {4097}},       {2, {7, 9}},      {2, {8, 8}},        {2, {17, 33}},
    {2, {100, 70}},    {3, {3, 5, 7}},   {3, {4, 4, 4}},     {3, {9, 17, 13}},
    {3, {33, 20, 10}}, {4, {2, 3, 5, 7}}, {4, {3, 1, 9, 17}}, {4, {1, 1, 1, 1}},
};

static const struct {
    h5zgpu_mode mode;
    double eb;
} bounds[] = {
    {H5ZGPU_MODE_ABS, 0},     {H5ZGPU_MODE_ABS, 1e-6},  {H5ZGPU_MODE_ABS, 1e-3},
    {H5ZGPU_MODE_ABS, 0.5},   {H5ZGPU_MODE_REL, 0},     {H5ZGPU_MODE_REL, 1e-4},
    {H5ZGPU_MODE_REL, 1e-2},  {H5ZGPU_MODE_PWREL, 0},   {H5ZGPU_MODE_PWREL, 1e-5},
    {H5ZGPU_MODE_PWREL, 1e-2}, {H5ZGPU_MODE_PWREL, 0.5},
};

static const tu_pattern patterns[] = {TU_SMOOTH, TU_NOISE, TU_SPECIAL, TU_HUGE, TU_CONSTANT};
static const char *const pattern_names[] = {"smooth", "noise", "special", "huge", "bits",
                                            "constant"};
static const h5zgpu_dtype dtypes[] = {H5ZGPU_FLOAT32, H5ZGPU_FLOAT64};

static const char *mode_name(h5zgpu_mode m)
{
    return m == H5ZGPU_MODE_ABS ? "ABS" : m == H5ZGPU_MODE_REL ? "REL" : "PWREL";
}

/* Compresses and decompresses one input; checks status, lengths, header and every value. */
static void round_trip(const h5zgpu_params *p, tu_pattern pat, const char *label)
{
    size_t n = (size_t)tu_count(p), raw = n * tu_esize(p->dtype);
    size_t cap = h5zgpu_compress_bound(p), len = 0;
    void *in = malloc(raw);
    uint8_t *chunk = malloc(cap);
    h5zgpu_info info;
    tu_fill(p->dtype, n, pat, n, in);
    h5zgpu_status st = h5zgpu_compress(p, in, chunk, cap, &len, NULL);
    tu_expect(st == H5ZGPU_OK && len <= cap, "%s: compress -> %s (%s)", label,
              h5zgpu_status_string(st), h5zgpu_last_error());
    if (st != H5ZGPU_OK)
        goto done;
    st = h5zgpu_chunk_info(chunk, len, &info);
    tu_expect(st == H5ZGPU_OK && info.rank == p->rank && info.dtype == p->dtype &&
                  info.mode == p->mode && info.eb == p->eb && info.raw_len == raw &&
                  memcmp(info.dims, p->dims, p->rank * sizeof p->dims[0]) == 0 &&
                  info.header_len + info.payload_len == len,
              "%s: chunk header does not describe the chunk", label);
    tu_expect_decodes(p, in, chunk, len, label);
done:
    free(in);
    free(chunk);
}

/* Random bits cannot shrink: the chunk must be stored raw, the exact input behind a header. */
static void raw_fallback(h5zgpu_dtype t)
{
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_ABS, .eb = 0,
                       .dtype = t, .rank = 1, .dims = {1000}};
    size_t raw = 1000 * tu_esize(t), cap = h5zgpu_compress_bound(&p), len = 0;
    uint8_t *in = malloc(raw), *chunk = malloc(cap), *back = malloc(raw);
    h5zgpu_info info;
    tu_fill(t, 1000, TU_BITS, 7, in);
    h5zgpu_status st = h5zgpu_compress(&p, in, chunk, cap, &len, NULL);
    tu_expect(st == H5ZGPU_OK && h5zgpu_chunk_info(chunk, len, &info) == H5ZGPU_OK &&
                  info.codec == 0 && len == info.header_len + raw &&
                  memcmp(chunk + info.header_len, in, raw) == 0,
              "raw fallback (dtype %d): noise was not stored raw", (int)t);
    st = h5zgpu_decompress(chunk, len, back, raw, &len, NULL);
    tu_expect(st == H5ZGPU_OK && memcmp(in, back, raw) == 0,
              "raw fallback (dtype %d): raw chunk does not decode to its input", (int)t);
    free(in);
    free(chunk);
    free(back);
}

/* Fill elements among codes at the quantiser's limit (tu_fill_code_limit) must come back within
 * the bound, in 4^3 and 16^3 chunks of both types. */
static void fill_at_code_limit(void)
{
    uint64_t state = 0x9E3779B97F4A7C15u;
    char label[96];
    for (unsigned t = 0; t < 2; t++)
        for (unsigned side = 4; side <= 16; side *= 4)
            for (unsigned trial = 0; trial < (side == 4 ? 202u : 60u); trial++) {
                h5zgpu_params p;
                void *in = malloc((size_t)side * side * side * 8);
                tu_fill_code_limit(&p, dtypes[t], side, trial, &state, in);
                size_t cap = h5zgpu_compress_bound(&p), len = 0;
                uint8_t *chunk = malloc(cap);
                snprintf(label, sizeof label, "fill at the code limit: f%d %u^3 trial %u",
                         t ? 64 : 32, side, trial);
                h5zgpu_status st = h5zgpu_compress(&p, in, chunk, cap, &len, NULL);
                tu_expect(st == H5ZGPU_OK, "%s: compress -> %s", label, h5zgpu_status_string(st));
                if (st == H5ZGPU_OK)
                    tu_expect_decodes(&p, in, chunk, len, label);
                free(in);
                free(chunk);
            }
}

int main(void)
{
    char label[160];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
            for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++)
                for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
                    h5zgpu_params p = {.codec = H5ZGPU_CODEC_FIXED, .mode = bounds[b].mode,
                                       .eb = bounds[b].eb, .dtype = dtypes[t],
                                       .rank = shapes[s].rank};
                    memcpy(p.dims, shapes[s].dims, sizeof shapes[s].dims);
                    snprintf(label, sizeof label, "f%d rank %u [%llu..] %s %g %s",
                             dtypes[t] == H5ZGPU_FLOAT32 ? 32 : 64, p.rank,
                             (unsigned long long)p.dims[0], mode_name(p.mode), p.eb,
                             pattern_names[patterns[k]]);
                    round_trip(&p, patterns[k], label);
                }
    /* codec 0 (auto) picks among the codecs of this build; its chunks obey the same bound */
    h5zgpu_params autop = {.codec = H5ZGPU_CODEC_AUTO, .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
                           .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {9, 17, 13}};
    round_trip(&autop, TU_SMOOTH, "auto codec f32 3-D REL 1e-3");
    raw_fallback(H5ZGPU_FLOAT32);
    raw_fallback(H5ZGPU_FLOAT64);
    fill_at_code_limit();
    return tu_done("codec_roundtrip");
}
