/* The Huffman codec's encoder, CPU reference. Dual quantisation (the shared quantiser,
 * quant.h, then integer Lorenzo deltas inside tiles), one token per delta, a histogram, a
 * length-limited canonical codebook and a bit stream in sub-chunks; where the commonest token
 * dominates, its runs become run tokens (cuSZ+'s run-length path). Interpolation
 * (huff_interp.c) may replace Lorenzo, the axes may be permuted (huff_axes.c) and rANS
 * (huff_ans.c) may replace the Huffman codes. The decoder is huff_decode_cpu.c.
 * docs/FORMAT.md, "Huffman payload". */
#include "huff.h"

#include "bitlen_rows.h"
#include "elements.h"
#include "error.h"
#include "geom.h"
#include "huff_ans.h"
#include "huff_axes.h"
#include "huff_interp.h"
#include "parallel.h"
#include "quant_rows.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>

int hf_geom_init(hf_geom *g, unsigned rank, const uint64_t *dims)
{
    hz_fold f;
    if (hz_fold_dims(&f, rank, dims) != 0)
        return -1;
    memset(g, 0, sizeof *g);
    if (f.nz * f.ny * f.nx > 0xFFFFFFFFu)
        return -1;
    hf_geom_set(g, f.nz, f.ny, f.nx, f.dim);
    return 0;
}

unsigned hf_radius(unsigned asked)
{
    return asked == 0 ? HF_RADIUS_DEFAULT : asked;
}

/* ---- encoder ------------------------------------------------------------------------------ */

typedef struct hf_book {
    unsigned m;                  /* tokens 0..m-1 have their length here */
    unsigned m0, m1;             /* stored: tokens 0..m0-1, and 2R..2R+m1-1 */
    uint8_t len[HF_MAX_SYMS];
    uint16_t code[HF_MAX_SYMS];
    uint64_t bits;               /* stream bits of the whole chunk */
} hf_book;

/* One encoding; the tasks below run over tiles or sub-chunks on hz_parallel_for's threads. */
typedef struct hf_enc {
    const hf_geom *g;
    const qz_quant *Q;
    const void *in;
    unsigned R, order, form, rs;
    int32_t *p;             /* quantisation code of each element, tile-major (0: not coded);
                             * with interpolation, each element's delta */
    uint8_t *kind;          /* 0 coded, 1 fill, 2 verbatim */
    uint16_t *tok;          /* one token per element, tile-major */
    uint64_t *run_cost;     /* 4 per sample run k: the cost of Lorenzo order o over its tile at
                             * [4k + o], the tile's elements at [4k] (all 0: no tile) */
    uint64_t *tile_out;     /* outliers, then verbatim values, per tile: counts, then offsets */
    uint64_t *tile_verb;
    uint8_t *out_pos, *out_delta, *verb_pos, *verb_val;  /* where the lists go in the payload */
    const hf_book *B;
    uint64_t *sub_bit;      /* bit length of each sub-chunk, then its first bit */
    uint8_t *stream;
} hf_enc;

/* Elements quantised together (qz_quantize_rows): read, quantised in one vectorised loop, then
 * stored. */
#define HF_QGROUP 64u

/* Quantises the n <= HF_QGROUP elements from raster index i on into p and kind, as
 * quantise_tile does, with a quantiser such that qz_rows_apply. */
HZ_INLINE void quantise_group(const hf_enc *E, uint64_t i, unsigned n, int32_t *p, uint8_t *kind)
{
    const qz_quant *Q = E->Q;
    double x[HF_QGROUP], rel_lim[HF_QGROUP];
    uint8_t fill[HF_QGROUP], ok[HF_QGROUP];
    for (unsigned j = 0; j < n; j++) {
        uint64_t bits;
        x[j] = hz_element(E->in, Q->is_f32, i + j, &bits);
        fill[j] = (uint8_t)qz_is_fill(Q, bits);
    }
    if (Q->rel)
        qz_rel_limits(Q, n, x, rel_lim);
    qz_quantize_rows(Q, n, x, rel_lim, HF_PMAX, p, ok);
    for (unsigned j = 0; j < n; j++) {
        kind[j] = fill[j] ? 1 : (ok[j] ? 0 : 2);
        p[j] = fill[j] ? 0 : p[j];
    }
}

/* Quantises the n elements from raster index i on into p and kind, one at a time, with any
 * quantiser. */
