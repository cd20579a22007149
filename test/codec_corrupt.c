/* What the API refuses: invalid parameters, damaged, truncated and future chunks. Each must give
 * an error status, never a crash and never OK with wrong values. */
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const h5zgpu_params good = {.codec = H5ZGPU_CODEC_FIXED, .mode = H5ZGPU_MODE_ABS,
                                   .eb = 1e-3, .dtype = H5ZGPU_FLOAT32, .rank = 2,
                                   .dims = {10, 12}};

/* One parameter changed from `good`, and the status it must give. */
static const struct {
    const char *what;
    int field; /* which field `value` replaces */
    double value;
    h5zgpu_status want;
} bad_params[] = {
    {"codec 3", 0, 3, H5ZGPU_E_INVALID_ARG},
    {"codec 2 (Huffman, not built)", 0, 2, H5ZGPU_E_UNSUPPORTED},
    {"mode 3", 1, 3, H5ZGPU_E_INVALID_ARG},
    {"eb -1e-3", 2, -1e-3, H5ZGPU_E_INVALID_ARG},
    {"eb NaN", 2, NAN, H5ZGPU_E_INVALID_ARG},
    {"eb +Inf", 2, INFINITY, H5ZGPU_E_INVALID_ARG},
    {"eb -Inf", 2, -INFINITY, H5ZGPU_E_INVALID_ARG},
    {"PWREL eb 1", 5, 1, H5ZGPU_E_INVALID_ARG},
    {"dtype 3", 3, 3, H5ZGPU_E_UNSUPPORTED},
    {"rank 0", 4, 0, H5ZGPU_E_INVALID_ARG},
    {"rank 33", 4, 33, H5ZGPU_E_INVALID_ARG},
    {"dimension 0", 6, 0, H5ZGPU_E_INVALID_ARG},
    {"dimension 2^32", 6, 4294967296.0, H5ZGPU_E_INVALID_ARG},
};

static h5zgpu_params with(int field, double v)
{
    h5zgpu_params p = good;
    switch (field) {
    case 0: p.codec = (h5zgpu_codec)v; break;
    case 1: p.mode = (h5zgpu_mode)v; break;
    case 2: p.eb = v; break;
    case 3: p.dtype = (h5zgpu_dtype)v; break;
    case 4: p.rank = (unsigned)v; break;
    case 5: p.mode = H5ZGPU_MODE_PWREL, p.eb = v; break;
    case 6: p.dims[1] = (uint64_t)v; break;
    }
    return p;
}

static void invalid_params(void)
{
    float in[120] = {0}, out[200];
    size_t len;
    for (size_t i = 0; i < sizeof bad_params / sizeof bad_params[0]; i++) {
        h5zgpu_params p = with(bad_params[i].field, bad_params[i].value);
        h5zgpu_status c = h5zgpu_params_check(&p);
        h5zgpu_status z = h5zgpu_compress(&p, in, out, sizeof out, &len, NULL);
        tu_expect(c == bad_params[i].want && z == bad_params[i].want &&
                      h5zgpu_compress_bound(&p) == 0 && strlen(h5zgpu_last_error()) > 0,
                  "%s: check -> %s, compress -> %s, want %s", bad_params[i].what,
                  h5zgpu_status_string(c), h5zgpu_status_string(z),
                  h5zgpu_status_string(bad_params[i].want));
    }
    tu_expect(h5zgpu_compress(&good, in, out, h5zgpu_compress_bound(&good) - 1, &len, NULL) ==
                  H5ZGPU_E_OUTPUT_TOO_SMALL,
              "an output buffer below compress_bound was accepted");
    tu_expect(h5zgpu_compress(&good, NULL, out, sizeof out, &len, NULL) == H5ZGPU_E_INVALID_ARG,
              "a NULL input was accepted");
}

typedef struct sample {
    const char *name;
    tu_pattern pattern;
    uint8_t *chunk;
    size_t len;
} sample;

static void make_sample(sample *s)
{
    float in[120], back[120];
    size_t cap = h5zgpu_compress_bound(&good), n;
    s->chunk = malloc(cap);
    tu_fill(H5ZGPU_FLOAT32, 120, s->pattern, 5, in);
    h5zgpu_status st = h5zgpu_compress(&good, in, s->chunk, cap, &s->len, NULL);
    st = st == H5ZGPU_OK ? h5zgpu_decompress(s->chunk, s->len, back, sizeof back, &n, NULL)
                         : st;
    tu_expect(st == H5ZGPU_OK, "%s: sample chunk does not round-trip (%s)", s->name,
              h5zgpu_last_error());
}

