/* What the API refuses: invalid parameters, damaged, truncated and future chunks. Each must give
 * an error status, never a crash and never OK with wrong values. The Huffman payload (codec 2)
 * is also taken apart field by field, behind a repaired checksum, and built by hand from
 * docs/FORMAT.md to reach the checks a mutation cannot: each must give H5ZGPU_E_CORRUPT. */
#include "codec_corrupt.h"
#include "huff_ans_books.h"   /* the built-in ANS tables of format version 6 */

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
    {"Huffman radius 1", 7, 1, H5ZGPU_E_INVALID_ARG},
    {"Huffman radius 1025", 7, 1025, H5ZGPU_E_INVALID_ARG},
    {"float32 fill value 1e300", 8, 1e300, H5ZGPU_E_INVALID_ARG},
    {"float32 fill value -1e34 (not a float32 value)", 8, -1e34, H5ZGPU_E_INVALID_ARG},
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
    case 7: p.codec = H5ZGPU_CODEC_HUFFMAN, p.radius = (unsigned)v; break;
    case 8: p.has_fill = 1, p.fill = v; break;
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
    /* executors: a kind or device out of range is refused by every entry point */
    const h5zgpu_exec bad_exec[] = {{(h5zgpu_exec_kind)5, 0}, {H5ZGPU_EXEC_CPU, -1}};
    for (size_t i = 0; i < sizeof bad_exec / sizeof bad_exec[0]; i++) {
        h5zgpu_status c = h5zgpu_exec_check(&bad_exec[i]);
        h5zgpu_status z = h5zgpu_compress(&good, in, out, sizeof out, &len, &bad_exec[i]);
        tu_expect(c == H5ZGPU_E_INVALID_ARG && z == H5ZGPU_E_INVALID_ARG,
                  "executor kind %u, device %d: check -> %s, compress -> %s",
                  (unsigned)bad_exec[i].kind, bad_exec[i].device, h5zgpu_status_string(c),
                  h5zgpu_status_string(z));
    }
    /* the GPU asked for through the API is named as such when it is missing */
    h5zgpu_exec gpu = {H5ZGPU_EXEC_GPU, 1000};
    tu_expect(h5zgpu_exec_check(&gpu) == H5ZGPU_E_DEVICE &&
                  strstr(h5zgpu_last_error(), "h5zgpu_exec kind GPU") != NULL,
              "a missing GPU asked for through h5zgpu_exec: %s", h5zgpu_last_error());
}

/* A valid chunk, made from a pattern with a few NaN/Inf placed by hand (verbatim values). */
typedef struct sample {
    const char *name;
    h5zgpu_params p;
    tu_pattern pattern;
    unsigned codec;    /* the codec the chunk must be written with */
    unsigned specials; /* NaN and +-Inf every n/specials elements (0: none) */
    uint8_t *chunk;
    size_t len, raw;
} sample;


static void make_sample(sample *s)
{
    size_t n = (size_t)tu_count(&s->p), cap = h5zgpu_compress_bound(&s->p), got;
    s->raw = n * tu_esize(s->p.dtype);
    uint8_t *in = malloc(s->raw), *back = malloc(s->raw);
    s->chunk = malloc(cap);
    tu_fill_shape(&s->p, s->pattern, 5, in);
    for (unsigned k = 0; k < s->specials; k++) {
        size_t i = n / s->specials * k + 1;
        if (s->p.dtype == H5ZGPU_FLOAT32)
            memcpy(in + 4 * i, &nan_inf32[k % 3], 4);
        else
            memcpy(in + 8 * i, &nan_inf64[k % 3], 8);
    }
    h5zgpu_info info;
    h5zgpu_status st = h5zgpu_compress(&s->p, in, s->chunk, cap, &s->len, NULL);
    st = st == H5ZGPU_OK ? h5zgpu_decompress(s->chunk, s->len, back, s->raw, &got, NULL) : st;
    tu_expect(st == H5ZGPU_OK, "%s: sample chunk does not round-trip (%s)", s->name,
              h5zgpu_last_error());
    tu_expect(h5zgpu_chunk_info(s->chunk, s->len, &info) == H5ZGPU_OK && info.codec == s->codec,
              "%s: not written with codec %u", s->name, s->codec);
    free(in);
    free(back);
}

/* Decodes a damaged copy: an error is required when `must_fail`; otherwise (a payload changed
 * behind a repaired checksum can be a valid chunk) only memory safety and the length count. */
static void decode_damaged(const sample *s, const uint8_t *buf, size_t len, int must_fail,
                           const char *what, size_t at)
{
    void *out = malloc(s->raw);
    size_t n = 0;
    h5zgpu_status st = h5zgpu_decompress(buf, len, out, s->raw, &n, NULL);
    /* a damaged shape can also claim more than the output holds: any error status will do */
    if (must_fail)
        tu_expect(st != H5ZGPU_OK, "%s: %s at %zu was decoded as a valid chunk", s->name, what,
                  at);
    else
        tu_expect(st != H5ZGPU_OK || n == s->raw, "%s: %s at %zu returned OK with %zu bytes",
                  s->name, what, at, n);
    free(out);
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
    void *out = malloc(s->raw);
    size_t n;
    memcpy(buf, s->chunk, s->len);
    buf[4] = H5ZGPU_FORMAT_VERSION + 1;
    tu_fix_checksum(buf, s->len);
    h5zgpu_info info;
    tu_expect(h5zgpu_chunk_info(buf, s->len, &info) == H5ZGPU_E_VERSION &&
                  h5zgpu_decompress(buf, s->len, out, s->raw, &n, NULL) == H5ZGPU_E_VERSION,
              "%s: a version %u chunk was not refused with H5ZGPU_E_VERSION", s->name,
              H5ZGPU_FORMAT_VERSION + 1);
    free(buf);
    free(out);
}