HZ_INLINE void quantise_each(const hf_enc *E, uint64_t i, unsigned n, int32_t *p, uint8_t *kind)
{
    for (unsigned j = 0; j < n; j++) {
        uint64_t bits;
        double v = hz_element(E->in, E->Q->is_f32, i + j, &bits);
        p[j] = 0;
        if (qz_is_fill(E->Q, bits))
            kind[j] = 1;
        else
            kind[j] = hf_dq_code(E->Q, v, &p[j]) ? 0 : 2; /* 2: verbatim; as 0 */
    }
}

/* Quantises tile t: each element's code and kind. */
HZ_INLINE void quantise_tile(hf_enc *E, uint64_t t, hf_tile *T)
{
    const hf_geom *g = E->g;
    const int grouped = qz_rows_apply(E->Q);
    hf_tile_at(g, t, T);
    int32_t *p = E->p + T->start;
    uint8_t *kind = E->kind + T->start;
    uint64_t e = 0;
    for (unsigned z = 0; z < T->ez; z++)
        for (unsigned y = 0; y < T->ey; y++, e += T->ex) {
            const uint64_t row = ((T->z0 + z) * g->ny + T->y0 + y) * g->nx + T->x0;
            if (!grouped) {
                quantise_each(E, row, T->ex, p + e, kind + e);
                continue;
            }
            for (unsigned x = 0, n; x < T->ex; x += n) {
                n = T->ex - x < HF_QGROUP ? T->ex - x : HF_QGROUP;
                quantise_group(E, row + x, n, p + e + x, kind + e + x);
            }
        }
}

/* The Lorenzo costs of a tile row whose neighbours above (y - 1) and, for order 3, behind
 * (z - 1) are in the tile, from x = 1 on: hf_lorenzo's sums with every term present, order o's
 * delta being order o - 1's less the same of the row above (order 2) or plane behind (3). */
HZ_INLINE void row_costs_of(const int32_t *p, uint64_t e, unsigned ex, uint64_t up,
                            uint64_t back, unsigned dim, uint64_t *cost)
{
    uint32_t c1 = 0, c2 = 0, c3 = 0;   /* a row's: at most 33 bits an element */
    for (unsigned x = 1; x < ex; x++) {
        /* codes within +-HF_PMAX (2^28 - 1): order 3's sum of eight is below 2^31 */
        const uint64_t i = e + x;
        const int32_t d1 = p[i] - p[i - 1];
        const int32_t u1 = p[i - up] - p[i - up - 1];
        const int32_t d2 = d1 - u1;
        c1 += hz_zigzag_bitlen_i32(d1);
        c2 += hz_zigzag_bitlen_i32(d2);
        if (dim == 3) {
            const int32_t b1 = p[i - back] - p[i - back - 1];
            const int32_t b2 = b1 - (p[i - back - up] - p[i - back - up - 1]);
            c3 += hz_zigzag_bitlen_i32(d2 - b2);
        }
    }
    cost[1] += c1;
    cost[2] += c2;
    cost[3] += c3;
}

/* row_costs_of with dim a constant in each loop: the 3-D one computes order 3's costs too. */
HZ_INLINE void row_costs(const int32_t *p, uint64_t e, unsigned ex, uint64_t up, uint64_t back,
                         unsigned dim, uint64_t *cost)
{
    if (dim == 3)
        row_costs_of(p, e, ex, up, back, 3, cost);
    else
        row_costs_of(p, e, ex, up, back, dim, cost);
}

/* Quantises the tile of sample run k (hf_sample_tile) and its cost under each Lorenzo order
 * the chunk allows: the sum of the deltas' zigzag bit lengths. */
HZ_CPU_CLONES static void sample_task(void *ctx, uint64_t k)
{
    hf_enc *E = ctx;
    const hf_geom *g = E->g;
    const uint64_t t = hf_sample_tile(g, k);
    uint64_t *cost = E->run_cost + 4 * k;
    cost[0] = cost[1] = cost[2] = cost[3] = 0;
    if (t >= g->ntiles)
        return; /* a last run without a sample */
    hf_tile T;
    quantise_tile(E, t, &T);
    const int32_t *p = E->p + T.start;
    cost[0] = (uint64_t)T.ez * T.ey * T.ex; /* the elements the costs count */
    uint64_t e = 0;
    for (unsigned z = 0; z < T.ez; z++)
        for (unsigned y = 0; y < T.ey; y++, e += T.ex) {
            /* rows with every neighbour in the tile: all but their first element at once */
            const int inside = y > 0 && (z > 0 || g->dim < 3) && g->dim >= 2;
            for (unsigned x = 0; x < (inside ? 1u : T.ex); x++)
                for (unsigned o = 1; o <= g->dim; o++)
                    cost[o] += hz_bitlen(
                        hz_zigzag(hf_lorenzo(p, o, T.ey, T.ex, z, y, x, e + x)));
            if (inside)
                row_costs(p, e, T.ex, T.ex, (uint64_t)T.ey * T.ex, g->dim, cost);
        }
}