/* Decodes a damaged copy: an error is required when `must_fail`; otherwise (a payload changed
 * behind a repaired checksum can be a valid chunk) only memory safety and the length count. */
static void decode_damaged(const sample *s, const uint8_t *buf, size_t len, int must_fail,
                           const char *what, size_t at)
{
    float out[120];
    size_t n = 0;
    h5zgpu_status st = h5zgpu_decompress(buf, len, out, sizeof out, &n, NULL);
    /* a damaged shape can also claim more than the output holds: any error status will do */
    if (must_fail)
        tu_expect(st != H5ZGPU_OK, "%s: %s at %zu was decoded as a valid chunk", s->name, what,
                  at);
    else
        tu_expect(st != H5ZGPU_OK || n == sizeof out, "%s: %s at %zu returned OK with %zu bytes",
                  s->name, what, at, n);
}

static void damage(sample *s)
{
    uint8_t *buf = malloc(s->len + 1);
    static const uint8_t flips[] = {0x01, 0x80, 0xFF};
    for (size_t at = 0; at < s->len; at++)
        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(buf, s->chunk, s->len);
            buf[at] ^= flips[f];
            /* the checksum covers every byte, so each flip must be caught */
            decode_damaged(s, buf, s->len, 1, "byte flip", at);
            /* with the checksum repaired the decoder's own checks must hold: magic and reserved
             * bytes are refused; elsewhere no crash, no read or write outside the buffers (run
             * under valgrind or ASan to see them) */
            tu_fix_checksum(buf, s->len);
            decode_damaged(s, buf, s->len, at < 4 || (at >= 9 && at < 12),
                           "byte flip, checksum repaired", at);
        }
    for (size_t len = 0; len < s->len; len++)
        decode_damaged(s, s->chunk, len, 1, "truncation", len);
    memcpy(buf, s->chunk, s->len);
    buf[s->len] = 0;
    decode_damaged(s, buf, s->len + 1, 1, "one extra byte", s->len);
    free(buf);
}

/* A chunk claiming the next format version must be refused as such, not as damage. */
static void newer_version(const sample *s)
{
    uint8_t *buf = malloc(s->len);
    float out[120];
    size_t n;
    memcpy(buf, s->chunk, s->len);
    buf[4] = H5ZGPU_FORMAT_VERSION + 1;
    tu_fix_checksum(buf, s->len);
    h5zgpu_info info;
    tu_expect(h5zgpu_chunk_info(buf, s->len, &info) == H5ZGPU_E_VERSION &&
                  h5zgpu_decompress(buf, s->len, out, sizeof out, &n, NULL) == H5ZGPU_E_VERSION,
              "%s: a version %u chunk was not refused with H5ZGPU_E_VERSION", s->name,
              H5ZGPU_FORMAT_VERSION + 1);
    free(buf);
}

/* The test's own checksum (FORMAT.md's definition) must agree with the codec's. */
static void checksum_matches_format(const sample *s)
{
    uint8_t *buf = malloc(s->len);
    memcpy(buf, s->chunk, s->len);
    tu_fix_checksum(buf, s->len);
    tu_expect(memcmp(buf, s->chunk, s->len) == 0,
              "%s: checksum differs from docs/FORMAT.md's definition", s->name);
    free(buf);
}

int main(void)
{
    invalid_params();
    sample samples[] = {{.name = "fixed-length chunk", .pattern = TU_SMOOTH},
                        {.name = "raw chunk", .pattern = TU_BITS}};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        make_sample(&samples[i]);
        h5zgpu_info info;
        tu_expect(h5zgpu_chunk_info(samples[i].chunk, samples[i].len, &info) == H5ZGPU_OK &&
                      info.codec == (samples[i].pattern == TU_BITS ? 0u : 1u),
                  "%s: not written with the expected codec", samples[i].name);
        checksum_matches_format(&samples[i]);
        damage(&samples[i]);
        newer_version(&samples[i]);
        free(samples[i].chunk);
    }
    return tu_done("codec_corrupt");
}