/* Interpolation (predictor 0) exists from format version 2 on: the same payload behind a
 * version 1 header is damage. */
static void interpolation_needs_version_2(const sample *s)
{
    h5zgpu_info info;
    tu_expect(h5zgpu_chunk_info(s->chunk, s->len, &info) == H5ZGPU_OK &&
                  info.format_version == H5ZGPU_FORMAT_VERSION &&
                  s->chunk[info.header_len + 9] == 0,
              "%s: not a version %d chunk with interpolation", s->name, H5ZGPU_FORMAT_VERSION);
    uint8_t *buf = malloc(s->len);
    void *out = malloc(s->raw);
    size_t n;
    memcpy(buf, s->chunk, s->len);
    buf[4] = 1;
    tu_fix_checksum(buf, s->len);
    h5zgpu_status st = h5zgpu_decompress(buf, s->len, out, s->raw, &n, NULL);
    tu_expect(st == H5ZGPU_E_CORRUPT, "%s: interpolation behind a version 1 header -> %s",
              s->name, h5zgpu_status_string(st));
    free(buf);
    free(out);
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

/* ---- the Huffman payload, field by field (docs/FORMAT.md, "Huffman payload") ---- */

/* Where the sections of a Huffman payload lie, from its fields. */
typedef struct hlayout {
    size_t hlen, plen, n, nsub, es, off_sub, off_stream, stream_bytes, off_out_pos,
        off_out_delta, off_verb_pos, off_verb_val;
    unsigned form, radius, m0, m1, m; /* m: the lengths stored, m0 + m1 */
    uint32_t n_out, n_verb;
} hlayout;

static hlayout locate(const uint8_t *chunk, size_t len)
{
    h5zgpu_info info;
    hlayout L = {0};
    if (h5zgpu_chunk_info(chunk, len, &info) != H5ZGPU_OK)
        return L;
    const uint8_t *pay = chunk + info.header_len;
    L.hlen = (size_t)info.header_len;
    L.plen = (size_t)info.payload_len;
    L.es = tu_esize(info.dtype);
    L.n = (size_t)(info.raw_len / L.es);
    L.nsub = (L.n + HP_SUB - 1) / HP_SUB;
    L.form = pay[HP_OFF_FORM];
    L.radius = get_le(pay + HP_OFF_RADIUS, 2);
    L.n_out = get_le(pay + HP_OFF_N_OUT, 4);
    L.n_verb = get_le(pay + HP_OFF_N_VERB, 4);
    L.m0 = get_le(pay + HP_OFF_CODEBOOK, 2);
    L.m1 = get_le(pay + HP_OFF_CODEBOOK + 2, 2);
    L.m = L.m0 + L.m1;
    L.off_sub = HP_OFF_CODEBOOK + pad4(4 + (L.m + 1) / 2);
    L.off_stream = L.off_sub + pad4(2 * L.nsub);
    L.off_verb_val = L.plen - L.es * L.n_verb;
    L.off_verb_pos = L.off_verb_val - 4 * (size_t)L.n_verb;
    L.off_out_delta = L.off_verb_pos - 4 * (size_t)L.n_out;
    L.off_out_pos = L.off_out_delta - 4 * (size_t)L.n_out;
    L.stream_bytes = L.off_out_pos - L.off_stream;
    return L;
}

/* Decodes a chunk whose payload is now plen bytes, after rewriting the header's payload length
 * and the checksum; returns the status. The chunk is copied to a buffer of exactly its length,
 * so that valgrind and ASan see any read past it. */
static h5zgpu_status decode_edited(uint8_t *buf, size_t hlen, size_t plen, size_t raw)
{
    void *out = malloc(raw);
    uint8_t *exact = malloc(hlen + plen);
    size_t n;
    put_le(buf + HZ_OFF_PAYLOAD_LEN, plen, 8);
    tu_fix_checksum(buf, hlen + plen);
    memcpy(exact, buf, hlen + plen);
    h5zgpu_status st = h5zgpu_decompress(exact, hlen + plen, out, raw, &n, NULL);
    free(out);
    free(exact);
    return st;
}

/* Edits of an encoder-made Huffman payload. Each breaks one rule of FORMAT.md's list. */
typedef enum edit_kind {
    E_TRUNCATE,    /* keep the payload up to an anchor (arg: 0 nothing, 1 the fixed part but
                    * one byte, 2 the codebook but one byte, 3 the sub-chunk table but one byte,
                    * 4 the stream, 5 all but the last byte, 6 the fixed part and m0 only, 7 the
                    * fixed part, m0 and one byte of m1) */
    E_EXTRA_BYTE,  /* one zero byte appended */
    E_SET8,        /* byte at offset `at` := arg */
    E_SET16,       /* u16 at `at` := arg (arg 0x10000: 2R; 0x10001: 2R + 256) */
    E_SET32,       /* u32 at `at` := arg (arg -1: n + 1; arg -2: itself + 1) */
    E_SET64,       /* u64 at `at` := arg */
    E_CODEBOOK_M,  /* m0 := arg (0x10000: 2R + 1) */
    E_CODEBOOK_M1, /* m1 := arg (0x10000: the run or pair tokens' 256 + 1) */
    E_KRAFT,       /* every used token given length 1: the code space over-fills */
    E_CB_PAD,      /* a codebook padding bit set (the odd token's nibble or a pad byte) */
    E_SUB_BITS,    /* sub-chunk 0's bit length + arg (int) */
    E_SUB_SWAP,    /* sub-chunks 0 and 1 exchange their bit lengths */
    E_SUB_PAD,     /* the sub-chunk table's padding */
    E_STREAM_PAD,  /* a bit after the stream's last bit */
    E_OUT_ORDER,   /* outlier 1 at outlier 0's position */
    E_OUT_PAST,    /* outlier 0 at position n */
    E_OUT_NOT_ESC, /* an outlier moved to the position before it, which is no outlier's */
    E_OUT_DELTA,   /* outlier 0's delta := arg */
    E_OUT_DROP,    /* the last outlier removed: an escape token without one */
    E_VERB_ORDER,  /* verbatim value 1 at value 0's position */
    E_VERB_PAST,   /* verbatim value 0 at position n */
    E_FORM2_R8     /* form 2 (pairs) and radius 8 */
} edit_kind;

static const struct {
    const char *what;
    size_t sample; /* index into huff_samples */
    edit_kind kind;
    size_t at;
    int64_t arg;
} edits[] = {
    {"payload empty", 0, E_TRUNCATE, 0, 0},
    {"fixed part cut short", 0, E_TRUNCATE, 0, 1},
    {"codebook sizes cut after m0", 0, E_TRUNCATE, 0, 6},
    {"codebook sizes cut inside m1", 1, E_TRUNCATE, 0, 7},
    {"codebook cut short", 0, E_TRUNCATE, 0, 2},
    {"sub-chunk table cut short", 0, E_TRUNCATE, 0, 3},
    {"outliers and verbatim values missing", 0, E_TRUNCATE, 0, 4},
    {"last verbatim byte missing", 0, E_TRUNCATE, 0, 5},
    {"form 1 payload cut short", 1, E_TRUNCATE, 0, 5},
    {"one byte too many", 0, E_EXTRA_BYTE, 0, 0},
    {"base NaN", 0, E_SET64, 0, 0x7FF8000000000000},
    {"base +Inf", 1, E_SET64, 0, 0x7FF0000000000000},
    {"form 4", 0, E_SET8, HP_OFF_FORM, 4},
    {"form 255", 1, E_SET8, HP_OFF_FORM, 255},
    {"form 2 (pairs) with radius 8", 0, E_FORM2_R8, 0, 0},
    {"order 3 in a 2-D chunk", 0, E_SET8, HP_OFF_ORDER, 3},
    {"order 4 in a 3-D chunk", 1, E_SET8, HP_OFF_ORDER, 4},
    {"radius 0", 0, E_SET16, HP_OFF_RADIUS, 0},
    {"radius 1", 1, E_SET16, HP_OFF_RADIUS, 1},
    {"radius 1025", 0, E_SET16, HP_OFF_RADIUS, 1025},
    {"run token in form 0", 0, E_SET16, HP_OFF_RUN_TOKEN, 2},
    {"run token 2R in form 1", 1, E_SET16, HP_OFF_RUN_TOKEN, 0x10000},
    {"axis order on a 2-D chunk", 0, E_SET8, HP_OFF_RESERVED, 1},
    {"reserved byte", 1, E_SET8, HP_OFF_RESERVED + 1, 1},
    {"more outliers than elements", 0, E_SET32, HP_OFF_N_OUT, -1},
    {"more verbatim values than elements", 0, E_SET32, HP_OFF_N_VERB, -1},
    {"one outlier more", 1, E_SET32, HP_OFF_N_OUT, -2},
    {"one verbatim value more", 0, E_SET32, HP_OFF_N_VERB, -2},
    {"outlier count 2^32-1", 1, E_SET32, HP_OFF_N_OUT, 0xFFFFFFFF},
    {"codebook of no token", 0, E_CODEBOOK_M, 0, 0},
    {"codebook past the delta tokens", 0, E_CODEBOOK_M, 0, 0x10000},
    {"codebook past the delta tokens, form 1", 1, E_CODEBOOK_M, 0, 0x10000},
    {"codebook of run tokens in form 0", 0, E_CODEBOOK_M1, 0, 1},
    {"codebook past the run tokens", 1, E_CODEBOOK_M1, 0, 0x10000},
    {"codebook of 65535 tokens", 0, E_CODEBOOK_M, 0, 0xFFFF},
    {"codebook of 65535 run tokens", 1, E_CODEBOOK_M1, 0, 0xFFFF},
    {"code space over-filled (Kraft)", 0, E_KRAFT, 0, 0},
    {"code space over-filled, form 1", 1, E_KRAFT, 0, 0},
    {"codebook padding, form 1", 1, E_CB_PAD, 0, 0},
    {"sub-chunk 0 one bit longer", 0, E_SUB_BITS, 0, 1},
    {"sub-chunk 0 one bit shorter", 0, E_SUB_BITS, 0, -1},
    {"sub-chunk 0 eight bits longer", 1, E_SUB_BITS, 0, 8},
    {"sub-chunk bit lengths exchanged", 0, E_SUB_SWAP, 0, 0},
    {"sub-chunk table padding", 0, E_SUB_PAD, 0, 0},
    {"stream padding", 0, E_STREAM_PAD, 0, 0},
    {"stream padding, form 1", 1, E_STREAM_PAD, 0, 0},
    {"outlier positions not increasing", 0, E_OUT_ORDER, 0, 0},
    {"outlier past the chunk", 1, E_OUT_PAST, 0, 0},
    {"outlier at a token that is no escape", 0, E_OUT_NOT_ESC, 0, 0},
    {"outlier at a token that is no escape, form 1", 1, E_OUT_NOT_ESC, 0, 0},
    {"outlier delta INT32_MIN", 0, E_OUT_DELTA, 0, INT32_MIN},
    {"outlier delta INT32_MIN + 1", 1, E_OUT_DELTA, 0, INT32_MIN + 1},
    {"escape token without its outlier", 0, E_OUT_DROP, 0, 0},
    {"escape token without its outlier, form 1", 1, E_OUT_DROP, 0, 0},
    {"verbatim positions not increasing", 0, E_VERB_ORDER, 0, 0},
    {"verbatim position past the chunk", 0, E_VERB_PAST, 0, 0},
    {"verbatim position past the chunk, form 1", 1, E_VERB_PAST, 0, 0},
};

/* Applies an edit to buf (a copy of the chunk with room for one more byte); returns the new
 * payload length, or -1 when the sample lacks what the edit needs. */
static int64_t apply_edit(size_t e, const hlayout *L, uint8_t *buf)
{
    uint8_t *pay = buf + L->hlen;
    size_t cb_end = HP_OFF_LENGTHS + (L->m + 1) / 2, plen = L->plen;
    int64_t arg = edits[e].arg;
    switch (edits[e].kind) {
    case E_TRUNCATE: {
        const size_t keep[] = {0, HP_OFF_CODEBOOK - 1, L->off_sub - 1, L->off_stream - 1,
                               L->off_out_pos, L->plen - 1, HP_OFF_CODEBOOK + 2,
                               HP_OFF_CODEBOOK + 3};
        return (int64_t)keep[arg];
    }
    case E_EXTRA_BYTE: pay[plen] = 0; return plen + 1;
    case E_SET8: pay[edits[e].at] = (uint8_t)arg; return plen;
    case E_SET16:
        put_le(pay + edits[e].at, arg == 0x10000 ? 2 * L->radius : (uint64_t)arg, 2);
        return plen;
    case E_SET32: {
        uint64_t old = get_le(pay + edits[e].at, 4);
        put_le(pay + edits[e].at, arg == -1 ? L->n + 1 : arg == -2 ? old + 1 : (uint64_t)arg, 4);
        return plen;
    }
    case E_SET64: put_le(pay + edits[e].at, (uint64_t)arg, 8); return plen;
    case E_FORM2_R8:
        pay[HP_OFF_FORM] = 2;
        put_le(pay + HP_OFF_RADIUS, 8, 2);
        return plen;
    case E_CODEBOOK_M:
        if (arg == 0) /* and no run tokens either */
            put_le(pay + HP_OFF_CODEBOOK + 2, 0, 2);
        put_le(pay + HP_OFF_CODEBOOK, arg == 0x10000 ? 2 * L->radius + 1 : (uint64_t)arg, 2);
        return plen;
    case E_CODEBOOK_M1:
        put_le(pay + HP_OFF_CODEBOOK + 2, arg == 0x10000 ? HP_RUN_MAX + 1 : (uint64_t)arg, 2);
        return plen;
    case E_KRAFT: {
        unsigned used = 0;
        for (unsigned k = 0; k < L->m; k++) {
            uint8_t *b = pay + HP_OFF_LENGTHS + k / 2;
            unsigned shift = 4 * (k & 1u);
            if ((*b >> shift) & 15u) {
                *b = (uint8_t)((*b & ~(15u << shift)) | 1u << shift);
                used++;
            }
        }
        return used >= 3 ? (int64_t)plen : -1;
    }
    case E_CB_PAD:
        if (L->m & 1u)
            pay[cb_end - 1] |= 0x10; /* the high nibble after the last token's */
        else if (L->off_sub > cb_end)
            pay[cb_end] = 1;
        else
            return -1;
        return plen;
    case E_SUB_BITS:
        put_le(pay + L->off_sub, (uint64_t)((int64_t)get_le(pay + L->off_sub, 2) + arg), 2);
        return plen;
    case E_SUB_SWAP: {
        uint32_t a = get_le(pay + L->off_sub, 2), b = get_le(pay + L->off_sub + 2, 2);
        if (L->nsub < 2 || a == b)
            return -1;
        put_le(pay + L->off_sub, b, 2);
        put_le(pay + L->off_sub + 2, a, 2);
        return plen;
    }
    case E_SUB_PAD:
        if (L->off_stream == L->off_sub + 2 * L->nsub)
            return -1;
        pay[L->off_stream - 1] = 1;
        return plen;
    case E_STREAM_PAD: {
        uint64_t bits = 0;
        for (size_t s = 0; s < L->nsub; s++)
            bits += get_le(pay + L->off_sub + 2 * s, 2);
        if (bits / 8 >= L->stream_bytes)
            return -1;
        pay[L->off_stream + bits / 8] |= (uint8_t)(1u << (bits % 8));
        return plen;
    }
    case E_OUT_ORDER:
    case E_OUT_PAST:
    case E_OUT_NOT_ESC:
    case E_OUT_DELTA: {
        uint8_t *pos = pay + L->off_out_pos, *delta = pay + L->off_out_delta;
        uint32_t p0 = L->n_out ? get_le(pos, 4) : 0;
        if (L->n_out < 2)
            return -1;
        if (edits[e].kind == E_OUT_ORDER) {
            put_le(pos + 4, p0, 4);
        } else if (edits[e].kind == E_OUT_PAST) {
            put_le(pos, L->n, 4);
        } else if (edits[e].kind == E_OUT_NOT_ESC) {
            size_t k = 1;
            while (k < L->n_out && get_le(pos + 4 * k, 4) - 1 == get_le(pos + 4 * (k - 1), 4))
                k++;
            if (k == L->n_out)
                return -1;
            put_le(pos + 4 * k, get_le(pos + 4 * k, 4) - 1, 4);
        } else {
            put_le(delta, (uint32_t)(int32_t)arg, 4);
        }
        return plen;
    }
    case E_OUT_DROP: {
        if (L->n_out == 0)
            return -1;
        /* positions 0..k-2, deltas 0..k-2, then the verbatim sections, closed up */
        size_t k = L->n_out, tail = L->plen - L->off_verb_pos;
        memmove(pay + L->off_out_pos + 4 * (k - 1), pay + L->off_out_delta, 4 * (k - 1));
        memmove(pay + L->off_out_pos + 8 * (k - 1), pay + L->off_verb_pos, tail);
        put_le(pay + HP_OFF_N_OUT, k - 1, 4);
        return plen - 8;
    }
    case E_VERB_ORDER:
    case E_VERB_PAST: {
        uint8_t *pos = pay + L->off_verb_pos;
        if (L->n_verb < 2)
            return -1;
        put_le(pos + (edits[e].kind == E_VERB_ORDER ? 4 : 0),
               edits[e].kind == E_VERB_ORDER ? get_le(pos, 4) : L->n, 4);
        return plen;
    }
    }
    return -1;
}

static void huffman_edits(const sample *samples, size_t count)
{
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        const sample *s = &samples[edits[e].sample % count];
        hlayout L = locate(s->chunk, s->len);
        uint8_t *buf = malloc(s->len + 1);
        memcpy(buf, s->chunk, s->len);
        int64_t plen = L.plen ? apply_edit(e, &L, buf) : -1;
        tu_expect(plen >= 0, "%s: the sample %s lacks what the edit needs (pick another)",
                  edits[e].what, s->name);
        if (plen >= 0) {
            h5zgpu_status st = decode_edited(buf, L.hlen, (size_t)plen, s->raw);
            tu_expect(st == H5ZGPU_E_CORRUPT, "%s (%s): decoded -> %s, want corrupt (%s)",
                      edits[e].what, s->name, h5zgpu_status_string(st), h5zgpu_last_error());
        }
        free(buf);
    }
}