/* Quantises tile t when the sample left it: a Lorenzo order needs every tile's codes. */
HZ_CPU_CLONES static void rest_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    if (!hf_sampled(E->g, t))
        quantise_tile(E, t, &T);
}

/* The delta and token of tile element e under the chosen order. */
static unsigned token_at(const hf_enc *E, const hf_tile *T, uint64_t e, int64_t *d)
{
    const int32_t *p = E->p + T->start;
    unsigned x = (unsigned)(e % T->ex), y = (unsigned)(e / T->ex % T->ey);
    unsigned z = (unsigned)(e / T->ex / T->ey);
    *d = E->order == HF_PRED_INTERP ? p[e] : hf_lorenzo(p, E->order, T->ey, T->ex, z, y, x, e);
    return E->kind[T->start + e] == 1 && *d == 0 ? HF_TOK_FILL : hf_delta_token(*d, E->R);
}

/* Tokens of tile t, and how many outliers and verbatim values it has: token_at's, a Lorenzo
 * order's tile walked by its coordinates rather than each element's worked out by division. */
HZ_CPU_CLONES static void tokenise_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    hf_tile_at(E->g, t, &T);
    const int32_t *p = E->p + T.start;
    const uint8_t *kind = E->kind + T.start;
    uint16_t *tok = E->tok + T.start;
    uint64_t nout = 0, nverb = 0, e = 0;
    if (E->order == HF_PRED_INTERP) {   /* the deltas as they are, in a loop that vectorises */
        const uint32_t below = 2u * E->R - 2u;   /* hf_delta_token's zigzags */
        for (uint64_t tn = (uint64_t)T.ez * T.ey * T.ex; e < tn; e++) {
            const uint32_t zz = (uint32_t)p[e] << 1 ^ (uint32_t)(p[e] >> 31);
            const unsigned tk = kind[e] == 1 && p[e] == 0 ? HF_TOK_FILL
                                : zz < below              ? zz + 2u
                                                          : HF_TOK_ESCAPE;
            tok[e] = (uint16_t)tk;
            nout += tk == HF_TOK_ESCAPE;
            nverb += kind[e] != 0 && tk != HF_TOK_FILL;
        }
    } else {
        for (unsigned z = 0; z < T.ez; z++)
            for (unsigned y = 0; y < T.ey; y++)
                for (unsigned x = 0; x < T.ex; x++, e++) {
                    const int64_t d = hf_lorenzo(p, E->order, T.ey, T.ex, z, y, x, e);
                    const unsigned tk =
                        kind[e] == 1 && d == 0 ? HF_TOK_FILL : hf_delta_token(d, E->R);
                    tok[e] = (uint16_t)tk;
                    nout += tk == HF_TOK_ESCAPE;
                    nverb += kind[e] != 0 && tk != HF_TOK_FILL;
                }
    }
    E->tile_out[t] = nout;
    E->tile_verb[t] = nverb;
}

/* Tile t's outliers and verbatim values, at its offsets in the payload's lists. */
static void lists_task(void *ctx, uint64_t t)
{
    hf_enc *E = ctx;
    hf_tile T;
    hf_tile_at(E->g, t, &T);
    uint64_t tn = (uint64_t)T.ez * T.ey * T.ex, ko = E->tile_out[t], kv = E->tile_verb[t];
    unsigned esize = E->Q->is_f32 ? 4u : 8u;
    for (uint64_t e = 0; e < tn; e++) {
        uint64_t pos = T.start + e, bits;
        unsigned tk = E->tok[pos];
        if (tk == HF_TOK_ESCAPE) {
            int64_t d;
            token_at(E, &T, e, &d);
            hz_put_u32(E->out_pos + 4 * ko, (uint32_t)pos);
            hz_put_u32(E->out_delta + 4 * ko++, (uint32_t)(int32_t)d);
        }
        if (E->kind[pos] != 0 && tk != HF_TOK_FILL) {
            hz_element(E->in, E->Q->is_f32, hf_tile_index(E->g, &T, e), &bits);
            hz_put_u32(E->verb_pos + 4 * kv, (uint32_t)pos);
            if (esize == 4)
                hz_put_u32(E->verb_val + 4 * kv++, (uint32_t)bits);
            else
                hz_put_u64(E->verb_val + 8 * kv++, bits);
        }
    }
}

/* Calls emit(ctx, token) for the tokens of sub-chunk s under a form. */
typedef void (*hf_emit)(void *ctx, unsigned token);

