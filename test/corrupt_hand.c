/* Huffman payloads built by hand for codec_corrupt: the controls decode to the values they
 * describe, the others break one stream rule each. */
#include "codec_corrupt.h"

/* ---- Huffman payloads built by hand ----
 * A 1-D float32 chunk of HB_N elements (two sub-chunks) whose payload the test writes itself:
 * base, fields, codebook, canonical codes and outliers as FORMAT.md describes them. The
 * controls must decode to the values they describe; the others break one stream rule each.
 * Form 2 writes each pair as one token, two elements. */
#define HB_N (HP_SUB + 100u)
#define HB_VALUE 3.25f   /* every element of the template: base */
#define HB_EB 1e-3       /* ABS: a code p decodes to base + 2 eb p */
#define HB_UNUSED 0xFFFFu /* in a segment: the 2-bit code 11, which no token has */

typedef struct hb_case {
    const char *what;
    h5zgpu_status want;
    unsigned form, radius, run_token;
    struct {
        unsigned token, len;
    } lens[4];
    struct {
        unsigned token, count;
    } segs[5];
    struct {
        uint32_t pos;
        int32_t delta;
    } out[1];
    unsigned n_out;
    int verbatim_nan_at; /* -1: none */
    int sub0_extra;      /* bits added to sub-chunk 0's stored length (+1: a zero bit too) */
} hb_case;

/* Pair tokens of radius 9 for the deltas' zigzag codes a, b: 2R + 16 a + b (FORMAT.md). */
#define PAIR9(a, b) (18u + 16u * (a) + (b))
/* Run tokens of radius 4 (huff_cpu.c: 2R + 256 - L, the longest run first). */
#define RUN4(L) (8u + HP_RUN_MAX - (L))

static const hb_case hand[] = {
    {"control: form 0, all deltas 0", H5ZGPU_OK, 0, 4, 0, {{2, 1}, {3, 1}}, {{2, HB_N}},
     {{0, 0}}, 0, -1, 0},
    {"control: form 1, runs of 256 and 100", H5ZGPU_OK, 1, 4, 2, {{RUN4(256), 1}, {RUN4(100), 1}},
     {{RUN4(256), 16}, {RUN4(100), 1}}, {{0, 0}}, 0, -1, 0},
    {"control: an escape and its outlier, a verbatim NaN", H5ZGPU_OK, 0, 4, 0, {{1, 1}, {2, 1}},
     {{2, 10}, {1, 1}, {2, HB_N - 11}}, {{10, 1000}}, 1, 5, 0},
    {"control: form 2, pairs of deltas 0", H5ZGPU_OK, 2, 9, 0, {{PAIR9(0, 0), 1}, {2, 1}},
     {{PAIR9(0, 0), HP_SUB / 2}, {PAIR9(0, 0), 50}}, {{0, 0}}, 0, -1, 0},
    {"pair across a sub-chunk boundary", H5ZGPU_E_CORRUPT, 2, 9, 0, {{PAIR9(0, 0), 1}, {2, 1}},
     {{PAIR9(0, 0), HP_SUB / 2 - 1}, {2, 1}, {PAIR9(0, 0), 1}, {2, 99}}, {{0, 0}}, 0, -1, 0},
    {"lone run token in form 1", H5ZGPU_E_CORRUPT, 1, 4, 2,
     {{2, 2}, {RUN4(255), 2}, {RUN4(256), 2}, {RUN4(100), 2}},
     {{2, 1}, {RUN4(255), 1}, {RUN4(256), 15}, {RUN4(100), 1}}, {{0, 0}}, 0, -1, 0},
    {"run past the chunk's end", H5ZGPU_E_CORRUPT, 1, 4, 2, {{RUN4(256), 1}, {RUN4(100), 1}},
     {{RUN4(256), 17}}, {{0, 0}}, 0, -1, 0},
    {"run across a sub-chunk boundary", H5ZGPU_E_CORRUPT, 1, 4, 2,
     {{RUN4(256), 1}, {3, 2}, {RUN4(99), 2}},
     {{RUN4(256), 15}, {3, 1}, {RUN4(256), 1}, {RUN4(99), 1}}, {{0, 0}}, 0, -1, 0},
    {"fill token in a chunk without fill", H5ZGPU_E_CORRUPT, 0, 4, 0, {{0, 1}, {2, 1}},
     {{0, 1}, {2, HB_N - 1}}, {{0, 0}}, 0, -1, 0},
    {"code that no token has", H5ZGPU_E_CORRUPT, 0, 4, 0, {{2, 1}, {3, 2}},
     {{2, 100}, {HB_UNUSED, 1}, {2, HB_N - 101}}, {{0, 0}}, 0, -1, 0},
    {"token past the form 0 alphabet", H5ZGPU_E_CORRUPT, 0, 4, 0, {{2, 1}, {8, 1}},
     {{2, HB_N}}, {{0, 0}}, 0, -1, 0},
    {"escape token without outlier", H5ZGPU_E_CORRUPT, 0, 4, 0, {{1, 1}, {2, 1}},
     {{2, 10}, {1, 1}, {2, HB_N - 11}}, {{0, 0}}, 0, -1, 0},
    {"outlier at a delta-0 token", H5ZGPU_E_CORRUPT, 0, 4, 0, {{2, 1}, {3, 1}}, {{2, HB_N}},
     {{10, 1000}}, 1, -1, 0},
    {"sub-chunk 0 ends one bit after its codes", H5ZGPU_E_CORRUPT, 0, 4, 0, {{2, 1}, {3, 1}},
     {{2, HB_N}}, {{0, 0}}, 0, -1, 1},
    {"sub-chunk 0 ends inside its last code", H5ZGPU_E_CORRUPT, 0, 4, 0, {{2, 1}, {3, 1}},
     {{2, HB_N}}, {{0, 0}}, 0, -1, -1},
};