/* ---- the ANS form (docs/FORMAT.md, "ANS form") ---- */

#define HP_ANS_OFF_BUSY 24u
#define HP_ANS_OFF_TABLES 28u
#define HP_ANS_SUB 4096u

static void nib_write(uint8_t *p, size_t *k, uint32_t v)
{
    for (;;) {
        p[*k / 2] |= (uint8_t)(((v & 7u) | (v >= 8u ? 8u : 0u)) << (4 * (*k & 1)));
        (*k)++;
        if (v < 8u)
            return;
        v >>= 3;
    }
}

static const uint16_t book_m[HF_ANS_BOOKS] = HF_ANS_BOOK_M;
static const uint32_t book_start[HF_ANS_BOOKS] = HF_ANS_BOOK_START;
static const uint16_t book_freq[] = HF_ANS_BOOK_FREQ;

/* A version 6 table at nibble *k read into freq (its m returned): its head number, 0 for an
 * empty table, 1..HF_ANS_BOOKS a built-in one, else HF_ANS_BOOKS + m and the frequencies; *book
 * the built-in table or 0. */
static uint32_t table_read(const uint8_t *p, size_t *k, uint32_t *freq, unsigned *book)
{
    const uint32_t h = tu_nib_read(p, k);
    *book = h >= 1 && h <= HF_ANS_BOOKS ? h : 0u;
    if (*book) {
        for (unsigned t = 0; t < book_m[h - 1]; t++)
            freq[t] = book_freq[book_start[h - 1] + t];
        return book_m[h - 1];
    }
    const uint32_t m = h ? h - HF_ANS_BOOKS : 0u;
    for (uint32_t t = 0; t < m;) {
        const uint32_t f = tu_nib_read(p, k);
        if (f) {
            freq[t++] = f;
            continue;
        }
        for (uint32_t z = tu_nib_read(p, k) + 1; z > 0; z--)
            freq[t++] = 0;
    }
    return m;
}