static void sub_tokens(const uint16_t *tok, uint64_t n, uint64_t s, unsigned form, unsigned rs,
                       unsigned R, hf_emit emit, void *ctx)
{
    uint64_t i = s * HF_SUB, end = i + HF_SUB < n ? i + HF_SUB : n;
    while (i < end) {
        if (form == HF_FORM_RUNS && tok[i] == rs) {
            uint64_t j = i;
            while (j < end && j - i < HF_RUN_MAX && tok[j] == rs)
                j++;
            emit(ctx, hf_run_token(R, (unsigned)(j - i)));
            i = j;
        } else if (form == HF_FORM_PAIRS && i + 1 < end && tok[i] - 2u < HF_PAIR_K &&
                   tok[i + 1] - 2u < HF_PAIR_K) {
            emit(ctx, 2u * R + (tok[i] - 2u) * HF_PAIR_K + (tok[i + 1] - 2u));
            i += 2;
        } else {
            emit(ctx, tok[i++]);
        }
    }
}

static void count_token(void *ctx, unsigned token)
{
    ((uint64_t *)ctx)[token]++;
}

typedef struct hf_key {
    uint32_t count;   /* a Huffman chunk has fewer than 2^32 elements (hf_geom_init) */
    uint32_t token;
} hf_key;

/* keys[0..m-1], in token order, sorted by (count, token): a stable sort by count, a byte at a
 * time from the lowest (qsort and its comparator were among a 64^3 chunk's largest serial
 * steps); returns keys or tmp, whichever holds the result. */
static hf_key *sort_keys(hf_key *keys, hf_key *tmp, unsigned m)
{
    uint32_t most = 0;
    for (unsigned i = 0; i < m; i++)
        most |= keys[i].count;
    for (unsigned shift = 0; shift < 32 && most >> shift; shift += 8) {
        unsigned at[257] = {0};
        for (unsigned i = 0; i < m; i++)
            at[(keys[i].count >> shift & 255u) + 1]++;
        for (unsigned d = 0; d < 256; d++)
            at[d + 1] += at[d];
        for (unsigned i = 0; i < m; i++)
            tmp[at[keys[i].count >> shift & 255u]++] = keys[i];
        hf_key *t = keys;
        keys = tmp;
        tmp = t;
    }
    return keys;
}

/* The codebook of a histogram over nsym tokens: sorted by (count, token), two-queue Huffman,
 * canonical codes. */
static void build_book(const uint64_t *hist, unsigned nsym, unsigned R, hf_book *B)
{
    hf_key keys[HF_MAX_SYMS], tmp[HF_MAX_SYMS];
    uint16_t order[HF_MAX_SYMS];
    uint32_t w[HF_MAX_SYMS], nw[HF_MAX_SYMS];
    uint32_t par[2 * HF_MAX_SYMS];
    uint8_t depth[2 * HF_MAX_SYMS];
    unsigned m = 0;
    memset(B->len, 0, sizeof B->len);
    B->m = 0;
    B->bits = 0;
    for (unsigned s = 0; s < nsym; s++)
        if (hist[s]) {
            keys[m].count = (uint32_t)hist[s];
            keys[m++].token = s;
            B->m = s + 1;
        }
    const hf_key *sorted = sort_keys(keys, tmp, m);
    for (unsigned i = 0; i < m; i++) {
        order[i] = (uint16_t)sorted[i].token;
        w[i] = sorted[i].count;
    }
    hf_build_lengths(order, w, m, B->len, par, nw, depth);
    hf_canonical(B->len, B->m, B->code);
    B->m1 = B->m > 2 * R ? B->m - 2 * R : 0;
    B->m0 = 0;
    for (unsigned s = 0; s < B->m && s < 2 * R; s++) {
        B->bits += hist[s] * B->len[s];
        B->m0 = B->len[s] ? s + 1 : B->m0;
    }
    for (unsigned s = 2 * R; s < B->m; s++)
        B->bits += hist[s] * B->len[s];
}

static uint64_t payload_size(const hf_geom *g, unsigned esize, const hf_book *B, uint64_t n_out,
                             uint64_t n_verb)
{
    return HF_OFF_CODEBOOK + hf_pad4(hf_codebook_size(B->m0, B->m1)) + hf_pad4(2 * g->nsub) +
           hf_pad4((B->bits + 7) / 8) + 8 * n_out + (4 + esize) * n_verb;
}

/* Writes one sub-chunk's codes from bit `bit` on, least significant bit first. The bytes it
 * may share with its neighbours, its first and its last, are merged atomically. */