/* An LSB-first bit writer over a zeroed buffer. */
typedef struct bitw {
    uint8_t *s;
    size_t bit;
} bitw;

static void put_bits(bitw *w, unsigned code, unsigned len)
{
    for (unsigned i = 0; i < len; i++, w->bit++)
        w->s[w->bit / 8] |= (uint8_t)(((code >> i) & 1u) << (w->bit % 8));
}

/* Deflate's canonical codes, bit-reversed for the LSB-first stream. */
static void canonical(const uint8_t *len, unsigned m, unsigned *code)
{
    unsigned count[HP_MAX_LEN + 1] = {0}, next[HP_MAX_LEN + 1], c = 0;
    for (unsigned t = 0; t < m; t++)
        count[len[t]]++;
    count[0] = 0;
    for (unsigned l = 1; l <= HP_MAX_LEN; l++)
        next[l] = c = (c + count[l - 1]) << 1;
    for (unsigned t = 0; t < m; t++) {
        unsigned v = len[t] ? next[len[t]]++ : 0, r = 0;
        for (unsigned i = 0; i < len[t]; i++)
            r |= ((v >> i) & 1u) << (len[t] - 1 - i);
        code[t] = r;
    }
}

/* Writes the payload of case c after the template's header; returns the payload length. */
static size_t build_hand(const hb_case *c, const uint8_t *tmpl_pay, uint8_t *pay)
{
    static uint8_t len[HP_MAX_SYMS];
    static unsigned code[HP_MAX_SYMS];
    static uint8_t stream[HB_N * 2];
    unsigned m = 0;
    memset(len, 0, sizeof len);
    for (size_t i = 0; i < 4 && c->lens[i].len; i++) {
        len[c->lens[i].token] = (uint8_t)c->lens[i].len;
        m = c->lens[i].token + 1 > m ? c->lens[i].token + 1 : m;
    }
    canonical(len, m, code);
    memset(stream, 0, sizeof stream);
    bitw w = {stream, 0};
    size_t elems = 0, sub_bits[2] = {0, 0};
    int sub = 0;
    for (size_t s = 0; s < 5 && c->segs[s].count; s++)
        for (unsigned k = 0; k < c->segs[s].count; k++) {
            unsigned t = c->segs[s].token;
            if (t == HB_UNUSED)
                put_bits(&w, 3u, 2);
            else
                put_bits(&w, code[t], len[t]);
            int high = t != HB_UNUSED && t >= 2 * c->radius; /* a run (form 1) or a pair */
            elems += !high ? 1 : c->form == 1 ? HP_RUN_MAX - (t - 2 * c->radius) : 2;
            if (sub == 0 && elems >= HP_SUB) {
                if (c->sub0_extra > 0)
                    w.bit += (size_t)c->sub0_extra; /* zero bits */
                sub_bits[0] = w.bit;
                sub = 1;
            }
        }
    sub_bits[1] = w.bit - sub_bits[0];
    if (c->sub0_extra < 0) {
        sub_bits[0] -= (size_t)-c->sub0_extra;
        sub_bits[1] += (size_t)-c->sub0_extra;
    }
    /* the codebook: lengths of tokens 0..m0-1, then of 2R..2R+m1-1 (run or pair tokens) */
    unsigned m0 = 0, m1 = 0;
    for (size_t i = 0; i < 4 && c->lens[i].len; i++) {
        unsigned t = c->lens[i].token;
        if (t < 2 * c->radius)
            m0 = t + 1 > m0 ? t + 1 : m0;
        else
            m1 = t - 2 * c->radius + 1 > m1 ? t - 2 * c->radius + 1 : m1;
    }
    size_t cb = pad4(4 + (m0 + m1 + 1) / 2), sbytes = pad4((w.bit + 7) / 8);
    size_t total = HP_OFF_CODEBOOK + cb + 4 + sbytes + 8 * c->n_out +
                   (c->verbatim_nan_at >= 0 ? 8 : 0);
    memset(pay, 0, total);
    memcpy(pay, tmpl_pay, 8); /* base */
    pay[HP_OFF_FORM] = (uint8_t)c->form;
    pay[HP_OFF_ORDER] = 1;
    put_le(pay + HP_OFF_RADIUS, c->radius, 2);
    put_le(pay + HP_OFF_RUN_TOKEN, c->run_token, 2);
    put_le(pay + HP_OFF_N_OUT, c->n_out, 4);
    put_le(pay + HP_OFF_N_VERB, c->verbatim_nan_at >= 0, 4);
    put_le(pay + HP_OFF_CODEBOOK, m0, 2);
    put_le(pay + HP_OFF_CODEBOOK + 2, m1, 2);
    for (unsigned k = 0; k < m0 + m1; k++)
        pay[HP_OFF_LENGTHS + k / 2] |= (uint8_t)(len[k < m0 ? k : 2 * c->radius + k - m0]
                                                 << (4 * (k & 1u)));
    size_t o = HP_OFF_CODEBOOK + cb;
    put_le(pay + o, sub_bits[0], 2);
    put_le(pay + o + 2, sub_bits[1], 2);
    o += 4;
    memcpy(pay + o, stream, (w.bit + 7) / 8);
    o += sbytes;
    for (unsigned k = 0; k < c->n_out; k++)
        put_le(pay + o + 4 * k, c->out[k].pos, 4);
    for (unsigned k = 0; k < c->n_out; k++)
        put_le(pay + o + 4 * (c->n_out + k), (uint32_t)c->out[k].delta, 4);
    o += 8 * c->n_out;
    if (c->verbatim_nan_at >= 0) {
        put_le(pay + o, (uint32_t)c->verbatim_nan_at, 4);
        put_le(pay + o + 4, nan_inf32[0], 4);
        o += 8;
    }
    return o;
}