/* The sample's ANS payload with its tables written as version 5 writes them (each head number
 * its token count m, every built-in table spelt out), behind a header of the given version:
 * the same values decode from it. A version 5 payload with two-byte word counts is version
 * 4's with byte 15 cleared; with byte 15 left at 2 a version 4 chunk is damage. */
static void ans_as_version(const sample *s, size_t hlen, unsigned version, int clear)
{
    const uint8_t *pay = s->chunk + hlen;
    static uint32_t freq[2 * 1024];
    uint8_t *tabs = calloc(1, 65536);
    size_t k = 0, k5 = 0;
    unsigned book, books = 0;
    for (unsigned t = 0; t < 12; t++) {
        const uint32_t m = table_read(pay + HP_ANS_OFF_TABLES, &k, freq, &book);
        books += book != 0;
        nib_write(tabs, &k5, m);
        for (uint32_t i = 0; i < m;) {
            if (freq[i]) {
                nib_write(tabs, &k5, freq[i++]);
                continue;
            }
            uint32_t z = i;
            while (freq[z] == 0)
                z++;
            nib_write(tabs, &k5, 0);
            nib_write(tabs, &k5, z - i - 1);
            i = z;
        }
    }
    const size_t old_tabs = pad4((k + 1) / 2), new_tabs = pad4((k5 + 1) / 2);
    const size_t plen = s->len - hlen, len = s->len - old_tabs + new_tabs;
    uint8_t *buf = calloc(1, len);
    void *want = malloc(s->raw), *got = malloc(s->raw);
    size_t n = 0;
    memcpy(buf, s->chunk, hlen + HP_ANS_OFF_TABLES);
    memcpy(buf + hlen + HP_ANS_OFF_TABLES, tabs, new_tabs);
    memcpy(buf + hlen + HP_ANS_OFF_TABLES + new_tabs, pay + HP_ANS_OFF_TABLES + old_tabs,
           plen - HP_ANS_OFF_TABLES - old_tabs);
    buf[4] = (uint8_t)version;
    put_le(buf + 32, len - hlen, 8);   /* the payload's length */
    if (clear)
        buf[hlen + HP_OFF_RESERVED + 1] = 0;
    tu_fix_checksum(buf, len);
    tu_expect(h5zgpu_decompress(s->chunk, s->len, want, s->raw, &n, NULL) == H5ZGPU_OK,
              "%s: the sample does not decode (%s)", s->name, h5zgpu_last_error());
    const h5zgpu_status st = h5zgpu_decompress(buf, len, got, s->raw, &n, NULL);
    if (version >= 5 || clear)
        tu_expect(st == H5ZGPU_OK && memcmp(got, want, s->raw) == 0,
                  "%s: as version %u (%u built-in tables spelt out) -> %s (%s), or other "
                  "values", s->name, version, books, h5zgpu_status_string(st),
                  h5zgpu_last_error());
    else
        tu_expect(st == H5ZGPU_E_CORRUPT, "%s: version 4 with byte 15 set -> %s, want "
                  "corrupt", s->name, h5zgpu_status_string(st));
    free(tabs);
    free(buf);
    free(want);
    free(got);
}