typedef struct hf_writer {
    uint8_t *s;
    const hf_book *B;
    uint64_t acc, first, byte, bits;   /* bits: stream bits counted (sub_bits_task) */
    unsigned nacc;
} hf_writer;

static void write_token(void *ctx, unsigned token)
{
    hf_writer *W = ctx;
    W->acc |= (uint64_t)W->B->code[token] << W->nacc;
    W->nacc += W->B->len[token];
    while (W->nacc >= 8) {
        if (W->byte == W->first)
            __atomic_fetch_or(&W->s[W->byte], (uint8_t)W->acc, __ATOMIC_RELAXED);
        else
            W->s[W->byte] = (uint8_t)W->acc;
        W->byte++;
        W->acc >>= 8;
        W->nacc -= 8;
    }
}

static void add_bits(void *ctx, unsigned token)
{
    hf_writer *W = ctx;
    W->bits += W->B->len[token];
}

static void sub_bits_task(void *ctx, uint64_t s)
{
    hf_enc *E = ctx;
    hf_writer W = {.B = E->B};
    sub_tokens(E->tok, E->g->n, s, E->form, E->rs, E->R, add_bits, &W);
    E->sub_bit[s] = W.bits;
}

static void write_task(void *ctx, uint64_t s)
{
    hf_enc *E = ctx;
    uint64_t bit = E->sub_bit[s];
    hf_writer W = {.s = E->stream, .B = E->B, .first = bit >> 3, .byte = bit >> 3,
                   .nacc = (unsigned)(bit & 7)};
    sub_tokens(E->tok, E->g->n, s, E->form, E->rs, E->R, write_token, &W);
    if (W.nacc)
        __atomic_fetch_or(&W.s[W.byte], (uint8_t)W.acc, __ATOMIC_RELAXED);
}

/* Exclusive prefix sum in place; returns the total. */
static uint64_t exclusive_sum(uint64_t *v, uint64_t n)
{
    uint64_t run = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = v[i];
        v[i] = run;
        run += c;
    }
    return run;
}

/* Interpolation replaces the chosen Lorenzo order when its cost is enough lower: its deltas
 * and kinds then take the place of the quantisation codes (docs/FORMAT.md, "Interpolation"). */
static h5zgpu_status try_interpolation(hf_enc *E, uint64_t lorenzo_cost)
{
    const hf_geom *g = E->g;
    int32_t *delta = hz_scratch(g->n * sizeof *delta);
    uint8_t *kind = hz_scratch(g->n);
    uint64_t cost = delta && kind ? hf_ip_encode_cpu(g, E->Q, E->in, delta, kind, lorenzo_cost)
                                    : UINT64_MAX;
    if (cost == UINT64_MAX) {
        hz_scratch_free(delta);
        hz_scratch_free(kind);
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    }
    if (hf_ip_wins(cost, lorenzo_cost, E->Q->pwrel)) {
        int32_t *p = E->p;
        uint8_t *k = E->kind;
        E->p = delta;
        E->kind = kind;
        E->order = HF_PRED_INTERP;
        delta = p;
        kind = k;
    }
    hz_scratch_free(delta);
    hz_scratch_free(kind);
    return H5ZGPU_OK;
}

h5zgpu_status hf_encode_cpu(const hf_geom *g, const qz_quant *Q, unsigned radius, const void *in,
                            uint8_t *out, uint64_t cap, uint64_t *len)
{
    return hf_encode_traced(g, Q, radius, in, out, cap, len, NULL);
}

/* The ANS form's tables, sub-chunk table and stream at out + o (busy of the nsub sub-chunks
 * have words, their counts count_bytes each); returns the offset after them. */
static uint64_t put_ans_stream(const hf_ans_tabs *A, uint64_t nsub, const uint16_t *words,
                               const uint64_t *nwords, uint64_t busy, unsigned count_bytes,
                               uint8_t *out, uint64_t o)
{
    const uint64_t groups = hf_ans_groups(nsub);
    hz_put_u32(out + o, (uint32_t)busy);
    o += 4;
    hf_ans_put_tables(A, out + o);
    o += hf_ans_table_bytes(A);
    uint8_t *level0 = out + o;
    o += hf_pad4((groups + 7) / 8);
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t mask = 0;
        for (uint64_t s = g * HF_ANS_GROUP; s < nsub && s < (g + 1) * HF_ANS_GROUP; s++)
            mask |= (uint64_t)(nwords[s] != 0) << (s % HF_ANS_GROUP);
        if (mask) {
            level0[g / 8] |= (uint8_t)(1u << (g % 8));
            hz_put_u64(out + o, mask);
            o += 8;
        }
    }
    for (uint64_t s = 0, k = 0; s < nsub; s++)
        if (nwords[s])
            hf_ans_put_count(out + o, k++, count_bytes, (uint32_t)nwords[s]);
    o += hf_pad4(count_bytes * busy);
    for (uint64_t s = 0; s < nsub; s++)
        for (uint64_t k = 0; k < nwords[s]; k++, o += 2)
            hz_put_u16(out + o, words[s * HF_ANS_SUB_WORDS + k]);
    return hf_pad4(o);
}