/* The value of element i the control describes: base + 2 eb x (sum of deltas so far). */
static int control_matches(const hb_case *c, const float *out)
{
    int64_t p = 0;
    for (size_t i = 0; i < HB_N; i++) {
        if (c->n_out && i == c->out[0].pos)
            p += c->out[0].delta;
        float want = (float)((double)HB_VALUE + 2 * HB_EB * (double)p);
        uint32_t wb, gb;
        memcpy(&gb, &out[i], 4);
        memcpy(&wb, &want, 4);
        if ((int)i == c->verbatim_nan_at)
            wb = nan_inf32[0];
        if (wb != gb) {
            fprintf(stderr, "%s: element %zu holds %08x, want %08x\n", c->what, i, gb, wb);
            return 0;
        }
    }
    return 1;
}

void hand_built(void)
{
    h5zgpu_params p = {.codec = H5ZGPU_CODEC_HUFFMAN, .mode = H5ZGPU_MODE_ABS, .eb = HB_EB,
                       .dtype = H5ZGPU_FLOAT32, .rank = 1, .dims = {HB_N}};
    static float in[HB_N], out[HB_N];
    size_t cap = h5zgpu_compress_bound(&p) + 4 * HB_N, len, n;
    uint8_t *tmpl = malloc(cap), *buf = malloc(cap);
    for (size_t i = 0; i < HB_N; i++)
        in[i] = HB_VALUE;
    h5zgpu_info info;
    h5zgpu_status st = h5zgpu_compress(&p, in, tmpl, cap, &len, NULL);
    if (st != H5ZGPU_OK || h5zgpu_chunk_info(tmpl, len, &info) != H5ZGPU_OK || info.codec != 2) {
        tu_expect(0, "hand-built payloads: the constant template is not a Huffman chunk (%s)",
                  h5zgpu_last_error());
        goto done;
    }
    for (size_t k = 0; k < sizeof hand / sizeof hand[0]; k++) {
        const hb_case *c = &hand[k];
        memcpy(buf, tmpl, (size_t)info.header_len);
        size_t plen = build_hand(c, tmpl + info.header_len, buf + info.header_len);
        put_le(buf + HZ_OFF_PAYLOAD_LEN, plen, 8);
        tu_fix_checksum(buf, (size_t)info.header_len + plen);
        st = h5zgpu_decompress(buf, (size_t)info.header_len + plen, out, sizeof out, &n, NULL);
        tu_expect(st == c->want && (st != H5ZGPU_OK || control_matches(c, out)),
                  "hand-built payload, %s: decoded -> %s (%s), want %s%s", c->what,
                  h5zgpu_status_string(st), st == H5ZGPU_OK ? "" : h5zgpu_last_error(),
                  h5zgpu_status_string(c->want),
                  st == H5ZGPU_OK && c->want == H5ZGPU_OK ? " with the values it describes" : "");
    }
done:
    free(tmpl);
    free(buf);
}