typedef enum ans_edit {
    A_BUSY_MORE,      /* the count of busy sub-chunks + 1 */
    A_BUSY_PAST,      /* that count past the sub-chunks */
    A_FREQ_OFF,       /* a stored table's first frequency +-1: the table misses 2^14 */
    A_WORDS_MORE,     /* the first busy sub-chunk's word count + 1 */
    A_WORDS_ONE,      /* that count 1: no room for the state */
    A_BITMAP_PAD,     /* a group bit past the groups */
    A_MASK_PAST,      /* a busy bit past the sub-chunks in the last group's mask */
    A_MASK_EMPTY,     /* a busy group's mask of no sub-chunk */
    A_STATE_LOW,      /* the first busy sub-chunk's state below 2^16 */
    A_WORD_FLIP,      /* a word of the first busy sub-chunk changed */
    A_RUN_TOKEN_PAST, /* the run token 2R */
    A_AXES_PAST,      /* axis order 6 */
    A_COUNTS_NONE,    /* byte 15, the word counts' bytes, 0 */
    A_COUNTS_THREE,   /* that byte 3 */
    A_COUNTS_OTHER,   /* that byte 1 where it is 2, 2 where it is 1 */
} ans_edit;

static const struct {
    const char *what;
    ans_edit kind;
} ans_cases[] = {
    {"ANS: one busy sub-chunk more than the bitmap holds", A_BUSY_MORE},
    {"ANS: more busy sub-chunks than sub-chunks", A_BUSY_PAST},
    {"ANS: a table's frequencies miss 2^14", A_FREQ_OFF},
    {"ANS: a sub-chunk one word longer", A_WORDS_MORE},
    {"ANS: a sub-chunk of one word", A_WORDS_ONE},
    {"ANS: group bits' padding", A_BITMAP_PAD},
    {"ANS: a busy bit past the sub-chunks", A_MASK_PAST},
    {"ANS: a busy group's mask empty", A_MASK_EMPTY},
    {"ANS: a state below 2^16", A_STATE_LOW},
    {"ANS: a word of a sub-chunk changed", A_WORD_FLIP},
    {"ANS: run token 2R", A_RUN_TOKEN_PAST},
    {"ANS: axis order 6", A_AXES_PAST},
    {"ANS: word counts of 0 bytes", A_COUNTS_NONE},
    {"ANS: word counts of 3 bytes", A_COUNTS_THREE},
    {"ANS: word counts of the other width", A_COUNTS_OTHER},
};