/* A Huffman form's codebook, sub-chunk table and stream at out + o (the sub-chunks' lengths
 * into T); returns the offset after them. */
static uint64_t put_huffman_stream(hf_enc *E, uint8_t *out, uint64_t o, hf_trace *T)
{
    const hf_geom *g = E->g;
    const unsigned R = E->R;
    hz_put_u16(out + o, E->B->m0);
    hz_put_u16(out + o + 2, E->B->m1);
    for (unsigned k = 0; k < E->B->m0 + E->B->m1; k++) {
        unsigned t = k < E->B->m0 ? k : 2 * R + (k - E->B->m0);
        out[o + 4 + k / 2] |= (uint8_t)(E->B->len[t] << (4 * (k & 1)));
    }
    o += hf_pad4(hf_codebook_size(E->B->m0, E->B->m1));
    hz_parallel_for(g->nsub, sub_bits_task, E);
    for (uint64_t s = 0; s < g->nsub; s++) {
        hz_put_u16(out + o + 2 * s, (uint32_t)E->sub_bit[s]);
        if (T && T->subbits)
            T->subbits[s] = (uint32_t)E->sub_bit[s];
    }
    uint64_t bits = exclusive_sum(E->sub_bit, g->nsub);
    o += hf_pad4(2 * g->nsub);
    E->stream = out + o;
    hz_parallel_for(g->nsub, write_task, E);
    o += hf_pad4((bits + 7) / 8);
    return o;
}

/* Histograms of the runs and pairs forms' tokens, m of them each, over slices of the
 * sub-chunks, each on a thread of its own, then summed. */
typedef struct hist_run {
    const hf_enc *E;
    unsigned nf, form[2], rs, m, slices;
    uint64_t *count;        /* a slice's nf x m counts after another's */
} hist_run;

static void hist_task(void *ctx, uint64_t k)
{
    const hist_run *H = ctx;
    const hf_enc *E = H->E;
    const uint64_t n = E->g->n, nsub = E->g->nsub;
    const uint64_t s0 = hz_slice_start(nsub, H->slices, (unsigned)k);
    const uint64_t s1 = hz_slice_start(nsub, H->slices, (unsigned)k + 1);
    uint64_t *c = H->count + k * H->nf * H->m;
    memset(c, 0, (size_t)H->nf * H->m * sizeof *c);
    for (uint64_t s = s0; s < s1; s++)
        for (unsigned j = 0; j < H->nf; j++)
            sub_tokens(E->tok, n, s, H->form[j], H->rs, E->R, count_token, c + j * H->m);
}

/* Sub-chunks a slice of a histogram counts at least. */
#define HF_HIST_SLICE 8u

/* The histograms of forms form[0..nf-1] (the runs and pairs forms, nf <= 2), m counts each,
 * one after another in hist: the tokens walked once for both. */
static void histogram(const hf_enc *E, unsigned nf, const unsigned *form, unsigned rs,
                      unsigned m, uint64_t *hist)
{
    hist_run H = {E, nf, {form[0], nf > 1 ? form[1] : 0}, rs, m,
                  hz_slices(E->g->nsub, HF_HIST_SLICE), hist};
    const size_t per = (size_t)nf * m;   /* counts a slice */
    uint64_t *slices = H.slices > 1 ? hz_scratch(H.slices * per * sizeof *slices) : NULL;
    if (!slices) {
        H.slices = 1;
        hist_task(&H, 0);
        return;
    }
    H.count = slices;
    hz_parallel_slices(H.slices, hist_task, &H);
    memcpy(hist, slices, per * sizeof *hist);
    for (unsigned k = 1; k < H.slices; k++)
        for (size_t t = 0; t < per; t++)
            hist[t] += slices[k * per + t];
    hz_scratch_free(slices);
}