/* The edits on a sample whose word counts take count_bytes each; and, with two bytes, the
 * payload behind a version 4 header, where byte 15 is 0 and counts have two bytes. */
static void ans_edits(const sample *s, unsigned count_bytes)
{
    h5zgpu_info info;
    tu_expect(h5zgpu_chunk_info(s->chunk, s->len, &info) == H5ZGPU_OK, "%s: no header", s->name);
    const uint8_t *pay0 = s->chunk + info.header_len;
    const size_t n = (size_t)(info.raw_len / tu_esize(info.dtype)), nsub = (n + 4095) / 4096;
    tu_expect(pay0[HP_OFF_FORM] == 3 && pay0[HP_OFF_RESERVED] != 0 && pay0[HP_OFF_ORDER] == 0,
              "%s: form %u, axes %u, predictor %u: the edits need the ANS form, permuted axes "
              "and interpolation", s->name, pay0[HP_OFF_FORM], pay0[HP_OFF_RESERVED],
              pay0[HP_OFF_ORDER]);
    const unsigned ntab = 12, R = get_le(pay0 + HP_OFF_RADIUS, 2);
    static uint32_t freq[2 * 1024];
    size_t k = 0, stored_at = 0;   /* the first stored table's head */
    unsigned book, books = 0, stored = 0;
    for (unsigned t = 0; t < ntab; t++) {
        const size_t at = k;
        const uint32_t m = table_read(pay0 + HP_ANS_OFF_TABLES, &k, freq, &book);
        books += book != 0;
        if (!book && m && !stored++)
            stored_at = at;
    }
    tu_expect(books >= 1 && stored >= 1, "%s: %u built-in and %u stored tables: the edits "
              "need one of each", s->name, books, stored);
    const size_t off_bitmap = HP_ANS_OFF_TABLES + pad4((k + 1) / 2);   /* the groups' bits */
    const size_t busy = get_le(pay0 + HP_ANS_OFF_BUSY, 4), groups = (nsub + 63) / 64;
    size_t busy_groups = 0;
    for (size_t g = 0; g < groups; g++)
        busy_groups += pay0[off_bitmap + g / 8] >> (g % 8) & 1u;
    const size_t off_masks = off_bitmap + pad4((groups + 7) / 8);
    const size_t off_counts = off_masks + 8 * busy_groups;
    const unsigned cb = pay0[HP_OFF_RESERVED + 1];   /* format version 5: a count's bytes */
    const size_t off_stream = off_counts + pad4(cb * busy);
    size_t first = 0;   /* the first busy sub-chunk's first word: the stream's start */
    tu_expect(cb == count_bytes, "%s: word counts of %u bytes, want %u", s->name, cb,
              count_bytes);
    ans_as_version(s, info.header_len, 5, 0);
    if (cb == 2) {
        ans_as_version(s, info.header_len, 4, 1);
        ans_as_version(s, info.header_len, 4, 0);
    }
    tu_expect(busy >= 1 && busy_groups == 1 && nsub % 64 != 0 && (cb == 1 || cb == 2),
              "%s: %zu busy sub-chunks of %zu, word counts of %u bytes", s->name, busy, nsub,
              cb);
    for (size_t e = 0; e < sizeof ans_cases / sizeof ans_cases[0]; e++) {
        uint8_t *buf = malloc(s->len);
        memcpy(buf, s->chunk, s->len);
        uint8_t *pay = buf + info.header_len;
        const uint32_t words = get_le(pay + off_counts, cb);
        switch (ans_cases[e].kind) {
        case A_BUSY_MORE: put_le(pay + HP_ANS_OFF_BUSY, busy + 1, 4); break;
        case A_BUSY_PAST: put_le(pay + HP_ANS_OFF_BUSY, nsub + 1, 4); break;
        case A_FREQ_OFF: {   /* the first stored table's first nonzero frequency +-1 */
            size_t j = stored_at, at;
            const uint32_t m = tu_nib_read(pay + HP_ANS_OFF_TABLES, &j) - HF_ANS_BOOKS;
            for (at = j; m && tu_nib_read(pay + HP_ANS_OFF_TABLES, &j) == 0; at = j)
                tu_nib_read(pay + HP_ANS_OFF_TABLES, &j);
            uint8_t *b = pay + HP_ANS_OFF_TABLES + at / 2;
            const unsigned sh = 4 * (at & 1), nib = (*b >> sh) & 15u;
            *b = (uint8_t)((*b & ~(15u << sh)) | ((nib & 7u) < 7 ? nib + 1 : nib - 1) << sh);
            break;
        }
        case A_WORDS_MORE: put_le(pay + off_counts, words + 1, cb); break;
        case A_WORDS_ONE: put_le(pay + off_counts, 1, cb); break;
        case A_BITMAP_PAD: pay[off_bitmap + groups / 8] |= (uint8_t)(1u << (groups % 8)); break;
        case A_MASK_PAST: pay[off_masks + nsub / 8] |= (uint8_t)(1u << (nsub % 8)); break;
        case A_MASK_EMPTY: memset(pay + off_masks, 0, 8); break;
        case A_STATE_LOW: put_le(pay + off_stream + first + 2 * (words - 1), 0, 2); break;
        case A_WORD_FLIP: pay[off_stream + first] ^= 0x5A; break;
        case A_RUN_TOKEN_PAST: put_le(pay + HP_OFF_RUN_TOKEN, 2 * R, 2); break;
        case A_AXES_PAST: pay[HP_OFF_RESERVED] = 6; break;
        case A_COUNTS_NONE: pay[HP_OFF_RESERVED + 1] = 0; break;
        case A_COUNTS_THREE: pay[HP_OFF_RESERVED + 1] = 3; break;
        case A_COUNTS_OTHER: pay[HP_OFF_RESERVED + 1] = (uint8_t)(3 - cb); break;
        }
        h5zgpu_status st = decode_edited(buf, info.header_len, (size_t)info.payload_len, s->raw);
        tu_expect(st == H5ZGPU_E_CORRUPT, "%s (%s): decoded -> %s, want corrupt (%s)",
                  ans_cases[e].what, s->name, h5zgpu_status_string(st), h5zgpu_last_error());
        free(buf);
    }
}

int main(void)
{
    invalid_params();
    /* the damage loop decodes each chunk about 7 x its length times: small chunks */
    sample samples[] = {
        {.name = "fixed-length chunk", .p = good, .pattern = TU_SMOOTH, .codec = 1},
        {.name = "raw chunk", .p = good, .pattern = TU_BITS, .codec = 0},
        {.name = "Huffman chunk, form 0", .codec = 2, .pattern = TU_SPIKY, .specials = 3,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_ABS, .eb = 1e-3,
               .dtype = H5ZGPU_FLOAT32, .rank = 2, .dims = {20, 30}}},
        {.name = "Huffman chunk, form 1 with fill", .codec = 2, .pattern = TU_MASKED,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_REL, .eb = 1e-3,
               .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {4, 10, 30}, .has_fill = 1,
               .fill = (double)(float)-1e34, .radius = 16}},
        {.name = "Huffman chunk, interpolation", .codec = 2, .pattern = TU_FIELD, .specials = 2,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_REL, .eb = 1e-2,
               .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {10, 20, 30}}},
    };
    const size_t interpolated = 4;   /* the sample above */
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        make_sample(&samples[i]);
        checksum_matches_format(&samples[i]);
        damage(&samples[i]);
        newer_version(&samples[i]);
        if (i == interpolated)
            interpolation_needs_version_2(&samples[i]);
        free(samples[i].chunk);
    }
    /* larger Huffman chunks for the field edits: three sub-chunks, outliers, verbatim values */
    sample huff_samples[] = {
        {.name = "Huffman form 0, 2-D float32", .codec = 2, .pattern = TU_SMOOTH, .specials = 5,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_ABS, .eb = 1e-3,
               .dtype = H5ZGPU_FLOAT32, .rank = 2, .dims = {90, 100}, .radius = 512}},
        {.name = "Huffman form 1, 3-D float64", .codec = 2, .pattern = TU_SMOOTH, .specials = 5,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_ABS, .eb = 1e-3,
               .dtype = H5ZGPU_FLOAT64, .rank = 3, .dims = {10, 30, 30}, .radius = 16}},
    };
    size_t nh = sizeof huff_samples / sizeof huff_samples[0];
    for (size_t i = 0; i < nh; i++) {
        make_sample(&huff_samples[i]);
        hlayout L = locate(huff_samples[i].chunk, huff_samples[i].len);
        tu_expect(L.form == i && L.n_out >= 2 && L.n_verb >= 2 && L.nsub >= 2,
                  "%s: form %u, %u outliers, %u verbatim values, %zu sub-chunks: the edits "
                  "need form %zu and at least 2 of each",
                  huff_samples[i].name, L.form, L.n_out, L.n_verb, L.nsub, i);
    }
    huffman_edits(huff_samples, nh);
    for (size_t i = 0; i < nh; i++)
        free(huff_samples[i].chunk);
    /* the ANS form with word counts of two bytes, then of one */
    sample ans[] = {
        {.name = "Huffman ANS form, 3-D float32, axes permuted", .codec = 2,
         .pattern = TU_FIELD, .specials = 5,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_ABS, .eb = 1e-2,
               .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {24, 40, 36}}},
        {.name = "Huffman ANS form, 3-D float32, short sub-chunks", .codec = 2,
         .pattern = TU_FIELD, .specials = 5,
         .p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_REL, .eb = 1e-2,
               .dtype = H5ZGPU_FLOAT32, .rank = 3, .dims = {21, 34, 47}}},
    };
    for (unsigned i = 0; i < 2; i++) {
        make_sample(&ans[i]);
        ans_edits(&ans[i], 2 - i);
        free(ans[i].chunk);
    }
    hand_built();
    return tu_done("codec_corrupt");
}