/* The payload of the coded array g (the chunk's folded axes in the order axes). */
static h5zgpu_status encode_coded(const hf_geom *g, const qz_quant *Q, unsigned R,
                                  const void *in, unsigned axes, uint8_t *out, uint64_t cap,
                                  uint64_t *len, hf_trace *T)
{
    const unsigned esize = Q->is_f32 ? 4u : 8u;
    const uint64_t n = g->n, nsub_ans = hf_ans_nsub(n);
    hf_enc E = {.g = g, .Q = Q, .in = in, .R = R};
    uint64_t *hist = calloc(3 * HF_MAX_SYMS, sizeof *hist);   /* form 0's, then the others' */
    hf_book *B0 = malloc(sizeof *B0), *B1 = malloc(sizeof *B1);
    hf_ans_tabs *A = hz_scratch(sizeof *A);
    uint16_t *words = hz_scratch(nsub_ans * HF_ANS_SUB_WORDS * sizeof *words);
    uint64_t *nwords = malloc(nsub_ans * sizeof *nwords);
    E.p = hz_scratch(n * sizeof *E.p);
    E.kind = hz_scratch(n);
    E.tok = hz_scratch(n * sizeof *E.tok);
    E.run_cost = malloc(4 * hf_sample_runs(g) * sizeof *E.run_cost);
    E.tile_out = malloc(g->ntiles * sizeof *E.tile_out);
    E.tile_verb = malloc(g->ntiles * sizeof *E.tile_verb);
    E.sub_bit = malloc(g->nsub * sizeof *E.sub_bit);
    h5zgpu_status st = H5ZGPU_OK;
    if (!E.p || !E.kind || !hist || !B0 || !B1 || !E.tok || !E.run_cost || !E.tile_out ||
        !E.tile_verb || !E.sub_bit || !A || !words || !nwords) {
        st = hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                     (unsigned long long)n);
        goto done;
    }
    const uint64_t runs = hf_sample_runs(g);
    hz_parallel_for(runs, sample_task, &E);
    unsigned long long cost[4] = {0}; /* over the sampled tiles; [0]: their elements */
    for (uint64_t k = 0; k < runs; k++)
        for (unsigned o = 0; o <= g->dim; o++)
            cost[o] += E.run_cost[4 * k + o];
    E.order = hf_best_order(cost, g->dim);
    if (hf_ip_worth_trying(cost[E.order], cost[0], Q->pwrel) &&
        (st = try_interpolation(&E, cost[E.order])) != H5ZGPU_OK)
        goto done;
    if (E.order != HF_PRED_INTERP)
        hz_parallel_for(g->ntiles, rest_task, &E);
    hz_parallel_for(g->ntiles, tokenise_task, &E);
    uint64_t n_out = exclusive_sum(E.tile_out, g->ntiles);
    uint64_t n_verb = exclusive_sum(E.tile_verb, g->ntiles);

    /* form 0: every element a token; its histogram is the ANS form's counts summed over the
     * tables, the tokens walked once for both */
    hf_ans_count(g, E.order, R, E.tok, A->cum);
    for (unsigned b = 0; b < hf_ans_tables_of(E.order); b++)
        for (unsigned t = 0; t < 2 * R; t++)
            hist[t] += A->cum[b][t];
    unsigned rs = 0;
    for (unsigned s = 1; s < 2 * R; s++)
        if (hist[s] > hist[rs])
            rs = s;
    if (T) {
        memcpy(T->cost, cost, sizeof cost);
        T->pred = E.order;
        if (T->tok)
            memcpy(T->tok, E.tok, n * sizeof *E.tok);
        T->n_out = n_out;
        T->n_verb = n_verb;
        memcpy(T->hist, hist, sizeof T->hist);
    }
    build_book(hist, 2 * R, R, B0);
    E.B = B0;
    E.form = HF_FORM_CODES;
    uint64_t size = payload_size(g, esize, B0, n_out, n_verb);
    /* form 1 when the commonest token is at least half of them (its runs become run tokens),
     * form 2 when the small tokens are (neighbouring pairs become pair tokens): each is built
     * when it may win, and kept when strictly smaller */
    uint64_t small = 0;
    for (unsigned t = 2; t < 2 + HF_PAIR_K && t < 2 * R; t++)
        small += hist[t];
    int may[3] = {0, 2 * hist[rs] >= n, R >= HF_PAIR_MIN_RADIUS && 2 * small >= n};
    unsigned forms[2], nf = 0;
    for (unsigned f = HF_FORM_RUNS; f <= HF_FORM_PAIRS; f++)
        if (may[f])
            forms[nf++] = f;
    const unsigned mf = 2 * R + HF_RUN_MAX;
    uint64_t *hist_f = hist + HF_MAX_SYMS;
    if (nf)
        histogram(&E, nf, forms, rs, mf, hist_f);
    for (unsigned j = 0; j < nf; j++) {
        const unsigned f = forms[j];
        hf_book *Bf = E.B == B1 ? B0 : B1; /* the one not holding the best so far */
        build_book(hist_f + (size_t)j * mf, mf, R, Bf);
        uint64_t sf = payload_size(g, esize, Bf, n_out, n_verb);
        if (sf < size) {
            E.B = Bf;
            E.form = f;
            size = sf;
        }
    }
    /* the ANS form, kept when strictly smaller than the best Huffman form */
    hf_ans_tables(E.order, R, A);
    const uint64_t nw = hf_ans_encode_cpu(g, E.order, A, E.tok, rs, words, nwords);
    uint64_t busy = 0, busy_groups = 0, most = 0;
    for (uint64_t first = 0; first < nsub_ans; first += HF_ANS_GROUP) {
        uint64_t in_group = 0;
        for (uint64_t s = first; s < nsub_ans && s < first + HF_ANS_GROUP; s++) {
            in_group += nwords[s] != 0;
            most = nwords[s] > most ? nwords[s] : most;
        }
        busy += in_group;
        busy_groups += in_group != 0;
    }
    const unsigned count_bytes = hf_ans_count_bytes(most);
    const uint64_t size_ans = HF_ANS_OFF_TABLES + hf_ans_table_bytes(A) +
                              hf_ans_index_bytes(nsub_ans, busy_groups, busy, count_bytes) +
                              hf_pad4(2 * nw) + 8 * n_out + (4 + esize) * n_verb;
    if (size_ans < size) {
        E.form = HF_FORM_ANS;
        size = size_ans;
    }
    E.rs = E.form == HF_FORM_RUNS || E.form == HF_FORM_ANS ? rs : 0;
    if (T) {
        T->form = E.form;
        T->rs = E.rs;
        memcpy(T->len, E.B->len, sizeof T->len);
        T->size = size;
        T->axes = axes;
    }
    if (size > cap) {
        st = H5ZGPU_E_OUTPUT_TOO_SMALL;
        goto done;
    }

    memset(out, 0, size);
    qz_put_anchor(out, Q);
    out[8] = (uint8_t)E.form;
    out[9] = (uint8_t)E.order;
    hz_put_u16(out + 10, R);
    hz_put_u16(out + 12, E.rs);
    out[14] = (uint8_t)axes;
    out[HF_ANS_OFF_COUNT_BYTES] = E.form == HF_FORM_ANS ? (uint8_t)count_bytes : 0;
    hz_put_u32(out + 16, (uint32_t)n_out);
    hz_put_u32(out + 20, (uint32_t)n_verb);
    uint64_t o = HF_OFF_CODEBOOK;
    if (E.form == HF_FORM_ANS)
        o = put_ans_stream(A, nsub_ans, words, nwords, busy, count_bytes, out, o);
    else
        o = put_huffman_stream(&E, out, o, T);
    E.out_pos = out + o;
    E.out_delta = E.out_pos + 4 * n_out;
    E.verb_pos = E.out_delta + 4 * n_out;
    E.verb_val = E.verb_pos + 4 * n_verb;
    hz_parallel_for(g->ntiles, lists_task, &E);
    *len = size;
done:
    hz_scratch_free(E.p);
    hz_scratch_free(E.kind);
    hz_scratch_free(E.tok);
    free(E.run_cost);
    free(E.tile_out);
    free(E.tile_verb);
    free(E.sub_bit);
    free(hist);
    free(B0);
    free(B1);
    hz_scratch_free(A);
    hz_scratch_free(words);
    free(nwords);
    return st;
}

h5zgpu_status hf_encode_traced(const hf_geom *g, const qz_quant *Q, unsigned radius,
                               const void *in, uint8_t *out, uint64_t cap, uint64_t *len,
                               hf_trace *T)
{
    const size_t esize = Q->is_f32 ? 4u : 8u;
    unsigned long long cost[3];
    const unsigned axes = hf_axes_pick_cpu(g, Q, in, cost);
    if (axes == HF_AXES_NOMEM)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    if (T)
        memcpy(T->axes_cost, cost, sizeof cost);
    if (!axes)
        return encode_coded(g, Q, radius, in, 0, out, cap, len, T);
    hf_geom cg;
    hf_axes_geom(g, axes, &cg);
    void *coded = hz_scratch(g->n * esize);
    if (!coded)
        return hz_fail(H5ZGPU_E_NOMEM, "out of host memory for a %llu-element chunk",
                       (unsigned long long)g->n);
    hf_axes_gather_cpu(g, axes, esize, in, coded);
    h5zgpu_status st = encode_coded(&cg, Q, radius, coded, axes, out, cap, len, T);
    hz_scratch_free(coded);
    return st;
}
